"""UCB-GLM (Li, Lu and Zhou 2017), as compared in Kveton et al. 2020."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.errors import ModelSpecError
from bayesbandit.inference.potential import BoundModel
from bayesbandit.policies.glm._policy import ExactScores, GLMPolicy, GLMState
from bayesbandit.policies.glm.glm_ucb import DesignWidths
from bayesbandit.validation import check_scalar

__all__ = ["UCBGLM", "UCBGLMInfo"]


class UCBGLMInfo(NamedTuple):
    """What UCB-GLM's ``select`` reports."""

    converged: Array  # () bool: the scores are not NaN
    scores: Array  # (K,) upper confidence bounds on the natural parameter
    theta: Array  # (p,) the MAP the bounds are centred on
    widths: Array  # (K,) ||x_i||_{G_t^{-1}}
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["alpha"])
class UCBGLM(ExactScores, DesignWidths, GLMPolicy):
    """UCB-GLM: optimism in the linear-predictor space.

    .. math::  I_t = \\arg\\max_i \\eta(x_i; \\bar\\theta_t) + \\alpha \\|x_i\\|_{G_t^{-1}}

    where ``eta`` is the natural parameter of the observed site's distribution
    (:meth:`bayesbandit.inference.BoundModel.natural_parameter`), which for the canonical-link GLMs of
    Li et al. (2017) is the linear predictor ``x_i^T bar theta_t``. The practical width is
    ``alpha = 0.5``; the theory width (Li et al. 2017, Theorem 2) is
    :func:`bayesbandit.policies.glm.theory.ucb_glm_theory_alpha`. As in Kveton et al. (2020) the
    original random initial exploration is replaced by ``d`` linearly independent pulls.
    Requires a likelihood affine in the reward.

    See Also
    --------
    GLMUCB : optimism in the mean-reward space.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.UCBGLM(logistic(), alpha=0.5).alpha
    0.5
    """

    _: KW_ONLY
    alpha: float = 0.5

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("UCBGLM", "alpha", self.alpha, low=0.0)

    def check_program(self, d: int) -> None:
        """Also refuse a likelihood not affine in the reward: it has no natural parameter to be optimistic in."""
        super().check_program(d)
        bound = self.bound(d)
        if not bound.is_affine:
            raise ModelSpecError(
                f"UCBGLM is optimistic in the natural parameter of observed site '{bound.obs_site}' "
                f"({bound.support_name}), and this likelihood has none: its log-probability is not affine in the "
                "reward. Fix: use GLMUCB (optimism in the mean reward), GLMTSL or GLMFPL."
            )

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, UCBGLMInfo]:
        theta = state.fit.theta
        widths = self.widths(state, arms)
        scores = bound.natural_parameter(theta, arms) + self.alpha * widths
        return scores, UCBGLMInfo(~jnp.any(jnp.isnan(scores)), scores, theta, widths, jnp.asarray(False))
