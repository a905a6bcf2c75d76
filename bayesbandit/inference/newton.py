"""Damped, warm-started Newton's method for MAP estimation of a bound reward model.

Each iteration solves ``H d = -g`` through a (jittered) Cholesky factor of the Hessian ``H`` of
the potential ``U`` and backtracks along ``d`` until the Armijo condition
``U(theta + s d) <= U(theta) + c s g^T d`` holds. It stops when the Newton decrement
``lambda^2 = g^T H^{-1} g`` satisfies ``lambda^2 / 2 <= tol`` (an estimate of ``U(theta) - U*``),
or after ``max_steps`` iterations. When the potential is not convex at an iterate, the jitter
added to ``H`` turns the step into a Levenberg-damped one.

The returned Hessian factor is evaluated at the returned ``theta`` (the converged MAP), as the
Laplace approximation needs (Kveton et al. 2020, eq. 5; spec pitfall 4).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._numerics import cho_solve, jittered_cholesky
from bayesbandit._typing import Array, ArrayLike
from bayesbandit.inference.bind import BoundModel, bound_for

__all__ = ["NewtonInfo", "NewtonResult", "map_estimate", "newton"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 30


class NewtonInfo(NamedTuple):
    """Diagnostics of one Newton solve (reported, never fed back)."""

    num_steps: Array  # ()  int32, Newton iterations taken
    grad_norm: Array  # ()  float, ||g|| at the returned theta
    decrement: Array  # ()  float, Newton decrement lambda^2 / 2 at the returned theta
    converged: Array  # ()  bool, decrement <= tol and every value finite


class NewtonResult(NamedTuple):
    """A MAP estimate with the factor of the Hessian at it."""

    theta: Array  # (p,)    unconstrained MAP
    chol: Array  # (p, p)   lower Cholesky factor of the Hessian of U at theta (the precision)
    info: NewtonInfo


def _derivatives(fn: Callable[[Array], Array], theta: Array) -> tuple[Array, Array, Array]:
    """Value, gradient and Hessian of ``fn`` at ``theta`` in one forward-over-reverse pass."""

    def grad_aux(t):
        value, grad = jax.value_and_grad(fn)(t)
        return grad, (value, grad)

    hess, (value, grad) = jax.jacfwd(grad_aux, has_aux=True)(theta)
    return value, grad, hess


def newton(fn: Callable[[Array], Array], theta0: Array, *, max_steps: int = 50, tol: float = 1e-12) -> NewtonResult:
    """Minimise a twice-differentiable scalar function by damped Newton steps.

    Parameters
    ----------
    fn : callable
        ``fn(theta) -> scalar``, jittable.
    theta0 : array, shape (p,)
        Starting point (a warm start makes 1-3 steps typical in a bandit loop).
    max_steps : int
        Cap on Newton iterations (static).
    tol : float
        Stop when the Newton decrement ``g^T H^{-1} g / 2 <= tol``.

    Returns
    -------
    NewtonResult
    """
    theta0 = jnp.asarray(theta0)

    def factor(theta):
        value, grad, hess = _derivatives(fn, theta)
        chol, _ = jittered_cholesky(hess)
        step = -cho_solve(chol, grad)
        decrement = -0.5 * jnp.dot(grad, step)
        return value, grad, chol, step, decrement

    def finite(*xs):
        return jnp.all(jnp.asarray([jnp.all(jnp.isfinite(x)) for x in xs]))

    def cond(carry):
        i, _, _, _, _, _, decrement, ok = carry
        return (i < max_steps) & ok & ~(decrement <= tol)

    def body(carry):
        i, theta, value, grad, chol, step, decrement, _ = carry
        slope = jnp.dot(grad, step)

        def ls_cond(ls):
            k, s, trial = ls
            return (k < _MAX_HALVINGS) & ~(trial <= value + _ARMIJO * s * slope)

        def ls_body(ls):
            k, s, _ = ls
            s = 0.5 * s
            return k + 1, s, fn(theta + s * step)

        _, s, trial = jax.lax.while_loop(ls_cond, ls_body, (0, jnp.asarray(1.0, theta.dtype), fn(theta + step)))
        accepted = trial <= value + _ARMIJO * s * slope
        new_theta = jnp.where(accepted, theta + s * step, theta)
        new_value, new_grad, new_chol, new_step, new_decrement = factor(new_theta)
        ok = accepted & finite(new_value, new_grad, new_chol)
        return i + 1, new_theta, new_value, new_grad, new_chol, new_step, new_decrement, ok

    value, grad, chol, step, decrement = factor(theta0)
    init = (jnp.asarray(0, jnp.int32), theta0, value, grad, chol, step, decrement, finite(value, grad, chol))
    i, theta, value, grad, chol, _, decrement, ok = jax.lax.while_loop(cond, body, init)
    info = NewtonInfo(
        num_steps=i,
        grad_norm=jnp.linalg.norm(grad),
        decrement=decrement,
        converged=ok & (decrement <= tol) & finite(theta),
    )
    return NewtonResult(theta, chol, info)


def _as_bound(model, x: Array) -> BoundModel:
    return bound_for(model, tuple(x.shape[1:]))


def map_estimate(
    model,
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike | None = None,
    *,
    init: ArrayLike | None = None,
    max_steps: int = 50,
    tol: float = 1e-12,
) -> NewtonResult:
    """Maximum a posteriori estimate of a reward model's unconstrained parameters.

    Minimises the weighted potential ``U(theta; x, y, w)`` of :meth:`BoundModel.potential`
    (negative log joint: prior, Jacobians of constrained sites, weighted log-likelihood).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
    w : array, shape (n,), optional
        Row weights (counts); zero masks a row.
    init : array, shape (p,), optional
        Warm start; defaults to the prior median.
    max_steps, tol : see :func:`newton`.

    Returns
    -------
    NewtonResult
        ``theta`` (p,), ``chol`` of the Hessian at ``theta`` (p, p), and ``info``. Check
        ``info.converged``: a run that hits ``max_steps`` or meets a non-finite value says so.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import linear_gaussian
    >>> x = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = jnp.array([1.0, -1.0, 0.0])
    >>> fit = bb.map_estimate(linear_gaussian(), x, y)
    >>> bool(fit.info.converged), [round(float(v), 3) for v in fit.theta]
    (True, [0.5, -0.5])
    """
    x = jnp.asarray(x, dtype=jnp.float64)
    y = jnp.asarray(y, dtype=x.dtype)
    w = jnp.ones(y.shape, x.dtype) if w is None else jnp.asarray(w, dtype=x.dtype)
    bound = _as_bound(model, x)
    theta0 = bound.init_theta(x.dtype) if init is None else jnp.asarray(init, dtype=x.dtype)
    return newton(lambda t: bound.potential(t, x, y, w), theta0, max_steps=max_steps, tol=tol)
