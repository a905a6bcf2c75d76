"""LinUCB: linear upper confidence bounds (Li et al. 2010; Abbasi-Yadkori et al. 2011)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit import _gaussian_linear as gl
from bayesbandit._gaussian_linear import mahalanobis_norms
from bayesbandit._numerics import tie_probabilities
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies._explore import choice_scores
from bayesbandit.policies.linear._ridge import RidgePolicy, RidgeState
from bayesbandit.validation import check_scalar

__all__ = ["LinUCB", "LinUCBInfo"]


class LinUCBInfo(NamedTuple):
    """What LinUCB's ``select`` reports."""

    converged: Array  # () bool: the scores are not NaN
    scores: Array  # (K,) upper confidence bounds
    theta: Array  # (d,) the ridge estimate hat theta_t
    widths: Array  # (K,) ||x_i||_{B_t^{-1}}
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["lam", "alpha"])
class LinUCB(RidgePolicy):
    """Linear upper confidence bound.

    .. math::  I_t = \\arg\\max_i x_i^T \\hat\\theta_t + \\alpha \\|x_i\\|_{B_t^{-1}}

    (Li et al. 2010; ``alpha`` the width, ``lam`` the ridge).

    See Also
    --------
    LinTS : the sampling twin.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.LinUCB(alpha=0.5).alpha
    0.5
    """

    _: KW_ONLY
    alpha: float = 1.0

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("LinUCB", "lam", self.lam, low=0.0, low_open=True)
        check_scalar("LinUCB", "alpha", self.alpha, low=0.0)

    def scores(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey) -> tuple[Array, LinUCBInfo]:
        widths = mahalanobis_norms(chol, arms)
        scores = arms @ theta_hat + self.alpha * widths
        return scores, LinUCBInfo(~jnp.any(jnp.isnan(scores)), scores, theta_hat, widths, jnp.asarray(False))

    def action_probabilities(self, state: RidgeState, arms: Array) -> Array:
        """The probability of each arm under ``select(state, arms, key)`` over ``key``, shape (K,):
        uniform over the tied maxima of the upper confidence bounds (or of the initial-exploration rule)."""
        arms = jnp.asarray(arms, dtype=state.b.dtype)
        chol, theta_hat = gl.estimate(state.precision, state.b)
        scores, _ = self.scores(chol, theta_hat, arms, jax.random.PRNGKey(0))
        return tie_probabilities(choice_scores(scores, arms, *self._choice_inputs(state, arms.shape[1]))[0])
