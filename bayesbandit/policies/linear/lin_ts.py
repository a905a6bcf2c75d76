"""LinTS: linear Thompson sampling (Agrawal and Goyal 2013)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.linear._ridge import RidgePolicy
from bayesbandit.validation import check_scalar

__all__ = ["LinTS", "LinTSInfo"]


class LinTSInfo(NamedTuple):
    """What LinTS's ``select`` reports."""

    converged: Array  # () bool: the sample is finite
    scores: Array  # (K,) x_i^T tilde theta
    theta: Array  # (d,) the posterior sample tilde theta_t
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["lam", "v"])
class LinTS(RidgePolicy):
    """Linear Thompson sampling.

    .. math::  \\tilde\\theta_t \\sim N(B_t^{-1} b_t, v^2 B_t^{-1}), \\qquad I_t = \\arg\\max_i x_i^T \\tilde\\theta_t

    (Agrawal and Goyal 2013, Algorithm 1; ``v`` is their posterior scale, ``lam`` the ridge).

    See Also
    --------
    LinUCB : the optimistic twin.
    GLMTSL : Thompson sampling for any reward program.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.LinTS(lam=1.0, v=0.5).v
    0.5
    """

    _: KW_ONLY
    v: float = 1.0

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("LinTS", "lam", self.lam, low=0.0, low_open=True)
        check_scalar("LinTS", "v", self.v, low=0.0)

    def scores(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey) -> tuple[Array, LinTSInfo]:
        xi = jax.random.normal(key, theta_hat.shape, dtype=theta_hat.dtype)
        theta = theta_hat + self.v * solve_lower_transpose(chol, xi)
        scores = arms @ theta
        return scores, LinTSInfo(jnp.all(jnp.isfinite(theta)), scores, theta, jnp.asarray(False))
