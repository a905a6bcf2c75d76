"""Numerically safe primitives: jittered Cholesky, the Gershgorin shift, random tie-breaking argmax."""

from __future__ import annotations

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


def tie_probabilities(scores: Array, *, rtol: float = 0.0) -> Array:
    """The law of :func:`random_argmax`'s choice: uniform over the tied maxima of ``scores``, shape (K,)."""
    if jnp.issubdtype(scores.dtype, jnp.inexact):
        scores = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    best = jnp.max(scores)
    tied = (scores >= (best - rtol * jnp.abs(best) if rtol else best)).astype(float)
    return tied / jnp.sum(tied)


def random_argmax(key: PRNGKey | Array, scores: Array, *, rtol: float = 0.0) -> Array:
    """Index of a maximum of ``scores``, chosen uniformly at random among ties.

    The tied entries are those ``>= best - rtol |best|`` (``best = max scores``); of them, the one
    of largest ``noise`` wins, with ``noise`` iid uniform on ``[0, 1)``: uniform among the ties.

    Parameters
    ----------
    key : PRNGKey or float array, shape (K,)
        The key ``noise`` is drawn from, or the draws themselves.
    scores : array, shape (K,)
        NaN scores (floating ``scores``) count as ``-inf``.
    rtol : float, >= 0
        Scores this close to the best, relative to it, tie (``0``: equal scores only).

    Returns
    -------
    index : int array, shape ()
    """
    if jnp.issubdtype(scores.dtype, jnp.inexact):
        scores = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    best = jnp.max(scores)
    noise = key if jnp.issubdtype(key.dtype, jnp.floating) else jax.random.uniform(key, scores.shape)
    tied = scores >= (best - rtol * jnp.abs(best) if rtol else best)
    return jnp.argmax(jnp.where(tied, noise, -1.0))
