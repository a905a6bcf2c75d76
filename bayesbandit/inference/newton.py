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

The derivatives come from ``derivatives`` when given (the GLM fast path of
:mod:`bayesbandit.inference.linear_predictor`), else from a forward-over-reverse pass over
``fn``; ``positive_definite=True`` (a Hessian known to be positive definite) factors with one
plain Cholesky instead of the shifted one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._linalg import cho_solve, cholesky
from bayesbandit._numerics import jittered_cholesky
from bayesbandit._typing import Array, ArrayLike
from bayesbandit.inference.linear_predictor import Derivatives, generic_derivatives
from bayesbandit.validation import check_int

__all__ = ["NewtonInfo", "NewtonResult", "newton_minimize"]

_ARMIJO = 1e-4
_MIN_SCALE = 1e-9


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
        (module docstring); the factor is then one step stale.
    derivatives : callable, optional
        ``theta -> (fn(theta), gradient, Hessian)``; default: forward-over-reverse autodiff of ``fn``.
    positive_definite : bool
        The Hessian is positive definite everywhere: factor it with a plain Cholesky.
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

    Returns
    -------
    NewtonResult
    """
    check_int("newton_minimize", "max_steps", max_steps, low=1)
    theta0 = jnp.asarray(theta0)
    dtype = theta0.dtype
    derivatives = derivatives or generic_derivatives(fn)

    def factor(hess: Array) -> Array:
        if positive_definite:
            return cholesky(0.5 * (hess + hess.T))
        return jittered_cholesky(hess)[0]

    def body(c: _Carry) -> _Carry:
        value = c.value
        _, grad, hess = derivatives(c.theta)
        chol = factor(hess)
        step = -cho_solve(chol, grad)
        slope = jnp.dot(grad, step)
        decrement = -0.5 * slope
        finite = jnp.isfinite(value) & jnp.all(jnp.isfinite(grad)) & jnp.all(jnp.isfinite(chol))
        done = finite & (decrement <= tol)

        moved, theta, value, scale = _line_search(fn, c.theta, value, step, slope, ~done & finite)
        lam = jnp.sqrt(2.0 * jnp.maximum(decrement, 0.0))
        predicted = 2.0 * decrement**2 / (1.0 - jnp.minimum(lam, 0.5)) ** 4
        if quadratic_stop:
            done = done | (moved & (scale == 1.0) & (lam < 0.25) & (predicted <= tol))
        failed = ~finite | (~moved & ~done)
        new = _Carry(
            c.i + 1, theta, value, chol, jnp.linalg.norm(grad), decrement, done, failed, c.steps + 1, c.restarted
        )
        if restart is None or value_restart is None:
            return new
        capped = (new.i >= max_steps) & ~done & ~failed & jnp.all(jnp.isfinite(theta)) & ~c.restarted
        again = _Carry(
            jnp.zeros_like(c.i), restart, value_restart, jnp.zeros_like(chol), new.grad_norm, new.decrement,
            jnp.asarray(False), jnp.asarray(False), new.steps, jnp.asarray(True),
        )  # fmt: skip
        return jax.tree.map(lambda a, b: jnp.where(capped, a, b), again, new)

    def cond(c: _Carry) -> Array:
        return (c.i < max_steps) & ~c.done & ~c.failed

    value0 = fn(theta0)
    value_restart = None if restart is None else fn(jnp.asarray(restart, dtype))
    if factor0 is not None:  # a chord step: the given factor, the gradient alone (the Hessian is not used)
        grad0 = derivatives(theta0)[1]
        step0 = -cho_solve(factor0, grad0)
        slope0 = jnp.dot(grad0, step0)
        usable = jnp.isfinite(value0) & jnp.all(jnp.isfinite(step0)) & (slope0 < 0)
        _, theta0, value0, _ = _line_search(fn, theta0, value0, step0, slope0, usable)

    p = theta0.shape[0]
    init = _Carry(
        jnp.asarray(0, jnp.int32),
        theta0,
        value0,
        jnp.zeros((p, p), dtype),
        jnp.asarray(jnp.inf, dtype),
        jnp.asarray(jnp.inf, dtype),
        jnp.asarray(False),
        jnp.asarray(False),
        jnp.asarray(0, jnp.int32),
        jnp.asarray(False),
    )
    c = jax.lax.while_loop(cond, body, init)
    converged = c.done & jnp.all(jnp.isfinite(c.theta))
    return NewtonResult(c.theta, c.chol, NewtonInfo(c.steps, c.grad_norm, c.decrement, converged))
