"""GLM-FPL: follow the perturbed leader (Kveton et al. 2020, Section 3.2)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import Any, NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.inference.posteriors import perturb_rewards
from bayesbandit.inference.potential import BoundModel
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState
from bayesbandit.validation import check_scalar

__all__ = ["GLMFPL", "GLMFPLInfo"]


class GLMFPLInfo(NamedTuple):
    """What GLM-FPL's ``select`` reports."""

    converged: Array  # () bool: the perturbed solve converged
    scores: Array  # (K,) mean rewards under the perturbed MAP
    theta: Array  # (p,) the perturbed MAP tilde theta_t
    solver: Any  # the solver's info for the perturbed solve (NewtonInfo, FirstOrderInfo)
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["a"])
class GLMFPL(GLMPolicy):
    """Follow the perturbed leader: the MAP of a history whose rewards carry fresh noise.

    In round ``t`` (after ``d`` initial exploration pulls):

    .. math::

        \\tilde\\theta_t = \\arg\\min_\\theta U(\\theta; \\{(X_\\ell, Y_\\ell + Z_\\ell)\\}_{\\ell < t}),
        \\quad Z_\\ell \\sim N(0, a^2) \\text{ i.i.d., fresh each round}, \\quad
        I_t = \\arg\\max_i \\mu(x_i; \\tilde\\theta_t)

    (Kveton et al. 2020, eq. 6). With per-arm statistics the perturbation of arm ``i``'s reward
    sum is ``N(0, n_i a^2)``, drawn in ``O(K)`` (:func:`bayesbandit.inference.perturb_rewards`).
    Perturbed rewards are real numbers outside the likelihood's support; they are not clipped
    (the potential stays exact for affine likelihoods). The solve is warm-started from the
    unperturbed fit kept in the state. ``a = 0`` is follow-the-leader; the paper's practical
    value is ``a = 0.5`` and the theory value ``c_1 mu_dot_max``
    (:func:`bayesbandit.policies.glm.theory.fpl_theory_a`).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    a : float, >= 0
        Perturbation scale.
    solver, num_explore, obs_site, init_params
        See :class:`bayesbandit.policies.glm.GLMPolicy`.

    See Also
    --------
    GLMTSL : the Laplace-sampling twin.
    bayesbandit.diagnostics.compare : how close the perturbed-MAP ensemble is to NUTS.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = jax.random.uniform(jax.random.PRNGKey(0), (20, 3), minval=-1, maxval=1)
    >>> policy = bb.GLMFPL(logistic(), a=0.5)
    >>> state = policy.init(arms)
    >>> arm, info = policy.select(state, arms, jax.random.PRNGKey(1))
    >>> info.theta.shape
    (3,)
    """

    _: KW_ONLY
    a: float = 0.5

    needs_rows = True

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("GLMFPL", "a", self.a, low=0.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, GLMFPLInfo]:
        x, y, w = self.posterior_rows(state)
        y_tilde = perturb_rewards(key, y, w, self.a)
        fit, info = self.solver.fit(bound, (x, y_tilde, w), state.fit)
        scores = bound.mean_reward(fit.theta, arms)
        return scores, GLMFPLInfo(info.converged, scores, fit.theta, info, jnp.asarray(False))
