"""Round-wise Thompson sampling: one posterior sample per block per round, shared by every arm."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar

import jax

from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.comb._base import CombInfo, RidgeCombPolicy
from bayesbandit.validation import check_scalar

__all__ = ["RoundTS", "RoundTSInfo"]


class RoundTSInfo(CombInfo):
    """What :class:`RoundTS`'s ``select`` reports.

    ``scores`` (M, N): the sampled scores ``theta~_j^T x_i``, one ``theta~_j`` per block; ``converged``: every score
    is finite.
    """

    __slots__ = ()


@register_policy(data_fields=["lam", "v"])
class RoundTS(RidgeCombPolicy):
    r"""Round-wise TS (Takemura and Ito, Alg. 2 lines 7 and 10; Agrawal and Goyal's LinTS per block).

    .. math::  \tilde\theta_{t,j} = \hat\theta_{t,j} + v L_j^{-\top} z_j,\quad z_j \sim N(0, I_d), \qquad
               \hat r_t(j, i) = \tilde\theta_{t,j}^\top x_t(i)

    with ``V_j = L_j L_j^T``, so ``theta~_j ~ N(theta_hat_j, v^2 V_j^{-1})``. One draw per block
    (the lifted ``dM``-dimensional draw: its blocks are independent because ``V`` is
    block-diagonal) serves every arm, so identical arms get identical scores: the perfectly
    correlated "shared sample" the paper argues against.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> bb.RoundTS(oracle=TopK(k=2), v=0.1).v
    0.1
    """

    info_type: ClassVar[type[CombInfo]] = RoundTSInfo

    _: KW_ONLY
    v: float = 1.0

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("RoundTS", "v", self.v, low=0.0, high_open=True)

    def scores_from(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey, t: Array) -> Array:
        z = jax.random.normal(key, theta_hat.shape, dtype=theta_hat.dtype)
        theta = theta_hat + self.v * jax.vmap(solve_lower_transpose)(chol, z)
        return theta @ arms.T
