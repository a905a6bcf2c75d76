"""Damped, warm-started Newton's method for MAP estimation of a bound reward model.

Each iteration evaluates the gradient ``g`` and Hessian ``H`` of the potential ``U`` in one
pass (the value ``U(theta)`` is carried from the line search that accepted ``theta``), factors
``H`` (shifted to positive definite if it is not: ``bayesbandit._numerics.jittered_cholesky``)
and computes the Newton decrement
``lambda^2 = g^T H^{-1} g``. It stops when ``lambda^2 / 2 <= tol`` (an estimate of
``U(theta) - U*``). Otherwise it steps to ``theta + s d``, ``d = -H^{-1} g``, with the largest
``s`` in ``1, 1/4, 1/16, ...`` that satisfies the Armijo condition
``U(theta + s d) <= U(theta) + c s g^T d``, found by an inner loop of potential values only: a
rejected trial costs one evaluation of ``U``, never a derivative pass. (Carrying the step length
to the next iteration instead, which re-differentiates at the same point after every rejection,
spent up to 20 derivative passes on the far-from-the-start perturbed solves of GLM-FPL with the
theory ``a``: 16% of its rounds hit the cap at d = 20, none with the inner loop.) A step
length below ``1e-9`` stops the solve as failed.

The factor returned is the Hessian's at the returned ``theta`` (the Laplace approximation needs
it at the MAP: Kveton et al. 2020, eq. 5; spec pitfall 4), except with ``quadratic_stop``:
when a full step is accepted from a point with ``lambda < 1/4``, the decrement after it is at
most ``2 (lambda^2/2)^2 / (1 - lambda)^4`` for self-concordant potentials (Nesterov 2004,
Thm 4.1.14), and if that bound is below ``tol`` the solve stops without another derivative
evaluation; the factor is then the Hessian's one step before ``theta``, with a relative error
of order ``lambda <= (2 tol)^{1/4}``. Policies use it (it halves the per-round cost of a
warm-started update late in a run); :func:`map_estimate` does not. If ``max_steps`` is reached
first, ``info.converged`` is false.

**Fixed-effort start** (``fixed_steps = m > 0``). A vmapped ``while_loop`` runs every lane until
the slowest one stops, and the loop above spends potential evaluations on line-search trials that
a warm start nearly always accepts. With ``m > 0`` the solve first takes ``m`` steps as
straight-line code: from ``theta0`` it moves by the chord step (with ``factor0``) or by the Newton
step there, and each step evaluates the derivatives once, at the trial point ``theta + d``,
which gives both the test of the trial and the next step. On a convex potential
(``positive_definite``) the trial is accepted when

.. math::  g(\\theta + d)^T d \\le c\\, g(\\theta)^T d \\quad\\text{or}\\quad \\lambda^2(\\theta + d) < 1/16 .

The first is Armijo's condition without a value: convexity along the segment gives
``U(theta + d) - U(theta) <= g(theta + d)^T d``. The second puts the trial in the region where
full Newton steps converge quadratically (``lambda < 1/4``, Nesterov 2004, Thm 4.1.14, the
region ``quadratic_stop`` relies on); a full step near the MAP often overshoots the minimum
along ``d`` by a little, which the first test alone would reject. Off convexity the trial is
accepted by Armijo's condition on the value from the same derivative pass. A lane stops when
the decrement at its accepted point is ``<= tol``, with the factor of the Hessian there (never
stale); a rejected trial is retried a quarter as far in the next fixed step, and the loop above
continues every lane not stopped from its last accepted point (its value, unknown on a convex
potential, computed there). The estimator is the same (the MAP to ``tol``, the factor at it); a
warm-started refit usually stops within the fixed steps, so a vmapped batch makes no loop trip at all.

**Fixed effort** (``loop=False``). The fixed steps alone: every lane makes exactly ``m``
derivative evaluations, so a vmapped solve has no ``while_loop`` and no trip count that differs
across lanes (on a GPU, a loop's every trip waits for the host to read its condition). With
``quadratic_stop``, a lane whose last decrement puts the next Newton step provably within
``tol`` (the bound above) takes that step without evaluating there. A lane still not within
``tol`` keeps its last accepted point and the factor there and reports ``converged = False``;
a bandit's next refit starts from it.

The derivatives come from ``derivatives`` when given (the GLM fast path of
:mod:`bayesbandit.inference.linear_predictor`), else from a forward-over-reverse pass over
``fn``; ``positive_definite=True`` (a Hessian known to be positive definite) factors with one
plain Cholesky instead of the shifted one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, TypeVar

import jax
import jax.numpy as jnp

from bayesbandit._linalg import cho_solve, cholesky
from bayesbandit._numerics import jittered_cholesky
from bayesbandit._typing import Array, ArrayLike
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.linear_predictor import Derivatives, generic_derivatives
from bayesbandit.validation import check_int

__all__ = ["NewtonInfo", "NewtonResult", "newton_minimize"]

C = TypeVar("C")

_ARMIJO = 1e-4
_MIN_SCALE = 1e-9
_QUADRATIC = 1.0 / 16.0  # lambda^2 below which full Newton steps converge quadratically (lambda < 1/4)


class NewtonInfo(NamedTuple):
    """Diagnostics of one Newton solve (reported, never fed back)."""

    num_steps: Array  # ()  int32, derivative evaluations (Newton iterations, the last one a check)
    grad_norm: Array  # ()  float, ||g|| at the last evaluation
    decrement: Array  # ()  float, Newton decrement lambda^2 / 2 at the last evaluation
    converged: Array  # ()  bool, decrement <= tol and every value finite


class NewtonResult(NamedTuple):
    """A MAP estimate with the factor of the Hessian at it."""

    theta: Array  # (p,)    unconstrained MAP
    chol: Array  # (p, p)   lower Cholesky factor of the Hessian of U at theta (the precision)
    info: NewtonInfo


class _Carry(NamedTuple):
    i: Array
    theta: Array
    value: Array  # fn(theta): from the accepted trial of the line search, so no pass recomputes it
    chol: Array
    grad_norm: Array
    decrement: Array
    done: Array  # converged: stop, theta is the MAP
    failed: Array  # non-finite derivatives or a vanishing step: stop
    steps: Array  # derivative evaluations so far, over both starts
    restarted: Array  # the solve went back to ``restart`` after reaching the cap


def unrolled_while(cond: Callable[[C], Array], body: Callable[[C], C], init: C, unrolled: int, loop: bool = True) -> C:
    """``lax.while_loop(cond, body, init)`` with its first ``unrolled`` trips as straight-line code.

    Each unrolled trip keeps the old carry where ``cond`` is false, which is what a vmapped
    ``while_loop`` does to a lane that has stopped; the loop then runs while some lane is still
    going. The result is the loop's; a vmapped batch whose lanes all stop within ``unrolled``
    iterations makes no loop trip, at the price of computing every unrolled iteration in every lane.
    ``loop=False``: the unrolled trips alone (at most ``unrolled`` iterations, no ``while_loop``).
    """
    c = init
    for _ in range(unrolled):
        go = cond(c)
        c = jax.tree.map(lambda new, old, go=go: jnp.where(go, new, old), body(c), c)
    return jax.lax.while_loop(cond, body, c) if loop else c


def _next_within_tol(decrement: Array, tol: ArrayLike) -> Array:
    """Whether a full Newton step from a point of this decrement ``lambda^2 / 2`` provably lands within
    ``tol``: ``lambda < 1/4`` and the bound ``2 (lambda^2/2)^2 / (1 - lambda)^4 <= tol`` (module docstring)."""
    lam = jnp.sqrt(2.0 * jnp.maximum(decrement, 0.0))
    predicted = 2.0 * decrement**2 / (1.0 - jnp.minimum(lam, 0.5)) ** 4
    return (lam < 0.25) & (predicted <= tol)


def _line_search(
    fn: Callable[[Array], Array], theta: Array, value: Array, step: Array, slope: Array, active: Array
) -> tuple[Array, Array, Array, Array]:
    """Backtrack ``s = 1, 1/4, 1/16, ...`` until ``fn(theta + s step) <= value + c s slope`` (Armijo).

    Returns whether it moved, the new point and its value (unchanged when it did not move, or
    when ``active`` is false), and the step length.
    """

    def rejected(carry: tuple[Array, Array]) -> Array:
        scale, trial = carry
        return active & ~(trial <= value + _ARMIJO * scale * slope) & (scale >= _MIN_SCALE)

    def backtrack(carry: tuple[Array, Array]) -> tuple[Array, Array]:
        scale = 0.25 * carry[0]
        return scale, fn(theta + scale * step)

    # The first trial (s = 1) is the loop's first iteration: one copy of ``fn`` in the program, not two.
    start = (jnp.asarray(4.0, value.dtype), jnp.asarray(jnp.inf, value.dtype))
    scale, trial = jax.lax.while_loop(rejected, backtrack, start)
    moved = active & (trial <= value + _ARMIJO * scale * slope)
    return moved, jnp.where(moved, theta + scale * step, theta), jnp.where(moved, trial, value), scale


class _Evaluation(NamedTuple):
    """One derivative pass at a point, with the factor, the Newton step and the decrement there."""

    value: Array
    grad: Array
    chol: Array
    step: Array  # -H^{-1} g
    slope: Array  # g^T step = -lambda^2
    finite: Array


def newton_minimize(
    fn: Callable[[Array], Array],
    theta0: Array,
    *,
    max_steps: int = 50,
    tol: ArrayLike = 1e-12,
    quadratic_stop: bool = False,
    derivatives: Derivatives | None = None,
    positive_definite: bool = False,
    factor0: Array | None = None,
    restart: Array | None = None,
    fixed_steps: int = 0,
    loop: bool = True,
) -> NewtonResult:
    """Minimise a twice-differentiable scalar function by damped Newton steps.

    Parameters
    ----------
    fn : callable
        ``fn(theta) -> scalar``, jittable.
    theta0 : array, shape (p,)
        Starting point. Warm-started from the previous round of a bandit, one or two
        iterations are typical.
    max_steps : int, >= 1
        Cap on iterations, i.e. on derivative evaluations (static).
    tol : float
        Stop when the Newton decrement ``g^T H^{-1} g / 2 <= tol``.
    quadratic_stop : bool
        Also stop after a full step whose successor's decrement is provably below ``tol``
        (module docstring); the factor is then one step stale. Not used by the fixed steps.
    derivatives : callable, optional
        ``theta -> (fn(theta), gradient, Hessian)``; default: forward-over-reverse autodiff of ``fn``.
    positive_definite : bool
        The Hessian is positive definite everywhere: factor it with a plain Cholesky (and, in
        the fixed steps, accept a step by the gradient test for convex potentials).
    factor0 : array, shape (p, p), optional
        Lower Cholesky factor of an approximation of the Hessian at ``theta0`` (the previous
        fit's): the first step is then a chord step, ``-factor0^{-T} factor0^{-1} g``, with the
        gradient alone and the same line search, before the Newton iterations. Not counted in
        ``info.num_steps`` (no Hessian is evaluated).
    restart : array, shape (p,), optional
        Where to start again, once, when ``max_steps`` iterations from ``theta0`` end with a
        finite iterate that has not converged (a warm start stuck where earlier data left it):
        up to ``max_steps`` more iterations from ``restart``, whose result is returned whether
        or not they converge. ``info.num_steps`` counts both starts. In the same loop, so a
        vmapped solve whose lanes all converge costs nothing more.
    fixed_steps : int, >= 0
        Steps taken as straight-line code before the loop (static): the module docstring's
        fixed-effort start, each one derivative evaluation (counted in ``info.num_steps``; the
        chord step's gradient is not). ``0``: the loop alone.
    loop : bool
        ``False``: the solve is the ``fixed_steps`` alone, with no ``while_loop`` (module
        docstring); ``restart`` is not used, and ``quadratic_stop`` takes the last step's
        Newton step when its successor is provably within ``tol``.

    Returns
    -------
    NewtonResult
    """
    check_int("newton_minimize", "max_steps", max_steps, low=1)
    check_int("newton_minimize", "fixed_steps", fixed_steps, low=0)
    theta0 = jnp.asarray(theta0)
    dtype = theta0.dtype
    derivatives = derivatives or generic_derivatives(fn)

    def factor(hess: Array) -> Array:
        if positive_definite:
            return cholesky(0.5 * (hess + hess.T))
        return jittered_cholesky(hess)[0]

    def evaluate(theta: Array) -> _Evaluation:
        value, grad, hess = derivatives(theta)
        chol = factor(hess)
        step = -cho_solve(chol, grad)
        finite = jnp.isfinite(value) & jnp.all(jnp.isfinite(grad)) & jnp.all(jnp.isfinite(chol))
        return _Evaluation(value, grad, chol, step, jnp.dot(grad, step), finite)

    def body(c: _Carry) -> _Carry:
        e = evaluate(c.theta)
        # The fixed steps of a convex potential leave the value unknown (NaN): computed here, in the loop only.
        value = jnp.where(jnp.isnan(c.value), fn(c.theta), c.value) if fixed_steps and positive_definite else c.value
        decrement = -0.5 * e.slope
        finite = e.finite & jnp.isfinite(value)
        done = finite & (decrement <= tol)

        moved, theta, value, scale = _line_search(fn, c.theta, value, e.step, e.slope, ~done & finite)
        if quadratic_stop:
            done = done | (moved & (scale == 1.0) & _next_within_tol(decrement, tol))
        failed = ~finite | (~moved & ~done)
        new = _Carry(
            c.i + 1, theta, value, e.chol, jnp.linalg.norm(e.grad), decrement, done, failed, c.steps + 1, c.restarted
        )
        if restart is None or value_restart is None:
            return new
        capped = (new.i >= max_steps) & ~done & ~failed & jnp.all(jnp.isfinite(theta)) & ~c.restarted
        again = _Carry(
            jnp.zeros_like(c.i), restart, value_restart, jnp.zeros_like(e.chol), new.grad_norm, new.decrement,
            jnp.asarray(False), jnp.asarray(False), new.steps, jnp.asarray(True),
        )  # fmt: skip
        return jax.tree.map(lambda a, b: jnp.where(capped, a, b), again, new)

    def cond(c: _Carry) -> Array:
        return (c.i < max_steps) & ~c.done & ~c.failed

    if not loop:
        if not fixed_steps:
            raise InvalidInput(
                "The 'loop' parameter of newton_minimize can be False only with fixed_steps >= 1 (the solve is then "
                "the fixed steps alone). Got loop=False with fixed_steps=0. Fix: pass fixed_steps=3, say, or loop=True."
            )
        c, step = _fixed_steps(evaluate, derivatives, theta0, factor0, fixed_steps, max_steps, tol, positive_definite)
        theta, done = c.theta, c.done
        if quadratic_stop:  # the last step's successor provably within tol: take it, without evaluating there
            blind = ~done & ~c.failed & _next_within_tol(c.decrement, tol) & jnp.all(jnp.isfinite(step))
            theta, done = jnp.where(blind, theta + step, theta), done | blind
        converged = done & jnp.all(jnp.isfinite(theta))
        return NewtonResult(theta, c.chol, NewtonInfo(c.steps, c.grad_norm, c.decrement, converged))
    value_restart = None if restart is None else fn(jnp.asarray(restart, dtype))
    if fixed_steps:
        init = _fixed_steps(evaluate, derivatives, theta0, factor0, fixed_steps, max_steps, tol, positive_definite)[0]
    else:
        value0 = fn(theta0)
        if factor0 is not None:  # a chord step: the given factor, the gradient alone (the Hessian is not used)
            grad0 = derivatives(theta0)[1]
            step0 = -cho_solve(factor0, grad0)
            slope0 = jnp.dot(grad0, step0)
            usable = jnp.isfinite(value0) & jnp.all(jnp.isfinite(step0)) & (slope0 < 0)
            _, theta0, value0, _ = _line_search(fn, theta0, value0, step0, slope0, usable)
        p = theta0.shape[0]
        zero, inf = jnp.asarray(0, jnp.int32), jnp.asarray(jnp.inf, dtype)
        false = jnp.asarray(False)
        init = _Carry(zero, theta0, value0, jnp.zeros((p, p), dtype), inf, inf, false, false, zero, false)
    c = jax.lax.while_loop(cond, body, init)
    converged = c.done & jnp.all(jnp.isfinite(c.theta))
    return NewtonResult(c.theta, c.chol, NewtonInfo(c.steps, c.grad_norm, c.decrement, converged))


def _fixed_steps(
    evaluate: Callable[[Array], _Evaluation],
    derivatives: Derivatives,
    theta0: Array,
    factor0: Array | None,
    fixed_steps: int,
    max_steps: int,
    tol: ArrayLike,
    convex: bool,
) -> tuple[_Carry, Array]:
    """The fixed-effort start of :func:`newton_minimize` (module docstring): the loop's initial carry, and
    the Newton step at its point.

    Each of the ``fixed_steps`` steps tries ``s`` times the current direction (the chord step first
    when ``factor0`` is given, then Newton steps; ``s = 1`` after a move) and evaluates the
    derivatives at the trial point once. On a convex potential the trial is accepted by the Armijo
    test in its gradient form ``g(trial)^T d <= c g^T d`` or in the region of quadratic convergence
    (``lambda^2 < 1/16``), so no value is computed; otherwise by the Armijo test on the value of the
    same pass. A rejected trial keeps the point and quarters ``s`` for the next step (backtracking
    spread over the fixed steps); a lane whose ``s`` falls below ``1e-9`` has failed. A lane not
    stopped keeps its last accepted point: the loop, if any, continues it from there.
    """
    dtype = theta0.dtype
    if factor0 is not None:  # the chord step's direction: the gradient alone (its Hessian is not used)
        value, grad, _ = derivatives(theta0)
        step = -cho_solve(factor0, grad)
        e = _Evaluation(value, grad, factor0, step, jnp.dot(grad, step), jnp.isfinite(value))
        going = (convex | e.finite) & jnp.all(jnp.isfinite(grad)) & jnp.all(jnp.isfinite(step)) & (e.slope < 0)
        done, steps, decrement = jnp.asarray(False), jnp.asarray(0, jnp.int32), jnp.asarray(jnp.inf, dtype)
    else:
        e = evaluate(theta0)
        decrement = -0.5 * e.slope
        done = e.finite & (decrement <= tol)
        going, steps = e.finite & ~done, jnp.asarray(1, jnp.int32)
    theta, scale, failed = theta0, jnp.ones((), dtype), jnp.asarray(False)
    for _ in range(fixed_steps):
        going = going & (steps < max_steps)
        trial = theta + scale * e.step
        new = evaluate(trial)
        if convex:  # Armijo's descent by convexity, or the trial in the region of quadratic convergence
            accept = new.finite & ((jnp.dot(new.grad, e.step) <= _ARMIJO * e.slope) | (-new.slope < _QUADRATIC))
        else:
            accept = new.finite & (new.value <= e.value + _ARMIJO * scale * e.slope)
        steps = steps + going.astype(jnp.int32)
        move = going & accept
        theta = jnp.where(move, trial, theta)
        e = jax.tree.map(lambda a, b, move=move: jnp.where(move, a, b), new, e)
        decrement = jnp.where(move, -0.5 * new.slope, decrement)
        done = done | (move & (decrement <= tol))
        # A rejected trial is retried a quarter as far along the same direction (backtracking).
        scale = jnp.where(move, 1.0, jnp.where(going, 0.25 * scale, scale))
        failed = failed | (going & ~move & (scale < _MIN_SCALE))
        going = going & ~done & ~failed
    value = jnp.full((), jnp.nan, dtype) if convex else e.value
    carry = _Carry(
        steps,
        theta,
        value,
        e.chol,
        jnp.linalg.norm(e.grad),
        decrement,
        done,
        failed,
        steps,
        jnp.asarray(False),
    )
    return carry, e.step
