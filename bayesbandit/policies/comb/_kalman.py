"""The Gaussian-posterior state of Wen, Kveton and Ashkan's CombLinUCB and CombLinTS (ICML 2015).

Per block ``j``, a prior ``theta_j ~ N(0, prior_var I)`` and observations ``r = x^T theta_j +
N(0, noise_var)`` give the posterior ``N(mean_j, cov_j)``, kept in their Kalman form: each observed
pick ``(j, x, r)`` of the round, one after the other (their Alg. 2 lines 12-14, Alg. 3),

    g = cov_j x / (x^T cov_j x + noise_var)
    mean_j <- mean_j + g (r - x^T mean_j)
    cov_j  <- cov_j - g x^T cov_j

After any observations ``cov_j = noise_var (lam_eff I + sum x x^T)^{-1}`` and ``mean_j = (lam_eff
I + sum x x^T)^{-1} sum r x`` with ``lam_eff = noise_var / prior_var``: the ridge state of C2UCB and
round-wise TS in another parameterisation (the tests check it step by step), the covariance form of
:mod:`bayesbandit._gaussian_linear`.

Forgetting, in the same correspondence (posterior precision ``Lambda_j = cov_j^{-1} = V_j /
noise_var``, prior precision ``Lambda_0 = I / prior_var``, prior mean 0):

* ``discount``: ``bar Lambda_j = gamma Lambda_j + (1 - gamma) I / prior_var`` and
  ``bar Lambda_j bar mean_j = gamma Lambda_j mean_j``, which is the ridge rule
  ``V <- gamma V + (1 - gamma) lam_eff I``, ``b <- gamma b`` divided by ``noise_var``; in
  covariance form ``cov <- A^{-1} cov``, ``mean <- gamma A^{-1} mean`` with
  ``A = gamma I + (1 - gamma) cov / prior_var``
  (:func:`~bayesbandit._gaussian_linear.discount_covariance`).
* ``forget``: removing ``(j, x, r)`` is ``Lambda_j -= x x^T / noise_var``,
  ``Lambda_j mean_j -= r x / noise_var``; by Sherman-Morrison that is the Kalman step above with
  ``noise_var`` replaced by ``-noise_var``: ``g = cov x / (x^T cov x - noise_var)``,
  ``mean <- mean + g (r - x^T mean)``, ``cov <- cov - g x^T cov`` (``x^T cov x < noise_var``
  whenever ``(j, x, r)`` was observed), taken in the reverse order of the update's.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit import _gaussian_linear as gl
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.policies.comb._base import CombPolicy, CombUpdateInfo, lifted_picks
from bayesbandit.validation import check_scalar

__all__ = ["KalmanState", "KalmanCombPolicy"]


class KalmanState(NamedTuple):
    """Per-block Gaussian posterior of CombLinUCB / CombLinTS."""

    cov: Array  # (M, d, d) posterior covariance Sigma_j
    mean: Array  # (M, d) posterior mean theta_bar_j
    t: Array  # () int32, rounds observed


@dataclass(frozen=True)
class KalmanCombPolicy(CombPolicy):
    """Base of CombLinUCB and CombLinTS: ``prior_var`` (their ``lambda^2``) and ``noise_var`` (``sigma^2``)."""

    _: KW_ONLY
    prior_var: float = 1.0
    noise_var: float = 1.0

    def _check_common(self) -> None:
        super()._check_common()
        name = type(self).__name__
        check_scalar(name, "prior_var", self.prior_var, low=0.0, low_open=True, high_open=True)
        check_scalar(name, "noise_var", self.noise_var, low=0.0, low_open=True, high_open=True)

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> KalmanState:
        """The prior: ``cov_j = prior_var I``, ``mean_j = 0``."""
        d = self._init_dimension(arms, d)
        return KalmanState(*gl.isotropic(self.prior_var, d, (self.blocks,)), jnp.asarray(0, jnp.int32))

    def _dtype(self, state: Any) -> Any:
        return state.mean.dtype

    def update(self, state: KalmanState, arms: Array, action: Array, feedback: Array) -> tuple[KalmanState, Any]:
        """The Kalman update of the module docstring, one pick after the other."""
        arms = jnp.asarray(arms, dtype=state.mean.dtype)
        feedback = jnp.asarray(feedback, dtype=state.mean.dtype)
        block, x, valid = lifted_picks(arms, action, self.blocks)
        cov, mean = gl.kalman_observe_blocks(state.cov, state.mean, block, x, feedback, self.noise_var)
        new = KalmanState(cov, mean, state.t + 1)
        recorded = valid & jnp.all(jnp.isfinite(feedback))
        keep = recorded & jnp.all(jnp.isfinite(cov)) & jnp.all(jnp.isfinite(mean))
        new = jax.tree.map(lambda a, b: jnp.where(keep, a, b), new, state)
        return new, CombUpdateInfo(keep, recorded)

    def discount(self, state: KalmanState, gamma: ArrayLike, *, refit: bool = True) -> KalmanState:
        """Every observation's weight times ``gamma`` in ``(0, 1]``, the prior's kept (module docstring).
        ``refit`` has nothing to do here."""
        gamma = jnp.asarray(gamma, state.mean.dtype)
        cov, mean = gl.discount_covariance(state.cov, state.mean, gamma, 1.0 / self.prior_var)
        return state._replace(cov=cov, mean=mean)

    def forget(
        self, state: KalmanState, arms: Array, action: Array, feedback: Array, *, refit: bool = True
    ) -> KalmanState:
        """Remove one earlier round's picks: the Kalman step with ``-noise_var``, picks in reverse order (module
        docstring). ``t`` is not changed; invalid indices or feedback change nothing."""
        arms = jnp.asarray(arms, dtype=state.mean.dtype)
        feedback = jnp.asarray(feedback, dtype=state.mean.dtype)
        block, x, valid = lifted_picks(arms, action, self.blocks)
        cov, mean = gl.kalman_observe_blocks(
            state.cov, state.mean, block[::-1], x[::-1], feedback[::-1], -self.noise_var
        )
        new = state._replace(cov=cov, mean=mean)
        keep = valid & jnp.all(jnp.isfinite(feedback))
        return jax.tree.map(lambda a, b: jnp.where(keep, a, b), new, state)
