"""GLM-TSL: Thompson sampling from the Laplace approximation (Kveton et al. 2020, Section 3.1)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.inference.potential import BoundModel
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState
from bayesbandit.validation import check_scalar

__all__ = ["GLMTSL", "GLMTSLInfo"]


class GLMTSLInfo(NamedTuple):
    """What GLM-TSL's ``select`` reports."""

    converged: Array  # () bool: the sampled parameters are finite
    scores: Array  # (K,) mean rewards under the sample
    theta: Array  # (p,) the Laplace sample tilde theta_t
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["a"])
class GLMTSL(GLMPolicy):
    """Thompson sampling from the Laplace approximation of a reward program's posterior.

    In round ``t`` (after ``d`` initial exploration pulls):

    .. math::

        \\bar\\theta_t = \\arg\\min_\\theta U(\\theta; H_{t-1}), \\quad
        \\tilde\\theta_t \\sim N(\\bar\\theta_t, a^2 \\nabla^2 U(\\bar\\theta_t)^{-1}), \\quad
        I_t = \\arg\\max_i \\mu(x_i; \\tilde\\theta_t)

    (Kveton et al. 2020, eqs. 4-5), where ``U`` is the program's negative log joint (prior
    included, which keeps the MAP finite on separable data; the paper's unregularised MLE is
    the flat-prior limit) and ``mu`` its mean reward. ``a = 1`` samples the Laplace
    approximation itself; the theory value is ``c_1 sqrt(mu_dot_max)``
    (:func:`bayesbandit.policies.glm.theory.tsl_theory_a`). Sampling is a triangular solve with the
    Cholesky factor kept in the state: ``theta = bar theta + a L^{-T} xi``.

    Parameters
    ----------
    model : NumPyro program or BoundModel
    a : float, > 0
        Posterior inflation.
    solver, num_explore, obs_site, init_params
        See :class:`bayesbandit.policies.glm.GLMPolicy`; the solver must provide the Hessian's
        factor (:class:`~bayesbandit.inference.DenseNewton`).

    See Also
    --------
    GLMFPL : the perturbed-history twin.
    bayesbandit.diagnostics.compare : how close the Laplace posterior is to NUTS.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = jax.random.uniform(jax.random.PRNGKey(0), (20, 3), minval=-1, maxval=1)
    >>> policy = bb.GLMTSL(logistic(), a=1.0)
    >>> state = policy.init(arms)
    >>> arm, info = policy.select(state, arms, jax.random.PRNGKey(1))
    >>> state, update_info = policy.update(state, arms, arm, 1.0)
    >>> int(state.t), bool(update_info.converged)
    (1, True)
    """

    _: KW_ONLY
    a: float = 1.0

    needs_curvature = True

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("GLMTSL", "a", self.a, low=0.0, low_open=True)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, GLMTSLInfo]:
        xi = jax.random.normal(key, state.fit.theta.shape, dtype=state.fit.theta.dtype)
        theta = state.fit.theta + self.a * solve_lower_transpose(state.fit.chol, xi)
        scores = bound.mean_reward(theta, arms)
        return scores, GLMTSLInfo(jnp.all(jnp.isfinite(theta)), scores, theta, jnp.asarray(False))
