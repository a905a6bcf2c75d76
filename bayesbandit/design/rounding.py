"""Rounding a continuous design to pull counts that spend a budget exactly.

A G-optimal design ``pi`` (:mod:`bayesbandit.design.g_optimal`) must become integer pull counts
``m`` with ``sum(m) = n``. ``ceil(n pi)`` (the code behind Azizi et al. 2022) overspends by up to
the support size minus one (88 pulls for a budget of 80); multinomial sampling spends exactly
``n`` but adds noise. :func:`efficient_rounding` is the efficient apportionment of Pukelsheim and
Rieder (1992): exact, deterministic, and within a factor ``1 + O(p/n)`` of the continuous design's
efficiency for a support of size ``p``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._linalg import svd
from bayesbandit._typing import Array, ArrayLike

__all__ = ["efficient_rounding", "project", "Projection"]


class _State(NamedTuple):
    counts: Array


@functools.partial(jax.jit, static_argnames=("trim",))
def efficient_rounding(weights: ArrayLike, n: ArrayLike, *, trim: float = 1e-6) -> Array:
    """Integer pull counts ``m`` with ``sum(m) = n`` exactly, apportioned to the design ``weights``.

    Weights below ``trim`` are dropped first; on the support ``S`` (``p`` arms)

    .. math::  m_i = \\lceil (n - p/2)\\, \\pi_i \\rceil, \\quad i \\in S,

    then, while ``sum(m) < n``, ``m_j += 1`` for ``j = argmin_{i in S} m_i / pi_i``, and while
    ``sum(m) > n``, ``m_j -= 1`` for ``j = argmax_{i in S, m_i >= 1} (m_i - 1) / pi_i``
    (Pukelsheim and Rieder 1992). Jittable; ``n`` may be traced.

    Parameters
    ----------
    weights : array, shape (K,)
        A design on the simplex.
    n : int
        The budget.
    trim : float
        Weights below it count as zero.

    Returns
    -------
    int32 array, shape (K,)

    Examples
    --------
    >>> from bayesbandit.design import efficient_rounding
    >>> [int(c) for c in efficient_rounding([0.5, 0.3, 0.2], 7)]
    [3, 2, 2]
    """
    w = jnp.asarray(weights, dtype=float)
    w = jnp.where(w < trim, 0.0, w)
    w = w / jnp.sum(w)
    support = w > 0
    n = jnp.asarray(n, dtype=w.dtype)
    p = jnp.sum(support).astype(w.dtype)
    counts = jnp.where(support, jnp.maximum(jnp.ceil((n - p / 2.0) * w), 0.0), 0.0)
    safe_w = jnp.where(support, w, 1.0)

    def cond(s: _State) -> Array:
        return jnp.sum(s.counts) != n

    def body(s: _State) -> _State:
        short = jnp.sum(s.counts) < n
        up = jnp.argmin(jnp.where(support, s.counts / safe_w, jnp.inf))
        # ties: an increment goes to the earliest arm, a decrement to the latest one
        down_scores = jnp.where(support & (s.counts >= 1), (s.counts - 1.0) / safe_w, -jnp.inf)
        down = w.shape[0] - 1 - jnp.argmax(down_scores[::-1])
        step = jnp.where(short, jax.nn.one_hot(up, w.shape[0]), -jax.nn.one_hot(down, w.shape[0]))
        return _State(s.counts + step.astype(w.dtype))

    return jax.lax.while_loop(cond, body, _State(counts)).counts.astype(jnp.int32)


class Projection(NamedTuple):
    """Arms in coordinates of an orthonormal basis of their span."""

    coords: Array  # (K, r_max) coordinates; columns past the rank are exactly zero
    basis: Array  # (d, r_max) orthonormal basis (zero columns past the rank): x ~ coords @ basis.T
    rank: Array  # () int32 numerical rank


def project(x: ArrayLike, *, rtol: float | None = None) -> Projection:
    """Project arms onto their span (Azizi et al. 2022, Alg. 1 line 2), padded to a fixed width.

    With the SVD ``X = U S V^T`` and ``r = #{s_j > rtol * s_max}``, the coordinates are
    ``Z = X V_{:, :r}`` (``|A| x r``). Inner products between arms, hence every design criterion
    and every least-squares ranking, are unchanged. ``Z`` is returned padded with zero columns to
    ``min(K, d)`` so the shape is static under ``jit``; the design solvers ignore all-zero columns
    (:func:`bayesbandit.design.effective_dim`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesbandit.design import project
    >>> p = project(np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, 1.0]]))
    >>> p.coords.shape, int(p.rank)
    ((3, 3), 2)
    """
    x = jnp.asarray(x, dtype=float)
    tol = rtol if rtol is not None else (1e-10 if x.dtype == jnp.float64 else 1e-5)  # default: per precision
    _, s, vt = svd(x)
    keep = s > tol * s[0]
    basis = vt.T * keep[None, :]
    return Projection(x @ basis, basis, jnp.sum(keep).astype(jnp.int32))
