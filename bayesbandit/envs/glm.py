"""Synthetic generalised-linear bandits: logistic, linear-Gaussian, Poisson, and contextual logistic.

:func:`glm_instance` draws every fixed-arm GLM instance of the package, those of these bandits and
those of the best-arm-identification instances (:class:`bayesbandit.bai.GLMInstance`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.envs._common import ContextualInstance, Instance, check_sizes, theta_variance, uniform_arms
from bayesbandit.validation import check_scalar

__all__ = ["glm_instance", "LogisticBandit", "LinearBandit", "PoissonBandit", "ContextualLogisticBandit"]


def glm_instance(
    key: PRNGKey, K: int, d: int, theta_std: float, mean: Callable[[Array], Array], *, half_width: float = 1.0
) -> Instance:
    """One fixed-arm GLM instance: arms, ``theta*`` and the arms' means ``mu(x_i^T theta*)``.

    ``K`` arms uniform on ``[-h, h]^d`` (``h = half_width``) and ``theta* ~ N(0, s^2 I_d)``
    (``s = theta_std``), from the two halves of ``split(key)``; ``mean`` is the inverse link ``mu``.
    """
    key_arms, key_theta = jax.random.split(key)
    theta = theta_std * jax.random.normal(key_theta, (d,), dtype=float)
    arms = uniform_arms(key_arms, K, d, half_width)
    means = mean(arms @ theta)
    return Instance(arms, theta, means, jnp.max(means))


@dataclass(frozen=True, kw_only=True)
class _FixedGLMBandit:
    """``K`` arms uniform on ``[-1, 1]^d``, ``theta* ~ N(0, v I_d)``, mean reward ``mu(x_i^T theta*)``."""

    K: int = 100
    d: int = 10
    theta_cov: str | float = "paper"

    fixed_arms: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_sizes(type(self).__name__, self.K, self.d)
        theta_variance(self.theta_cov, self.d)

    def reset(self, key: PRNGKey) -> Instance:
        """Draw one instance (:func:`glm_instance`): arms (K, d), theta* (d,), the arms' means and the best one."""
        return glm_instance(key, self.K, self.d, theta_variance(self.theta_cov, self.d) ** 0.5, self._mean)

    def arms(self, env_state: Instance, t: ArrayLike = 0) -> Array:
        """The fixed arm set, shape (K, d) (``t`` is ignored)."""
        return env_state.arms

    def pull(self, env_state: Instance, action: Array, key: PRNGKey, t: ArrayLike = 0) -> tuple[Array, Outcome]:
        """Reward of arm ``action`` and the round's :class:`~bayesbandit.contract.Outcome` (``t`` is ignored)."""
        reward = self._sample(key, env_state.means)[action]
        return reward, Outcome(env_state.means[action], env_state.best_mean)

    def parameter(self, env_state: Instance) -> Array:
        """The instance's ``theta*``, shape (d,) (:class:`~bayesbandit.contract.Parametric`)."""
        return env_state.theta

    def with_parameter(self, env_state: Instance, parameter: Array) -> Instance:
        """The same arms with ``theta* = parameter``: means ``mu(x_i^T theta*)`` and the best one recomputed."""
        theta = jnp.asarray(parameter, env_state.theta.dtype)
        means = self._mean(env_state.arms @ theta)
        return env_state._replace(theta=theta, means=means, best_mean=jnp.max(means))

    def _mean(self, eta: Array) -> Array:
        raise NotImplementedError

    def _sample(self, key: PRNGKey, means: Array) -> Array:
        raise NotImplementedError


def _bernoulli(key: PRNGKey, means: Array) -> Array:
    # One shared uniform per arm: the same key gives the same reward to the same arm.
    return (jax.random.uniform(key, means.shape, dtype=means.dtype) < means).astype(means.dtype)


@dataclass(frozen=True, kw_only=True)
class LogisticBandit(_FixedGLMBandit):
    """The logistic bandit of Kveton et al. (2020, Section 5.1, Figure 1).

    ``K`` arms with features uniform on ``[-1, 1]^d`` (not normalised: ``||x|| <= sqrt(d)``),
    ``theta* ~ N(0, v I_d)`` and rewards ``Y ~ Bernoulli(sigmoid(x_i^T theta*))``.

    **The paper's text and formula disagree.** It prints ``theta* ~ N(0, 3 d^-2 I)`` and says
    this makes ``var(x^T theta*) = 1``; in fact ``3 d^-2`` gives ``var(x^T theta*) = 1/d``
    (each coordinate of ``x`` has variance 1/3). ``theta_cov="paper"`` (the default) follows the
    printed formula, ``v = 3/d^2``; ``theta_cov="unit"`` follows the text, ``v = 3/d``, so that
    ``var(x^T theta*) = 1``; a float sets ``v`` directly.

    Parameters
    ----------
    K : int
        Number of arms.
    d : int
        Feature dimension.
    theta_cov : {"paper", "unit"} or float

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.envs import LogisticBandit
    >>> env = LogisticBandit(K=5, d=3)
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> env.arms(s, 0).shape
    (5, 3)
    >>> reward, outcome = env.pull(s, 2, jax.random.PRNGKey(1), 0)
    >>> bool(outcome.regret >= 0)
    True
    """

    def _mean(self, eta: Array) -> Array:
        return jax.nn.sigmoid(eta)

    def _sample(self, key: PRNGKey, means: Array) -> Array:
        return _bernoulli(key, means)


@dataclass(frozen=True, kw_only=True)
class LinearBandit(_FixedGLMBandit):
    """A linear-Gaussian bandit: ``Y = x_i^T theta* + noise * z``, ``z ~ N(0, 1)``.

    Arms uniform on ``[-1, 1]^d``; ``theta* ~ N(0, v I_d)`` with ``v`` from ``theta_cov`` (default
    ``"unit"``: ``var(x^T theta*) = 1``; see :class:`LogisticBandit`).

    Parameters
    ----------
    K, d : int
    theta_cov : {"paper", "unit"} or float
    noise : float, > 0
        Standard deviation ``sigma`` of the Gaussian reward noise.
    """

    theta_cov: str | float = "unit"
    noise: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_scalar("LinearBandit", "noise", self.noise, low=0.0, low_open=True, high=float("inf"), high_open=True)

    def _mean(self, eta: Array) -> Array:
        return eta

    def _sample(self, key: PRNGKey, means: Array) -> Array:
        return means + self.noise * jax.random.normal(key, means.shape, dtype=means.dtype)


@dataclass(frozen=True, kw_only=True)
class PoissonBandit(_FixedGLMBandit):
    """A Poisson bandit: ``Y ~ Poisson(exp(x_i^T theta*))``.

    Arms uniform on ``[-1, 1]^d``; ``theta* ~ N(0, v I_d)`` (default ``"paper"``: ``v = 3/d^2``,
    so the log-means have variance ``1/d`` and the means stay moderate).

    Parameters
    ----------
    K, d : int
    theta_cov : {"paper", "unit"} or float
    """

    def _mean(self, eta: Array) -> Array:
        return jnp.exp(eta)

    def _sample(self, key: PRNGKey, means: Array) -> Array:
        return jax.random.poisson(key, means, shape=means.shape).astype(means.dtype)


@dataclass(frozen=True, kw_only=True)
class ContextualLogisticBandit:
    """A contextual logistic bandit: ``K`` fresh arms uniform on ``[-1, 1]^d`` every round.

    Round ``t``'s features are ``uniform(fold_in(instance_key, t))``, so ``arms(env_state, t)``
    is a pure function of the instance and the round. Rewards are
    ``Bernoulli(sigmoid(x_{t,i}^T theta*))`` with ``theta* ~ N(0, v I_d)`` (default
    ``theta_cov="unit"``, ``var(x^T theta*) = 1``; see :class:`LogisticBandit`). Policies are
    initialised with ``init(d=d, capacity=horizon)``.

    Parameters
    ----------
    K, d : int
    theta_cov : {"paper", "unit"} or float
    """

    K: int = 10
    d: int = 5
    theta_cov: str | float = "unit"

    fixed_arms: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_sizes(type(self).__name__, self.K, self.d)
        theta_variance(self.theta_cov, self.d)

    def reset(self, key: PRNGKey) -> ContextualInstance:
        """Draw one instance: theta* (d,) and the key of its feature stream."""
        key_features, key_theta = jax.random.split(key)
        std = theta_variance(self.theta_cov, self.d) ** 0.5
        return ContextualInstance(std * jax.random.normal(key_theta, (self.d,), dtype=float), key_features)

    def parameter(self, env_state: ContextualInstance) -> Array:
        """The instance's ``theta*``, shape (d,) (:class:`~bayesbandit.contract.Parametric`)."""
        return env_state.theta

    def with_parameter(self, env_state: ContextualInstance, parameter: Array) -> ContextualInstance:
        """The same feature stream with ``theta* = parameter`` (the oracle maximises each round's means)."""
        return env_state._replace(theta=jnp.asarray(parameter, env_state.theta.dtype))

    def arms(self, env_state: ContextualInstance, t: ArrayLike) -> Array:
        """Round ``t``'s arm features, shape (K, d)."""
        return uniform_arms(jax.random.fold_in(env_state.key, t), self.K, self.d)

    def pull(self, env_state: ContextualInstance, action: Array, key: PRNGKey, t: ArrayLike) -> tuple[Array, Outcome]:
        """Reward of arm ``action`` in round ``t``, and the round's :class:`~bayesbandit.contract.Outcome`.

        The oracle maximises over round ``t``'s ``K`` arms (they are new every round).
        """
        means = jax.nn.sigmoid(self.arms(env_state, t) @ env_state.theta)
        return _bernoulli(key, means)[action], Outcome(means[action], jnp.max(means))
