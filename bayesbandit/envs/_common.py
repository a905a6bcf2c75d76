"""Pieces shared by the synthetic environments: instances, the theta* covariance, uniform arms.

The environment contract is in :mod:`bayesbandit.contract` (``reset``, ``arms``,
``pull -> (feedback, Outcome)``, ``fixed_arms``).

Common random numbers: the synthetic GLM environments draw the rewards of *all* ``K`` arms of a
round from the round's key and return the pulled one, so two policies given the same key see
the same reward for the same arm (Bernoulli rewards compare one shared uniform ``u_{t,i}`` with
the mean; Gaussian ones add one shared ``sigma z_{t,i}``). :func:`bayesbandit.simulate` derives
that key from (run, round) only. That draw is ``O(K)`` per round, which these environments
(``K`` in the hundreds) can afford; catalogue-sized environments draw the pulled arm's noise
from ``fold_in(key, arm)`` instead, which keeps the same property at ``O(1)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = ["Instance", "ContextualInstance", "theta_variance", "uniform_arms", "check_sizes", "describe"]


class Instance(NamedTuple):
    """A problem instance with a fixed arm set; the oracle's answer is precomputed."""

    arms: Array  # (K, d) arm features
    theta: Array  # (d,)  true parameter theta*
    means: Array  # (K,)  expected rewards
    best_mean: Array  # () expected reward of the best arm


class ContextualInstance(NamedTuple):
    """A problem instance whose arm features are redrawn every round."""

    theta: Array  # (d,)  true parameter theta*
    key: PRNGKey  # key from which round t's features are derived (fold_in(key, t))


def theta_variance(theta_cov: str | float, d: int) -> float:
    """Per-coordinate variance ``v`` of ``theta* ~ N(0, v I_d)``.

    ``"paper"``: ``3 / d**2`` (Kveton et al. 2020, Section 5.1, as printed), which gives
    ``var(x^T theta*) = d * (1/3) * 3/d^2 = 1/d`` for ``x`` uniform on ``[-1, 1]^d``.
    ``"unit"``: ``3 / d``, which gives ``var(x^T theta*) = 1``, the value the paper's text
    claims. A float is used as ``v`` itself.
    """
    if theta_cov == "paper":
        return 3.0 / d**2
    if theta_cov == "unit":
        return 3.0 / d
    if isinstance(theta_cov, int | float) and not isinstance(theta_cov, bool) and float(theta_cov) > 0:
        return float(theta_cov)
    raise InvalidInput(
        f"The 'theta_cov' parameter must be 'paper' (3/d^2), 'unit' (3/d) or a positive float. Got {theta_cov!r} instead."
    )


def uniform_arms(key: PRNGKey, K: int, d: int, half_width: float = 1.0) -> Array:
    """``K`` feature vectors uniform on ``[-h, h]^d`` (``h = half_width``), shape (K, d), in JAX's default float."""
    return jax.random.uniform(key, (K, d), dtype=float, minval=-half_width, maxval=half_width)


def check_sizes(name: str, K: int, d: int) -> None:
    """``K`` and ``d`` are positive ints."""
    check_int(name, "K", K, low=1)
    check_int(name, "d", d, low=1)


def describe(env: Any) -> str:
    """One-line description of an environment (its class and settings), for result attributes."""
    if not dataclasses.is_dataclass(env):
        return type(env).__name__
    fields = ", ".join(f"{f.name}={getattr(env, f.name)!r}" for f in dataclasses.fields(env) if f.repr)
    return f"{type(env).__name__}({fields})"
