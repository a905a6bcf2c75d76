"""The online Laplace update by one row of a GLM, solved as a root in one dimension.

The online posterior (``history="online"``) multiplies the last Gaussian fit ``N(m, Lambda^{-1})``
by one new row's likelihood and refits. When the row's natural parameter is affine in the
parameters (:mod:`bayesbandit.inference.linear_predictor`), ``A(theta) = j^T theta + c``, the
potential is

.. math::

    U(\\theta) = \\tfrac12 (\\theta - m)^T \\Lambda (\\theta - m) - w\\, h(A(\\theta)),
    \\qquad \\nabla U = \\Lambda (\\theta - m) - j\\, w h'(A(\\theta)),

with ``h'(A) = s (y - E[y | A])`` and ``h''(A) = -s Var[y | A]`` (``s`` the site's scale). At the
MAP ``Lambda (theta - m) = j sigma`` for the scalar ``sigma = w h'(A(theta))``, so the MAP lies on
the line ``theta(sigma) = m + sigma u``, ``u = Lambda^{-1} j``, along which
``A = A(m) + sigma v`` with ``v = j^T u > 0``, and ``sigma`` is the root of

.. math::

    F(\\sigma) = \\sigma - w h'(A(m) + \\sigma v), \\qquad F'(\\sigma) = 1 + v\\, w s \\operatorname{Var}[y] \\ge 1.

``F`` is increasing (``E[y | A]`` increases with ``A``), so the root is unique and lies between
``0`` and ``g_0 = w h'(A(m))`` (``F(0) = -g_0`` and ``F(g_0)`` has the other sign). It is found by
Newton's method on ``F`` kept inside that bracket (a step that leaves it bisects instead). At
``theta(sigma)`` the gradient is ``j F(sigma)`` and the Hessian ``H = Lambda + c j j^T``,
``c = w s Var[y]``, so the Newton decrement of the whole problem is (Sherman-Morrison)

.. math::

    \\lambda^2 / 2 = F(\\sigma)^2\\, v / (2 (1 + c v)),

and the solve stops on the same rule as :func:`bayesbandit.inference.newton_minimize`
(``lambda^2 / 2 <= tol``), with the Laplace factor ``chol(Lambda + c j j^T)`` taken at the returned
point. This is the MAP and Hessian of the ``p``-dimensional Newton solve
(``tests/inference/test_online_laplace.py``) at the cost of two triangular solves, one Cholesky
factorisation and a few scalar iterations, each one run of the program on the new row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax.numpy as jnp

from bayesbandit._linalg import cholesky, solve_triangular
from bayesbandit._typing import Array
from bayesbandit.inference.linear_predictor import predictor_jacobian, row_moments
from bayesbandit.inference.newton import NewtonInfo, NewtonResult, unrolled_while

if TYPE_CHECKING:
    from bayesbandit.inference.potential import BoundModel

__all__ = ["rank_one_laplace"]


class _Carry(NamedTuple):
    i: Array  # iterations (evaluations of F)
    sigma: Array  # the current point on the line
    low: Array  # bracket of the root
    high: Array
    f: Array  # F(sigma)
    curvature: Array  # c = w s Var[y] at sigma
    decrement: Array  # lambda^2 / 2 of the whole problem at theta(sigma)
    done: Array
    failed: Array


def rank_one_laplace(
    bound: BoundModel,
    row: tuple[Array, Array, Array],
    mean: Array,
    chol: Array,
    *,
    max_steps: int,
    tol: float,
    fixed_steps: int = 0,
    loop: bool = True,
) -> NewtonResult:
    """MAP and Hessian factor of ``N(mean, (chol chol^T)^{-1})`` times one row's likelihood (module docstring).

    Only valid when :attr:`bayesbandit.inference.BoundModel.linear_predictor` is not ``None``.

    Parameters
    ----------
    bound : BoundModel
    row : (x, y, w)
        One row: shapes ``(1, *feature_shape)``, ``(1,)``, ``(1,)``.
    mean, chol : arrays, shapes (p,) and (p, p)
        The prior's mean and the lower Cholesky factor of its precision.
    max_steps : int
        Cap on evaluations of ``F``; a solve that reaches it reports ``converged = False``.
    tol : float
        Newton-decrement tolerance (nats).
    fixed_steps : int, >= 0
        Iterations after the first evaluation run as straight-line code, masked where the solve
        has stopped, before the loop (static): as in :func:`bayesbandit.inference.newton_minimize`,
        the same iterates, and a vmapped loop makes no trip when every lane stops within them.
    loop : bool
        ``False``: the first evaluation and the ``fixed_steps`` iterations alone, no loop; a
        solve not stopped by then reports ``converged = False``.
    """
    x, y, w = row
    j = predictor_jacobian(bound, x)[0]
    u = solve_triangular(chol.T, solve_triangular(chol, j, lower=True), lower=False)  # Lambda^{-1} j
    v = jnp.dot(j, u)

    def moments(sigma: Array) -> tuple[Array, Array]:
        """``(w h'(A), w s Var[y])`` at ``theta(sigma)``."""
        _, obs, _ = bound.run(mean + sigma * u, x)
        score, curvature = row_moments(obs, y, w)
        return score[0], curvature[0]

    def evaluate(i: Array, sigma: Array, moments_at_sigma: tuple[Array, Array], low: Array, high: Array) -> _Carry:
        score, curvature = moments_at_sigma
        f = sigma - score
        decrement = 0.5 * f**2 * v / (1.0 + curvature * v)
        finite = jnp.isfinite(f) & jnp.isfinite(curvature)
        low = jnp.where(f < 0, sigma, low)
        high = jnp.where(f > 0, sigma, high)
        return _Carry(i + 1, sigma, low, high, f, curvature, decrement, finite & (decrement <= tol), ~finite)

    def body(c: _Carry) -> _Carry:
        newton = c.sigma - c.f / (1.0 + c.curvature * v)
        sigma = jnp.where((newton > c.low) & (newton < c.high), newton, 0.5 * (c.low + c.high))
        return evaluate(c.i, sigma, moments(sigma), c.low, c.high)

    def cond(c: _Carry) -> Array:
        return (c.i < max_steps) & ~c.done & ~c.failed

    zero = jnp.zeros((), mean.dtype)
    at_zero = moments(zero)
    g0 = at_zero[0]
    first = evaluate(jnp.asarray(0, jnp.int32), zero, at_zero, jnp.minimum(zero, g0), jnp.maximum(zero, g0))
    c = unrolled_while(cond, body, first, fixed_steps, loop)
    theta = mean + c.sigma * u
    new_chol = cholesky(chol @ chol.T + c.curvature * jnp.outer(j, j))
    converged = c.done & jnp.all(jnp.isfinite(theta)) & jnp.all(jnp.isfinite(new_chol))
    grad_norm = jnp.abs(c.f) * jnp.linalg.norm(j)
    return NewtonResult(theta, new_chol, NewtonInfo(c.i, grad_norm, c.decrement, converged))
