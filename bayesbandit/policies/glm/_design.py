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
recomputed from ``G_t`` with the jittered factorisation
(:func:`~bayesbandit._numerics.jittered_cholesky`); from then on it is updated by
Sherman-Morrison only (adding ``x x^T`` only raises the eigenvalues of ``G_t``, so it stays
positive definite; ``tests/policies/test_design_inverse.py`` checks the inverse against a fresh
one over 5,000 updates). Both branches are written with ``lax.cond``: under ``vmap``
(``simulate``) that computes both, a ``d x d`` factorisation per round, which is still far
less than the ``K x d`` solve it replaces.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._numerics import cho_solve, jittered_cholesky
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
            chol, jitter = jittered_cholesky(gram)
            inverse = cho_solve(chol, jnp.eye(gram.shape[0], dtype=gram.dtype))
            inverse = 0.5 * (inverse + inverse.T)
            condition = _inf_norm(gram) * _inf_norm(inverse)
            return inverse, (jitter == 0) & (condition < MAX_CONDITION)

        inverse, exact = jax.lax.cond(self.exact, rank_one, refactor)
        return DesignInverse(gram, inverse, exact)

    def widths(self, arms: Array) -> Array:
        """``||x_i||_{G_t^{-1}}`` for each row of ``arms`` (shape (K, d)), shape (K,)."""
        return jnp.sqrt(jnp.maximum(jnp.sum((arms @ self.inverse) * arms, axis=1), 0.0))


def _inf_norm(matrix: Array) -> Array:
    return jnp.max(jnp.sum(jnp.abs(matrix), axis=1))
