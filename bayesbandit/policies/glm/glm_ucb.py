"""GLM-UCB (Filippi et al. 2010), as compared in Kveton et al. 2020."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar, NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.potential import BoundModel
from bayesbandit.policies.glm._policy import ExactScores, GLMPolicy, GLMState
from bayesbandit.validation import check_scalar

__all__ = ["GLMUCB", "GLMUCBInfo", "DesignWidths", "design_widths"]


class GLMUCBInfo(NamedTuple):
    """What GLM-UCB's ``select`` reports."""

    converged: Array  # () bool: the scores are not NaN
    scores: Array  # (K,) upper confidence bounds
    theta: Array  # (p,) the MAP the bounds are centred on
    widths: Array  # (K,) ||x_i||_{G_t^{-1}}
    exploring: Array  # () bool: an initial-exploration round


class DesignWidths:
    """Mixin of GLM-UCB and UCB-GLM: the state carries ``G_t^{-1}``, and ``widths`` reads it."""

    keeps_design: ClassVar[bool] = True

    def widths(self, state: GLMState, arms: Array) -> Array:
        """``||x_i||_{G_t^{-1}}`` for each arm, shape (K,) (:func:`design_widths`)."""
        return design_widths(state, arms)


def design_widths(state: GLMState, arms: Array) -> Array:
    """``||x_i||_{G_t^{-1}}`` with the unweighted design matrix ``G_t = sum_l X_l X_l^T``, shape (K,).

    ``G_t^{-1}`` is carried in the state and updated by Sherman-Morrison
    (``DesignInverse``), so a round costs ``O(K d + d^2)``
    for the update and one ``(K, d) x (d, d)`` product here.
    """
    if state.design is None:
        raise InvalidInput(
            "design_widths needs a state that carries G_t^{-1}: one from GLMUCB or UCBGLM "
            "(policies with keeps_design = True). Got a state without it (design=None)."
        )
    return state.design.widths(arms)


@register_policy(data_fields=["rho"])
class GLMUCB(ExactScores, DesignWidths, GLMPolicy):
    """GLM-UCB: optimism in the mean-reward space.

    .. math::  I_t = \\arg\\max_i \\mu(x_i; \\bar\\theta_t) + \\rho \\|x_i\\|_{G_t^{-1}}

    with ``bar theta_t`` the MAP and ``G_t`` the *unweighted* design matrix (Kveton et al. 2020,
    Section 5.1; spec pitfall 7). The practical width is ``rho = 0.5`` (the largest standard
    deviation of a Bernoulli reward); the theory width of Filippi et al. (2010, Section 4.1) is
    :func:`bayesbandit.policies.glm.theory.glm_ucb_theory_rho`. Filippi et al.'s projection step
    is omitted, as in the paper's experiments.

    See Also
    --------
    UCBGLM : optimism in the linear-predictor space.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.GLMUCB(logistic(), rho=0.5).rho
    0.5
    """

    _: KW_ONLY
    rho: float = 0.5

    fixed_width = True

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("GLMUCB", "rho", self.rho, low=0.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, GLMUCBInfo]:
        theta = state.fit.theta
        widths = self.widths(state, arms)
        scores = bound.mean_reward(theta, arms) + self.rho * widths
        return scores, GLMUCBInfo(~jnp.any(jnp.isnan(scores)), scores, theta, widths, jnp.asarray(False))
