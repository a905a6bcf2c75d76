"""The probability that a policy chooses an action in a state: exact where the policy states its law.

A decision's *propensity* ``p(a | state, arms)`` is the probability, over ``select``'s random key,
that the policy chooses ``a``; it is what inverse-propensity weighting divides by when a log of
decisions is used to evaluate another policy.

* A policy with the :class:`~bayesbandit.contract.ExactLaw` capability (the UCB rules and
  epsilon-greedy: uniform over tied maxima, the epsilon mixture, the initial-exploration rule)
  gives it in closed form; the standard error is 0.
* For every other policy (Thompson sampling, GLM-FPL, the combinatorial and catalogue policies)
  ``select`` is called on ``M`` independent keys (one ``vmap``-ed, compiled call for a JAX
  policy) and ``p`` is the fraction of draws that choose ``a`` (for a super arm: the same set of
  arms), with the binomial standard error ``sqrt(p (1 - p) / M)``. The estimate is never below
  ``1 / M``: the action was chosen, so its probability is positive, and an estimate of 0 would
  make an importance weight infinite.
"""

from __future__ import annotations

import functools
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import Combinatorial, ExactLaw, policy_kind
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = ["Propensity", "action_distribution", "propensity", "DEFAULT_SAMPLES"]

DEFAULT_SAMPLES = 1000


class Propensity(NamedTuple):
    """``p(action | state, arms)``, its standard error (0 when exact), and whether it is exact."""

    value: float
    se: float
    exact: bool


@functools.lru_cache(maxsize=64)
def _sampler(policy: Any, samples: int) -> Any:
    """``(state, arms, key) -> actions`` of ``samples`` selections with keys split from ``key``: one compiled call."""

    def draw(state: Any, arms: Any, key: PRNGKey) -> Array:
        actions, _ = jax.vmap(policy.select, in_axes=(None, None, 0))(state, arms, jax.random.split(key, samples))
        return actions

    return jax.jit(draw)


def _draws(policy: Any, state: Any, arms: Any, key: PRNGKey, samples: int) -> np.ndarray:
    """``samples`` actions of ``policy`` from ``state`` on independent keys."""
    if policy_kind(policy) == "host":
        return np.asarray([np.asarray(policy.select(state, arms, k)[0]) for k in jax.random.split(key, samples)])
    try:
        sampler = _sampler(policy, samples)
    except TypeError:  # an unhashable policy (array hyper-parameters)
        sampler = _sampler.__wrapped__(policy, samples)
    return np.asarray(sampler(state, arms, key))


Method = Literal["auto", "monte_carlo"]


def _exact(where: str, policy: Any, method: Method) -> bool:
    if method not in ("auto", "monte_carlo"):
        raise InvalidInput(
            f"{where}: the 'method' argument must be 'auto' (exact where the policy states its law) or "
            f"'monte_carlo'. Got {method!r}."
        )
    return method == "auto" and isinstance(policy, ExactLaw) and not isinstance(policy, Combinatorial)


def action_distribution(
    policy: Any, state: Any, arms: Any, key: PRNGKey, *, samples: int = DEFAULT_SAMPLES, method: Method = "auto"
) -> tuple[np.ndarray, np.ndarray]:
    """The law of ``policy.select(state, arms, key)``'s arm over ``key``: ``(probabilities, standard errors)``, each (K,).

    Exact (standard errors 0) for an :class:`~bayesbandit.contract.ExactLaw` policy, else (or
    with ``method="monte_carlo"``) the frequencies of ``samples`` selections. For single-arm
    policies over an arm set ``(K, d)``.
    """
    samples = check_int("action_distribution", "samples", samples, low=1)
    num_arms = int(np.shape(arms)[0])
    if _exact("action_distribution", policy, method):
        return np.asarray(policy.action_probabilities(state, jnp.asarray(arms))), np.zeros(num_arms)
    counts = np.bincount(_draws(policy, state, arms, key, samples).reshape(-1), minlength=num_arms)
    probabilities = counts / samples
    return probabilities, np.sqrt(probabilities * (1.0 - probabilities) / samples)


def propensity(
    policy: Any,
    state: Any,
    arms: Any,
    action: Any,
    key: PRNGKey,
    *,
    samples: int = DEFAULT_SAMPLES,
    method: Method = "auto",
) -> Propensity:
    """The probability that ``policy.select(state, arms, key)`` chooses ``action``, over ``key`` (module docstring).

    Parameters
    ----------
    policy, state, arms
        A policy, a state of it, and the arms it chooses among (``None`` for a catalogue policy).
    action : int or int array
        An arm index (an item id for a catalogue policy; the indices of a super arm for a
        combinatorial one, compared as a set).
    key : PRNGKey
        The Monte Carlo draws' key (unused when exact).
    samples : int
        Monte Carlo draws ``M``.
    method : {"auto", "monte_carlo"}
        ``"auto"``: exact for an :class:`~bayesbandit.contract.ExactLaw` policy, else Monte
        Carlo; ``"monte_carlo"``: Monte Carlo for every policy (to check a closed form).

    Returns
    -------
    Propensity
        ``value`` in ``[1/M, 1]`` (exact: ``(0, 1]``), ``se``, ``exact``.
    """
    samples = check_int("propensity", "samples", samples, low=1)
    if _exact("propensity", policy, method):
        probabilities = np.asarray(policy.action_probabilities(state, jnp.asarray(arms)))
        return Propensity(float(probabilities[int(action)]), 0.0, True)
    draws = _draws(policy, state, arms, key, samples)
    if isinstance(policy, Combinatorial):  # a super arm: the same set of lifted indices
        hits = np.all(np.sort(draws, axis=-1) == np.sort(np.asarray(action)), axis=-1)
    else:
        hits = draws.reshape(samples) == np.asarray(action)
    value = max(int(np.sum(hits)), 1) / samples
    return Propensity(value, float(np.sqrt(value * (1.0 - value) / samples)), False)
