"""The inverse of the unweighted design matrix, kept up to date by rank-one updates.

GLM-UCB and UCB-GLM widen their scores by ``||x_i||_{G_t^{-1}}`` with ``G_t = sum_l X_l X_l^T``
(Kveton et al. 2020, Section 5.1). Refactoring ``G_t`` and solving against all ``K`` arms every
round costs a Cholesky factorisation and a ``K x d`` triangular solve; instead the state carries
``P_t = G_t^{-1}`` and each observation updates it by Sherman-Morrison,

.. math::  (G + x x^T)^{-1} = P - \\frac{P x x^T P}{1 + x^T P x}  \\qquad  (O(d^2)),

after which the widths are one ``(K, d) x (d, d)`` product, ``||x_i||^2_{G^{-1}} = x_i^T P x_i``.

``G_t`` is singular until ``d`` linearly independent arms have been pulled (the initial
exploration), and a rank-one update cannot start from a singular matrix: its rounding error
grows with the condition number of the matrix it starts from. Until ``G_t`` is positive definite
with condition number below ``MAX_CONDITION`` (estimated as ``||G||_inf ||P||_inf``), ``P`` is
recomputed from ``G_t`` by Gauss-Jordan elimination (of ``G_t`` plus a Gershgorin shift while
``G_t`` is singular; plain XLA arithmetic, see :func:`_symmetric_inverse`); from then on it is updated by
Sherman-Morrison only (adding ``x x^T`` only raises the eigenvalues of ``G_t``, so it stays
positive definite; ``tests/policies/test_design_inverse.py`` checks the inverse against a fresh
one over 5,000 updates). Both branches are written with ``lax.cond``: under ``vmap``
(``simulate``) that computes both, a ``d x d`` inversion per round, which is still far
less than the ``K x d`` solve it replaces.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._numerics import gershgorin_shift
from bayesbandit._typing import Array

__all__ = ["DesignInverse", "MAX_CONDITION"]

MAX_CONDITION = 1e6  # rank-one updates start from an inverse this well conditioned (float64: ~1e-10 error)


class DesignInverse(NamedTuple):
    """``G_t = sum_l x_l x_l^T`` and its inverse ``P_t``."""

    gram: Array  # (d, d) G_t
    inverse: Array  # (d, d) G_t^{-1} once `exact`, else (G_t + jitter I)^{-1}
    exact: Array  # () bool: G_t is well conditioned and `inverse` is its inverse

    @classmethod
    def create(cls, d: int, dtype=None) -> DesignInverse:
        dtype = dtype or jnp.result_type(float)
        return cls(jnp.zeros((d, d), dtype), jnp.zeros((d, d), dtype), jnp.asarray(False))

    def add(self, x: Array) -> DesignInverse:
        """The design after one more pull of features ``x`` (shape (d,))."""
        gram = self.gram + jnp.outer(x, x)

        def rank_one() -> tuple[Array, Array]:
            px = self.inverse @ x
            return self.inverse - jnp.outer(px, px) / (1.0 + x @ px), jnp.asarray(True)

        def refactor() -> tuple[Array, Array]:
            inverse, positive = _symmetric_inverse(gram)
            shifted, _ = _symmetric_inverse(gram + gershgorin_shift(gram) * jnp.eye(gram.shape[0], dtype=gram.dtype))
            inverse = jnp.where(positive, inverse, shifted)
            condition = _inf_norm(gram) * _inf_norm(inverse)
            return inverse, positive & (condition < MAX_CONDITION)

        inverse, exact = jax.lax.cond(self.exact, rank_one, refactor)
        return DesignInverse(gram, inverse, exact)

    def widths(self, arms: Array) -> Array:
        """``||x_i||_{G_t^{-1}}`` for each row of ``arms`` (shape (K, d)), shape (K,)."""
        return jnp.sqrt(jnp.maximum(jnp.sum((arms @ self.inverse) * arms, axis=1), 0.0))


def _symmetric_inverse(matrix: Array) -> tuple[Array, Array]:
    """Gauss-Jordan inverse of a symmetric matrix without pivoting, unrolled over its ``d`` pivots.

    Returns the inverse and whether every pivot was positive and finite (the matrix is positive
    definite: the pivots are ratios of leading principal minors), where elimination without
    pivoting is stable. Plain XLA arithmetic, no LAPACK call: a batched LAPACK factorisation
    here, independent of the Newton solve's in the same round, deadlocked XLA:CPU when
    ``simulate`` split vmapped runs over two host devices (d = 20).
    """
    d = matrix.shape[0]
    reduced, inverse = matrix, jnp.eye(d, dtype=matrix.dtype)
    positive = jnp.asarray(True)
    for k in range(d):
        pivot = reduced[k, k]
        positive = positive & (pivot > 0) & jnp.isfinite(pivot)
        row, inverse_row = reduced[k] / pivot, inverse[k] / pivot
        factor = reduced[:, k].at[k].set(0.0)
        reduced = (reduced - jnp.outer(factor, row)).at[k].set(row)
        inverse = (inverse - jnp.outer(factor, inverse_row)).at[k].set(inverse_row)
    return 0.5 * (inverse + inverse.T), positive & jnp.all(jnp.isfinite(inverse))


def _inf_norm(matrix: Array) -> Array:
    return jnp.max(jnp.sum(jnp.abs(matrix), axis=1))
