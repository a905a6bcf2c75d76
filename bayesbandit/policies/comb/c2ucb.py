"""C2UCB: combinatorial linear UCB (Qin, Chen and Zhu 2014, as Takemura and Ito's Alg. 1 runs it)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar

from bayesbandit._gaussian_linear import block_widths
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.comb._base import CombInfo, RidgeCombPolicy
from bayesbandit.validation import check_scalar

__all__ = ["C2UCB", "C2UCBInfo"]


class C2UCBInfo(CombInfo):
    """What :class:`C2UCB`'s ``select`` reports.

    ``scores`` (M, N): the optimistic scores ``theta_hat_j^T x_i + alpha ||x_i||_{V_j^{-1}}``; ``converged``: every
    score is finite.
    """

    __slots__ = ()


@register_policy(data_fields=["lam", "alpha"])
class C2UCB(RidgeCombPolicy):
    r"""C2UCB: the oracle maximises optimistic scores (Takemura and Ito, Alg. 1 line 8).

    .. math::  \hat r_t(i) = \hat\theta_t^\top x_t(i) + \alpha \|x_t(i)\|_{V_{t-1}^{-1}}

    The score is a deterministic function of ``x``: identical arms get identical scores, and the
    oracle's tie rule decides between them (the paper's clustered failure, its sec. IV-A).
    ``alpha`` is constant, as in the experiments (the theory's ``beta_t(delta)`` grows with t).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> policy = bb.C2UCB(oracle=TopK(k=2), lam=1.0, alpha=1.0)
    >>> arms = jnp.eye(3)
    >>> action, _ = policy.select(policy.init(arms), arms, jax.random.PRNGKey(0))
    >>> action.tolist()
    [0, 1]
    """

    info_type: ClassVar[type[CombInfo]] = C2UCBInfo

    _: KW_ONLY
    alpha: float = 1.0

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("C2UCB", "alpha", self.alpha, low=0.0, high_open=True)

    def scores_from(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey, t: Array) -> Array:
        return theta_hat @ arms.T + self.alpha * block_widths(chol, arms)
