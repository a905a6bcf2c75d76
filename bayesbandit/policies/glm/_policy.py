"""What the GLM policies (GLM-TSL, GLM-FPL, GLM-UCB, UCB-GLM, epsilon-greedy) share.

State holds the history (per-arm statistics when exact, else a row buffer), the solver's fit
of the reward program warm-started from the previous round (for the default
:class:`~bayesbandit.inference.DenseNewton`: the MAP and the Cholesky factor of the Hessian
there), the round count, and the initial exploration order on a fixed arm set. ``update`` refits
once per round and returns the solver's info, so ``select`` only samples, perturbs or scores.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._base import RewardSupport
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.history import ArmHistory, RowHistory
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.inference.solvers import DenseNewton, Solver
from bayesbandit.policies._explore import DEFAULT_CAPACITY, choose, exploration_order, init_arms, resolve_num_explore
from bayesbandit.validation import check_choice

__all__ = ["GLMState", "GLMPolicy"]


class GLMState(NamedTuple):
    """State of a GLM policy."""

    history: ArmHistory | RowHistory
    fit: Any  # the solver's fit: NewtonFit (theta (p,), chol (p, p)) or FirstOrderFit (theta, opt_state)
    t: Array  # () int32, rounds observed
    explore_order: Array | None  # (num_explore,) int32 initial pulls on a fixed arm set, else None


@dataclass(frozen=True)
class GLMPolicy:
    """Base of the GLM policies: ``init``, ``select`` and ``update`` are shared, ``scores`` differs.

    Fields shared by every GLM policy (keyword-only after ``model``):

    solver : Solver
        How the program is fitted each round: :class:`~bayesbandit.inference.DenseNewton`
        (default) or :class:`~bayesbandit.inference.FirstOrder`.
    num_explore : int, optional
        Initial exploration rounds (``None``: ``d``).
    obs_site : str
        Name of the observed reward site.
    init_params : {"prior_median", "prior_draw"}
        Where the first fit starts: the prior median, or a draw from the prior with ``init``'s
        ``key`` (what a network's weights need).
    """

    kind: ClassVar[Literal["jax"]] = "jax"
    needs_curvature: ClassVar[bool] = False

    model: Any
    _: KW_ONLY
    solver: Solver = field(default_factory=DenseNewton)
    num_explore: int | None = None
    obs_site: str = "y"
    init_params: str = "prior_median"

    def _check_common(self) -> None:
        owner = type(self).__name__
        check_choice(owner, "init_params", self.init_params, ("prior_median", "prior_draw"))
        if self.needs_curvature and not self.solver.provides_curvature:
            raise InvalidInput(
                f"The 'solver' parameter of {owner} must provide the Hessian's factor (provides_curvature); "
                f"got {type(self.solver).__name__}. Fix: use bayesbandit.inference.DenseNewton."
            )

    # ------------------------------------------------------------------------- the model
    def bound(self, d: int) -> BoundModel:
        """The reward program bound to ``d``-dimensional features."""
        return bound_for(self.model, (d,), self.obs_site)

    def reward_support(self, d: int) -> RewardSupport:
        """The observed site's support, for validating rewards."""
        bound = self.bound(d)
        return RewardSupport(bound.support, bound.support_name)

    def posterior_rows(self, state: GLMState) -> tuple[Array, Array, Array]:
        """The weighted rows ``(x, y, w)`` the posterior is built from."""
        return state.history.rows()

    # ------------------------------------------------------------------------- the buffer
    def capacity(self, state: GLMState) -> int | None:
        """Row-buffer capacity, or ``None`` for per-arm statistics."""
        return state.history.capacity if isinstance(state.history, RowHistory) else None

    def reserve(self, state: GLMState, num_rows: int) -> GLMState:
        """A state with room for ``num_rows`` more rows (doubling the buffer; outside jit)."""
        history = state.history
        if not isinstance(history, RowHistory) or int(history.size) + num_rows <= history.capacity:
            return state
        return state._replace(history=history.grow(max(2 * history.capacity, int(history.size) + num_rows)))

    # ------------------------------------------------------------------------- contract
    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> GLMState:
        """Initial state: empty history, the solver's fit from the prior.

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
        key : PRNGKey, optional
            Needed with ``init_params="prior_draw"``.
        """
        owner = type(self).__name__
        arms, d = init_arms(owner, arms, d)
        bound = self.bound(d)
        history: ArmHistory | RowHistory
        if arms is not None and bound.is_affine:
            history = ArmHistory.create(arms)
        else:
            history = RowHistory.create(capacity or DEFAULT_CAPACITY, d)
        if self.init_params == "prior_draw":
            if key is None:
                raise InvalidInput(f"{owner}.init needs a key with init_params='prior_draw': init(..., key=key).")
            theta0 = bound.sample_prior(key)
        else:
            theta0 = bound.init_theta()
        fit = self.solver.init(bound, theta0, history.rows())
        order = None if arms is None else exploration_order(arms, resolve_num_explore(self.num_explore, d))
        return GLMState(history, fit, jnp.asarray(0, jnp.int32), order)

    def update(self, state: GLMState, arms: Array, action: Array, feedback: Array) -> tuple[GLMState, Any]:
        """Record the reward of ``arms[action]`` and refit (warm-started); returns the solver's info.

        Parameters
        ----------
        arms : array, shape (K, d)
            This round's arm set (the one ``action`` indexes).
        action : int array, shape ()
        feedback : float array, shape ()
        """
        arms = jnp.asarray(arms, dtype=float)
        history: ArmHistory | RowHistory
        if isinstance(state.history, ArmHistory):
            history = state.history.add(action, feedback)
        else:
            history = state.history.add(arms[action], feedback)
        fit, info = self.solver.fit(self.bound(arms.shape[1]), history.rows(), state.fit)
        return state._replace(history=history, fit=fit, t=state.t + 1), info

    def select(self, state: GLMState, arms: Array, key: PRNGKey) -> tuple[Array, Any]:
        """Choose an arm among ``arms`` (shape (K, d)); returns the index and the policy's Info."""
        arms = jnp.asarray(arms, dtype=float)
        key_scores, key_choice = jax.random.split(key)
        scores, info = self.scores(state, arms, key_scores, self.bound(arms.shape[1]))
        num_explore = resolve_num_explore(self.num_explore, arms.shape[1])
        action, exploring = choose(
            key_choice, scores, arms, state.t, num_explore, state.explore_order, state.history.gram
        )
        return action, info._replace(exploring=exploring)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, Any]:
        """Per-arm scores and the policy's Info (with ``exploring`` filled in by ``select``)."""
        raise NotImplementedError
