"""Numerically safe primitives: jittered Cholesky, random tie-breaking argmax."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bayesbandit._linalg import cholesky, solve_triangular
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


def random_argmax(key: PRNGKey, scores: Array) -> Array:
    """Index of a maximum of ``scores``, chosen uniformly at random among ties.

    Parameters
    ----------
    key : PRNGKey
    scores : array, shape (K,)
        NaN scores count as ``-inf``.

    Returns
    -------
    index : int array, shape ()
    """
    scores = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    best = jnp.max(scores)
    noise = jax.random.uniform(key, scores.shape)
    return jnp.argmax(jnp.where(scores >= best, noise, -1.0))


def solve_lower_transpose(chol: Array, rhs: Array) -> Array:
    """Solve ``L.T z = rhs`` for a lower-triangular ``L`` (used to sample ``N(0, (L L.T)^-1)``)."""
    return solve_triangular(chol, rhs, lower=True, trans="T")


def mahalanobis_norms(chol: Array, x: Array) -> Array:
    """Row norms ``||x_i||_{A^-1}`` where ``A = L L.T``.

    Parameters
    ----------
    chol : array, shape (d, d)
        Lower Cholesky factor of ``A``.
    x : array, shape (K, d)

    Returns
    -------
    array, shape (K,)
    """
    half = solve_triangular(chol, x.T, lower=True)
    return jnp.sqrt(jnp.sum(half**2, axis=0))
