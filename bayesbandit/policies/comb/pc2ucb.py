"""PC2UCB: C2UCB with an arm-wise randomly inflated width (Takemura and Ito, Alg. 1 lines 9-11)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import ClassVar

import jax

from bayesbandit._gaussian_linear import block_widths
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.comb._base import CombInfo, RidgeCombPolicy
from bayesbandit.validation import check_scalar

__all__ = ["PC2UCB", "PC2UCBInfo"]


class PC2UCBInfo(CombInfo):
    """What :class:`PC2UCB`'s ``select`` reports.

    ``scores`` (M, N): the randomly inflated optimistic scores ``theta_hat_j^T x_i + (1 + U[0, c]) alpha
    ||x_i||_{V_j^{-1}}``; ``converged``: every score is finite.
    """

    __slots__ = ()


@register_policy(data_fields=["lam", "alpha", "c"])
class PC2UCB(RidgeCombPolicy):
    r"""Perturbed C2UCB: each arm's width is inflated by its own fresh uniform draw.

    .. math::  \tilde c_t(i) \sim U[0, c], \qquad
               \hat r_t(i) = \hat\theta_t^\top x_t(i) + (1 + \tilde c_t(i))\, \alpha \|x_t(i)\|_{V_{t-1}^{-1}}

    (Alg. 1 lines 9-11): a positive multiplicative perturbation, independent across arms, blocks
    and rounds, so the score is never below C2UCB's (always optimistic) and identical arms no
    longer tie. The experiments fix ``c = 1`` and tune ``lam`` and ``alpha`` (sec. VII-B3).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> bb.PC2UCB(oracle=TopK(k=2), alpha=0.5).c
    1.0
    """

    info_type: ClassVar[type[CombInfo]] = PC2UCBInfo

    _: KW_ONLY
    alpha: float = 1.0
    c: float = 1.0

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("PC2UCB", "alpha", self.alpha, low=0.0, high_open=True)
        check_scalar("PC2UCB", "c", self.c, low=0.0, high_open=True)

    def scores_from(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey, t: Array) -> Array:
        width = block_widths(chol, arms)
        inflation = 1.0 + self.c * jax.random.uniform(key, width.shape, dtype=width.dtype)
        return theta_hat @ arms.T + inflation * self.alpha * width
