"""What the GLM policies (GLM-TSL, GLM-FPL, GLM-UCB, UCB-GLM, epsilon-greedy) share.

State holds the history (per-arm statistics when exact, else a row buffer), the solver's fit
of the reward program warm-started from the previous round (for the default
:class:`~bayesbandit.inference.DenseNewton`: the MAP and the Cholesky factor of the Hessian
there), the round count, and the initial exploration order on a fixed arm set. ``update`` refits
once per round and returns the solver's info, so ``select`` only samples, perturbs or scores.
"""

from __future__ import annotations

import functools
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit import _gaussian_linear as gl
from bayesbandit._compile import jit_once
from bayesbandit._gaussian_linear import DesignInverse
from bayesbandit._numerics import tie_probabilities
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.history import ArmHistory, OnlineHistory, RowHistory
from bayesbandit.inference.potential import BoundModel
from bayesbandit.inference.prior_check import check_prior_mode
from bayesbandit.inference.solvers import DenseNewton, Solver
from bayesbandit.policies._explore import (
    DEFAULT_CAPACITY,
    DesignExploration,
    choice_scores,
    choose,
    exploration_order,
    init_arms,
    resolve_num_explore,
)
from bayesbandit.policies._program import ProgramPolicy
from bayesbandit.policies.glm._risks import warn_lock_in_risks
from bayesbandit.validation import check_choice, check_int

__all__ = ["GLMState", "GLMPolicy", "GLMUpdateInfo", "EDGE"]


EDGE = 100.0  # |unconstrained value| of a constrained site beyond which its fit is degenerate


class GLMUpdateInfo(NamedTuple):
    """What a GLM policy's ``update`` reports."""

    converged: Array  # () bool: recorded, and the fit converged and was kept
    recorded: Array  # () bool: the observation was stored (action in range, room in the buffer)
    fit_rejected: Array  # () bool: the new fit was degenerate; the state kept the last good one
    theta: Array  # (p,) the new fit's parameters (whether kept or not)
    solver: Any  # the solver's own info (NewtonInfo, FirstOrderInfo)


class GLMState(NamedTuple):
    """State of a GLM policy."""

    history: ArmHistory | RowHistory | OnlineHistory
    fit: Any  # the solver's fit: NewtonFit (theta (p,), chol (p, p)) or FirstOrderFit (theta, opt_state)
    t: Array  # () int32, rounds observed
    explore_order: Array | None  # (num_explore,) int32 initial pulls on a fixed arm set, else None
    design: DesignInverse | None = None  # G_t and its inverse, for the policies that widen by ||x||_{G_t^-1}


@dataclass(frozen=True)
class GLMPolicy(DesignExploration, ProgramPolicy):
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
    history : {"full", "online"}
        ``"full"``: the posterior is fitted to the whole history every round (per-arm
        statistics when exact, else a row buffer whose cost grows with ``t``). ``"online"``: the
        recursive (assumed-density) Laplace posterior, whose cost per round does not grow:

        .. math::  \bar\theta_t, H_t = \arg\\min_\theta \tfrac12 (\theta - \bar\theta_{t-1})^T
                   H_{t-1} (\theta - \bar\theta_{t-1}) - \\log p(Y_t \\mid X_t, \theta),

        with ``H_t`` the Hessian there, starting from the Laplace approximation of the prior.
        It forgets the curvature the earlier rewards would add at the new MAP, so it drifts
        from the full-history posterior; ``benchmarks/bench_online.py`` measures how far (KL).
        For a program on the GLM fast path the default solver finds this MAP as a root in one
        dimension (:mod:`bayesbandit.inference.online_laplace`): ``O(p^2)`` per round.
        It needs the Hessian (``DenseNewton``) and keeps no rows, so it serves GLM-TSL, GLM-UCB,
        UCB-GLM and epsilon-greedy, not GLM-FPL (which perturbs the rewards of the whole history).
    """

    kind: ClassVar[Literal["jax"]] = "jax"
    needs_curvature: ClassVar[bool] = False
    needs_rows: ClassVar[bool] = False
    keeps_design: ClassVar[bool] = False  # carry G_t^{-1} (rank-one updates) in the state
    fixed_width: ClassVar[bool] = False  # the exploration bonus is a width in reward units (GLM-UCB's)

    model: Any
    _: KW_ONLY
    solver: Solver = field(default_factory=DenseNewton)
    num_explore: int | None = None
    obs_site: str = "y"
    init_params: str = "prior_median"
    history: str = "full"

    def _check_common(self) -> None:
        owner = type(self).__name__
        check_choice(owner, "init_params", self.init_params, ("prior_median", "prior_draw"))
        check_choice(owner, "history", self.history, ("full", "online"))
        if self.history == "online" and (self.needs_rows or not self.solver.provides_curvature):
            raise InvalidInput(
                f"The 'history' parameter of {owner} cannot be 'online' here: the online Laplace posterior needs "
                f"the Hessian (DenseNewton) and keeps no rows{' (which ' + owner + ' perturbs)' if self.needs_rows else ''}. "
                "Fix: use history='full'."
            )
        if self.num_explore is not None:
            check_int(owner, "num_explore", self.num_explore, low=0)
        if not isinstance(self.obs_site, str):
            raise InvalidInput(f"The 'obs_site' parameter of {owner} must be a str. Got {self.obs_site!r} instead.")
        if self.needs_curvature and not self.solver.provides_curvature:
            raise InvalidInput(
                f"The 'solver' parameter of {owner} must provide the Hessian's factor (provides_curvature); "
                f"got {type(self.solver).__name__}. Fix: use bayesbandit.inference.DenseNewton."
            )

    # ------------------------------------------------------------------------- the model
    def check_program(self, d: int) -> None:
        """Raise :class:`~bayesbandit.errors.ModelSpecError` if the program has no joint mode to follow.

        Called by ``Agent`` and ``simulate`` before anything runs (see
        :mod:`bayesbandit.inference.prior_check`). A program on which this policy is known to
        lock in gets a :class:`~bayesbandit.errors.PosteriorQualityWarning` naming why
        (``bayesbandit/policies/glm/_risks.py``).
        """
        bound = self.bound(d)
        check_prior_mode(bound, type(self).__name__)
        warn_lock_in_risks(bound, type(self).__name__, online=self.history == "online", fixed_width=self.fixed_width)

    def posterior_rows(self, state: GLMState) -> tuple[Array, Array, Array]:
        """The weighted rows ``(x, y, w)`` the posterior is built from (not kept by ``history="online"``)."""
        if isinstance(state.history, OnlineHistory):
            raise InvalidInput(
                f"{type(self).__name__} with history='online' keeps no rows to fit another posterior to. "
                "Fix: use history='full' to compare its posterior with NUTS along a run."
            )
        return state.history.rows()

    def explain_update(self, info: GLMUpdateInfo, d: int) -> str:
        """Plain words for an update that did not converge (what ``Agent`` warns with)."""
        owner = type(self).__name__
        if not bool(info.recorded):
            return f"{owner}: the observation was not recorded (action out of range or row buffer full)."
        if bool(info.fit_rejected):
            bound = self.bound(d)
            theta = np.asarray(info.theta)
            values = bound.unravel(theta)
            mask = bound.constrained_mask()
            bad = [
                name
                for name, block in bound.site_slices().items()
                if not np.all(np.isfinite(theta[block])) or np.any(mask[block] & (np.abs(theta[block]) > EDGE))
            ]
            where = ", ".join(f"'{n}' (unconstrained value {np.asarray(values[n]).ravel()[:3]})" for n in bad)
            return (
                f"{owner}: the fit of {where or 'the parameters'} ran to the edge of its range: the data so far "
                "cannot pin it down (for example, when all rewards so far are equal the MAP of a noise scale goes "
                "to 0, and with separable data an unregularised coefficient grows without bound). The policy "
                "keeps its last good fit, records the data, and refits as more varied data arrive."
            )
        steps = getattr(info.solver, "num_steps", None)
        detail = "" if steps is None else f" in {int(steps)} steps"
        return (
            f"{owner}: the solver did not reach the MAP{detail} (the data moved the posterior further than one "
            "update's step cap allows, or the posterior is very flat); the fit is its last iterate, finite, and "
            "the next update continues from there."
        )

    # ------------------------------------------------------------------------- the buffer
    def capacity(self, state: GLMState) -> int | None:
        """Row-buffer capacity, or ``None`` for per-arm statistics."""
        return state.history.capacity if isinstance(state.history, RowHistory) else None

    def filled(self, state: GLMState) -> int:
        """Rows used in the buffer (0 for per-arm statistics and the online posterior)."""
        return int(state.history.size) if isinstance(state.history, RowHistory) else 0

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
        if self.init_params == "prior_draw" and key is None:
            raise InvalidInput(f"{owner}.init needs a key with init_params='prior_draw': init(..., key=key).")
        self.bound(d)  # bound (and checked) outside the compiled program
        return _initial_state(self, None if arms is None else jnp.asarray(arms), d, capacity, key)

    def _init_state(self, arms: Array | None, d: int, capacity: int | None, key: PRNGKey | None) -> GLMState:
        """The state :meth:`init` returns (traceable; ``d`` and ``capacity`` static)."""
        bound = self.bound(d)
        history: ArmHistory | RowHistory | OnlineHistory
        if self.history == "online":
            history = OnlineHistory.create(d)
        elif arms is not None and bound.is_affine:
            history = ArmHistory.create(arms)
        else:
            history = RowHistory.create(capacity or DEFAULT_CAPACITY, d)
        if self.init_params == "prior_draw" and key is not None:  # init checked that the key is given
            theta0 = bound.sample_prior(key)
        else:
            theta0 = bound.init_theta()
        empty = (jnp.zeros((1, d)), jnp.zeros(1), jnp.zeros(1))  # the prior alone
        fit = self.solver.init(bound, theta0, empty if isinstance(history, OnlineHistory) else history.rows())
        order = None if arms is None else exploration_order(arms, resolve_num_explore(self.num_explore, d))
        design = DesignInverse.create(d) if self.keeps_design else None
        return GLMState(history, fit, jnp.asarray(0, jnp.int32), order, design)

    def update(self, state: GLMState, arms: Array, action: Array, feedback: Array) -> tuple[GLMState, GLMUpdateInfo]:
        """Record the reward of ``arms[action]`` and refit (warm-started).

        Nothing is lost or corrupted silently, inside ``jit`` too:

        * an action outside ``[0, K)``, or a full row buffer, leaves the state unchanged and
          reports ``recorded = False`` (``Agent`` validates first; ``simulate`` sizes the
          buffer to the horizon);
        * a degenerate fit (a non-finite parameter or factor, or a constrained site's
          unconstrained value beyond ``+-EDGE``, i.e. a scale of 0 or infinity: all rewards so
          far equal make a noise scale's MAP go to 0) is not kept: the state records the
          observation and keeps the last good fit, reports ``fit_rejected = True``, and the
          next update refits from there, so the policy recovers once the data pin the
          parameter down.

        Parameters
        ----------
        arms : array, shape (K, d)
            This round's arm set (the one ``action`` indexes).
        action : int array, shape ()
        feedback : float array, shape ()

        Returns
        -------
        state : GLMState
        info : GLMUpdateInfo
        """
        arms = jnp.asarray(arms, dtype=float)
        num_arms = arms.shape[0]
        recorded = (action >= 0) & (action < num_arms)
        index = jnp.clip(action, 0, num_arms - 1)
        bound = self.bound(arms.shape[1])
        history: ArmHistory | RowHistory | OnlineHistory
        if isinstance(state.history, OnlineHistory):
            history = state.history.add(arms[index])
            row = (arms[index][None], jnp.reshape(feedback, (1,)).astype(arms.dtype), jnp.ones(1, arms.dtype))
            fit, solver_info = self.solver.fit(bound, row, state.fit, prior=state.fit)
        else:
            if isinstance(state.history, ArmHistory):
                history = state.history.add(index, feedback)
            else:
                recorded = recorded & (state.history.size < state.history.capacity)
                history = state.history.add(arms[index], feedback)
            fit, solver_info = self.solver.fit(bound, history.rows(), state.fit)
        attempted = fit.theta
        fit, healthy = _kept_fit(bound, fit, state.fit)
        design = None if state.design is None else state.design.add(arms[index])
        new_state = state._replace(history=history, fit=fit, t=state.t + 1, design=design)
        new_state = jax.tree.map(lambda new, old: jnp.where(recorded, new, old), new_state, state)
        converged = jnp.asarray(solver_info.converged) & recorded & healthy
        return new_state, GLMUpdateInfo(converged, recorded, recorded & ~healthy, attempted, solver_info)

    # ------------------------------------------------------------------------- forgetting
    def discount(self, state: GLMState, gamma: ArrayLike, *, refit: bool = True) -> GLMState:
        r"""Multiply the weight of every observation so far by ``gamma`` in ``(0, 1]``; the prior keeps its weight.

        * ``history="full"`` (:class:`~bayesbandit.contract.Discounts`): per-arm counts and sums, or
          row weights, times ``gamma``. Applied every round, the refit MAP and its Hessian are the
          discounted Laplace fit (``docs/drift.md``; spec 2.3)

          .. math::  \hat\theta_t = \arg\max_\theta \sum_{s \le t} \gamma^{t-s} \log p(y_s \mid x_s, \theta)
                     + \log p_0(\theta), \qquad
                     \Lambda_t = -\nabla^2 \log p_0(\hat\theta_t) + \sum_s \gamma^{t-s} \nabla^2 (-\log p(y_s \mid x_s, \hat\theta_t)),

          for any reward program; the prior is never discounted, so the precision keeps the
          prior's curvature in every direction no observation excites.
        * ``history="online"`` keeps only ``N(mu, Lambda^{-1})``: the stabilised rule (Kulhavy and
          Zarrop; bayesianbandits' ``forgetting.rst``)

          .. math::  \bar\Lambda = \gamma \Lambda + (1 - \gamma) \Lambda_0, \qquad
                     \bar\Lambda \bar\mu = \gamma \Lambda \mu + (1 - \gamma) \Lambda_0 \mu_0,

          with ``(mu_0, Lambda_0)`` the Laplace approximation of the prior (the solver's fit of the
          empty history, what ``init`` starts from). Since each online update only adds curvature,
          ``Lambda >= Lambda_0`` always and ``bar Lambda >= Lambda_0``: the smallest eigenvalue stays
          at the prior's floor however long it runs.

        GLM-UCB's and UCB-GLM's design ``G_t`` is discounted too (``G <- gamma G``).

        Parameters
        ----------
        state : GLMState
        gamma : float in (0, 1]
            Not validated here (jittable): :class:`bayesbandit.drift.Discounted` and
            :meth:`bayesbandit.Agent.decay` check it.
        refit : bool
            Refit the MAP to the discounted history (warm-started; a degenerate fit is not kept,
            as in :meth:`update`; at ``gamma = 1`` the fit is kept as it is). ``False`` leaves it for the next ``update`` (the online
            posterior needs no refit: the rule above is its new fit).
        """
        dtype = state.fit.theta.dtype
        gamma = jnp.asarray(gamma, dtype)
        design = None if state.design is None else state.design.scale(gamma)
        if isinstance(state.history, OnlineHistory):
            bound = self.bound(state.history.design.shape[0])
            prior_mean, prior_chol = (jnp.asarray(a, dtype) for a in _prior_laplace(cast(Any, self.solver), bound))
            prior_precision = prior_chol @ prior_chol.T
            precision = state.fit.chol @ state.fit.chol.T
            precision, b = gl.discount_precision(
                precision, precision @ state.fit.theta, gamma, prior_precision, prior_precision @ prior_mean
            )
            chol, theta = gl.estimate(0.5 * (precision + precision.T), b)
            fit = state.fit._replace(theta=theta, chol=chol)
            return state._replace(history=state.history.discount(gamma), fit=fit, design=design)
        history = state.history.discount(gamma)
        state = state._replace(history=history, design=design)
        if not refit:
            return state
        # gamma = 1 leaves the history as the last update fitted it: keep that fit, not a polished one.
        return jax.lax.cond(gamma == 1.0, lambda: state, lambda: self._refit(state, history))

    def forget(self, state: GLMState, arms: Array, action: Array, feedback: Array, *, refit: bool = True) -> GLMState:
        """Remove one earlier observation: the inverse of :meth:`update`'s data term for the same inputs.

        Per-arm statistics lose one pull of ``arms[action]`` and its reward; a row buffer empties
        the newest row equal to ``(arms[action], feedback)`` (weight 0: its log-likelihood term
        leaves the potential exactly; the slot is not reused); the design loses ``x x^T``. The
        round count ``t`` is not changed (it counts rounds played). An action outside ``[0, K)``
        changes nothing. With ``refit`` the MAP is refitted as in :meth:`update`.

        Raises
        ------
        InvalidInput
            With ``history="online"``: that posterior keeps no rows, so no observation can be
            taken out of it.
        """
        old = state.history
        if isinstance(old, OnlineHistory):
            raise InvalidInput(
                f"{type(self).__name__}.forget: with history='online' the posterior keeps no rows, so one "
                "observation cannot be removed from it (the Forgets capability, which SlidingWindow needs). "
                "Fix: use history='full', or forget geometrically with bayesbandit.drift.Discounted."
            )
        arms = jnp.asarray(arms, dtype=float)
        num_arms = arms.shape[0]
        index = jnp.clip(action, 0, num_arms - 1)
        if isinstance(old, ArmHistory):
            history: ArmHistory | RowHistory = old.remove(index, feedback)
        else:
            history = old.remove(arms[index], jnp.asarray(feedback, arms.dtype))
        design = None if state.design is None else state.design.remove(arms[index])
        new_state = state._replace(history=history, design=design)
        if refit:
            new_state = self._refit(new_state, history)
        valid = (action >= 0) & (action < num_arms)
        return jax.tree.map(lambda new, old: jnp.where(valid, new, old), new_state, state)

    def _refit(self, state: GLMState, history: ArmHistory | RowHistory) -> GLMState:
        """The state with its MAP refitted to ``history`` (its own), warm-started (a degenerate fit is not kept)."""
        bound = self.bound((history.arms if isinstance(history, ArmHistory) else history.x).shape[1])
        fit, _ = self.solver.fit(bound, history.rows(), state.fit)
        return state._replace(fit=_kept_fit(bound, fit, state.fit)[0])

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

    def _choice_law(self, state: GLMState, arms: Array, scores: Array) -> tuple[Array, Array]:
        """``(law of select's arm given these scores, exploring)``: see :func:`choose`."""
        num_explore = resolve_num_explore(self.num_explore, arms.shape[1])
        chosen, exploring = choice_scores(scores, arms, state.t, num_explore, state.explore_order, state.history.gram)
        return tie_probabilities(chosen), exploring


class ExactScores:
    """Mixin of GLM policies whose scores are not random (the UCB rules): ``select``'s law is exact."""

    def action_probabilities(self: Any, state: GLMState, arms: Array) -> Array:
        """The probability of each arm under ``select(state, arms, key)`` over ``key``, shape (K,):
        uniform over the tied maxima of the scores (or of the initial-exploration rule)."""
        arms = jnp.asarray(arms, dtype=float)
        scores, _ = self.scores(state, arms, jax.random.PRNGKey(0), self.bound(arms.shape[1]))
        return self._choice_law(state, arms, scores)[0]


def _kept_fit(bound: BoundModel, fit: Any, last: Any) -> tuple[Any, Array]:
    """``(fit to keep, healthy)``: ``fit``, or ``last`` when ``fit`` is degenerate (a non-finite value, or a
    constrained site's unconstrained value beyond ``+-EDGE``: :meth:`GLMPolicy.update`)."""
    edge = jnp.asarray(bound.constrained_mask()) & (jnp.abs(fit.theta) > EDGE)
    healthy = ~jnp.any(edge)
    for leaf in jax.tree.leaves(fit):
        if jnp.issubdtype(leaf.dtype, jnp.inexact):
            healthy = healthy & jnp.all(jnp.isfinite(leaf))
    return jax.tree.map(lambda new, old: jnp.where(healthy, new, old), fit, last), healthy


@functools.lru_cache(maxsize=64)
def _prior_laplace(solver: Solver, bound: BoundModel) -> tuple[np.ndarray, np.ndarray]:
    """``(mu_0, chol Lambda_0)``: the solver's fit of the empty history from the prior median, as ``init``
    computes it, evaluated once per program outside any trace (the stabilised discount's floor)."""
    with jax.core.eval_context():
        d = bound.feature_shape[0]
        empty = (jnp.zeros((1, d)), jnp.zeros(1), jnp.zeros(1))
        fit = solver.init(bound, bound.init_theta(), empty)
        return np.asarray(fit.theta), np.asarray(fit.chol)


@functools.partial(jit_once, static_argnums=(2, 3))
def _initial_state(
    policy: GLMPolicy, arms: Array | None, d: int, capacity: int | None, key: PRNGKey | None
) -> GLMState:
    """``policy._init_state`` compiled: one program builds the state and solves for the prior's fit."""
    return policy._init_state(arms, d, capacity, key)
