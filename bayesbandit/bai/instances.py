"""The synthetic best-arm-identification instances of Azizi et al. (2022, sec. 8 and App. E).

Each environment is a frozen dataclass with ``reset(key) -> Instance`` (arms, theta*, means, best
mean) and ``reward(instance, arm, key)``, the reward of one pull (drawn from the stack of rewards,
``bayesbandit.bai._protocol``). Gaussian noise is given by its **variance** ``noise_var``, as
the paper writes it (``N(0, 10)`` is variance 10, standard deviation ``sqrt(10)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtr

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.envs import Instance, glm_instance
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = [
    "AdaptiveInstance",
    "StaticInstance",
    "SphereInstance",
    "GLMInstance",
    "CornerInstance",
    "gaussian_reward",
]


def gaussian_reward(key: PRNGKey, instance: Instance, arm: Array, noise_var: float) -> Array:
    """``mu_arm + sqrt(noise_var) * z`` with ``z ~ N(0, 1)`` drawn from ``key``."""
    return instance.means[arm] + math.sqrt(noise_var) * jax.random.normal(key, dtype=instance.means.dtype)


def _instance(arms: Array, theta: Array, means: Array) -> Instance:
    return Instance(arms, theta, means, jnp.max(means))


@dataclass(frozen=True, kw_only=True)
class _Gaussian:
    noise_var: float = 10.0

    def __post_init__(self) -> None:
        check_scalar(type(self).__name__, "noise_var", self.noise_var, low=0.0, low_open=True, high_open=True)

    def reward(self, instance: Instance, arm: Array, key: PRNGKey) -> Array:
        """One pull of ``arm``: its mean plus Gaussian noise of variance ``noise_var``."""
        return gaussian_reward(key, instance, arm, self.noise_var)


@dataclass(frozen=True, kw_only=True)
class AdaptiveInstance(_Gaussian):
    """The adaptive hard instance of Soare et al. (2014), used by Azizi et al. (2022, sec. 8.1).

    ``d = K - 1`` arms ``e_1..e_d`` and a disturbing arm ``(cos w, sin w, 0, ..., 0)``;
    ``theta* = e_1``. Arm 0 (mean 1) is best; the disturbing arm has mean ``cos w`` (0.995 for
    ``w = 0.1``); the others 0. Fixed: ``reset`` ignores its key.

    Parameters
    ----------
    K : int, >= 3
    omega : float, in [-pi, pi]
        Angle of the disturbing arm (0 makes it a copy of arm 0, which ``identify`` refuses).
    noise_var : float
        Variance of the Gaussian noise (10 in the paper).
    """

    K: int = 8
    omega: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("AdaptiveInstance", "K", self.K, low=3)
        check_scalar("AdaptiveInstance", "omega", self.omega, low=-math.pi, high=math.pi)

    @property
    def num_arms(self) -> int:
        return self.K

    @property
    def dim(self) -> int:
        return self.K - 1

    def reset(self, key: PRNGKey) -> Instance:
        """The instance (``key`` is unused: the instance is fixed)."""
        d = self.dim
        disturbing = jnp.zeros(d).at[0].set(math.cos(self.omega)).at[1].set(math.sin(self.omega))
        arms = jnp.vstack([jnp.eye(d), disturbing])
        theta = jnp.zeros(d).at[0].set(1.0)
        return _instance(arms, theta, arms @ theta)


@dataclass(frozen=True, kw_only=True)
class StaticInstance(_Gaussian):
    """The static instance of Xu et al. (2018), used by Azizi et al. (2022, sec. 8.2).

    ``K = d`` one-hot arms and ``theta* = (gap, 0, ..., 0)``: a multi-armed bandit where the
    uniform design is G-optimal, so GSE is Sequential Halving. Fixed.
    """

    K: int = 16
    gap: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("StaticInstance", "K", self.K, low=2)
        check_scalar("StaticInstance", "gap", self.gap, low=0.0, low_open=True, high_open=True)

    @property
    def num_arms(self) -> int:
        return self.K

    @property
    def dim(self) -> int:
        return self.K

    def reset(self, key: PRNGKey) -> Instance:
        """The instance (``key`` is unused)."""
        arms = jnp.eye(self.K)
        theta = jnp.zeros(self.K).at[0].set(self.gap)
        return _instance(arms, theta, arms @ theta)


@dataclass(frozen=True, kw_only=True)
class SphereInstance(_Gaussian):
    """Randomised unit-sphere instances (Tao et al. 2018; Azizi et al. 2022, sec. 8.3), redrawn by ``reset``.

    ``K`` arms uniform on the unit sphere of ``R^d`` (normalised Gaussians; the authors' code
    normalises cube samples, which is not uniform), and ``theta* = x_i + 0.01 (x_j - x_i)`` for the
    closest pair of arms ``(x_i, x_j)``: a hard instance whose best arm is recomputed from the means.
    """

    K: int = 16
    d: int = 10

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("SphereInstance", "K", self.K, low=2)
        check_int("SphereInstance", "d", self.d, low=2)

    @property
    def num_arms(self) -> int:
        return self.K

    @property
    def dim(self) -> int:
        return self.d

    def reset(self, key: PRNGKey) -> Instance:
        """Draw arms on the sphere and theta* next to the closest pair."""
        g = jax.random.normal(key, (self.K, self.d))
        arms = g / jnp.linalg.norm(g, axis=1, keepdims=True)
        dist = jnp.sum((arms[:, None, :] - arms[None, :, :]) ** 2, axis=-1) + jnp.diag(jnp.full(self.K, jnp.inf))
        i, j = jnp.unravel_index(jnp.argmin(dist), dist.shape)
        theta = arms[i] + 0.01 * (arms[j] - arms[i])
        return _instance(arms, theta, arms @ theta)


GLM_FAMILIES = ("logistic", "probit", "poisson")


@dataclass(frozen=True, kw_only=True)
class GLMInstance:
    """The logistic bandit of Azizi et al. (2022, sec. 8.4), and its probit and Poisson twins.

    ``K`` arms uniform on ``[-0.5, 0.5]^d``, ``theta* ~ N(0, theta_var I_d)`` with
    ``theta_var = 3/d`` by default (the paper's ``N(0, 3/d I)``; the authors' code draws with
    standard deviation ``3/d``), rewards ``Bernoulli(sigmoid(x^T theta*))`` (``"logistic"``),
    ``Bernoulli(Phi(x^T theta*))`` (``"probit"``) or ``Poisson(exp(x^T theta*))`` (``"poisson"``).
    Redrawn by ``reset``.
    """

    K: int = 8
    d: int = 5
    family: str = "logistic"
    theta_var: float | None = None

    def __post_init__(self) -> None:
        check_int("GLMInstance", "K", self.K, low=2)
        check_int("GLMInstance", "d", self.d, low=1)
        check_choice("GLMInstance", "family", self.family, GLM_FAMILIES)
        if self.theta_var is not None:
            check_scalar("GLMInstance", "theta_var", self.theta_var, low=0.0, low_open=True, high_open=True)

    @property
    def num_arms(self) -> int:
        return self.K

    @property
    def dim(self) -> int:
        return self.d

    def _mean(self, eta: Array) -> Array:
        if self.family == "logistic":
            return jax.nn.sigmoid(eta)
        if self.family == "probit":
            return ndtr(eta)
        return jnp.exp(eta)

    def reset(self, key: PRNGKey) -> Instance:
        """Draw arms on ``[-0.5, 0.5]^d`` and theta* (:func:`bayesbandit.envs.glm_instance`)."""
        var = 3.0 / self.d if self.theta_var is None else self.theta_var
        return glm_instance(key, self.K, self.d, math.sqrt(var), self._mean, half_width=0.5)

    def reward(self, instance: Instance, arm: Array, key: PRNGKey) -> Array:
        """One Bernoulli (or Poisson) reward of ``arm``."""
        mean = instance.means[arm]
        if self.family == "poisson":
            return jax.random.poisson(key, mean).astype(mean.dtype)
        return (jax.random.uniform(key, dtype=mean.dtype) < mean).astype(mean.dtype)


@dataclass(frozen=True, kw_only=True)
class CornerInstance(_Gaussian):
    """The corner case of Yang and Tan (2021, sec. 5.1), used by Azizi et al. (2022, App. E.3, Fig. 7).

    ``d = 2``, ``theta* = x_1 = e_1``, ``x_K = (cos 3pi/4, sin 3pi/4)`` and
    ``x_i = (cos(pi/4 + phi_i), sin(pi/4 + phi_i))`` with ``phi_i ~ N(0, 0.09^2)`` for the others:
    many near-identical arms far from the best, one arm opposite. Redrawn by ``reset``.
    """

    K: int = 8
    noise_var: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("CornerInstance", "K", self.K, low=3)

    @property
    def num_arms(self) -> int:
        return self.K

    @property
    def dim(self) -> int:
        return 2

    def reset(self, key: PRNGKey) -> Instance:
        """Draw the angles of the middle arms."""
        angles = jnp.concatenate(
            [jnp.zeros(1), jnp.pi / 4 + 0.09 * jax.random.normal(key, (self.K - 2,)), jnp.full(1, 3 * jnp.pi / 4)]
        )
        arms = jnp.stack([jnp.cos(angles), jnp.sin(angles)], axis=1)
        theta = jnp.array([1.0, 0.0])
        return _instance(arms, theta, arms @ theta)
