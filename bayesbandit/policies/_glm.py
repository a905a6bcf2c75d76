"""Machinery shared by the GLM policies (GLM-TSL, GLM-FPL, GLM-UCB, UCB-GLM, epsilon-greedy).

State holds the history (per-arm statistics when exact, else a row buffer), the MAP of the
reward model's posterior warm-started from the previous round, and the Cholesky factor of the
Hessian at that MAP. ``update`` runs the warm-started Newton solve once per round, so ``select``
only samples, perturbs or scores.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.history import ArmHistory, RowHistory
from bayesbandit.inference.bind import BoundModel, bound_for
from bayesbandit.inference.newton import NewtonInfo, NewtonResult, newton
from bayesbandit.policies._base import (
    DEFAULT_CAPACITY,
    PolicyInfo,
    choose,
    exploration_order,
    resolve_num_explore,
    update_features,
)

__all__ = ["GLMState", "GLMPolicy"]


class GLMState(NamedTuple):
    """State of a GLM policy."""

    history: ArmHistory | RowHistory
    arms: Array | None  # (K, d) fixed arm set, or None for contextual features
    fit: NewtonResult  # MAP theta (p,), Cholesky of the Hessian there (p, p), Newton info
    t: Array  # () int32, rounds observed
    explore_order: Array | None  # (num_explore,) int32 initial pulls on a fixed arm set, else None


@dataclass(frozen=True)
class GLMPolicy:
    """Base of the GLM policies: ``init`` and ``update`` are shared, ``scores`` differs.

    Fields shared by every GLM policy (keyword-only after ``model``): ``max_newton`` (cap on
    Newton iterations per update), ``tol`` (Newton-decrement tolerance in nats of log posterior;
    1e-8 moves the MAP by far less than a posterior standard deviation, and lets the quadratic
    stop of :func:`bayesbandit.inference.newton` skip the confirming pass late in a run),
    ``num_explore`` (initial exploration rounds; ``None`` means ``d``) and ``obs_site``.
    A solve that hits ``max_newton`` keeps its last iterate (the next update continues from it)
    and reports ``info.newton.converged = False``; ``simulate`` counts these as
    ``newton_failures`` and ``Agent`` warns.
    """

    model: Any
    _: KW_ONLY
    max_newton: int = 20
    tol: float = 1e-8
    num_explore: int | None = None
    obs_site: str = "y"

    def bound(self, d: int) -> BoundModel:
        """The reward model bound to ``d``-dimensional features."""
        return bound_for(self.model, (d,), self.obs_site)

    def fit(self, bound: BoundModel, rows: tuple[Array, Array, Array], theta0: Array) -> NewtonResult:
        """Warm-started MAP of the weighted rows ``(x, y, w)`` (Newton with the quadratic stop)."""
        x, y, w = rows
        return newton(
            lambda t: bound.potential(t, x, y, w), theta0, max_steps=self.max_newton, tol=self.tol, quadratic_stop=True
        )

    def init(self, arms: ArrayLike | None = None, *, d: int | None = None, capacity: int | None = None) -> GLMState:
        """Initial state: empty history, MAP = prior mode.

        Parameters
        ----------
        arms : array, shape (K, d), optional
            A fixed arm set. Per-arm sufficient statistics are kept when the likelihood is affine
            in the reward (exact), else a row buffer of ``capacity`` rows.
        d : int, optional
            Feature dimension for contextual use (arms change every round; row buffer).
        capacity : int, optional
            Row-buffer capacity (``bayesbandit.Agent`` doubles it when full; under ``scan``
            give the horizon).
        """
        if arms is not None:
            arms = jnp.asarray(arms, dtype=jnp.float64)
            d = arms.shape[1]
        if d is None:
            raise TypeError("init needs the arm set, init(arms), or the feature dimension, init(d=...).")
        bound = self.bound(d)
        history: ArmHistory | RowHistory
        if arms is not None and bound.is_affine:
            history = ArmHistory.create(arms)
        else:
            history = RowHistory.create(capacity or DEFAULT_CAPACITY, d)
        fit = self.fit(bound, history.rows(), bound.init_theta())
        order = None if arms is None else exploration_order(arms, resolve_num_explore(self.num_explore, d))
        stored_arms = None if isinstance(history, ArmHistory) else arms
        return GLMState(history, stored_arms, fit, jnp.asarray(0, jnp.int32), order)

    def update(self, state: GLMState, arm_or_features: Array, reward: Array) -> GLMState:
        """Record one observation and refit the MAP (warm-started Newton).

        Parameters
        ----------
        arm_or_features : int or array, shape (d,)
            The arm index for a fixed arm set, else the pulled features.
        reward : float
        """
        history: ArmHistory | RowHistory
        if isinstance(state.history, ArmHistory):
            history = state.history.add(arm_or_features, reward)
            d = state.history.arms.shape[1]
        else:
            history = state.history.add(update_features(state.arms, arm_or_features), reward)
            d = state.history.x.shape[1]
        fit = self.fit(self.bound(d), history.rows(), state.fit.theta)
        return state._replace(history=history, fit=fit, t=state.t + 1)

    def select(self, state: GLMState, arms: Array, key: PRNGKey) -> tuple[Array, PolicyInfo]:
        """Choose an arm among ``arms`` (shape (K, d)); returns the index and a :class:`PolicyInfo`."""
        arms = jnp.asarray(arms, dtype=jnp.float64)
        key_scores, key_choice = jax.random.split(key)
        bound = self.bound(arms.shape[1])
        scores, theta, info = self.scores(state, arms, key_scores, bound)
        num_explore = resolve_num_explore(self.num_explore, arms.shape[1])
        arm, exploring = choose(key_choice, scores, arms, state.t, num_explore, state.explore_order, state.history.gram)
        return arm, PolicyInfo(scores, theta, exploring, info)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, Array, NewtonInfo]:
        """Per-arm scores, the parameters behind them, and the Newton info (policy-specific)."""
        raise NotImplementedError
