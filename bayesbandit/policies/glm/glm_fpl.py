"""GLM-FPL: follow the perturbed leader (Kveton et al. 2020, Section 3.2)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import Any, NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.inference.posteriors import PERTURBATIONS, perturb_history, resolve_perturbation
from bayesbandit.inference.potential import BoundModel
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState
from bayesbandit.validation import check_choice, check_scalar

__all__ = ["GLMFPL", "GLMFPLInfo"]


class GLMFPLInfo(NamedTuple):
    """What GLM-FPL's ``select`` reports."""

    converged: Array  # () bool: the perturbed solve converged
    scores: Array  # (K,) mean rewards under the perturbed MAP
    theta: Array  # (p,) the perturbed MAP tilde theta_t
    solver: Any  # the solver's info for the perturbed solve (NewtonInfo, FirstOrderInfo)
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["a", "weight_sd"])
class GLMFPL(GLMPolicy):
    """Follow the perturbed leader: the MAP of a randomly perturbed history.

    In round ``t`` (after ``d`` initial exploration pulls), for a likelihood affine in the reward
    (Bernoulli, binomial, Poisson, Gaussian with a known scale):

    .. math::

        \\tilde\\theta_t = \\arg\\min_\\theta U(\\theta; \\{(X_\\ell, Y_\\ell + Z_\\ell)\\}_{\\ell < t}),
        \\quad Z_\\ell \\sim N(0, a^2) \\text{ i.i.d., fresh each round}, \\quad
        I_t = \\arg\\max_i \\mu(x_i; \\tilde\\theta_t)

    (Kveton et al. 2020, eq. 6). With per-arm statistics the perturbation of arm ``i``'s reward
    sum is ``N(0, n_i a^2)``, drawn in ``O(K)`` (:func:`bayesbandit.inference.perturb_rewards`).
    Perturbed rewards are real numbers outside the likelihood's support; they are not clipped
    (the potential stays exact for affine likelihoods). ``a = 0`` is follow-the-leader; the
    paper's practical value is ``a = 0.5`` and the theory value ``c_1 mu_dot_max``
    (:func:`bayesbandit.policies.glm.theory.fpl_theory_a`).

    **Other likelihoods** (a Gamma, Student-t, ordinal or zero-inflated reward, a latent noise
    scale) are not affine in the reward: a reward plus Gaussian noise leaves their support or
    is scored by another likelihood, and the perturbed fits stop exploring. The paper is silent
    here. GLM-FPL then perturbs the weights of the history instead of its rewards (the weighted
    likelihood bootstrap of Newton and Raftery 1994, the bootstrap exploration of Kveton et al.
    2019, "Garbage In, Reward Out"):

    .. math::

        \\tilde\\theta_t = \\arg\\min_\\theta\\; -\\log p(\\theta)
            - \\sum_{\\ell < t} W_\\ell \\log p(Y_\\ell \\mid X_\\ell, \\theta),
        \\quad W_\\ell \\sim \\mathrm{Gamma}(1 / s^2, \\text{scale } s^2),

    weights of mean 1 and standard deviation ``s = weight_sd`` (``s = 1``: ``Exp(1)``, the
    Bayesian bootstrap, whose weighted MAPs are approximately posterior draws;
    :func:`bayesbandit.inference.perturb_weights`). The rewards stay in the support. For an
    affine likelihood both are available; ``perturbation="auto"`` (the default) chooses the
    paper's reward perturbation for a canonical-link GLM (affine in the reward, natural parameter
    linear in ``theta``: every perturbed potential is convex) and the weights elsewhere
    (:func:`bayesbandit.inference.posteriors.resolve_perturbation` says why a probit or cloglog
    link is elsewhere). ``README.md`` (the likelihood matrix) compares the ensembles with NUTS per
    likelihood. The solve is warm-started from the unperturbed fit kept in the state.

    Parameters
    ----------
    model : NumPyro program or BoundModel
    a : float, >= 0
        Reward perturbation scale.
    perturbation : {"auto", "rewards", "weights"}
        What is perturbed; ``"rewards"`` on a likelihood not affine in the reward is refused
        (:class:`~bayesbandit.errors.ModelSpecError`) when the agent or simulation starts.
    weight_sd : float, >= 0
        Standard deviation of one observation's bootstrap weight (``"weights"``).
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
    perturbation: str = "auto"
    weight_sd: float = 1.0

    needs_rows = True

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("GLMFPL", "a", self.a, low=0.0)
        check_choice("GLMFPL", "perturbation", self.perturbation, PERTURBATIONS)
        check_scalar("GLMFPL", "weight_sd", self.weight_sd, low=0.0)

    def check_program(self, d: int) -> None:
        """Also refuse ``perturbation="rewards"`` on a likelihood not affine in the reward."""
        super().check_program(d)
        resolve_perturbation(self.bound(d), self.perturbation, "GLMFPL")

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, GLMFPLInfo]:
        x, y, w = self.posterior_rows(state)
        kind = resolve_perturbation(bound, self.perturbation, "GLMFPL")
        y, w = perturb_history(key, y, w, perturbation=kind, a=self.a, weight_sd=self.weight_sd)
        fit, info = self.solver.fit(bound, (x, y, w), state.fit)
        scores = bound.mean_reward(fit.theta, arms)
        return scores, GLMFPLInfo(info.converged, scores, fit.theta, info, jnp.asarray(False))
