"""What-if variants of the GLM policies, the baselines some benchmarks measure the library against.

They are *not* library code: each changes one thing measured to bound the library's cost.

* :class:`FactorisedWidthsGLMUCB` and :class:`FactorisedWidthsUCBGLM` (``bench_ucb_widths.py``):
  GLM-UCB and UCB-GLM with their widths ``||x_i||_{G_t^{-1}}`` computed the direct way each
  round (the design matrix from the per-arm counts, a jittered Cholesky factor, a ``K x d``
  triangular solve) instead of from the rank-one-updated inverse the library carries.

* :class:`ClosedFormLogisticNewton`: a solver for the policies' ``solver=`` slot with the Newton
  solve's logistic gradient/Hessian written out (``X^T W X``), a plain Cholesky and no line
  search, instead of :class:`bayesbandit.inference.DenseNewton`'s generic NumPyro potential differentiated
  by ``jacfwd(value_and_grad)`` with a jittered Cholesky and Armijo backtracking. Used as
  ``bb.GLMTSL(logistic(), a=1.0, solver=ClosedFormLogisticNewton())``. It ignores the bound
  program: the N(0, I) prior is written by hand and matches ``logistic()`` (prior_scale 1) only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve

import bayesbandit as bb
from bayesbandit._gaussian_linear import mahalanobis_norms
from bayesbandit._numerics import jittered_cholesky
from bayesbandit.contract import register_policy
from bayesbandit.inference import NewtonFit, NewtonInfo
from bayesbandit.precision import require_x64


class FactorisedWidths:
    """Widths from a fresh factorisation of ``G_t`` every round, instead of the carried inverse."""

    keeps_design: ClassVar[bool] = False

    def widths(self, state, arms):
        chol, _ = jittered_cholesky(state.history.gram())
        return mahalanobis_norms(chol, arms)


@register_policy(data_fields=["rho"])
class FactorisedWidthsGLMUCB(FactorisedWidths, bb.GLMUCB):
    """GLM-UCB refactoring ``G_t`` and solving against all arms every round."""


@register_policy(data_fields=["alpha"])
class FactorisedWidthsUCBGLM(FactorisedWidths, bb.UCBGLM):
    """UCB-GLM refactoring ``G_t`` and solving against all arms every round."""


@dataclass(frozen=True, kw_only=True)
class ClosedFormLogisticNewton:
    """Undamped Newton on the logistic potential with an N(0, I) prior, in closed form.

    Follows the solver protocol of ``bayesbandit/inference/solvers.py``: ``init(bound, theta0, rows)
    -> fit`` and ``fit(bound, rows, start_fit) -> (fit, info)`` with ``rows = (x, y, w)`` weighted
    rows (per-arm means and pull counts on a fixed arm set). Returns the MAP with the Cholesky
    factor of the Hessian at it (:class:`NewtonFit`) and a :class:`NewtonInfo` whose
    ``num_steps`` counts the Newton steps taken; stops when the decrement ``g^T H^{-1} g / 2 <=
    tol`` or after ``max_steps`` steps (then ``converged`` is false).
    """

    max_steps: int = 20
    tol: float = 1e-8

    provides_curvature: ClassVar[bool] = True

    def init(self, bound, theta0, rows) -> NewtonFit:
        """Solve from ``theta0`` on ``rows`` (the prior alone for an empty history)."""
        require_x64("ClosedFormLogisticNewton")
        return self.fit(bound, rows, NewtonFit(theta0, jnp.zeros((theta0.shape[0],) * 2, theta0.dtype)))[0]

    def fit(self, bound, rows, start: NewtonFit) -> tuple[NewtonFit, NewtonInfo]:
        """Newton from ``start.theta`` to the MAP of ``rows`` (``bound`` is not used)."""
        x, y, w = rows
        eye = jnp.eye(x.shape[1], dtype=x.dtype)

        def factor(theta):
            p = jax.nn.sigmoid(x @ theta)
            g = x.T @ (w * (p - y)) + theta  # N(0, I) prior
            h = (x * (w * p * (1.0 - p))[:, None]).T @ x + eye
            chol = jnp.linalg.cholesky(h)
            step = -cho_solve((chol, True), g)
            return g, chol, step, -0.5 * g @ step

        def cond(c):
            i, _, _, _, _, dec = c
            return (i < self.max_steps) & (dec > self.tol)

        def body(c):
            i, theta, _, _, step, _ = c
            theta = theta + step
            return (i + 1, theta, *factor(theta))

        init = (jnp.asarray(0, jnp.int32), start.theta, *factor(start.theta))
        i, theta, g, chol, _, dec = jax.lax.while_loop(cond, body, init)
        info = NewtonInfo(i, jnp.linalg.norm(g), dec, dec <= self.tol)
        return NewtonFit(theta, chol), info
