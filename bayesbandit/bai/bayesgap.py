"""BayesGap (Hoffman, Shahriari and de Freitas 2014, Alg. 1): gap-based exploration with a Bayesian model.

The mean reward of arm ``k`` is ``phi_k^T theta`` with features ``phi_k`` (below) and the prior
``theta ~ N(0, eta_b^2 I_p)``; rewards are ``N(phi_k^T theta, sigma^2)``. The posterior after pulls
``(a_s, y_s)`` is ``N(theta_hat, Sigma)`` with

.. math::  \\Sigma^{-1} = I/\\eta_b^2 + \\sum_s \\phi_{a_s}\\phi_{a_s}^T/\\sigma^2, \\qquad
           \\hat\\theta = \\Sigma \\sum_s \\phi_{a_s} y_s/\\sigma^2,

kept by rank-one updates: pulling ``a`` with ``g = Sigma phi_a`` and ``r = sigma^2 + phi_a^T g``
sets ``Sigma <- Sigma - g g^T / r``, ``theta_hat <- theta_hat + g (y - phi_a^T theta_hat) / r``, and
the arms' posterior means ``mu_k = phi_k^T theta_hat`` and variances ``s_k^2 = phi_k^T Sigma phi_k``
move by ``h = Phi g``: ``mu <- mu + h (y - mu_a) / r``, ``s^2 <- s^2 - h^2 / r``. A round costs
``O(p^2 + K p)``; nothing is re-inverted.

Each arm is pulled once (``K`` of the ``B`` pulls, in index order); then each of the ``B - K``
adaptive rounds ``t`` computes, from the current posterior,

* ``U_k = mu_k + beta s_k`` and ``L_k = mu_k - beta s_k``;
* ``B_k = max_{i != k} U_i - L_k``, ``J(t) = argmin_k B_k``, ``j(t) = argmax_{k != J(t)} U_k``;
* pulls whichever of ``J(t)``, ``j(t)`` has the larger ``s_k``;

and the recommendation is ``J(t*)`` with ``t* = argmin_t B_{J(t)}(t)`` over the adaptive rounds
(Alg. 1: the bounds are those each round is chosen from, so the last reward updates the posterior
but no bound). Ties (``argmin``, ``argmax`` and equal ``s_k``) are broken at random from the
algorithm's own key; ``t*`` is the first round reaching the minimum.

Exploration (Thm. 1): ``beta = sqrt(((B - K)/sigma^2 + kappa/eta_b^2) / (4 H_eps))`` with
``kappa = sum_k ||phi_k||^{-2}`` and ``H_eps = sum_k max((Delta_k + eps)/2, eps)^{-2}``.

Features (``kernel=``), all computed inside ``identify`` from ``instance.arms`` (so traced arms work):

* ``"linear"``: ``phi_k = x_k`` (``p = d``);
* ``"exp"``: ``G_ij = exp(-||x_i - x_j||^2 / l)``;
* ``"matern"``: Matern with ``nu = 3/2``, ``G_ij = (1 + sqrt(3) r_ij / l) exp(-sqrt(3) r_ij / l)``
  with ``r_ij = ||x_i - x_j||``;

for both Gram kernels ``G = V D V^T`` and ``Phi = V sqrt(max(D, 0))`` (``p = K``; rounding can
leave eigenvalues a little below zero), so that the prior covariance of the arms' means is exactly
``eta_b^2 G``: BayesGap on these features is BayesGap with the Gaussian-process prior of kernel
``G``, Hoffman et al.'s model.

Choices the paper leaves open, made here:

* The gaps ``Delta_k`` in ``H_eps`` are unknown; in practice they are estimated from the
  posterior means plus or minus three posterior standard deviations, a form the paper does not
  spell out. Here they are estimated once, from the posterior after the ``K`` initial pulls, with
  ``U3 = mu + 3 s`` and ``L3 = mu - 3 s``: ``Delta_hat_k`` is the largest
  ``|mu_k - max_{i != k} mu_i|`` those bounds allow,
  ``max(max_{i != k} U3_i - L3_k, U3_k - max_{i != k} L3_i)``. It is at least ``3 (s_k + s_i)``
  (``i`` the other arm of largest ``L3``), so ``H_eps`` stays finite at ``eps = 0``; ``beta`` is
  then fixed for the run, as Thm. 1 has it (re-estimating it every round would not be).
* In ``kappa``, an arm with zero features (whose mean is known to be 0 a priori) counts 0, not inf.
* ``sigma^2`` is the environment's ``noise_var`` unless ``noise_var`` is given.

Deviations from the authors' code (Azizi et al. 2022, ``BayesGap`` in their repository), which
departs from Hoffman et al. on these points:

* their ``U``/``L`` use the posterior variance ``s_k^2`` where Hoffman et al. use ``s_k``;
* their ``beta = ((B - K)/sigma^2 + kappa/eta_b^2) / 4 / sum_k max((Delta_hat_k + eps)/2, eps)``,
  with no square root and no power ``-2``, and ``Delta_hat`` from ``mu +- 3 s^2``;
* their Matern features are the rows of the Gram matrix (``Phi = G``, prior covariance
  ``eta_b^2 G^2``, a different kernel); here Matern uses the eigen-features of ``G`` as their
  ``"exp"`` kernel does.

Kept from the authors' code: ``eta_b = 50`` (``prior_var = 2500``), ``eps = 0``, one initial pull per
arm out of ``B``.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._gaussian_linear import downdate
from bayesbandit._linalg import eigh
from bayesbandit._numerics import random_argmax
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai._protocol import (
    BAIEnv,
    BAIInfo,
    check_budget,
    check_call,
    noise_variance,
    stack_rewards,
    streams,
)
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_choice, check_scalar

__all__ = ["BayesGap", "Posterior", "kernel_features", "prior", "observe", "gap_index", "exploration"]

KERNELS = ("linear", "exp", "matern")


def kernel_features(kernel: str, arms: Array, length_scale: float) -> Array:
    """Features ``Phi`` (shape (K, p)) of the arms ``arms`` (shape (K, d)) for ``kernel``.

    ``"linear"``: the arms themselves. ``"exp"`` and ``"matern"``: ``V sqrt(max(D, 0))`` from the
    eigendecomposition ``G = V D V^T`` of the kernel's Gram matrix, so ``Phi Phi^T = G``.
    """
    if kernel == "linear":
        return arms
    sq = jnp.sum((arms[:, None, :] - arms[None, :, :]) ** 2, axis=-1)
    if kernel == "exp":
        gram = jnp.exp(-sq / length_scale)
    elif kernel == "matern":
        scaled = math.sqrt(3.0) * jnp.sqrt(jnp.maximum(sq, 0.0)) / length_scale
        gram = (1.0 + scaled) * jnp.exp(-scaled)
    else:
        raise InvalidInput(f"The 'kernel' parameter must be one of {KERNELS}. Got {kernel!r} instead.")
    values, vectors = eigh(gram)
    return vectors * jnp.sqrt(jnp.maximum(values, 0.0))


class Posterior(NamedTuple):
    """The Gaussian posterior of ``theta``, and of the arms' means under it."""

    theta: Array  # (p,) posterior mean of theta
    cov: Array  # (p, p) posterior covariance of theta
    means: Array  # (K,) phi_k^T theta
    variances: Array  # (K,) phi_k^T cov phi_k


def prior(features: Array, prior_var: float) -> Posterior:
    """The prior ``N(0, prior_var I_p)`` as a :class:`Posterior` over arms with ``features``."""
    num_arms, p = features.shape
    return Posterior(
        jnp.zeros(p, features.dtype),
        prior_var * jnp.eye(p, dtype=features.dtype),
        jnp.zeros(num_arms, features.dtype),
        prior_var * jnp.sum(features**2, axis=1),
    )


def observe(post: Posterior, features: Array, arm: Array, reward: Array, noise_var: float) -> Posterior:
    """The posterior after one more reward of ``arm``: rank-one updates, ``O(p^2 + K p)``."""
    g = post.cov @ features[arm]
    h = features @ g
    r = noise_var + h[arm]
    residual = (reward - post.means[arm]) / r
    return Posterior(
        post.theta + g * residual,
        downdate(post.cov, g, r),
        post.means + h * residual,
        post.variances - h**2 / r,
    )


def _max_except(values: Array) -> Array:
    """``max_{i != k} values_i`` for every ``k``."""
    first = jnp.argmax(values)
    is_first = jnp.arange(values.shape[0]) == first
    return jnp.where(is_first, jnp.max(jnp.where(is_first, -jnp.inf, values)), values[first])


def gap_index(means: Array, stds: Array, beta: Array) -> tuple[Array, Array]:
    """``(B, U)``: ``B_k = max_{i != k} U_i - L_k`` and ``U_k = mu_k + beta s_k``."""
    upper = means + beta * stds
    return _max_except(upper) - (means - beta * stds), upper


def exploration(
    post: Posterior, features: Array, budget: int, prior_var: float, noise_var: float, epsilon: float
) -> Array:
    """``beta`` of Thm. 1, with the gaps estimated from ``post`` by three-std bounds (module docstring)."""
    num_arms = features.shape[0]
    stds = jnp.sqrt(jnp.maximum(post.variances, 0.0))
    upper, lower = post.means + 3.0 * stds, post.means - 3.0 * stds
    gaps = jnp.maximum(_max_except(upper) - lower, upper - _max_except(lower))
    hardness = jnp.sum(jnp.maximum(0.5 * (gaps + epsilon), epsilon) ** -2.0)
    norms = jnp.sum(features**2, axis=1)
    kappa = jnp.sum(jnp.where(norms > 0, 1.0 / jnp.where(norms > 0, norms, 1.0), 0.0))
    return jnp.sqrt(((budget - num_arms) / noise_var + kappa / prior_var) / (4.0 * hardness))


class _Round(NamedTuple):
    leader: Array  # () J(t)
    gap: Array  # () B_{J(t)}(t)


@dataclass(frozen=True)
class BayesGap:
    """BayesGap (see the module docstring for the algorithm and choices).

    Parameters
    ----------
    kernel : {"linear", "exp", "matern"}
        The features: the arms, or eigen-features of the exponential or Matern-3/2 Gram matrix.
    length_scale : float, > 0
        ``l`` of the ``"exp"`` and ``"matern"`` kernels (unused by ``"linear"``).
    prior_var : float, > 0
        ``eta_b^2``, the prior variance of each coordinate of ``theta`` (``50^2``, the authors' code).
    noise_var : float, > 0, optional
        ``sigma^2``, the reward noise variance; ``None`` reads ``env.noise_var``.
    epsilon : float, >= 0
        ``eps`` in ``H_eps``: the simple regret BayesGap's bound targets.

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.bai import BayesGap, StaticInstance
    >>> env = StaticInstance(K=4, gap=1.0, noise_var=1.0)
    >>> identify = jax.jit(BayesGap(kernel="exp", length_scale=1.0).identify, static_argnums=(0, 2))  # one compiled program
    >>> arm, info = identify(env, env.reset(jax.random.key(0)), 20, jax.random.key(1))
    >>> int(info.pulls), info.theta.shape
    (20, (1, 4))
    """

    _: KW_ONLY
    kernel: str = "linear"
    length_scale: float = 1.0
    prior_var: float = 2500.0
    noise_var: float | None = None
    epsilon: float = 0.0

    name: ClassVar[str] = "BayesGap"

    def __post_init__(self) -> None:
        check_choice("BayesGap", "kernel", self.kernel, KERNELS)
        check_scalar("BayesGap", "length_scale", self.length_scale, low=0.0, low_open=True, high_open=True)
        check_scalar("BayesGap", "prior_var", self.prior_var, low=0.0, low_open=True, high_open=True)
        if self.noise_var is not None:
            check_scalar("BayesGap", "noise_var", self.noise_var, low=0.0, low_open=True, high_open=True)
        check_scalar("BayesGap", "epsilon", self.epsilon, low=0.0, high_open=True)

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]:
        """Run BayesGap with ``budget`` pulls; ``info.theta[0]`` is the final posterior mean of ``theta``."""
        check_call("BayesGap", env, instance, key)
        num_arms = instance.arms.shape[0]
        budget = check_budget("BayesGap", budget, num_arms, 1)
        if budget == num_arms:
            raise InvalidInput(
                f"BayesGap: the 'budget' argument must exceed the number of arms ({num_arms}): the first "
                f"{num_arms} pulls initialise every arm and the recommendation comes from the adaptive rounds "
                f"after them. Got {budget}. Raise the budget."
            )
        noise_var = noise_variance("BayesGap", self.noise_var, env)
        reward_key, own_key = streams(key)
        features = kernel_features(self.kernel, instance.arms, self.length_scale)

        arms = jnp.arange(num_arms)
        first = stack_rewards(env, instance, reward_key, arms, jnp.zeros(num_arms, jnp.int32))

        def initial(post: Posterior, pull: tuple[Array, Array]) -> tuple[Posterior, None]:
            return observe(post, features, pull[0], pull[1], noise_var), None

        post, _ = jax.lax.scan(initial, prior(features, self.prior_var), (arms, first))
        beta = exploration(post, features, budget, self.prior_var, noise_var, self.epsilon)

        def adaptive(carry: tuple[Posterior, Array], t: Array) -> tuple[tuple[Posterior, Array], _Round]:
            post, counts = carry
            key_leader, key_rival, key_coin = jax.random.split(jax.random.fold_in(own_key, t), 3)
            stds = jnp.sqrt(jnp.maximum(post.variances, 0.0))
            index, upper = gap_index(post.means, stds, beta)
            leader = random_argmax(key_leader, -index)
            others = jnp.where(arms == leader, -jnp.inf, upper)
            rival = random_argmax(key_rival, others)
            coin = jax.random.bernoulli(key_coin)
            tied = stds[leader] == stds[rival]
            arm = jnp.where(tied, jnp.where(coin, leader, rival), jnp.where(stds[leader] > stds[rival], leader, rival))
            reward = stack_rewards(env, instance, reward_key, arm[None], counts[arm][None])[0]
            post = observe(post, features, arm, reward, noise_var)
            return (post, counts.at[arm].add(1)), _Round(leader, index[leader])

        (post, counts), rounds = jax.lax.scan(
            adaptive, (post, jnp.ones(num_arms, jnp.int32)), jnp.arange(budget - num_arms)
        )
        arm = rounds.leader[jnp.argmin(rounds.gap)]
        info = BAIInfo(jnp.sum(counts), counts, jnp.ones((1, num_arms), bool), post.theta[None])
        return arm, info
