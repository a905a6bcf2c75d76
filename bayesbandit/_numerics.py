"""Numerically safe primitives: jittered Cholesky, random tie-breaking argmax."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey


def jittered_cholesky(matrix: Array, max_tries: int = 8) -> tuple[Array, Array]:
    """Lower Cholesky factor of a symmetric PSD matrix, adding jitter until it is finite.

    The matrix is symmetrised first. Jitter starts at ``1e-10 * mean(diag)`` and grows by a
    factor of 100 per try; the jitter actually used is returned so callers can report it.

    Parameters
    ----------
    matrix : array, shape (p, p)
    max_tries : int
        Number of jitter levels tried after the plain factorisation.

    Returns
    -------
    chol : array, shape (p, p)
        Lower-triangular factor ``L`` with ``L @ L.T = matrix + jitter * I``; NaN if every try
        failed.
    jitter : array, shape ()
    """
    sym = 0.5 * (matrix + matrix.T)
    p = sym.shape[-1]
    eye = jnp.eye(p, dtype=sym.dtype)
    scale = jnp.maximum(jnp.mean(jnp.abs(jnp.diag(sym))), jnp.finfo(sym.dtype).tiny)

    def attempt(carry):
        i, _, _ = carry
        jitter = jnp.where(i == 0, 0.0, scale * 1e-10 * 100.0 ** (i - 1))
        chol = jnp.linalg.cholesky(sym + jitter * eye)
        return i + 1, chol, jitter

    def failed(carry):
        i, chol, _ = carry
        return (i <= max_tries) & ~jnp.all(jnp.isfinite(chol))

    init = attempt((jnp.asarray(0), jnp.zeros_like(sym), jnp.asarray(0.0, sym.dtype)))
    _, chol, jitter = jax.lax.while_loop(failed, attempt, init)
    return chol, jitter


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
    return jax.scipy.linalg.solve_triangular(chol, rhs, lower=True, trans="T")


def cho_solve(chol: Array, rhs: Array) -> Array:
    """Solve ``(L L.T) z = rhs`` by two triangular solves (never an explicit inverse)."""
    return jax.scipy.linalg.cho_solve((chol, True), rhs)


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
    half = jax.scipy.linalg.solve_triangular(chol, x.T, lower=True)
    return jnp.sqrt(jnp.sum(half**2, axis=0))
