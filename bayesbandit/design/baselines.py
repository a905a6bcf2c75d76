"""Two allocations GSE is compared with: the paper's literal Frank-Wolfe, and greedy G-allocation.

* :func:`fw_literal`: Azizi et al. (2022), Alg. 2, as printed. Frank-Wolfe on the non-smooth
  ``g(pi) = max_i x_i^T V(pi)^{-1} x_i`` along the Danskin gradient
  ``d g / d pi_j = -(x_j^T V^{-1} x_max)^2``, towards the vertex of the smallest component, with a
  line search on ``gamma in {0} U {0.75^k, k = 0..23}`` (the authors' code). When several arms tie
  for the max (symmetric instances), no single-vertex step decreases ``g``: the search returns
  ``gamma = 0`` and it stops where it started, at the uniform design. Kept to show that stall; use
  :func:`bayesbandit.design.fw_away` or :func:`~bayesbandit.design.wynn` for real designs.
* :func:`greedy_allocation`: the sequential G-allocation of Soare et al. (2014) as GSE's
  experiments use it: each of the ``n`` pulls goes to the arm that most lowers
  ``max_i x_i^T A^{-1} x_i``, from ``A_0 = I`` (rank-one updates, ``O(K^2)`` per pull). The authors'
  code also prepends an intercept column to the features; that is not in the paper, and not here.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import downdate
from bayesbandit._linalg import solve
from bayesbandit._typing import Array, ArrayLike
from bayesbandit.design.g_optimal import Design, effective_dim, g_values, null_columns

__all__ = ["fw_literal", "greedy_allocation"]


@functools.cache
def _step_grid() -> Array:
    """The line-search steps ``0`` and ``0.75^j``, ``j < 24``: computed once, eagerly (never at import: importing
    bayesbandit starts no JAX backend, so process settings can still follow the imports)."""
    with jax.ensure_compile_time_eval():
        return jnp.concatenate([jnp.zeros(1), 0.75 ** jnp.arange(24.0)])


def fw_literal(x: ArrayLike, *, max_iter: int = 100, tol: float = 1e-6) -> Design:
    """The Frank-Wolfe of Azizi et al. (2022, Alg. 2), literally (see the module docstring).

    Parameters
    ----------
    x : array, shape (K, d)
    max_iter : int
        Iteration cap (the authors' code: 100).
    tol : float
        Stop when the best step lowers ``g`` by less than ``tol``.

    Returns
    -------
    Design
        ``converged`` is true when ``g <= 1.01 d`` (it rarely is).
    """
    x = jnp.asarray(x, dtype=float)
    k = x.shape[0]
    d = effective_dim(x)

    def g_max(w: Array) -> Array:
        return jnp.max(g_values(x, w))

    def cond(c: tuple) -> Array:
        i, _, _, moved = c
        return (i < max_iter) & moved

    def body(c: tuple) -> tuple:
        i, w, g, _ = c
        v = (x * w[:, None]).T @ x + jnp.diag(null_columns(x))
        x_max = x[jnp.argmax(g_values(x, w))]
        grad = -((x @ solve(v, x_max)) ** 2)
        vertex = jax.nn.one_hot(jnp.argmin(grad), k, dtype=x.dtype)
        trials = jax.vmap(lambda gamma: g_max(w + gamma * (vertex - w)))(_step_grid().astype(x.dtype))
        best = jnp.argmin(trials)
        moved = trials[best] < g - tol
        w_new = jnp.where(moved, w + _step_grid()[best] * (vertex - w), w)
        return i + moved.astype(jnp.int32), w_new, jnp.where(moved, trials[best], g), moved

    w0 = jnp.full((k,), 1.0 / k, dtype=x.dtype)
    i, w, g, _ = jax.lax.while_loop(cond, body, (jnp.asarray(0, jnp.int32), w0, g_max(w0), jnp.asarray(True)))
    return Design(w, g, i, g <= 1.01 * d)


def greedy_allocation(x: ArrayLike, n: int) -> Array:
    """Integer pull counts from ``n`` greedy G-optimal choices (Soare et al. 2014), summing to ``n``.

    .. math::  k_t = \\arg\\min_k \\max_i x_i^T (A_{t-1} + x_k x_k^T)^{-1} x_i, \\qquad
               A_t = A_{t-1} + x_{k_t} x_{k_t}^T, \\quad A_0 = I,

    evaluated through ``M = X A^{-1} X^T`` and Sherman-Morrison:
    ``x_i^T (A + x_k x_k^T)^{-1} x_i = M_ii - M_ik^2 / (1 + M_kk)``. Ties in the max (every arm
    in a direction not pulled yet keeps width 1 under ``A_0 = I``, so early pulls tie) go to the
    arm that most lowers the mean width, then to the first index (both up to a relative 1e-12, so
    rounding in the rank-one updates does not decide): breaking them by index alone
    would put every pull on arm 0 of the adaptive instance.

    Parameters
    ----------
    x : array, shape (K, d)
    n : int
        Number of pulls (static).

    Returns
    -------
    int32 array, shape (K,)
    """
    x = jnp.asarray(x, dtype=float)
    k = x.shape[0]

    def pull(_: int, carry: tuple) -> tuple:
        m, counts = carry
        after = jnp.diag(m)[:, None] - m**2 / (1.0 + jnp.diag(m))[None, :]  # [i, k]: x_i's width after pulling k
        worst = jnp.max(after, axis=0)
        tied = worst <= jnp.min(worst) * (1.0 + 1e-12)
        mean = jnp.where(tied, jnp.mean(after, axis=0), jnp.inf)
        choice = jnp.argmax(mean <= jnp.min(mean) * (1.0 + 1e-12))  # ties to the first index, up to rounding
        col = m[:, choice]
        m = downdate(m, col, 1.0 + m[choice, choice])
        return m, counts.at[choice].add(1)

    _, counts = jax.lax.fori_loop(0, n, pull, (x @ x.T, jnp.zeros(k, jnp.int32)))
    return counts
