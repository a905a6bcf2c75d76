"""Every runner plays the rounds of ``play_round`` on the same keys: scan, host, sweep, catalogue, along_run.

Each test replays the runner's runs by hand (:func:`key_streams`, :func:`init_run`, then
:func:`play_round` round after round, compiled as the runners compile it) and compares the
actions and rewards exactly with the runner's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.diagnostics._along_run import run_snapshots
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.envs import LogisticBandit, SyntheticCatalogue
from bayesbandit.sim import init_run, key_streams, play_round, sweep

H, RUNS, SEED = 12, 2, 3
ENV = LogisticBandit(K=6, d=2)
POLICY = bb.LinTS(v=0.5)


def _replay(policy: Any, env: Any, horizon: int, runs: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """(actions, rewards) of shape (runs, horizon) and each run's final state, from ``play_round`` itself."""
    keys = key_streams(seed, runs)
    start = jax.jit(lambda ek, pk: init_run(ek, pk, policy, env, horizon))
    step = jax.jit(lambda es, s, qk, pk, t: play_round(qk, pk, policy, env, es, s, t))
    actions, rewards, states = np.zeros((runs, horizon), int), np.zeros((runs, horizon)), []
    for r in range(runs):
        env_state, state = start(keys.env[r], keys.policy[r])
        for t in range(horizon):
            state, rnd = step(env_state, state, keys.pull[r], keys.policy[r], jnp.int32(t))
            actions[r, t], rewards[r, t] = rnd.action, rnd.feedback
        states.append(state)
    return actions, rewards, states


@dataclass(frozen=True)
class _Host:
    """``POLICY`` as a host policy, so that ``simulate`` takes the host runner."""

    inner: Any
    kind: ClassVar[str] = "host"

    def init(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.init(*args, **kwargs)

    def select(self, state: Any, arms: Any, key: Any) -> Any:
        return self.inner.select(state, arms, key)

    def update(self, state: Any, arms: Any, action: Any, feedback: Any) -> Any:
        return self.inner.update(state, arms, action, feedback)

    def reward_support(self, d: int) -> Any:
        return self.inner.reward_support(d)


def test_scan_host_and_sweep_play_the_rounds_of_play_round():
    actions, rewards, _ = _replay(POLICY, ENV, H, RUNS, SEED)
    assert len(np.unique(actions)) > 1  # the runs explore: equal actions are not a constant
    scan = bb.simulate(POLICY, ENV, horizon=H, runs=RUNS, seed=SEED, num_chunks=3)
    host = bb.simulate(_Host(POLICY), ENV, horizon=H, runs=RUNS, seed=SEED)
    for ds in (scan, host):
        np.testing.assert_array_equal(ds.action.values[0], actions)
        np.testing.assert_array_equal(ds.reward.values[0], rewards)
    grid = sweep([POLICY], ENV, horizon=H, runs=RUNS, seed=SEED)
    np.testing.assert_array_equal(grid.reward.values[0], rewards)
    np.testing.assert_array_equal(grid.regret.values[0], scan.regret.values[0])


def test_catalogue_runner_plays_the_rounds_of_play_round():
    env = SyntheticCatalogue(initial_arms=40, d=3, horizon=H, add_every=4, add_count=2, remove_count=1)
    policy = bb.SubTS(beta=0.5, index="exact")
    ds = bb.sim.simulate_catalogue({"ts": policy}, env, runs=RUNS, seed=SEED)
    for r in range(RUNS):
        run, rng = env.reset(SEED, r), np.random.default_rng([SEED, r, 1])
        state = policy.init(env.initial(run))
        for t in range(H):
            state, rnd = play_round(None, rng, policy, env, run, state, t)
            assert rnd.action == ds.action.values[0, r, t]
            assert rnd.feedback == ds.reward.values[0, r, t]
            assert rnd.outcome.regret == ds.regret.values[0, r, t]


@dataclass(frozen=True, eq=False)
class _FnBandit:
    """Fixed arms whose rewards come from ``reward_fn(key, arm)``, as along_run's environment with a reward_fn."""

    arm_set: jax.Array
    reward_fn: Any
    fixed_arms: ClassVar[bool] = True

    @property
    def d(self) -> int:
        return int(self.arm_set.shape[1])

    def reset(self, key: jax.Array) -> jax.Array:
        return jnp.zeros(self.arm_set.shape[0])

    def arms(self, env_state: jax.Array, t: Any) -> jax.Array:
        return self.arm_set

    def pull(
        self, env_state: jax.Array, action: jax.Array, key: jax.Array, t: Any
    ) -> tuple[jax.Array, bb.contract.Outcome]:
        return jnp.asarray(self.reward_fn(key, action), float), bb.contract.Outcome(
            env_state[action], jnp.max(env_state)
        )


def test_along_run_plays_the_rounds_of_play_round():
    arms = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, (5, 2)))
    means = jax.nn.sigmoid(arms @ jnp.array([1.0, -1.0]))

    def reward_fn(key: jax.Array, arm: jax.Array) -> jax.Array:
        return (jax.random.uniform(key) < means[arm]).astype(float)

    policy = bb.GLMTSL(logistic())
    _, snapshots = run_snapshots(policy, arms, rounds=[H], reward_fn=reward_fn, seed=SEED)
    _, _, (state,) = _replay(policy, _FnBandit(arms, reward_fn), H, 1, SEED)
    for got, expected in zip(snapshots[H], policy.posterior_rows(state), strict=True):
        np.testing.assert_array_equal(got, np.asarray(expected))
