"""GLM-TSL: Thompson sampling from the Laplace approximation (Kveton et al. 2020, Section 3.1)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.potential import BoundModel
from bayesbandit.inference.psis import laplace_log_ratios
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState
from bayesbandit.validation import check_int, check_scalar

__all__ = ["GLMTSL", "GLMTSLInfo"]


class GLMTSLInfo(NamedTuple):
    """What GLM-TSL's ``select`` reports."""

    converged: Array  # () bool: the sampled parameters are finite
    scores: Array  # (K,) mean rewards under the sample
    theta: Array  # (p,) the Laplace sample tilde theta_t
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["a"])
class GLMTSL(GLMPolicy):
    """Thompson sampling from the Laplace approximation of a reward program's posterior.

    In round ``t`` (after ``d`` initial exploration pulls):

    .. math::

        \\bar\\theta_t = \\arg\\min_\\theta U(\\theta; H_{t-1}), \\quad
        \\tilde\\theta_t \\sim N(\\bar\\theta_t, a^2 \\nabla^2 U(\\bar\\theta_t)^{-1}), \\quad
        I_t = \\arg\\max_i \\mu(x_i; \\tilde\\theta_t)

    (Kveton et al. 2020, eqs. 4-5), where ``U`` is the program's negative log joint (prior
    included, which keeps the MAP finite on separable data; the paper's unregularised MLE is
    the flat-prior limit) and ``mu`` its mean reward. ``a = 1`` samples the Laplace
    approximation itself; the theory value is ``c_1 sqrt(mu_dot_max)``
    (:func:`bayesbandit.policies.glm.theory.tsl_theory_a`). Sampling is a triangular solve with the
    Cholesky factor kept in the state: ``theta = bar theta + a L^{-T} xi``.

    **Importance-resampled draws** (``proposals = M > 1``): where the Laplace approximation is
    usable but imperfect (a Pareto k-hat between 0.5 and 0.7 in
    :func:`bayesbandit.inference.laplace_psis`, what :meth:`bayesbandit.Agent.health` reports),
    the round's parameter is resampled from ``M`` Laplace draws towards the program's exact
    posterior (sampling-importance-resampling, Rubin 1988):

    .. math::

        \\theta_s = \\bar\\theta_t + a L^{-T} \\xi_s, \\quad
        r_s = \\frac{\\exp(-U(\\theta_s))}{q(\\theta_s)}, \\quad
        \\tilde r_s = \\min\\big(r_s, \\sqrt{M}\\, \\bar r\\big), \\quad
        \\tilde\\theta_t = \\theta_S, \\; P(S = s) \\propto \\tilde r_s,

    with ``q = N(bar theta_t, a^2 H^{-1})`` and ``bar r`` the ratios' mean: the weights truncated at
    ``sqrt(M)`` times their mean (Ionides 2008; Pareto smoothing, which refines this truncation, needs
    a sort and a tail fit per round), whose resampled draw tends to a draw of the exact posterior as
    ``M`` grows, whatever ``a`` (``a`` then only widens the proposal). Each round evaluates the
    potential ``M`` times on the whole history (``O(M n p)``); it needs the rows
    (``history="full"``).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    a : float, > 0
        Posterior inflation (with ``proposals > 1``, the proposal's).
    proposals : int, >= 1
        Laplace draws resampled per round (``1``: the Laplace draw itself).
    solver, num_explore, obs_site, init_params
        See :class:`bayesbandit.policies.glm.GLMPolicy`; the solver must provide the Hessian's
        factor (:class:`~bayesbandit.inference.DenseNewton`).

    See Also
    --------
    GLMFPL : the perturbed-history twin.
    bayesbandit.diagnostics.compare : how close the Laplace posterior is to NUTS.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = jax.random.uniform(jax.random.PRNGKey(0), (20, 3), minval=-1, maxval=1)
    >>> policy = bb.GLMTSL(logistic(), a=1.0)
    >>> state = policy.init(arms)
    >>> arm, info = policy.select(state, arms, jax.random.PRNGKey(1))
    >>> state, update_info = policy.update(state, arms, arm, 1.0)
    >>> int(state.t), bool(update_info.converged)
    (1, True)
    """

    _: KW_ONLY
    a: float = 1.0
    proposals: int = 1

    needs_curvature = True

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("GLMTSL", "a", self.a, low=0.0, low_open=True)
        check_int("GLMTSL", "proposals", self.proposals, low=1)
        if self.proposals > 1 and self.history == "online":
            raise InvalidInput(
                f"The 'proposals' parameter of GLMTSL must be 1 with history='online'. Got {self.proposals}: "
                "importance resampling weighs each draw by the exact posterior of the whole history, and the online "
                "posterior keeps no rows. Fix: history='full', or proposals=1."
            )

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, GLMTSLInfo]:
        if self.proposals == 1:
            xi = jax.random.normal(key, state.fit.theta.shape, dtype=state.fit.theta.dtype)
            theta = state.fit.theta + self.a * solve_lower_transpose(state.fit.chol, xi)
        else:
            key_draws, key_pick = jax.random.split(key)
            draws, log_ratios = laplace_log_ratios(
                bound,
                key_draws,
                state.fit.theta,
                state.fit.chol,
                self.posterior_rows(state),
                num_draws=self.proposals,
                scale=self.a,
            )
            log_ratios = jnp.where(jnp.isfinite(log_ratios), log_ratios, -jnp.inf)
            log_mean = jax.scipy.special.logsumexp(log_ratios) - jnp.log(self.proposals)
            truncated = jnp.minimum(log_ratios, log_mean + 0.5 * jnp.log(self.proposals))
            truncated = jnp.where(jnp.isfinite(log_mean), truncated, 0.0)  # no finite ratio: the draws uniformly
            theta = draws[jax.random.categorical(key_pick, truncated)]
        scores = bound.mean_reward(theta, arms)
        return scores, GLMTSLInfo(jnp.all(jnp.isfinite(theta)), scores, theta, jnp.asarray(False))
