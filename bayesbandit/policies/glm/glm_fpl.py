"""GLM-FPL: follow the perturbed leader (Kveton et al. 2020, Section 3.2)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import Any, NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.inference.posteriors import NOISES, PERTURBATIONS, perturb_history, resolve_perturbation
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
    """Follow the perturbed leader: the MAP of a randomly perturbed prior and history.

    In round ``t`` (after ``d`` initial exploration pulls) GLM-FPL plays the arm whose mean reward
    is largest under

    .. math::

        \\tilde\\theta_t = \\arg\\min_\\theta\\; P(\\theta - \\delta_t)
            - \\sum_{\\ell < t} \\log p(Y_\\ell + Z_\\ell \\mid X_\\ell, \\theta),
        \\qquad I_t = \\arg\\max_i \\mu(x_i; \\tilde\\theta_t),

    where ``P = -log p(theta)`` is the prior's potential (unconstrained, with its Jacobians), and
    with fresh draws every round (``noise="posterior"``, the default):

    * **the prior anchored at a prior draw**: ``delta_t = a (theta_0 - m)``, ``theta_0`` a draw from
      the prior and ``m`` its median (:func:`bayesbandit.inference.perturb_prior`); for a Gaussian
      prior and ``a = 1`` the prior term is ``N(theta_0, S)``, the randomised prior of Osband et
      al. (2018) and the perturbation of ensemble sampling (Lu and Van Roy 2017);
    * **reward noise of the reward's own variance**: ``Z_l ~ N(0, a^2 Var[Y | X_l, bar theta_t])``,
      the variance of the program's reward distribution at the current fit ``bar theta_t``
      (:meth:`~bayesbandit.inference.BoundModel.reward_variance`).

    *Why these scales.* Near the MAP ``bar theta`` of ``U = P + L`` (``L`` the negative
    log-likelihood), both perturbations add a random linear term: ``P(theta - delta) = P(theta) -
    (H_P delta)^T theta + const`` to second order (exactly for a Gaussian prior, ``H_P = S^{-1}``),
    and for a canonical-link GLM (``log p(y | eta) = (y eta - b(eta)) / phi``, ``eta = x^T theta``)
    ``Z_l`` adds ``-Z_l x_l^T theta / phi``. So ``tilde U(theta) = U(theta) - zeta^T theta`` with

    .. math::

        \\mathrm{Cov}(\\zeta) = a^2 H_P S H_P + \\sum_\\ell \\frac{\\mathrm{Var}[Z_\\ell]}{\\phi^2} x_\\ell x_\\ell^T
            = a^2 \\Big(H_P + \\sum_\\ell \\frac{b''(\\eta_\\ell)}{\\phi} x_\\ell x_\\ell^T\\Big) = a^2 H,

    since ``Var[Y] = phi b''(eta)``: ``H`` is the Hessian of ``U`` at ``bar theta``, the Laplace
    precision. For a quadratic ``U`` the perturbed MAP is then ``bar theta + H^{-1} zeta ~ N(bar
    theta, a^2 H^{-1})``, GLM-TSL's Laplace draw (Kveton et al. 2020, eqs. 4-5); for a Gaussian
    linear program and ``a = 1`` it is an exact posterior draw. Away from the quadratic regime
    each draw is a MAP of the program's own curvature. Two consequences the paper's constant noise
    does not have: a parameter no observation reaches (a group never pulled, a shrunk
    coefficient) still varies across draws as its prior does (with a fixed prior its perturbed MAP
    is the prior's mode in every draw), and the reward noise is on the reward's scale (the
    paper's ``a = 0.5`` is the Laplace scale for a Bernoulli reward of mean 0.5, where ``Var[Y] =
    1/4``, but a fifth of it for a Poisson count of mean 7).

    ``noise="paper"`` is Kveton et al.'s GLM-FPL (eq. 6): ``delta_t = 0`` and ``Z_l ~ N(0, a^2)``,
    with ``a`` the reward noise's standard deviation (their practical value ``0.5``, their theory
    value ``c_1 mu_dot_max``: :func:`bayesbandit.policies.glm.theory.fpl_theory_a`). With
    per-arm statistics the noise of arm ``i``'s reward sum is ``N(0, sum of its pulls' variances)``,
    drawn in ``O(K)`` (:func:`bayesbandit.inference.perturb_rewards`). Perturbed rewards are real
    numbers outside the likelihood's support; they are not clipped (the potential stays exact for
    likelihoods affine in the reward). ``a = 0`` is follow-the-leader.

    **Other likelihoods** (a Gamma, Student-t, ordinal or zero-inflated reward, a latent noise
    scale) are not affine in the reward: a reward plus Gaussian noise leaves their support or
    is scored by another likelihood, and the perturbed fits stop exploring. The paper is silent
    here. GLM-FPL then perturbs the weights of the history instead of its rewards (the weighted
    likelihood bootstrap of Newton and Raftery 1994, the bootstrap exploration of Kveton et al.
    2019, "Garbage In, Reward Out"), with the prior anchored as above:

    .. math::

        \\tilde\\theta_t = \\arg\\min_\\theta\\; P(\\theta - \\delta_t)
            - \\sum_{\\ell < t} W_\\ell \\log p(Y_\\ell \\mid X_\\ell, \\theta),
        \\quad W_\\ell \\sim \\mathrm{Gamma}(1 / s^2, \\text{scale } s^2),

    weights of mean 1 and standard deviation ``s = weight_sd`` (``s = 1``: ``Exp(1)``, the
    Bayesian bootstrap, whose weighted MAPs are approximately posterior draws: the weights'
    linear term has covariance ``s^2`` times the observed information;
    :func:`bayesbandit.inference.perturb_weights`). The rewards stay in the support. For an
    affine likelihood both are available; ``perturbation="auto"`` (the default) chooses the
    reward noise for a canonical-link GLM (affine in the reward, natural parameter linear in
    ``theta``: every perturbed potential is convex) and the weights elsewhere
    (:func:`bayesbandit.inference.posteriors.resolve_perturbation` says why a probit or cloglog
    link is elsewhere). ``README.md`` (the likelihood and program matrices) compares the
    ensembles with NUTS. The solve is warm-started from the unperturbed fit kept in the state.

    Parameters
    ----------
    model : NumPyro program or BoundModel
    a : float, >= 0
        Perturbation scale: with ``noise="posterior"`` relative to the posterior's (``1``: draws
        of the posterior's width, larger explores more); with ``noise="paper"`` the reward noise's
        standard deviation.
    noise : {"posterior", "paper"}
        How the perturbations are scaled (above).
    perturbation : {"auto", "rewards", "weights"}
        What in the history is perturbed; ``"rewards"`` on a likelihood not affine in the reward
        is refused (:class:`~bayesbandit.errors.ModelSpecError`) when the agent or simulation starts.
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
    >>> policy = bb.GLMFPL(logistic())
    >>> state = policy.init(arms)
    >>> arm, info = policy.select(state, arms, jax.random.PRNGKey(1))
    >>> info.theta.shape
    (3,)
    """

    _: KW_ONLY
    a: float = 1.0
    noise: str = "posterior"
    perturbation: str = "auto"
    weight_sd: float = 1.0

    needs_rows = True

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("GLMFPL", "a", self.a, low=0.0)
        check_choice("GLMFPL", "noise", self.noise, NOISES)
        check_choice("GLMFPL", "perturbation", self.perturbation, PERTURBATIONS)
        check_scalar("GLMFPL", "weight_sd", self.weight_sd, low=0.0)

    def check_program(self, d: int) -> None:
        """Also refuse ``perturbation="rewards"`` on a likelihood not affine in the reward."""
        super().check_program(d)
        resolve_perturbation(self.bound(d), self.perturbation, "GLMFPL")

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, GLMFPLInfo]:
        x, y, w = self.posterior_rows(state)
        kind = resolve_perturbation(bound, self.perturbation, "GLMFPL")
        problem = perturb_history(
            key,
            bound,
            x,
            y,
            w,
            state.fit.theta,
            perturbation=kind,
            noise=self.noise,
            a=self.a,
            weight_sd=self.weight_sd,
        )
        fit, info = self.solver.fit(bound, (x, problem.y, problem.w), state.fit, prior_shift=problem.prior_shift)
        scores = bound.mean_reward(fit.theta, arms)
        return scores, GLMFPLInfo(info.converged, scores, fit.theta, info, jnp.asarray(False))
