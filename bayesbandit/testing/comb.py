"""Checks for combinatorial policies (super arms with semi-bandit feedback, :class:`~bayesbandit.contract.Combinatorial`).

``N`` arms on the unit sphere, one ``theta*`` per block, Gaussian rewards (sd 0.3), regret against the
policy's own oracle. The mechanical checks share one ``jit(vmap(scan))`` run of ``ROUNDS`` rounds
(``select`` called twice on each round's key) and one :class:`~bayesbandit.Agent` program per policy;
:func:`check_comb_learns` continues the same runs with the same program for ``CHUNKS`` chunks
(``LEARN_ROUNDS`` rounds; ``select`` once a round).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.testing._common import cached, chunked_program, policy_id, rejects, run_outputs, save_load_continues
from bayesbandit.testing.policy import RUNS, assert_learns, run_keys

__all__ = [
    "COMB_CHECKS",
    "check_comb_runs_compiled",
    "check_comb_same_key_same_actions",
    "check_comb_bad_inputs",
    "check_comb_save_load",
    "check_comb_learns",
    "comb_problem",
]

N, D = 20, 4
ROUNDS, CHUNKS = 60, 5  # the mechanical checks' horizon; check_comb_learns' run: CHUNKS of them
LEARN_ROUNDS = ROUNDS * CHUNKS


def comb_problem(key: jax.Array, blocks: int) -> tuple[jax.Array, jax.Array]:
    """``N`` arms on the unit sphere in ``R^D`` and one ``theta*`` per block; returns (arms, means (M, N))."""
    k_arms, k_theta = jax.random.split(key)
    arms = jax.random.normal(k_arms, (N, D))
    arms = arms / jnp.linalg.norm(arms, axis=1, keepdims=True)
    theta = jax.random.normal(k_theta, (blocks, D)) / jnp.sqrt(D)
    return arms, theta @ arms.T


@cached
def program(policy: Any) -> tuple:
    """(start, chunk, traces): ``CHUNKS`` chunks of ``ROUNDS`` rounds (see ``chunked_program``)."""

    def init_one(key: jax.Array) -> tuple:
        arms, means = comb_problem(key, policy.blocks)
        flat = means.reshape(-1)
        best = jnp.sum(flat[policy.oracle(means, jax.random.PRNGKey(0))])
        uniform = best - policy.action_shape[0] * jnp.mean(flat)
        return policy.init(arms), (arms, flat, best, uniform)

    def step(env: tuple, state: Any, k: jax.Array, checked: jax.Array) -> tuple:
        arms, flat, best, _ = env
        k_select, k_reward = jax.random.split(k)
        action, _ = policy.select(state, arms, k_select)
        again = jax.lax.cond(checked, lambda: policy.select(state, arms, k_select)[0], lambda: action)
        reward = flat[action] + 0.3 * jax.random.normal(k_reward, action.shape)
        state, _ = policy.update(state, arms, action, reward)
        return state, (action, best - jnp.sum(flat[action]), jnp.all(action == again))

    return chunked_program(init_one, step, ROUNDS, CHUNKS)


@cached
def short_run(policy: Any, seed: int = 0) -> tuple:
    """(actions (RUNS, ROUNDS, size), regret, uniform play's regret per round, final state, repeat flags)."""
    return run_outputs(policy, program(policy), run_keys(seed), 1)


@cached
def learning_run(policy: Any) -> tuple:
    """The same outputs over all ``CHUNKS`` chunks (``LEARN_ROUNDS`` rounds)."""
    return run_outputs(policy, program(policy), run_keys(0), CHUNKS)


def play(agent: Any, rounds: int, seed: int) -> list:
    """Rounds with Gaussian per-arm rewards from a seeded generator; returns the actions."""
    rng = np.random.default_rng(seed)
    _, means = (np.asarray(a) for a in comb_problem(jax.random.PRNGKey(7), agent.policy.blocks))
    actions = []
    for _ in range(rounds):
        action = agent.select()
        agent.update(action, means.reshape(-1)[action] + 0.3 * rng.standard_normal(action.shape))
        actions.append(action.tolist())
    return actions


def _agent(policy: Any, seed: int = 0) -> Any:
    from bayesbandit.agent import Agent

    return Agent(policy, arms=np.asarray(comb_problem(jax.random.PRNGKey(7), 1)[0]), seed=seed)


# ------------------------------------------------------------------------------ the checks
def check_comb_runs_compiled(policy: Any) -> None:
    """jit(vmap(scan)), traced once: super arms of the right shape, distinct copies in range, finite state."""
    name = policy_id(policy)
    actions, _, _, state, _ = short_run(policy)
    size, copies = policy.action_shape[0], policy.blocks * N
    assert actions.shape == (RUNS, ROUNDS, size), f"{name}: actions of shape {actions.shape}"
    assert np.all((actions >= 0) & (actions < copies)), f"{name}: an index outside [0, M N)"
    assert all(len(set(row)) == size for row in actions.reshape(-1, size).tolist()), f"{name}: a repeated pick"
    assert all(np.all(np.isfinite(x)) for x in jax.tree.leaves(state) if np.issubdtype(x.dtype, np.floating))
    other = short_run(policy, 1)
    assert not np.array_equal(actions, other[0]), f"{name}: other keys gave the same actions"
    _, chunk, traces = program(policy)
    assert len(traces) == 1 and chunk._cache_size() == 1, f"{name}: the experiment was traced {len(traces)} times"


def check_comb_same_key_same_actions(policy: Any) -> None:
    """Same key, same super arms: vmapped runs 0 and 1; two ``select`` calls on one state and key; two
    agents with one seed."""
    name = policy_id(policy)
    actions, _, _, _, repeat = short_run(policy)
    assert np.array_equal(actions[0], actions[1]), f"{name}: one key gave two action sequences"
    assert repeat.all(), f"{name}: select chose two super arms from one state and key ({(~repeat).sum()} rounds)"
    a, b = play(_agent(policy, seed=3), 6, 1), play(_agent(policy, seed=3), 6, 1)
    assert a == b, f"{name}: two agents with seed 3 chose differently"


def _too_few(policy: Any) -> int:
    """The largest arm count the policy's oracle declares too small for a super arm (0 if none: an empty set)."""
    from bayesbandit.errors import InvalidInput

    for count in range(policy.action_shape[0], 0, -1):
        try:
            policy.check_arms(count)
        except InvalidInput:
            return count
    return 0


def check_comb_bad_inputs(policy: Any) -> None:
    """Too few arms for a super arm, feedback of the wrong length or NaN, bad actions, NaN features:
    InvalidInput through the Agent, the state unchanged."""
    from bayesbandit.agent import Agent

    agent = _agent(policy)
    play(agent, 2, 0)
    action = agent.select()
    size = action.size
    for feedback, what in (
        (np.ones(size + 1), "feedback of the wrong length"),
        (np.ones(1), "one reward for a super arm"),
        (np.full(size, np.nan), "NaN feedback"),
    ):
        rejects(agent, what, "update", action, feedback)
    for bad, what in (
        (action[:-1], "a short super arm"),
        (np.full(size, policy.blocks * N), "an index past M N"),
        (np.zeros(size, np.int64), "a repeated index"),
    ):
        rejects(agent, what, "update", bad, np.ones(size))
    tiny = Agent(policy, d=D, seed=0)
    rejects(tiny, "fewer arms than a super arm needs", "select", np.ones((_too_few(policy), D)))
    rejects(tiny, "NaN features", "select", np.full((N, D), np.nan))


def check_comb_save_load(policy: Any) -> None:
    """An Agent saved and loaded continues bit for bit."""
    save_load_continues(policy, _agent(policy), play)


def check_comb_learns(policy: Any) -> None:
    """Over LEARN_ROUNDS rounds: regret below 0.3 of uniform play's, lower per round in the second half
    than in the first, and a finite state at the end."""
    assert_learns(policy, learning_run(policy), LEARN_ROUNDS)


COMB_CHECKS = [
    check_comb_runs_compiled,
    check_comb_same_key_same_actions,
    check_comb_bad_inputs,
    check_comb_save_load,
    check_comb_learns,
]
"""The checks :func:`~bayesbandit.testing.check_policy` runs on a combinatorial policy, in order."""
