"""GLM-FPL: follow the perturbed leader (Kveton et al. 2020, Section 3.2)."""

from __future__ import annotations

from bayesbandit._typing import Array, PRNGKey
from bayesbandit._validation import check_scalar
from bayesbandit.inference.bind import BoundModel
from bayesbandit.inference.newton import NewtonInfo
from bayesbandit.inference.perturb import perturb_rewards
from bayesbandit.policies._base import register_policy
from bayesbandit.policies._glm import GLMPolicy, GLMState

__all__ = ["GLMFPL"]


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
    unperturbed MAP kept in the state. ``a = 0`` is follow-the-leader; the paper's practical
    value is ``a = 0.5`` and the theory value ``c_1 mu_dot_max``
    (:func:`bayesbandit.policies.theory.fpl_theory_a`).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    a : float, >= 0
        Perturbation scale.
    max_newton, tol, num_explore, obs_site
        See :class:`bayesbandit.policies._glm.GLMPolicy`.

    See Also
    --------
    GLMTSL : the Laplace-sampling twin.
    bayesbandit.diagnostics.compare : how close the perturbed-MAP ensemble is to NUTS.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> arms = jax.random.uniform(jax.random.PRNGKey(0), (20, 3), minval=-1, maxval=1)
    >>> policy = bb.GLMFPL(logistic(), a=0.5)
    >>> state = policy.init(arms)
    >>> arm, info = policy.select(state, arms, jax.random.PRNGKey(1))
    >>> info.theta.shape
    (3,)
    """

    a: float = 0.5

    def __post_init__(self) -> None:
        check_scalar("GLMFPL", "a", self.a, low=0.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, Array, NewtonInfo]:
        x, y, w = state.history.rows()
        y_tilde = perturb_rewards(key, y, w, self.a)
        fit = self.fit(bound, (x, y_tilde, w), state.fit.theta)
        return bound.mean_reward(fit.theta, arms), fit.theta, fit.info
