"""Arm-wise Thompson sampling: an independent posterior sample for every arm (Takemura and Ito, Alg. 2)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import block_widths, inverse_factors
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.errors import InvalidInput
from bayesbandit.policies.comb._base import CombInfo, RidgeCombPolicy
from bayesbandit.validation import check_scalar

__all__ = ["ArmTS", "ArmTSInfo"]


class ArmTSInfo(CombInfo):
    """What :class:`ArmTS`'s ``select`` reports.

    ``scores`` (M, N): the sampled scores ``theta_hat_j^T x_i + v ||x_i||_{V_j^{-1}} xi_{ji}``, one ``xi`` per arm;
    ``converged``: every score is finite.
    """

    __slots__ = ()


@register_policy(data_fields=["lam", "v"])
class ArmTS(RidgeCombPolicy):
    r"""Arm-wise TS (Alg. 2 lines 9 and 11): every arm scores with its own draw of ``theta``.

    .. math::  \tilde\theta_t(j, i) \sim N(\hat\theta_{t,j}, v^2 V_j^{-1}) \text{ independently}, \qquad
               \hat r_t(j, i) = \tilde\theta_t(j, i)^\top x_t(i)

    Only the scalar ``theta~(j, i)^T x_i`` is used, and it is ``N(theta_hat_j^T x_i, v^2
    ||x_i||^2_{V_j^{-1}})``, independent across arms. So by default (``literal=False``) the score
    is drawn directly,

    .. math::  \hat r_t(j, i) = \hat\theta_{t,j}^\top x_t(i) + v \|x_t(i)\|_{V_j^{-1}} \xi_{j,i},\quad \xi \sim N(0, 1),

    at the cost of the widths (``O(M N d^2)``), the same law as the literal per-arm draw
    (``literal=True``: ``theta~(j, i) = theta_hat_j + v L_j^{-T} z_{j,i}`` with ``z`` of shape
    ``(M, N, d)``); a test checks that the two agree in mean, variance and correlation. Unlike
    round-wise TS, identical arms get independent scores (correlation 0).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> bb.ArmTS(oracle=TopK(k=2), v=0.1, literal=True).literal
    True
    """

    info_type: ClassVar[type[CombInfo]] = ArmTSInfo

    _: KW_ONLY
    v: float = 1.0
    literal: bool = False

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("ArmTS", "v", self.v, low=0.0, high_open=True)
        if not isinstance(self.literal, bool):
            raise InvalidInput(
                f"The 'literal' parameter of ArmTS must be a bool. Got {self.literal!r} instead. "
                "Fix: pass literal=True for the per-arm draw of theta, or literal=False."
            )

    def scores_from(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey, t: Array) -> Array:
        mean = theta_hat @ arms.T
        if self.literal:
            z = jax.random.normal(key, (*mean.shape, arms.shape[1]), dtype=mean.dtype)  # (M, N, d)
            half = jnp.einsum("mij,nj->min", inverse_factors(chol), arms)  # L^-1 x, (M, d, N)
            return mean + self.v * jnp.einsum("mnd,mdn->mn", z, half)  # z^T L^-1 x = (L^-T z)^T x
        xi = jax.random.normal(key, mean.shape, dtype=mean.dtype)
        return mean + self.v * block_widths(chol, arms) * xi
