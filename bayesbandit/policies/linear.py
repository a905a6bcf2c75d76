"""LinTS (Agrawal and Goyal 2013) and LinUCB (Li et al. 2010; Abbasi-Yadkori et al. 2011).

Both keep the ridge-regression statistics ``B_t = lam I + sum_l X_l X_l^T`` and
``b_t = sum_l Y_l X_l`` (``O(d^2)`` per update) and factor ``B_t`` once per ``select``.
They need no reward program: the model is linear, ``E[Y | x] = x^T theta``.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._numerics import cho_solve, mahalanobis_norms, solve_lower_transpose
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit._validation import check_scalar
from bayesbandit.inference.newton import NewtonInfo
from bayesbandit.policies._base import (
    PolicyInfo,
    choose,
    exploration_order,
    register_policy,
    resolve_num_explore,
    update_features,
)

__all__ = ["LinState", "LinTS", "LinUCB"]


class LinState(NamedTuple):
    """State of a linear policy."""

    arms: Array | None  # (K, d) fixed arm set, or None for contextual features
    precision: Array  # (d, d) B_t = lam I + sum X X^T
    b: Array  # (d,) sum Y X
    t: Array  # () int32, rounds observed
    explore_order: Array | None  # (num_explore,) int32 initial pulls on a fixed arm set, else None


@dataclass(frozen=True)
class _Linear:
    lam: float = 1.0
    _: KW_ONLY
    num_explore: int | None = None

    def init(self, arms: ArrayLike | None = None, *, d: int | None = None, capacity: int | None = None) -> LinState:
        """Initial state for a fixed arm set ``arms`` (K, d) or contextual features of dimension ``d``."""
        if arms is not None:
            arms = jnp.asarray(arms, dtype=jnp.float64)
            d = arms.shape[1]
        if d is None:
            raise TypeError("init needs the arm set, init(arms), or the feature dimension, init(d=...).")
        order = None if arms is None else exploration_order(arms, resolve_num_explore(self.num_explore, d))
        return LinState(arms, self.lam * jnp.eye(d), jnp.zeros(d), jnp.asarray(0, jnp.int32), order)

    def _scores(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey) -> tuple[Array, Array]:
        """Per-arm scores and the parameters behind them (LinTS: a sample; LinUCB: the estimate)."""
        raise NotImplementedError

    def update(self, state: LinState, arm_or_features: Array, reward: Array) -> LinState:
        """Add ``x x^T`` to ``B`` and ``reward * x`` to ``b``."""
        x = update_features(state.arms, arm_or_features)
        return state._replace(precision=state.precision + jnp.outer(x, x), b=state.b + reward * x, t=state.t + 1)

    def select(self, state: LinState, arms: Array, key: PRNGKey) -> tuple[Array, PolicyInfo]:
        """Choose an arm among ``arms`` (K, d)."""
        arms = jnp.asarray(arms, dtype=jnp.float64)
        d = arms.shape[1]
        key_scores, key_choice = jax.random.split(key)
        chol = jnp.linalg.cholesky(state.precision)
        theta_hat = cho_solve(chol, state.b)
        scores, theta = self._scores(chol, theta_hat, arms, key_scores)
        num_explore = resolve_num_explore(self.num_explore, d)

        def gram() -> Array:
            return state.precision - self.lam * jnp.eye(d)

        arm, exploring = choose(key_choice, scores, arms, state.t, num_explore, state.explore_order, gram)
        done = NewtonInfo(jnp.asarray(0, jnp.int32), jnp.asarray(0.0), jnp.asarray(0.0), jnp.asarray(True))
        return arm, PolicyInfo(scores, theta, exploring, done)


@register_policy(data_fields=["lam", "v"])
class LinTS(_Linear):
    """Linear Thompson sampling.

    .. math::  \\tilde\\theta_t \\sim N(B_t^{-1} b_t, v^2 B_t^{-1}), \\qquad I_t = \\arg\\max_i x_i^T \\tilde\\theta_t

    (Agrawal and Goyal 2013, Algorithm 1; ``v`` is their posterior scale, ``lam`` the ridge).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.LinTS(lam=1.0, v=0.5).v
    0.5
    """

    v: float = 1.0

    def __post_init__(self) -> None:
        check_scalar("LinTS", "lam", self.lam, low=0.0, low_open=True)
        check_scalar("LinTS", "v", self.v, low=0.0)

    def _scores(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey) -> tuple[Array, Array]:
        xi = jax.random.normal(key, theta_hat.shape, dtype=theta_hat.dtype)
        theta = theta_hat + self.v * solve_lower_transpose(chol, xi)
        return arms @ theta, theta


@register_policy(data_fields=["lam", "alpha"])
class LinUCB(_Linear):
    """Linear upper confidence bound.

    .. math::  I_t = \\arg\\max_i x_i^T \\hat\\theta_t + \\alpha \\|x_i\\|_{B_t^{-1}}

    (Li et al. 2010; ``alpha`` the width, ``lam`` the ridge).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.LinUCB(alpha=0.5).alpha
    0.5
    """

    alpha: float = 1.0

    def __post_init__(self) -> None:
        check_scalar("LinUCB", "lam", self.lam, low=0.0, low_open=True)
        check_scalar("LinUCB", "alpha", self.alpha, low=0.0)

    def _scores(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey) -> tuple[Array, Array]:
        return arms @ theta_hat + self.alpha * mahalanobis_norms(chol, arms), theta_hat
