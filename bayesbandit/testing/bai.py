"""Checks for fixed-budget best-arm-identification algorithms (``identify(env, instance, budget, key)``).

On :class:`~bayesbandit.bai.StaticInstance` (``K = 8`` one-hot arms, gap 1, noise variance 1), every
check reads one compiled program per algorithm: ``REPLICATIONS`` replications of budget
``BUDGET`` under ``jit(vmap)``, with replications 0 and 1 on one key. ``identify`` is traced a
second time on the same keys: a second trace that is the same program (same jaxpr, same constants)
returns the same values, so only a trace that differs is compiled and run.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.errors import InvalidInput
from bayesbandit.testing._common import cached, policy_id, same_tree

__all__ = [
    "BAI_CHECKS",
    "check_bai",
    "check_bai_jit_vmap",
    "check_bai_same_key",
    "check_bai_budget",
    "check_bai_learns",
]

K, BUDGET, REPLICATIONS = 8, 64, 64


def _env() -> Any:
    from bayesbandit.bai import StaticInstance

    return StaticInstance(K=K, gap=1.0, noise_var=1.0)


def _trace(algorithm: Any, env: Any, instance: Any, keys: jax.Array) -> Any:
    """``identify`` on every key under ``jit(vmap)``, traced (a fresh function: nothing is reused)."""

    def one(key: jax.Array) -> tuple:
        return algorithm.identify(env, instance, BUDGET, key)

    return jax.jit(jax.vmap(one)).trace(keys)


def _leaf_bits(x: Any) -> np.ndarray:
    return np.asarray(jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x)


def _same_program(a: Any, b: Any) -> bool:
    """Two traces hold the same jaxpr and the same constants, bit for bit (so they compute the same values)."""
    return str(a.jaxpr) == str(b.jaxpr) and same_tree(
        [_leaf_bits(c) for c in a.jaxpr.consts], [_leaf_bits(c) for c in b.jaxpr.consts]
    )


@cached
def _run(algorithm: Any) -> tuple:
    """(arm, info, arm of a second trace on the same keys) for each replication, as NumPy."""
    env = _env()
    instance = env.reset(jax.random.key(0))
    keys = jax.random.split(jax.random.key(1), REPLICATIONS)
    keys = keys.at[1].set(keys[0])
    try:
        first = _trace(algorithm, env, instance, keys)
        arm, info = first.lower().compile()(keys)
        second = _trace(algorithm, env, instance, keys)
        again = arm if _same_program(first, second) else second.lower().compile()(keys)[0]
    except Exception as exc:
        raise AssertionError(f"{policy_id(algorithm)}: identify does not run under jit(vmap): {exc!r}") from exc
    return jax.tree.map(np.asarray, (arm, info, again))


def check_bai_jit_vmap(algorithm: Any) -> None:
    """Under jit(vmap): an integer arm in range; counts of shape (K,) summing to ``pulls <= budget``;
    survivors (S, K) boolean and theta (S, p) per replication."""
    name = policy_id(algorithm)
    arm, info, _ = _run(algorithm)
    assert arm.shape == (REPLICATIONS,) and np.issubdtype(arm.dtype, np.integer), f"{name}: arms {arm!r}"
    assert np.all((arm >= 0) & (arm < K)), f"{name}: an arm outside [0, K)"
    assert info.counts.shape == (REPLICATIONS, K) and np.all(info.counts >= 0), f"{name}: counts {info.counts}"
    assert np.array_equal(info.counts.sum(1), info.pulls), f"{name}: counts sum to {info.counts.sum(1)}, not pulls"
    assert np.all(info.pulls <= BUDGET), f"{name}: spent {info.pulls.max()} pulls of a budget of {BUDGET}"
    survivors, theta = info.survivors, info.theta
    assert survivors.ndim == 3 and survivors.shape[::2] == (REPLICATIONS, K), f"{name}: survivors {survivors.shape}"
    assert survivors.dtype == np.bool_ and theta.shape[:2] == survivors.shape[:2], f"{name}: theta {theta.shape}"


def check_bai_same_key(algorithm: Any) -> None:
    """Same key, same arm and info: replications 0 and 1, and two traces of ``identify`` on the same keys."""
    name = policy_id(algorithm)
    arm, info, again = _run(algorithm)
    assert arm[0] == arm[1], f"{name}: one key recommended arms {arm[0]} and {arm[1]}"
    assert same_tree(jax.tree.map(lambda v: v[0], info), jax.tree.map(lambda v: v[1], info)), f"{name}: info differs"
    assert np.array_equal(arm, again), f"{name}: two traces on the same keys recommended {arm} and {again}"


def check_bai_budget(algorithm: Any) -> None:
    """A budget below the number of arms, or not a Python int, raises InvalidInput."""
    name = policy_id(algorithm)
    env = _env()
    instance = env.reset(jax.random.key(0))
    for budget in (K - 1, float(BUDGET)):
        try:
            algorithm.identify(env, instance, budget, jax.random.key(0))
        except InvalidInput:
            continue
        raise AssertionError(f"{name}: budget {budget!r} was accepted")


def check_bai_learns(algorithm: Any) -> None:
    """Over the 63 distinct replications: accuracy above 0.25 (chance is 1/8, with a standard deviation of
    0.042 over 63 replications: 0.25 is chance plus 3 sd)."""
    from bayesbandit.bai import is_correct

    arm = _run(algorithm)[0][1:]
    accuracy = float(jnp.mean(jax.vmap(lambda a: is_correct(_env().reset(jax.random.key(0)), a))(arm)))
    assert accuracy > 0.25, f"{policy_id(algorithm)}: accuracy {accuracy:.2f}, chance 0.125"


BAI_CHECKS = [check_bai_jit_vmap, check_bai_same_key, check_bai_budget, check_bai_learns]
"""The checks :func:`~bayesbandit.testing.bai.check_bai` runs, in order."""


def check_bai(algorithm: Any) -> None:
    """Run every best-arm-identification check on ``algorithm``; raise on the first failure."""
    for check in BAI_CHECKS:
        check(algorithm)
