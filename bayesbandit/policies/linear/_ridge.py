"""Ridge-regression statistics shared by LinTS and LinUCB.

Both keep ``B_t = lam I + sum_l X_l X_l^T`` and ``b_t = sum_l Y_l X_l`` (``O(d^2)`` per
update) and factor ``B_t`` once per ``select``: the precision form of
``bayesbandit._gaussian_linear``. They need no reward program: the model is
linear, ``E[Y | x] = x^T theta``, and rewards may be any real number. Both run in float32 or
float64 (JAX's default float).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit import _gaussian_linear as gl
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import RewardSupport
from bayesbandit.policies._explore import DesignExploration, choose, exploration_order, init_arms, resolve_num_explore
from bayesbandit.validation import check_int

__all__ = ["RidgeState", "RidgeUpdateInfo", "RidgePolicy"]


class RidgeState(NamedTuple):
    """State of a ridge-regression policy."""

    precision: Array  # (d, d) B_t = lam I + sum X X^T
    b: Array  # (d,) sum Y X
    t: Array  # () int32, rounds observed
    explore_order: Array | None  # (num_explore,) int32 initial pulls on a fixed arm set, else None


class RidgeUpdateInfo(NamedTuple):
    """What a ridge ``update`` reports."""

    converged: Array  # () bool: recorded, and the statistics stayed finite
    recorded: Array  # () bool: the action was in [0, K) and the observation stored


@dataclass(frozen=True)
class RidgePolicy(DesignExploration):
    """Base of LinTS and LinUCB: ``init``, ``update`` and ``select`` shared; ``scores`` differs.

    ``lam`` (> 0) is the ridge, ``num_explore`` the initial exploration rounds (``None``: ``d``).
    """

    kind: ClassVar[Literal["jax"]] = "jax"

    _: KW_ONLY
    lam: float = 1.0
    num_explore: int | None = None

    def _check_common(self) -> None:
        if self.num_explore is not None:
            check_int(type(self).__name__, "num_explore", self.num_explore, low=0)

    def reward_support(self, d: int) -> RewardSupport:
        """Any real reward."""
        return RewardSupport(None, "any real number")

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> RidgeState:
        """Initial state for a fixed arm set ``arms`` (K, d) or contextual features of dimension ``d``."""
        arms, d = init_arms(type(self).__name__, arms, d)
        order = None if arms is None else exploration_order(arms, resolve_num_explore(self.num_explore, d))
        return RidgeState(*gl.isotropic(self.lam, d), jnp.asarray(0, jnp.int32), order)

    def update(self, state: RidgeState, arms: Array, action: Array, feedback: Array) -> tuple[RidgeState, Any]:
        """Add ``x x^T`` to ``B`` and ``feedback * x`` to ``b``, with ``x = arms[action]``.

        An action outside ``[0, K)`` or a non-finite result leaves the state unchanged and is
        reported (``recorded``, ``converged``), inside ``jit`` too.
        """
        arms = jnp.asarray(arms, dtype=state.b.dtype)
        recorded = (action >= 0) & (action < arms.shape[0])
        x = arms[jnp.clip(action, 0, arms.shape[0] - 1)]
        precision, b = gl.observe(state.precision, state.b, x, feedback)
        new = state._replace(precision=precision, b=b, t=state.t + 1)
        keep = recorded & jnp.all(jnp.isfinite(b)) & jnp.all(jnp.isfinite(precision))
        new = jax.tree.map(lambda n, o: jnp.where(keep, n, o), new, state)
        return new, RidgeUpdateInfo(keep, recorded)

    def discount(self, state: RidgeState, gamma: ArrayLike, *, refit: bool = True) -> RidgeState:
        r"""Every observation's weight times ``gamma`` in ``(0, 1]``, the prior's kept (the stabilised rule):

        .. math::  B \leftarrow \gamma B + (1 - \gamma) \lambda I, \qquad b \leftarrow \gamma b,

        so ``B = lam I + sum_s gamma^{t-s} x_s x_s^T`` and ``b = sum_s gamma^{t-s} y_s x_s`` when
        applied every round (``bayesbandit._gaussian_linear.discount_precision``). ``refit``
        has nothing to do here (``select`` solves for the mean). ``gamma`` is not validated
        (jittable): :class:`bayesbandit.drift.Discounted` and :meth:`bayesbandit.Agent.decay` check it.
        """
        d = state.b.shape[-1]
        gamma = jnp.asarray(gamma, state.b.dtype)
        prior = self.lam * jnp.eye(d, dtype=state.b.dtype)
        precision, b = gl.discount_precision(state.precision, state.b, gamma, prior)
        return state._replace(precision=precision, b=b)

    def forget(
        self, state: RidgeState, arms: Array, action: Array, feedback: Array, *, refit: bool = True
    ) -> RidgeState:
        """Remove one earlier observation, the inverse of :meth:`update`: ``B -= x x^T``, ``b -= y x``
        (``x = arms[action]``). ``t`` (rounds played) is not changed; an action outside ``[0, K)``
        changes nothing."""
        arms = jnp.asarray(arms, dtype=state.b.dtype)
        valid = (action >= 0) & (action < arms.shape[0])
        x = arms[jnp.clip(action, 0, arms.shape[0] - 1)]
        precision, b = gl.observe(state.precision, state.b, x, feedback, weight=-1.0)
        new = state._replace(precision=precision, b=b)
        return jax.tree.map(lambda n, o: jnp.where(valid, n, o), new, state)

    def select(self, state: RidgeState, arms: Array, key: PRNGKey) -> tuple[Array, Any]:
        """Choose an arm among ``arms`` (K, d); returns the index and the policy's Info."""
        arms = jnp.asarray(arms, dtype=state.b.dtype)
        d = arms.shape[1]
        key_scores, key_choice = jax.random.split(key)
        chol, theta_hat = gl.estimate(state.precision, state.b)
        scores, info = self.scores(chol, theta_hat, arms, key_scores)
        action, exploring = choose(key_choice, scores, arms, *self._choice_inputs(state, d))
        return action, info._replace(exploring=exploring)

    def _choice_inputs(self, state: RidgeState, d: int) -> tuple[Array, int, Array | None, Any]:
        """``(t, num_explore, order, gram)``: what :func:`choose` takes besides the scores."""

        def gram() -> Array:
            return state.precision - self.lam * jnp.eye(d, dtype=state.b.dtype)

        return state.t, resolve_num_explore(self.num_explore, d), state.explore_order, gram

    def scores(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey) -> tuple[Array, Any]:
        """Per-arm scores and the policy's Info (with ``exploring`` filled in by ``select``)."""
        raise NotImplementedError
