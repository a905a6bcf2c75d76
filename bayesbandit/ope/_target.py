"""The target policy's action distribution on every logged round: exact where the policy states its law."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.ope._logs import Logs
from bayesbandit.propensities import DEFAULT_SAMPLES, Method, action_distributions

__all__ = ["TargetDistribution", "target_distribution"]


class TargetDistribution(NamedTuple):
    """``pi_e(a | i)`` on every logged round, shape (n, K), and its Monte Carlo standard error (0 where exact)."""

    probabilities: Array
    se: Array


def target_distribution(
    key: PRNGKey,
    policy: Any,
    state: Any,
    logs: Logs,
    *,
    samples: int = DEFAULT_SAMPLES,
    method: Method = "auto",
    batch: int | None = None,
) -> TargetDistribution:
    """The law of ``policy.select(state, arms_i, key)`` on each logged round ``i``: the target frozen at ``state``.

    One compiled call (:func:`bayesbandit.propensities.action_distributions`): exact for an
    :class:`~bayesbandit.contract.ExactLaw` policy (the UCB rules, epsilon-greedy), else the
    frequencies of ``samples`` selections per round, ``vmap``-ed over rounds and keys, with
    standard error ``sqrt(p (1 - p) / M)``. On logs with one fixed arm set every round has the
    same law, computed once and broadcast.
    """
    arms = logs.arms[None] if logs.fixed_arms else logs.arms
    probabilities, se = action_distributions(key, policy, state, arms, samples=samples, method=method, batch=batch)
    if logs.fixed_arms:
        shape = (logs.num_rounds, logs.num_arms)
        return TargetDistribution(jnp.broadcast_to(probabilities[0], shape), jnp.broadcast_to(se[0], shape))
    return TargetDistribution(probabilities, se)
