"""CombLinTS (Wen, Kveton and Ashkan, ICML 2015, Alg. 2), in its own parameterisation."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._linalg import cho_solve, cholesky
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.comb._base import CombInfo
from bayesbandit.policies.comb._kalman import KalmanCombPolicy, KalmanState

__all__ = ["CombLinTS", "CombLinTSInfo"]


class CombLinTSInfo(CombInfo):
    """What :class:`CombLinTS`'s ``select`` reports.

    ``scores`` (M, N): Wen et al.'s sampled scores, one posterior draw per block; ``converged``: every score is
    finite.
    """

    __slots__ = ()


@register_policy(data_fields=["prior_var", "noise_var"])
class CombLinTS(KalmanCombPolicy):
    r"""CombLinTS: one posterior sample per block per round from the Kalman posterior (``._kalman``).

    .. math::  \theta_{t,j} \sim N(\bar\theta_j, \Sigma_j), \qquad \hat r_t(j, i) = \theta_{t,j}^\top x_t(i)

    The draw is ``theta_bar_j + P_j^{-T} z_j`` with ``P_j P_j^T = Sigma_j^{-1}`` (the Cholesky
    factor of the precision): a square root of ``Sigma_j``, and the one round-wise TS uses, so
    with ``lam = noise_var / prior_var`` and ``v = sqrt(noise_var)`` the two draw the same sample
    from the same ``z`` and are the same policy (a test checks it step by step).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.oracles import TopK
    >>> bb.CombLinTS(oracle=TopK(k=2), prior_var=10.0, noise_var=1.0).prior_var
    10.0
    """

    info_type: ClassVar[type[CombInfo]] = CombLinTSInfo

    def __post_init__(self) -> None:
        self._check_common()

    def scores(self, state: KalmanState, arms: Array, key: PRNGKey) -> Array:
        d = state.mean.shape[1]
        eye = jnp.eye(d, dtype=state.mean.dtype)
        precision = jax.vmap(lambda s: cho_solve(cholesky(s), eye))(state.cov)
        root = cholesky(0.5 * (precision + jnp.swapaxes(precision, 1, 2)))
        z = jax.random.normal(key, state.mean.shape, dtype=state.mean.dtype)
        theta = state.mean + jax.vmap(solve_lower_transpose)(root, z)
        return theta @ arms.T
