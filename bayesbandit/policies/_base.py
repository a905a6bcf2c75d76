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
pulls the arm with the largest component outside the span of the features pulled so far,
``argmax_i x_i^T (G + eps I)^{-1} x_i``. On a fixed arm set this is greedy pivoted QR, so the
first ``d`` pulls form a basis whenever the arms span ``R^d``; it ignores rewards, as the
paper's template (Algorithm 1) requires.
"""

from __future__ import annotations

import dataclasses
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


def choose(key: PRNGKey, scores: Array, explore: Array, exploring: Array) -> Array:
    """Random-tie-break argmax of ``scores``, or of ``explore`` scores in exploration rounds."""
    return random_argmax(key, jnp.where(exploring, explore, scores))


def resolve_num_explore(num_explore: int | None, d: int) -> int:
    return d if num_explore is None else num_explore


def update_features(arms: Array | None, arm_or_features: Array) -> Array:
    """Feature vector of the pulled arm: ``arms[i]`` for a fixed arm set, else the features given."""
    return arm_or_features if arms is None else arms[arm_or_features]


def model_of(policy: Any) -> Any:
    """The reward model a policy acts on, or ``None`` for model-free (linear) policies."""
    return getattr(policy, "model", None)
