"""GLM-UCB (Filippi et al. 2010) and UCB-GLM (Li, Lu and Zhou 2017), as compared in Kveton et al. 2020."""

from __future__ import annotations

from bayesbandit._numerics import jittered_cholesky, mahalanobis_norms
from bayesbandit._typing import Array, PRNGKey
from bayesbandit._validation import check_scalar
from bayesbandit.inference.bind import BoundModel
from bayesbandit.inference.newton import NewtonInfo
from bayesbandit.policies._base import register_policy
from bayesbandit.policies._glm import GLMPolicy, GLMState

__all__ = ["GLMUCB", "UCBGLM"]


def _widths(state: GLMState, arms: Array) -> Array:
    """``||x_i||_{G_t^{-1}}`` with the unweighted design matrix ``G_t = sum_l X_l X_l^T``."""
    chol, _ = jittered_cholesky(state.history.gram())
    return mahalanobis_norms(chol, arms)


@register_policy(data_fields=["rho"])
class GLMUCB(GLMPolicy):
    """GLM-UCB: optimism in the mean-reward space.

    .. math::  I_t = \\arg\\max_i \\mu(x_i; \\bar\\theta_t) + \\rho \\|x_i\\|_{G_t^{-1}}

    with ``bar theta_t`` the MAP and ``G_t`` the *unweighted* design matrix (Kveton et al. 2020,
    Section 5.1; spec pitfall 7). The practical width is ``rho = 0.5`` (the largest standard
    deviation of a Bernoulli reward); the theory width of Filippi et al. (2010, Section 4.1) is
    :func:`bayesbandit.policies.theory.glm_ucb_theory_rho`. Filippi et al.'s projection step
    is omitted, as in the paper's experiments.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.GLMUCB(logistic(), rho=0.5).rho
    0.5
    """

    rho: float = 0.5

    def __post_init__(self) -> None:
        check_scalar("GLMUCB", "rho", self.rho, low=0.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, Array, NewtonInfo]:
        theta = state.fit.theta
        return bound.mean_reward(theta, arms) + self.rho * _widths(state, arms), theta, state.fit.info


@register_policy(data_fields=["alpha"])
class UCBGLM(GLMPolicy):
    """UCB-GLM: optimism in the linear-predictor space.

    .. math::  I_t = \\arg\\max_i \\eta(x_i; \\bar\\theta_t) + \\alpha \\|x_i\\|_{G_t^{-1}}

    where ``eta`` is the natural parameter of the observed site's distribution
    (:meth:`bayesbandit.BoundModel.natural_parameter`), which for the canonical-link GLMs of
    Li et al. (2017) is the linear predictor ``x_i^T bar theta_t``. The practical width is
    ``alpha = 0.5``; the theory width (Li et al. 2017, Theorem 2) is
    :func:`bayesbandit.policies.theory.ucb_glm_theory_alpha`. As in Kveton et al. (2020) the
    original random initial exploration is replaced by ``d`` linearly independent pulls.
    Requires a likelihood affine in the reward.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.UCBGLM(logistic(), alpha=0.5).alpha
    0.5
    """

    alpha: float = 0.5

    def __post_init__(self) -> None:
        check_scalar("UCBGLM", "alpha", self.alpha, low=0.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, Array, NewtonInfo]:
        theta = state.fit.theta
        return bound.natural_parameter(theta, arms) + self.alpha * _widths(state, arms), theta, state.fit.info
