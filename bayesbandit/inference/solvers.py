"""Solvers: how a model-based policy fits its reward program to the history, warm-started.

A solver is a frozen dataclass with two pure functions over a *fit* (a NamedTuple with at least
``theta``, the flat unconstrained parameters)::

    fit = solver.init(bound, theta0, rows)        # the starting fit, before any observation
    fit, info = solver.fit(bound, rows, fit)      # refit after new data, from the previous fit
    fit, info = solver.fit(bound, row, fit, prior=fit)  # online Laplace: the last fit is the prior

``rows = (x, y, w)`` are the weighted rows of the history
(:meth:`bayesbandit.inference.BoundModel.potential`). ``info.converged`` is the flag runners read.
``prior=`` (a fit with the Hessian's factor ``chol``) replaces the program's prior by the Gaussian
``N(prior.theta, (prior.chol prior.chol^T)^{-1})``: only solvers that keep the Hessian's factor
(``provides_curvature``) can do it; the others raise :class:`~bayesbandit.errors.InvalidInput`.
``prior_shift=delta`` translates the program's prior, ``P(theta - delta)``
(:meth:`~bayesbandit.inference.BoundModel.potential`): GLM-FPL's prior anchored at a prior draw.

* :class:`DenseNewton` (the default): damped Newton to the MAP, keeping the Cholesky factor of
  the Hessian there (``provides_curvature``: GLM-TSL samples with it). Cost per update
  ``O(p^3 + n p^2)`` for ``p`` parameters; float64 only.
* :class:`FirstOrder`: ``num_steps`` steps of an Optax optimiser on the potential per update,
  never forming a Hessian: for programs with many parameters (neural reward models). It tracks
  the MAP rather than reaching it each round; ``info.converged`` reports that every value stayed
  finite. Works in float32.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, NamedTuple, Protocol

import jax
import jax.numpy as jnp
import optax

from bayesbandit._typing import Array
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.linear_predictor import fast_derivatives, gaussian_derivatives
from bayesbandit.inference.newton import NewtonInfo, newton_minimize
from bayesbandit.inference.online_laplace import rank_one_laplace
from bayesbandit.inference.potential import BoundModel
from bayesbandit.precision import require_x64
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["Solver", "DenseNewton", "NewtonFit", "FirstOrder", "FirstOrderFit", "FirstOrderInfo"]

Rows = tuple[Array, Array, Array]


class Solver(Protocol):
    """The solver slot of a model-based policy (see the module docstring)."""

    provides_curvature: ClassVar[bool]  # whether fits carry ``chol``, the Hessian's factor

    def init(self, bound: BoundModel, theta0: Array, rows: Rows) -> Any: ...

    def fit(
        self, bound: BoundModel, rows: Rows, start: Any, *, prior: Any = None, prior_shift: Array | None = None
    ) -> tuple[Any, Any]: ...


class NewtonFit(NamedTuple):
    """A MAP with the Cholesky factor of the Hessian of the potential at it."""

    theta: Array  # (p,)    unconstrained MAP
    chol: Array  # (p, p)   lower Cholesky factor of the Hessian (the Laplace precision)


@dataclass(frozen=True, kw_only=True)
class DenseNewton:
    """Damped, warm-started Newton's method (:func:`bayesbandit.inference.newton_minimize`).

    Parameters
    ----------
    max_steps : int, >= 1
        Cap on derivative evaluations per update. A solve that reaches it keeps its last
        iterate (the next update continues from there) and reports ``converged = False``.
        Warm-started updates take 1-3. GLM-FPL's perturbed solves with a large ``a`` start far
        from their MAP: with the theory ``a`` (6.7 at d = 20) under a ``N(0, 1)`` prior they take
        up to about 25. Under a weak prior (Figure 1's ``N(0, 100^2)``) that MAP lies about
        ``10^6`` out while arms have few pulls (median 155 steps at d = 20, 20 pulls per arm), so
        such solves stop at the cap; the capped iterate ranks first the exact MAP's arm in
        93-99.5% of draws at 50 steps, 90-98% at 20 (d = 10 and 20, 5 and 20 pulls per arm:
        ``benchmarks/results/bench_fpl_perturbed_cap.md``).
    tol : float, > 0
        Newton-decrement tolerance in nats of log posterior: 1e-8 moves the MAP by far less
        than a posterior standard deviation.
    quadratic_stop : bool
        Stop after a full step whose successor's decrement is provably below ``tol`` (skips
        the confirming derivative pass late in a run; the factor is then one step stale).
    derivatives : {"auto", "generic"}
        ``"auto"``: the GLM fast path (:mod:`bayesbandit.inference.linear_predictor`: gradient
        and Hessian through the linear predictor, one plain Cholesky under a Gaussian prior)
        when the program has a linear predictor, else the generic forward-over-reverse Hessian;
        ``"generic"``: always the latter (the reference the fast path is tested against).
    reuse_factor : bool
        Start each refit with a chord step: the previous fit's Hessian factor and the new
        gradient alone (:func:`~bayesbandit.inference.newton_minimize`'s ``factor0``). For a
        likelihood affine in the reward the Hessian does not depend on the rewards (GLM-FPL's
        perturbed solve) and one new observation changes it by a rank-one term (the update),
        so the chord step lands close to the new MAP and one Hessian evaluation usually
        confirms it. The stopping rule is unchanged, so is the MAP it returns.
    rank_one : bool
        Solve the online Laplace update by one row (``fit(..., prior=...)``) of a program on
        the fast path as a root in one dimension
        (:func:`~bayesbandit.inference.online_laplace.rank_one_laplace`): the same MAP and
        factor as the ``p``-dimensional Newton iteration, for two triangular solves and one
        Cholesky factorisation. ``False``: the Newton iteration (the reference it is tested
        against).
    restart : bool
        The safeguard for potentials that may not be convex (any program off the GLM fast path
        with a Gaussian prior: heavy-tailed rewards, latent noise scales, hierarchies): a
        warm-started solve stopped by ``max_steps`` (still finite, still descending) is solved
        again from the prior median (``newton_minimize``'s ``restart``, in the same loop), and
        that solve's result is kept. A warm start can sit
        where early rounds left it, a noise scale run towards 0 while the rows could still be
        fitted exactly, and no Newton step gets out of there. A solve that fails otherwise (a
        non-finite value, a vanishing step: data with no mode, such as equal rewards under a
        latent noise scale) is reported as it is. On the fast path with a Gaussian prior the
        potential is convex, its MAP unique, and a restart could only repeat the solve: none is
        made. The restart's steps count in ``info.num_steps`` (up to ``2 max_steps``).
    fixed_steps : int, >= 0
        On the GLM fast path with a Gaussian prior (a convex potential), the steps taken as
        straight-line code before Newton's loop
        (:func:`~bayesbandit.inference.newton_minimize`'s fixed-effort start: each step one
        derivative evaluation at its trial point, accepted without a value evaluation; the
        loop only for lanes that have not stopped); for the one-row online solve, iterations of
        its root finder unrolled the same way. The estimator is unchanged: the MAP to ``tol``
        with the Hessian's factor at it. ``0`` (the default): the loop alone. Full-history
        GLM-TSL's refit stops within the chord step and two Newton evaluations in most
        round-runs (1.44 evaluations per update on average at K = 100, d = 10 over 2,000
        rounds), so with ``fixed_steps=2`` a vmapped batch waits on a loop trip only when one of
        its runs needs more. Measured on CPU (K = 100, d = 10, under load) it is faster for a
        single run (x1.29) and for 100 runs (x1.08), slower for 1,000 runs (x0.83) and for
        GLM-FPL's far-from-the-start perturbed solves (x0.93), where a run that needs more than
        the fixed steps pays one more derivative evaluation in the loop; the derivative passes,
        not the loop, are most of a round's cost. Hence the default
        (``benchmarks/results/bench_fused_update.md``). Other programs keep the loop alone.
    loop : bool
        ``False`` (with ``fixed_steps >= 1``, on the GLM fast path with a Gaussian prior and for
        the one-row online solve): the solve is the fixed steps alone, backtracking spread over
        them, with no ``while_loop``, so a vmapped update does the same work in every run and
        round (:func:`~bayesbandit.inference.newton_minimize`'s fixed effort). A refit not within
        ``tol`` after them keeps its last accepted point and the Hessian's factor there, reports
        ``converged = False`` (counted in ``simulate``'s ``not_converged``), and the next refit
        continues from it. With ``fixed_steps=4`` the paired regret over 100 instances equals
        the loop's (``tests/policies/test_fused_update_regret.py``); at K = 100, d = 10 one
        refit in 200,000 ends short of ``tol`` over 100 runs x 2,000 rounds, all of them in
        the first 50 rounds. Measured (``benchmarks/results/bench_runs.md``): on one H200 GPU
        x1.6 faster at 1,000 runs, x0.67 at 100 and even at 10,000; on a CPU slower (four
        derivative passes against 1.1 on average). Hence ``True``, the loop, by default. The
        one-row online solve with ``fixed_steps=4, loop=False`` gave the loop's regret bit for
        bit with no refit short of ``tol`` (K = 100, d = 10, 100 runs x 2,000 rounds), in the
        same time on a CPU (6.9 against 7.2 us per round-run, interleaved; x1.2-1.3 in the
        200-round points of ``bench_runs.md``) and x1.1-1.4 faster on the GPU (500 rounds).
    """

    max_steps: int = 50
    tol: float = 1e-8
    quadratic_stop: bool = True
    derivatives: str = "auto"
    reuse_factor: bool = True
    rank_one: bool = True
    restart: bool = True
    fixed_steps: int = 0
    loop: bool = True

    provides_curvature: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_int("DenseNewton", "max_steps", self.max_steps, low=1)
        check_int("DenseNewton", "fixed_steps", self.fixed_steps, low=0)
        if not isinstance(self.loop, bool):
            raise InvalidInput(f"The 'loop' parameter of DenseNewton must be a bool. Got {self.loop!r} instead.")
        if not self.loop and self.fixed_steps < 1:
            raise InvalidInput(
                "The 'loop' parameter of DenseNewton can be False only with fixed_steps >= 1 (the solve is then the "
                f"fixed steps alone). Got loop=False with fixed_steps={self.fixed_steps}. Fix: pass fixed_steps=3, "
                "say, or loop=True."
            )
        check_scalar("DenseNewton", "tol", self.tol, low=0.0, low_open=True)
        check_choice("DenseNewton", "derivatives", self.derivatives, ("auto", "generic"))

    def init(self, bound: BoundModel, theta0: Array, rows: Rows) -> NewtonFit:
        """Solve from ``theta0`` on ``rows`` (the prior alone for an empty history)."""
        require_x64("DenseNewton")
        return self._solve(bound, rows, theta0, None, None)[0]

    def fit(
        self,
        bound: BoundModel,
        rows: Rows,
        start: NewtonFit,
        *,
        prior: NewtonFit | None = None,
        prior_shift: Array | None = None,
    ) -> tuple[NewtonFit, NewtonInfo]:
        """Newton from ``start`` (a fit on nearby data) to the MAP of ``rows``.

        ``prior``, when given, replaces the program's prior by the Gaussian ``N(prior.theta,
        (prior.chol prior.chol^T)^{-1})``: the online Laplace update (``history="online"``), for
        one row of a program on the fast path solved in one dimension (``rank_one``).
        ``prior_shift`` translates the program's prior instead (module docstring); the restart
        point moves with it.
        """
        if prior is not None and prior_shift is not None:
            raise InvalidInput(
                "DenseNewton.fit takes 'prior' (a Gaussian replacing the program's prior) or 'prior_shift' (the "
                "program's prior translated), not both. Fix: pass one of them."
            )
        predictor = bound.linear_predictor if self.derivatives == "auto" else None
        if prior is not None and rows[0].shape[0] == 1 and self.rank_one and predictor is not None:
            result = rank_one_laplace(
                bound,
                rows,
                prior.theta,
                prior.chol,
                max_steps=self.max_steps,
                tol=self.tol,
                fixed_steps=self.fixed_steps,
                loop=self.loop,
            )
            return NewtonFit(result.theta, result.chol), result.info
        convex = predictor is not None and predictor.gaussian_prior  # the MAP is unique: no restart
        restart = bound.init_theta(start.theta.dtype) if self.restart and prior is None and not convex else None
        if restart is not None and prior_shift is not None:
            restart = restart + prior_shift
        factor0 = start.chol if self.reuse_factor else None
        return self._solve(bound, rows, start.theta, factor0, prior, restart, prior_shift)

    def _solve(
        self,
        bound: BoundModel,
        rows: Rows,
        theta0: Array,
        factor0: Array | None,
        prior: NewtonFit | None,
        restart: Array | None = None,
        prior_shift: Array | None = None,
    ) -> tuple[NewtonFit, NewtonInfo]:
        x, y, w = rows
        gaussian = None if prior is None else gaussian_derivatives(prior.theta, prior.chol)
        predictor = bound.linear_predictor if self.derivatives == "auto" else None
        if gaussian is None:
            fn = lambda t: bound.potential(t, x, y, w, prior_shift=prior_shift)  # noqa: E731
        else:
            fn = lambda t: gaussian(t)[0] - jnp.sum(jnp.where(w > 0, w * bound.log_likelihood(t, x, y), 0.0))  # noqa: E731
        # Plain Cholesky: the likelihood's curvature is PSD on this path, and the prior's (the
        # Gaussian of the last fit, or the program's Gaussian prior, translated or not) positive definite.
        positive_definite = predictor is not None and (gaussian is not None or predictor.gaussian_prior)
        if predictor is None:
            derivatives = None
        elif gaussian is None:
            derivatives = bound.potential_derivatives(x, y, w, prior_shift=prior_shift)
        else:
            derivatives = fast_derivatives(bound, x, y, w, prior=gaussian)
        result = newton_minimize(
            fn,
            theta0,
            max_steps=self.max_steps,
            tol=self.tol,
            quadratic_stop=self.quadratic_stop,
            derivatives=derivatives,
            positive_definite=positive_definite,
            factor0=factor0,
            restart=restart,
            fixed_steps=self.fixed_steps if positive_definite else 0,
            loop=self.loop or not positive_definite,
        )
        return NewtonFit(result.theta, result.chol), result.info


class FirstOrderFit(NamedTuple):
    """Parameters and the optimiser's state."""

    theta: Array  # (p,) unconstrained parameters
    opt_state: Any  # the Optax optimiser's state


class FirstOrderInfo(NamedTuple):
    """What one first-order update did."""

    converged: Array  # () bool: every parameter and the gradient stayed finite
    grad_norm: Array  # ()  ||grad U|| at the last step's starting point


def _adam() -> optax.GradientTransformation:
    return optax.adam(1e-2)


@dataclass(frozen=True)
class FirstOrder:
    """``num_steps`` Optax steps on the weighted potential per update, from the previous fit.

    .. math::  \\theta \\leftarrow \\theta + \\mathrm{optimizer}(\\nabla_\\theta U(\\theta; x, y, w))

    Parameters
    ----------
    optimizer : optax.GradientTransformation
        Default ``optax.adam(1e-2)``.
    num_steps : int, >= 1
        Optimiser steps per update (static).
    """

    _: KW_ONLY
    optimizer: Any = field(default_factory=_adam)
    num_steps: int = 1

    provides_curvature: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_int("FirstOrder", "num_steps", self.num_steps, low=1)

    def init(self, bound: BoundModel, theta0: Array, rows: Rows) -> FirstOrderFit:
        """The starting point and a fresh optimiser state (no step is taken)."""
        return FirstOrderFit(theta0, self.optimizer.init(theta0))

    def fit(
        self,
        bound: BoundModel,
        rows: Rows,
        start: FirstOrderFit,
        *,
        prior: None = None,
        prior_shift: Array | None = None,
    ) -> tuple[FirstOrderFit, FirstOrderInfo]:
        """``num_steps`` optimiser steps from ``start`` (on the prior translated by ``prior_shift`` when given).

        ``prior`` must be ``None``: a first-order fit keeps no Hessian factor to form the online
        Laplace prior from (``provides_curvature`` is false).
        """
        if prior is not None:
            raise InvalidInput(
                "The 'prior' argument of FirstOrder.fit must be None: FirstOrder keeps no Hessian factor, so it "
                f"cannot replace the program's prior by the last fit's Gaussian. Got {type(prior).__name__}. "
                "Fix: use bayesbandit.inference.DenseNewton for the online Laplace update."
            )
        x, y, w = rows
        grad_fn = jax.grad(lambda t: bound.potential(t, x, y, w, prior_shift=prior_shift))

        def step(carry: FirstOrderFit, _: Any) -> tuple[FirstOrderFit, Array]:
            grad = grad_fn(carry.theta)
            updates, opt_state = self.optimizer.update(grad, carry.opt_state, carry.theta)
            return FirstOrderFit(optax.apply_updates(carry.theta, updates), opt_state), jnp.linalg.norm(grad)

        fit, norms = jax.lax.scan(step, start, None, length=self.num_steps)
        finite = jnp.all(jnp.isfinite(fit.theta)) & jnp.all(jnp.isfinite(norms))
        return fit, FirstOrderInfo(finite, norms[-1])
