"""The policy contract and the pieces every policy shares.

A policy is a frozen dataclass of hyper-parameters with three pure functions (Optax / BlackJAX
style), so whole experiments ``jit``, ``vmap`` and ``scan``::

    state = policy.init(arms)                      # fixed arm set, shape (K, d)
    state = policy.init(d=d, capacity=n)           # contextual: arms change every round
    arm, info = policy.select(state, arms, key)    # pure; info reports, never feeds back
    state = policy.update(state, arm_or_features, reward)

Numeric hyper-parameters are pytree leaves (a sweep over them is one ``vmap``); structural ones
(the model, iteration caps) are static.

Initial exploration (Kveton et al. 2020, Section 5.1: "all algorithms pull d linearly
independent arms initially"): for the first ``num_explore`` rounds (default ``d``) every policy
pulls the arm with the largest component outside the span of the features pulled so far. On a
fixed arm set the order is computed once by ``init`` (greedy pivoted Gram-Schmidt,
:func:`exploration_order`), so the first ``d`` pulls form a basis whenever the arms span
``R^d`` and later rounds pay nothing for it; with contextual features each exploration round
maximises ``x_i^T (G + eps I)^{-1} x_i`` over that round's arms. Either way it ignores
rewards, as the paper's template (Algorithm 1) requires.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp

from bayesbandit._numerics import cho_solve, jittered_cholesky, random_argmax
from bayesbandit._typing import Array, ArrayLike, PRNGKey, PyTree
from bayesbandit.inference.newton import NewtonInfo

__all__ = ["Policy", "PolicyInfo", "register_policy"]

DEFAULT_CAPACITY = 1024


class PolicyInfo(NamedTuple):
    """What ``select`` reports about its choice."""

    scores: Array  # (K,)  the score maximised (random among ties)
    theta: Array  # (p,)   the parameters the scores were computed from (sampled, perturbed or MAP)
    exploring: Array  # ()  bool, whether this was an initial-exploration round
    newton: NewtonInfo  # the Newton solve behind ``theta`` (this round's or the last update's)


class Policy(Protocol):
    """The pure policy contract (see the module docstring)."""

    def init(self, arms: ArrayLike | None = None, *, d: int | None = None, capacity: int | None = None) -> PyTree: ...

    def select(self, state: PyTree, arms: Array, key: PRNGKey) -> tuple[Array, PolicyInfo]: ...

    def update(self, state: PyTree, arm_or_features: Array, reward: Array) -> PyTree: ...


def register_policy(data_fields: list[str]):
    """Class decorator: a frozen dataclass registered as a pytree with ``data_fields`` as leaves."""

    def wrap(cls):
        cls = dataclasses.dataclass(frozen=True)(cls)
        meta = [f.name for f in dataclasses.fields(cls) if f.name not in data_fields]
        return jax.tree_util.register_dataclass(cls, data_fields=data_fields, meta_fields=meta)

    return wrap


def exploration_scores(gram: Array, arms: Array) -> Array:
    """``x_i^T (G + eps I)^{-1} x_i`` for each arm: large for directions not yet pulled.

    Parameters
    ----------
    gram : array, shape (d, d)
        Unweighted design matrix of the pulls so far.
    arms : array, shape (K, d)
    """
    d = gram.shape[0]
    eps = 1e-9 * jnp.maximum(1.0, jnp.trace(gram) / d)
    chol, _ = jittered_cholesky(gram + eps * jnp.eye(d, dtype=gram.dtype))
    return jnp.sum(arms * cho_solve(chol, arms.T).T, axis=1)


def exploration_order(arms: Array, num: int) -> Array:
    """Greedy pivoted Gram-Schmidt: ``num`` arm indices, each with the largest residual norm
    after projecting out the arms chosen before it.

    Parameters
    ----------
    arms : array, shape (K, d)
    num : int
        How many indices (static); past the rank of ``arms`` the residuals vanish and the
        remaining picks are arbitrary.

    Returns
    -------
    int array, shape (num,)
    """

    def pick(residual, _):
        i = jnp.argmax(jnp.sum(residual**2, axis=1))
        q = residual[i] / jnp.maximum(jnp.linalg.norm(residual[i]), jnp.finfo(arms.dtype).tiny)
        return residual - jnp.outer(residual @ q, q), i

    _, order = jax.lax.scan(pick, arms, None, length=num)
    return order.astype(jnp.int32)


def choose(
    key: PRNGKey,
    scores: Array,
    arms: Array,
    t: Array,
    num_explore: int,
    order: Array | None,
    gram: Callable[[], Array],
) -> tuple[Array, Array]:
    """The arm to pull and whether this is an initial-exploration round.

    Outside exploration: a random-tie-break argmax of ``scores``. In exploration round ``t``:
    ``order[t]`` for a fixed arm set, else the arm maximising :func:`exploration_scores` under
    the design matrix ``gram()`` (computed only in exploration rounds).
    """
    exploring = t < num_explore
    if num_explore == 0:
        return random_argmax(key, scores), exploring
    if order is not None:
        greedy = random_argmax(key, scores)
        return jnp.where(exploring, order[jnp.minimum(t, num_explore - 1)], greedy), exploring
    chosen = jax.lax.cond(exploring, lambda: exploration_scores(gram(), arms), lambda: scores)
    return random_argmax(key, chosen), exploring


def resolve_num_explore(num_explore: int | None, d: int) -> int:
    return d if num_explore is None else num_explore


def update_features(arms: Array | None, arm_or_features: Array) -> Array:
    """Feature vector of the pulled arm: ``arms[i]`` for a fixed arm set, else the features given."""
    return arm_or_features if arms is None else arms[arm_or_features]


def model_of(policy: Any) -> Any:
    """The reward model a policy acts on, or ``None`` for model-free (linear) policies."""
    return getattr(policy, "model", None)
