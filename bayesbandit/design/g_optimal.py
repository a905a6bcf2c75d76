"""G-optimal designs: where to spend a budget of pulls so that every arm's estimate is good.

For arms ``x_1..x_K`` spanning ``R^d`` and a design ``pi`` on the simplex, let
``V(pi) = sum_i pi_i x_i x_i^T`` and ``g(pi) = max_i x_i^T V(pi)^{-1} x_i``. The G-optimal design
minimises ``g``; by the Kiefer-Wolfowitz equivalence theorem (Kiefer and Wolfowitz 1960) it is
also the D-optimal design, maximising ``log det V(pi)``, and at the optimum ``g = d``.

The max in ``g`` is non-smooth: the Frank-Wolfe of Azizi et al. (2022, Alg. 2), stepping towards a
single vertex along the Danskin gradient, cannot decrease ``g`` when several arms tie for the max
and stops at once (on symmetric instances it returns the uniform design, ``g = K``). Both solvers
here work on the smooth D-criterion instead:

* :func:`wynn`: Fedorov-Wynn / Khachiyan (Lattimore and Szepesvari 2020, ch. 21): step towards the
  arm of largest ``g_i = x_i^T V^{-1} x_i`` with ``gamma = (g/d - 1)/(g - 1)``;
* :func:`fw_away`: the same with Wolfe-Atwood away steps (Todd and Yildirim 2007): when the arm of
  smallest ``g_i`` in the support is further below ``d`` than the largest is above it, move weight
  away from it (possibly dropping it from the support). It converges linearly and leaves a sparse
  support, which rounding turns into few distinct arms.

Both stop when ``g <= (1 + tol) d``; ``tol = 0.01`` gives the ``1.01 d`` the GSE analysis needs. They
are pure JAX (``lax.while_loop``), so designs for many replications ``vmap``. The arms must span
``R^d``; project them onto their span first (:func:`bayesbandit.design.project`). Columns that
are exactly zero for every arm are left out of the problem (``d`` counts the others), so
coordinates padded to a fixed width, as :func:`bayesbandit.design.project` returns them, work
under ``jit`` and ``vmap`` with a rank that is only known at run time.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._linalg import cho_solve, cholesky, solve_triangular
from bayesbandit._typing import Array
from bayesbandit.errors import InvalidInput

__all__ = ["Design", "wynn", "fw_away", "g_values", "null_columns", "effective_dim"]


class Design(NamedTuple):
    """A continuous design and how good it is."""

    weights: Array  # (K,) pi on the simplex
    g: Array  # () max_i x_i^T V(pi)^{-1} x_i (d at the optimum)
    num_iterations: Array  # () int32
    converged: Array  # () bool: g <= (1 + tol) d within the iteration cap


def g_values(x: Array, weights: Array, *, ridge: float = 1e-12) -> Array:
    """``x_i^T V(pi)^{-1} x_i`` for every arm, shape (K,), with ``V(pi) = sum_i pi_i x_i x_i^T``.

    ``ridge`` (relative to the trace) keeps the factorisation finite for designs whose support does
    not span ``R^d`` (their ``g`` is then huge, as it should be). All-zero columns are ignored.
    """
    d = x.shape[1]
    v = (x * weights[:, None]).T @ x
    v = v + ridge * (jnp.trace(v) / d + 1e-300) * jnp.eye(d, dtype=x.dtype) + jnp.diag(null_columns(x))
    chol = cholesky(v)
    half = solve_triangular(chol, x.T, lower=True)
    return jnp.sum(half**2, axis=0)


def null_columns(x: Array) -> Array:
    """1.0 for each column of ``x`` that is zero for every arm (padding), else 0.0; shape (d,)."""
    return jnp.all(x == 0, axis=0).astype(x.dtype)


def effective_dim(x: Array) -> Array:
    """The number of columns of ``x`` that are not all zero (the design's ``d``)."""
    return x.shape[1] - jnp.sum(null_columns(x))


class _State(NamedTuple):
    i: Array
    weights: Array
    inv: Array  # V(pi)^{-1} (d, d), or X V(pi)^{-1} X^T (K, K) when K <= d (the smaller one)


def _v_inverse(x: Array, weights: Array) -> Array:
    """``V(pi)^{-1}`` (d, d) through a Cholesky factor (all-zero columns ignored)."""
    d = x.shape[1]
    v = (x * weights[:, None]).T @ x
    v = v + 1e-12 * (jnp.trace(v) / d + 1e-300) * jnp.eye(d, dtype=x.dtype) + jnp.diag(null_columns(x))
    return cho_solve(cholesky(v), jnp.eye(d, dtype=x.dtype))


def _solve(x: Array, tol: float, max_iter: int, away: bool) -> Design:
    """Both steps move ``pi <- (1 - c) pi + c e_j`` (``c < 0`` away), so ``V <- (1 - c) V + c x_j x_j^T``
    and, by Sherman-Morrison with ``a = c / (1 - c)``, ``W <- (W - a w_j w_j^T / (1 + a g_j)) / (1 - c)``
    for ``W = V^{-1}`` (``w_j = V^{-1} x_j``) or ``W = X V^{-1} X^T`` (``w_j`` its column ``j``),
    whichever is smaller: no factorisation inside the loop. ``g`` is recomputed from scratch at the end."""
    k, width = x.shape
    d = effective_dim(x)
    weights0 = jnp.full((k,), 1.0 / k, dtype=x.dtype)
    arm_space = k <= width

    def widths(inv: Array) -> Array:
        return jnp.diag(inv) if arm_space else jnp.sum((x @ inv) * x, axis=1)

    def cond(s: _State) -> Array:
        return (s.i < max_iter) & (jnp.max(widths(s.inv)) > (1.0 + tol) * d)

    def body(s: _State) -> _State:
        g = widths(s.inv)
        j_plus = jnp.argmax(g)
        g_plus = g[j_plus]
        j, c = j_plus, jnp.maximum((g_plus / d - 1.0) / (g_plus - 1.0), 0.0)
        if away:
            g_support = jnp.where(s.weights > 0, g, jnp.inf)
            j_minus = jnp.argmin(g_support)
            g_minus = g_support[j_minus]
            pi_minus = s.weights[j_minus]
            # Khachiyan's step for the away direction, capped where pi_{j-} reaches 0
            gamma = jnp.minimum((1.0 - g_minus / d) / jnp.maximum(g_minus - 1.0, 1e-12), pi_minus / (1.0 - pi_minus))
            gamma = jnp.clip(gamma, 0.0, None)
            keeps_rank = 1.0 - gamma / (1.0 + gamma) * g_minus > 1e-9
            use_away = ((d - g_minus) > (g_plus - d)) & (pi_minus < 1.0) & keeps_rank
            j = jnp.where(use_away, j_minus, j_plus)
            c = jnp.where(use_away, -gamma, c)
        weights = (1.0 - c) * s.weights + c * jax.nn.one_hot(j, k, dtype=x.dtype)
        weights = jnp.where(weights < 1e-15, 0.0, weights)
        a = c / (1.0 - c)
        w_j = s.inv[:, j] if arm_space else s.inv @ x[j]
        inv = (s.inv - a * jnp.outer(w_j, w_j) / (1.0 + a * g[j])) / (1.0 - c)
        return _State(s.i + 1, weights / jnp.sum(weights), inv)

    def start_inv(weights: Array) -> Array:
        inv = _v_inverse(x, weights)
        return x @ inv @ x.T if arm_space else inv

    s = jax.lax.while_loop(cond, body, _State(jnp.asarray(0, jnp.int32), weights0, start_inv(weights0)))
    g = jnp.max(g_values(x, s.weights))
    return Design(s.weights, g, s.i, g <= (1.0 + tol) * d)


def _check_spans(owner: str, x: Array) -> None:
    """On concrete arms: the non-padding columns are spanned (else no design makes ``V`` invertible)."""
    if isinstance(x, jax.core.Tracer):
        return
    arms = np.asarray(x)
    if not np.all(np.isfinite(arms)):
        raise InvalidInput(f"{owner}: the arms 'x' must be finite. Got NaN or inf features. Drop or impute them first.")
    used = ~np.all(arms == 0, axis=0)
    rank = np.linalg.matrix_rank(arms[:, used]) if used.any() else 0
    if rank < used.sum():
        raise InvalidInput(
            f"{owner}: the arms 'x' must span R^d (d = {int(used.sum())} non-zero columns), or no design "
            f"makes V(pi) invertible. Got rank {rank}. Project them onto their span first: "
            "bayesbandit.design.project(x).coords."
        )


def wynn(x: Array, *, tol: float = 0.01, max_iter: int = 100_000) -> Design:
    """G-optimal design by Fedorov-Wynn / Khachiyan steps on the D-criterion.

    .. math::  j = \\arg\\max_i g_i(\\pi), \\quad \\gamma = \\frac{g_j / d - 1}{g_j - 1}, \\quad
               \\pi \\leftarrow (1 - \\gamma) \\pi + \\gamma e_j

    Parameters
    ----------
    x : array, shape (K, d)
        Arms spanning ``R^d``.
    tol : float
        Stop when ``g <= (1 + tol) d``.
    max_iter : int
        Iteration cap (static).

    Returns
    -------
    Design

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from bayesbandit.design import wynn
    >>> design = wynn(jnp.eye(3))
    >>> [round(float(w), 3) for w in design.weights], round(float(design.g), 3)
    ([0.333, 0.333, 0.333], 3.0)
    """
    x = jnp.asarray(x, dtype=float)
    _check_spans("wynn", x)
    return _solve(x, tol, max_iter, away=False)


def fw_away(x: Array, *, tol: float = 0.01, max_iter: int = 100_000) -> Design:
    """G-optimal design by Frank-Wolfe with Wolfe-Atwood away steps on the D-criterion.

    Each iteration takes the toward step of :func:`wynn`, or, when the support arm of smallest
    ``g_i`` lies further below ``d`` than the largest lies above it, the away step

    .. math::  \\pi \\leftarrow (1 + \\gamma) \\pi - \\gamma e_{j^-}, \\quad
               \\gamma = \\min\\Big(\\frac{1 - g_{j^-}/d}{g_{j^-} - 1}, \\frac{\\pi_{j^-}}{1 - \\pi_{j^-}}\\Big)

    (Todd and Yildirim 2007), which can drop an arm from the support.

    Parameters
    ----------
    x : array, shape (K, d)
        Arms spanning ``R^d``.
    tol : float
        Stop when ``g <= (1 + tol) d``.
    max_iter : int
        Iteration cap (static).

    Returns
    -------
    Design
    """
    x = jnp.asarray(x, dtype=float)
    _check_spans("fw_away", x)
    return _solve(x, tol, max_iter, away=True)
