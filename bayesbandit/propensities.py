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

Logged propensities (the serve-time rule)
-----------------------------------------
A Monte Carlo estimate ``p_hat`` from draws independent of the action is noisy, and ``1 / p_hat``
is biased upward (Jensen), so inverse-propensity weighting with it is biased. The serve-time
rule of :func:`select_logged` and :func:`logged_propensity` avoids this: the action is one of
``M`` exchangeable selections ``D_1 = A, D_2, ..., D_M`` (the action's own and ``M - 1`` more),
and the logged propensity is the action's frequency among them,
``p_hat(A) = #{j : D_j = A} / M``. Conditional on the multiset of draws, ``A`` is uniform over
the ``M`` positions (exchangeability), so ``P(A = a | draws) = p_hat(a)`` exactly: ``p_hat`` is
the action's true propensity given the draws. For a target ``pi_e`` and rewards of mean
``mu_a``, ``E[pi_e(A) r / p_hat(A) | draws] = sum_{a : p_hat(a) > 0} pi_e(a) mu_a``, so IPS with
the logged ``p_hat`` is exactly unbiased for the value restricted to the arms drawn at least
once; the remaining (positivity) bias is ``-E[sum_a pi_e(a) mu_a 1{p_hat(a) = 0}]``, at most
``sum_a pi_e(a) mu_a (1 - p_a)^(M - 1)`` in magnitude, which ``M`` controls. Marginally ``A``
has the law of one ``select`` (it is ``D_1``), and ``p_hat >= 1 / M`` always.

Batched target distributions
----------------------------
:func:`action_distributions` gives the law of a frozen policy on each of ``n`` rows of arms
(logged contexts) in one compiled call: ``vmap`` over rows of a ``vmap`` over ``M`` keys (rows
in chunks, to bound memory), exact per row for an :class:`~bayesbandit.contract.ExactLaw`
policy.
"""

from __future__ import annotations

import functools
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import per_policy
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import Combinatorial, ExactLaw, policy_kind
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = [
    "Propensity",
    "action_distribution",
    "action_distributions",
    "propensity",
    "logged_propensity",
    "select_logged",
    "DEFAULT_SAMPLES",
]

DEFAULT_SAMPLES = 1000
"""Monte Carlo draws ``M`` a propensity estimate takes by default."""


class Propensity(NamedTuple):
    """``p(action | state, arms)``, its standard error (0 when exact), and whether it is exact."""

    value: float
    se: float
    exact: bool


def _selections(policy: Any, state: Any, arms: Any, key: PRNGKey, samples: int) -> Array:
    """The actions of ``samples`` selections from ``state`` on keys split from ``key`` (one ``vmap``)."""
    actions, _ = jax.vmap(policy.select, in_axes=(None, None, 0))(state, arms, jax.random.split(key, samples))
    return actions


def _frequencies(actions: Array, num_arms: int, dtype: Any) -> Array:
    """How often each of ``num_arms`` arms appears among ``actions``, shape (K,)."""
    return jnp.zeros(num_arms, dtype).at[actions.reshape(-1)].add(1.0)


@functools.lru_cache(maxsize=64)
def _sampler(policy: Any, samples: int) -> Any:
    """``(state, arms, key) -> actions`` of ``samples`` selections with keys split from ``key``: one compiled call."""
    return jax.jit(functools.partial(_selections, policy), static_argnums=3)


def _draws(policy: Any, state: Any, arms: Any, key: PRNGKey, samples: int) -> np.ndarray:
    """``samples`` actions of ``policy`` from ``state`` on independent keys."""
    if policy_kind(policy) == "host":
        return np.asarray([np.asarray(policy.select(state, arms, k)[0]) for k in jax.random.split(key, samples)])
    return np.asarray(per_policy(_sampler, policy, samples)(state, arms, key, samples))


Method = Literal["auto", "monte_carlo"]


def _exact(where: str, policy: Any, method: Method) -> bool:
    if method not in ("auto", "monte_carlo"):
        raise InvalidInput(
            f"{where}: the 'method' argument must be 'auto' (exact where the policy states its law) or "
            f"'monte_carlo'. Got {method!r}."
        )
    return method == "auto" and isinstance(policy, ExactLaw) and not isinstance(policy, Combinatorial)


def action_distribution(
    key: PRNGKey, policy: Any, state: Any, arms: Any, *, samples: int = DEFAULT_SAMPLES, method: Method = "auto"
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
    key: PRNGKey,
    policy: Any,
    state: Any,
    arms: Any,
    action: Any,
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
        return _exact_propensity(policy, state, arms, action)
    hits = _hits(policy, _draws(policy, state, arms, key, samples), action)
    value = max(int(np.sum(hits)), 1) / samples
    return Propensity(value, float(np.sqrt(value * (1.0 - value) / samples)), False)


def _exact_propensity(policy: Any, state: Any, arms: Any, action: Any) -> Propensity:
    """``action``'s probability from an :class:`~bayesbandit.contract.ExactLaw` policy's stated law."""
    probabilities = np.asarray(policy.action_probabilities(state, jnp.asarray(arms)))
    return Propensity(float(probabilities[int(action)]), 0.0, True)


def _hits(policy: Any, draws: Any, action: Any) -> Any:
    """Which of ``draws`` equal ``action`` (for a super arm: the same set of lifted indices); traceable."""
    if isinstance(policy, Combinatorial):
        return jnp.all(jnp.sort(draws, axis=-1) == jnp.sort(jnp.asarray(action)), axis=-1)
    return jnp.reshape(draws, (draws.shape[0],)) == jnp.asarray(action)


def logged_propensity(
    key: PRNGKey,
    policy: Any,
    state: Any,
    arms: Any,
    action: Any,
    *,
    samples: int = DEFAULT_SAMPLES,
    method: Method = "auto",
) -> Propensity:
    """The propensity to log with ``action``, the policy's own selection from ``state``: exact given the draws.

    ``action`` must be the outcome of ``policy.select(state, arms, k)`` on a key ``k``
    independent of ``key``. It counts as the first of ``samples`` exchangeable selections, the
    other ``samples - 1`` are drawn with ``key``, and the value is the action's frequency among
    all of them, ``(1 + #{j >= 2 : D_j = action}) / samples`` (module docstring: inverse
    weighting by it is unbiased for the value on the arms drawn). Exact (standard error 0) for an
    :class:`~bayesbandit.contract.ExactLaw` policy. The standard error reported for a Monte Carlo
    value is the binomial ``sqrt(p (1 - p) / M)`` of ``p_hat`` as an estimate of the
    unconditional propensity.
    """
    samples = check_int("logged_propensity", "samples", samples, low=1)
    if _exact("logged_propensity", policy, method):
        return _exact_propensity(policy, state, arms, action)
    hits = 0 if samples == 1 else int(np.sum(_hits(policy, _draws(policy, state, arms, key, samples - 1), action)))
    value = (1 + hits) / samples
    return Propensity(value, float(np.sqrt(value * (1.0 - value) / samples)), False)


def select_logged(key: PRNGKey, policy: Any, state: Any, arms: Array, samples: int) -> tuple[Array, Array]:
    """One selection and the frequencies of every arm among ``samples`` draws (module docstring), pure and jittable.

    ``samples`` selections on keys split from ``key`` (``vmap``); the action is the first, so
    its law is that of one ``select``. Returns ``(action, frequencies)`` with ``frequencies``
    of shape (K,): the propensity to log is ``frequencies[action]``, the exact probability of
    the action given the draws; the arms with frequency 0 are where positivity fails. For
    single-arm JAX policies.
    """
    actions = _selections(policy, state, arms, key, samples)
    return actions[0], _frequencies(actions, arms.shape[0], arms.dtype) / samples


@functools.lru_cache(maxsize=64)
def _rows_sampler(policy: Any, samples: int, num_arms: int, batch: int) -> Any:
    """``(state, arms (n, K, d), key) -> counts (n, K)`` of ``samples`` selections per row: one compiled call."""

    def row_counts(state: Any, arms: Array, key: PRNGKey) -> Array:
        return _frequencies(_selections(policy, state, arms, key, samples), num_arms, arms.dtype)

    def counts(state: Any, arms: Array, key: PRNGKey) -> Array:
        keys = jax.random.split(key, arms.shape[0])
        return jax.lax.map(lambda row: row_counts(state, *row), (arms, keys), batch_size=batch)

    return jax.jit(counts)


def action_distributions(
    key: PRNGKey,
    policy: Any,
    state: Any,
    arms: Any,
    *,
    samples: int = DEFAULT_SAMPLES,
    method: Method = "auto",
    batch: int | None = None,
) -> tuple[Array, Array]:
    """The law of ``policy.select(state, arms[i], key)`` on each row ``i``: ``(probabilities, standard errors)``, each (n, K).

    Parameters
    ----------
    policy, state
        A single-arm JAX policy and the state it is frozen at.
    arms : array, shape (n, K, d)
        The arm set of each row (a logged context's arms).
    key : PRNGKey
        The Monte Carlo draws' key (row ``i`` uses the ``i``-th of ``split(key, n)``).
    samples : int
        Monte Carlo draws ``M`` per row.
    method : {"auto", "monte_carlo"}
        As in :func:`action_distribution`.
    batch : int, optional
        Rows computed at once (bounds memory: ``batch * samples * K`` scores); default such
        that about ``2^22`` scores are live.

    Returns
    -------
    probabilities, se : arrays, shape (n, K)
        Exact (``se = 0``) for an :class:`~bayesbandit.contract.ExactLaw` policy (``vmap`` of
        its ``action_probabilities``); else the frequencies of ``samples`` selections per row,
        ``se = sqrt(p (1 - p) / M)``.
    """
    samples = check_int("action_distributions", "samples", samples, low=1)
    arms = jnp.asarray(arms, dtype=float)
    if arms.ndim != 3 or arms.shape[0] == 0:
        raise InvalidInput(
            "action_distributions: the 'arms' argument must have shape (n, K, d) with n >= 1 (one arm set per "
            f"row). Got shape {tuple(arms.shape)}. Fix: stack the rows' arm sets, or use action_distribution "
            "for one arm set."
        )
    if policy_kind(policy) == "host" or isinstance(policy, Combinatorial):
        raise InvalidInput(
            f"action_distributions: the 'policy' argument must be a single-arm JAX policy; got "
            f"{type(policy).__name__}. Fix: call action_distribution row by row for it."
        )
    n, num_arms = int(arms.shape[0]), int(arms.shape[1])
    if _exact("action_distributions", policy, method):
        probabilities = jax.jit(jax.vmap(policy.action_probabilities, in_axes=(None, 0)))(state, arms)
        return probabilities, jnp.zeros_like(probabilities)
    rows = batch if batch is not None else max(1, 2**22 // (samples * num_arms))
    rows = check_int("action_distributions", "batch", rows, low=1)
    probabilities = per_policy(_rows_sampler, policy, samples, num_arms, min(rows, n))(state, arms, key) / samples
    return probabilities, jnp.sqrt(probabilities * (1.0 - probabilities) / samples)
