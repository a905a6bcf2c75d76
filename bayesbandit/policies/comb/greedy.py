"""Greedy: the ridge estimate's scores, with random scores in the first round (Takemura and Ito, VII-B1)."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.comb._base import CombInfo, RidgeCombPolicy

__all__ = ["CombGreedy", "CombGreedyInfo"]


class CombGreedyInfo(CombInfo):
    """What :class:`CombGreedy`'s ``select`` reports.

    ``scores`` (M, N): the estimates ``theta_hat_j^T x_i`` (random scores in round one); ``converged``: every score
    is finite.
    """

    __slots__ = ()


@register_policy(data_fields=["lam"])
class CombGreedy(RidgeCombPolicy):
    r"""Greedy: C2UCB with ``alpha = 0``, except that round one scores every arm ``N(0, 1)``.

    .. math::  \hat r_1(j, i) \sim N(0, 1), \qquad \hat r_t(j, i) = \hat\theta_{t,j}^\top x_t(i)\ (t \ge 2)

    The random first round picks varied arms, which is why Greedy does well on the clustered data
    (sec. VII-B1); only ``lam`` is tuned.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> bb.CombGreedy(oracle=TopK(k=2), lam=10.0).lam
    10.0
    """

    info_type: ClassVar[type[CombInfo]] = CombGreedyInfo

    def __post_init__(self) -> None:
        self._check_common()

    def scores_from(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey, t: Array) -> Array:
        mean = theta_hat @ arms.T
        return jnp.where(t == 0, jax.random.normal(key, mean.shape, dtype=mean.dtype), mean)
