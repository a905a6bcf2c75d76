"""What-if variants of GLM-TSL used by the profile section of ``bench_contenders.py``.

They are *not* library code: each changes one thing measured to bound the library's cost.

* :class:`ClosedFormTSL`: the Newton solve with the logistic gradient/Hessian written out
  (``X^T W X``), a plain Cholesky and no line search, instead of the generic NumPyro potential
  differentiated by ``jacfwd(value_and_grad)`` with a jittered Cholesky and Armijo backtracking.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bayesbandit import GLMTSL
from bayesbandit._numerics import cho_solve
from bayesbandit.inference.newton import NewtonInfo, NewtonResult


class ClosedFormTSL(GLMTSL):
    def fit(self, bound, rows, theta0):
        x, y, w = rows
        eye = jnp.eye(x.shape[1], dtype=x.dtype)

        def factor(theta):
            p = jax.nn.sigmoid(x @ theta)
            g = x.T @ (w * (p - y)) + theta  # N(0, I) prior
            h = (x * (w * p * (1.0 - p))[:, None]).T @ x + eye
            chol = jnp.linalg.cholesky(h)
            step = -cho_solve(chol, g)
            return g, chol, step, -0.5 * g @ step

        def cond(c):
            i, _, _, _, _, dec = c
            return (i < self.max_newton) & (dec > self.tol)

        def body(c):
            i, theta, _, _, step, _ = c
            theta = theta + step
            return (i + 1, theta, *factor(theta))

        i, theta, g, chol, _, dec = jax.lax.while_loop(cond, body, (jnp.asarray(0, jnp.int32), theta0, *factor(theta0)))
        info = NewtonInfo(i, jnp.linalg.norm(g), dec, dec <= self.tol)
        return NewtonResult(theta, chol, info)
