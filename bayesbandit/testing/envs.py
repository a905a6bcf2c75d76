"""Checks for environments with one arm a round (the ``Env`` protocol in :mod:`bayesbandit.contract`).

``reset(key) -> env_state``, ``arms(env_state, t) -> (K, d)`` and ``pull(env_state, action, key, t) ->
(reward, Outcome)``: shapes and dtypes, purity (same key, same result; ``arms`` a function of the
instance and ``t``), the oracle (``Outcome.regret >= 0`` for every arm, 0 for the best), and the whole
under ``jit(vmap)``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.testing._common import policy_id, same_tree

__all__ = [
    "ENV_CHECKS",
    "check_env",
    "check_env_shapes_and_dtypes",
    "check_env_same_key_same_result",
    "check_env_regret",
    "check_env_jit_vmap",
]

ROUNDS = (0, 1, 5)  # the rounds t the checks look at


def check_env_shapes_and_dtypes(env: Any) -> None:
    """``arms``: (K, d), floating, finite, the same every round when ``fixed_arms``; ``pull``: a scalar
    floating reward and an Outcome of scalars."""
    name = policy_id(env)
    state = env.reset(jax.random.PRNGKey(0))
    arms = env.arms(state, 0)
    assert arms.shape == (env.K, env.d), f"{name}: arms of shape {arms.shape}, not (K, d) = ({env.K}, {env.d})"
    assert jnp.issubdtype(arms.dtype, jnp.floating) and bool(jnp.all(jnp.isfinite(arms))), f"{name}: arms {arms}"
    if env.fixed_arms:
        assert np.array_equal(arms, env.arms(state, 5)), f"{name}: fixed arms changed between rounds 0 and 5"
    reward, outcome = env.pull(state, 2, jax.random.PRNGKey(1), 0)
    assert reward.shape == () and jnp.issubdtype(reward.dtype, jnp.floating), f"{name}: reward {reward!r}"
    for field, value in outcome._asdict().items():
        assert value.shape == () and jnp.issubdtype(value.dtype, jnp.floating), f"{name}: Outcome.{field} {value!r}"


def check_env_same_key_same_result(env: Any) -> None:
    """Same key, same instance, arms and reward; another key, another instance (or reward)."""
    name = policy_id(env)
    state, again = env.reset(jax.random.PRNGKey(0)), env.reset(jax.random.PRNGKey(0))
    assert same_tree(state, again), f"{name}: one key gave two instances"
    for t in ROUNDS:
        assert np.array_equal(env.arms(state, t), env.arms(again, t)), f"{name}: arms at round {t} are not pure"
    key = jax.random.PRNGKey(1)
    first, second = env.pull(state, 2, key, 1), env.pull(again, 2, key, 1)
    assert same_tree(first, second), f"{name}: one key gave two rewards"
    other = env.reset(jax.random.PRNGKey(3))
    rewards = [env.pull(state, 2, jax.random.PRNGKey(k), 1)[0] for k in range(20)]
    assert not same_tree(state, other) or len({float(r) for r in rewards}) > 1, f"{name}: keys change nothing"


def check_env_regret(env: Any) -> None:
    """For every arm and round, ``Outcome.regret >= 0``, and 0 for the arm of largest expected reward."""
    name = policy_id(env)
    state = env.reset(jax.random.PRNGKey(0))
    for t in ROUNDS:
        pulls = jax.vmap(lambda a, t=t: env.pull(state, a, jax.random.PRNGKey(2), t)[1])(jnp.arange(env.K))
        regret, best = np.asarray(pulls.regret), np.asarray(pulls.best_expected_reward)
        assert np.all(regret >= 0), f"{name}: negative regret {regret.min()} at round {t}"
        assert np.all(best == best[0]), f"{name}: the best expected reward depends on the arm pulled (round {t})"
        top = np.asarray(pulls.expected_reward).max()
        assert np.isclose(best[0], top, rtol=1e-12, atol=0), f"{name}: best {best[0]} but an arm has {top} (round {t})"


def check_env_jit_vmap(env: Any) -> None:
    """``jit(vmap)`` over 4 instances and their pulls: the eager shapes with a leading axis, finite values."""
    name = policy_id(env)
    keys = jax.random.split(jax.random.PRNGKey(0), 4)

    def one(key: jax.Array) -> tuple:
        state = env.reset(key)
        return env.arms(state, 1), env.pull(state, 0, key, 1)

    arms, (reward, outcome) = jax.jit(jax.vmap(one))(keys)
    assert arms.shape == (4, env.K, env.d) and reward.shape == (4,), f"{name}: shapes {arms.shape}, {reward.shape}"
    assert all(np.all(np.isfinite(x)) for x in (arms, reward, *outcome)), f"{name}: non-finite values under vmap"


ENV_CHECKS = [check_env_shapes_and_dtypes, check_env_same_key_same_result, check_env_regret, check_env_jit_vmap]
"""The checks :func:`~bayesbandit.testing.envs.check_env` runs, in order."""


def check_env(env: Any) -> None:
    """Run every environment check on ``env``; raise on the first failure."""
    for check in ENV_CHECKS:
        check(env)
