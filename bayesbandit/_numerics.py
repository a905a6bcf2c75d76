"""Numerically safe primitives: jittered Cholesky, the Gershgorin shift, random tie-breaking argmax."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from bayesbandit._linalg import cholesky
from bayesbandit._typing import Array, PRNGKey


def jittered_cholesky(matrix: Array) -> tuple[Array, Array]:
    r"""Lower Cholesky factor of a symmetric matrix, shifted to positive definite when needed.

    The matrix is symmetrised and factored. If the factor is not finite (the matrix is singular
    or indefinite), it is factored again after adding ``tau I`` with the Gershgorin bound

    .. math::  \tau = \max\big(0, \max_i (\sum_{j \ne i} |A_{ij}| - A_{ii})\big)
               + 10^{-8} (1 + \overline{|A_{ii}|}),

    which makes every eigenvalue positive (a Levenberg-damped step when used in Newton's method).
    No loop and no ``lax.cond``: the second factorisation is of ``A + s I`` with ``s = 0`` when
    the first succeeded (under ``vmap`` a ``cond`` would compute both branches anyway). Both
    factorisations are :func:`bayesbandit._linalg.cholesky`, which never waits on XLA's pool.

    Parameters
    ----------
    matrix : array, shape (p, p)

    Returns
    -------
    chol : array, shape (p, p)
        Lower-triangular ``L`` with ``L @ L.T = matrix + jitter * I``.
    jitter : array, shape ()
        The shift used (0 when the matrix was positive definite).
    """
    sym = 0.5 * (matrix + matrix.T)
    eye = jnp.eye(sym.shape[-1], dtype=sym.dtype)
    chol = cholesky(sym)
    ok = jnp.all(jnp.isfinite(chol))
    jitter = jnp.where(ok, 0.0, gershgorin_shift(sym)).astype(sym.dtype)
    shifted = cholesky(sym + jitter * eye)  # after, and dependent on, the first factor
    return jnp.where(ok, chol, shifted), jitter


def gershgorin_shift(matrix: Array) -> Array:
    r"""A shift ``tau`` that makes the symmetric ``matrix + tau I`` positive definite (Gershgorin):
    ``max(0, max_i (sum_{j != i} |A_ij| - A_ii)) + 1e-8 (1 + mean_i |A_ii|)``."""
    diag = jnp.diag(matrix)
    radius = jnp.sum(jnp.abs(matrix), axis=1) - jnp.abs(diag)
    return jnp.maximum(0.0, jnp.max(radius - diag)) + 1e-8 * (1.0 + jnp.mean(jnp.abs(diag)))


def _tied(scores: Array, rtol: float) -> Array:
    """The tie mask shared by :func:`random_argmax` and :func:`tie_probabilities` (see there)."""
    if jnp.issubdtype(scores.dtype, jnp.inexact):
        scores = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    best = jnp.max(scores)
    if not rtol:
        return scores >= best
    return scores >= jnp.where(jnp.isinf(best), best, best - rtol * jnp.abs(best))


def tie_probabilities(scores: Array, *, rtol: float = 0.0) -> Array:
    """The law of :func:`random_argmax`'s choice: ``1 / n`` on each of the ``n`` tied maxima of
    ``scores``, 0 elsewhere, shape (K,), up to the bias stated there (relative ``2^{-48}`` for
    ``n <= 2^16``, ``n 2^{-32}`` above)."""
    tied = _tied(scores, rtol).astype(float)
    return tied / jnp.sum(tied)


def _nth_true(mask: Array, j: Array) -> Array:
    """Index of the ``(j+1)``-th true entry of the 1-d boolean ``mask`` (``0 <= j < sum(mask)``).

    The prefix count is taken in two levels of about ``sqrt(K)``: per-block counts of the mask
    reshaped to ``(ceil(K / w), w)``, ``w = ceil(sqrt(K))``, then within the block that holds the
    entry; XLA's one-level prefix sum over ``K`` entries costs about 3x more on CPU at ``K = 10^4``.
    """
    size = mask.shape[0]
    width = math.isqrt(size - 1) + 1
    rows = -(-size // width)
    blocks = jnp.pad(mask.astype(jnp.int32), (0, rows * width - size)).reshape(rows, width)
    ends = jnp.cumsum(jnp.sum(blocks, axis=1))
    block = jnp.argmax(ends > j)
    row = blocks[block]
    return block * width + jnp.argmax(jnp.cumsum(row) > j - (ends[block] - jnp.sum(row)))


def _random_below(key: PRNGKey, n: Array) -> Array:
    """``J`` on ``{0, ..., n - 1}`` (``1 <= n < 2^32``) from the two 32-bit words ``hi, lo`` of one
    draw: ``(2^32 hi + lo) mod n`` for ``n <= 2^16``, ``lo mod n`` above (law: :func:`random_argmax`).

    ``(2^32 hi + lo) mod n = ((hi mod n) (2^32 mod n) + lo mod n) mod n``, every term below
    ``n^2 <= 2^32`` for ``n <= 2^16`` (exact in ``uint32``); ``2^32 mod n = (2^16 mod n)^2 mod n``.
    """
    hi, lo = jax.random.bits(key, (2,), jnp.uint32)
    n = n.astype(jnp.uint32)
    wrap = jnp.where(n <= 1 << 16, (jnp.uint32(1 << 16) % n) ** 2 % n, 0).astype(jnp.uint32)
    return ((hi % n * wrap + lo % n) % n).astype(jnp.int32)


def random_argmax(key: PRNGKey, scores: Array, *, rtol: float = 0.0) -> Array:
    r"""Index of a maximum of ``scores``, chosen uniformly at random among ties, from two random words.

    The tied entries are those ``>= best - rtol |best|`` (``best = max scores``; NaN scores count
    as ``-inf``; when ``best`` is infinite, the entries equal to it). With ``n`` of them, in index
    order ``i_0 < ... < i_{n-1}``, one integer ``J`` on ``{0, ..., n - 1}`` is made from the two
    32-bit words ``hi, lo`` of one draw ``jax.random.bits(key, (2,), uint32)``, and ``i_J`` is
    returned: two random words per call, whatever ``K``. The law of ``J``:

    * ``n <= 2^16``: ``J = (2^32 hi + lo) mod n``, so ``P(J = j) = c_j / 2^64`` with ``c_j`` in
      ``{floor(2^64 / n), ceil(2^64 / n)}``: ``|n P(J = j) - 1| < n 2^{-64} <= 2^{-48}``;
    * ``n > 2^16``: ``J = lo mod n``: ``|n P(J = j) - 1| < n 2^{-32}``

    (the law of ``jax.random.randint(key, (), 0, n, int32)`` in JAX 0.10, whose ``uint32``
    multiplier ``2^32 mod n`` wraps to 0 above ``2^16``, from one draw instead of a split and two).
    Exactly uniform when ``n`` is a power of two (one tie: ``J = 0``, the plain argmax). The law
    given the scores is :func:`tie_probabilities` (``1 / n`` on each tie) up to these bounds.

    Parameters
    ----------
    key : PRNGKey
        The key ``J`` is drawn from (typed or raw).
    scores : array, shape (K,), K >= 1
        Floating or integer scores; NaN counts as ``-inf``.
    rtol : float, >= 0
        Scores this close to the best, relative to it, tie (``0``: equal scores only).

    Returns
    -------
    index : int array, shape ()
    """
    tied = _tied(scores, rtol)
    return _nth_true(tied, _random_below(key, jnp.sum(tied, dtype=jnp.int32)))
