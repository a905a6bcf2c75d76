"""CombLinUCB (Wen, Kveton and Ashkan, ICML 2015, Alg. 3), in its own parameterisation."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar

import jax
import jax.numpy as jnp

from bayesbandit._linalg import cholesky
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.comb._base import CombInfo
from bayesbandit.policies.comb._kalman import KalmanCombPolicy, KalmanState
from bayesbandit.validation import check_scalar

__all__ = ["CombLinUCB", "CombLinUCBInfo"]


class CombLinUCBInfo(CombInfo):
    """What :class:`CombLinUCB`'s ``select`` reports.

    ``scores`` (M, N): Wen et al.'s upper confidence bounds; ``converged``: every score is finite.
    """

    __slots__ = ()


@register_policy(data_fields=["prior_var", "noise_var", "c"])
class CombLinUCB(KalmanCombPolicy):
    r"""CombLinUCB: optimistic scores from the Kalman posterior (``._kalman``).

    .. math::  \hat r_t(j, i) = \bar\theta_j^\top x_t(i) + c \sqrt{x_t(i)^\top \Sigma_j x_t(i)}

    With ``Sigma_j = noise_var V_j^{-1}`` (``lam = noise_var / prior_var``) this is C2UCB with
    ``lam = noise_var / prior_var`` and ``alpha = c sqrt(noise_var)``: only the tuning grid differs
    (125 configurations over ``prior_var, noise_var, c`` against C2UCB's 25).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> bb.CombLinUCB(oracle=TopK(k=2), prior_var=1.0, noise_var=0.1, c=1.0).noise_var
    0.1
    """

    info_type: ClassVar[type[CombInfo]] = CombLinUCBInfo

    _: KW_ONLY
    c: float = 1.0

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("CombLinUCB", "c", self.c, low=0.0, high_open=True)

    def scores(self, state: KalmanState, arms: Array, key: PRNGKey) -> Array:
        root = cholesky(state.cov)  # Sigma_j = R R^T: sqrt(x^T Sigma x) = ||R^T x||
        spread = jnp.sqrt(jnp.sum(jax.vmap(lambda r: r.T @ arms.T)(root) ** 2, axis=1))
        return state.mean @ arms.T + self.c * spread
