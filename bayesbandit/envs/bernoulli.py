"""The K-armed Bernoulli bandit: given (or uniformly drawn) means, one-hot arm features."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.envs.glm import _bernoulli
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = ["BernoulliBandit", "BernoulliInstance"]


class BernoulliInstance(NamedTuple):
    """One instance of the Bernoulli bandit."""

    arms: Array  # (K, K) one-hot features
    means: Array  # (K,) success probabilities
    best_mean: Array  # () the largest


@dataclass(frozen=True, kw_only=True)
class BernoulliBandit:
    """``K`` arms with rewards ``Bernoulli(mu_i)``; arm ``i``'s features are the unit vector ``e_i``.

    With one-hot features a logistic reward program has one coefficient per arm,
    ``mu_i = sigmoid(theta_i)``, so :class:`bayesbandit.GLMTSL` with ``logistic()`` on this bandit is
    Thompson sampling from a Laplace approximation of each arm's posterior (independent priors
    ``theta_i ~ N(0, s^2)``). The rewards of all arms of a round come from one uniform each
    (common random numbers, as :mod:`bayesbandit.envs.glm`).

    Parameters
    ----------
    means : sequence of float in [0, 1], optional
        The arms' means, the same in every instance. Without them each instance draws ``K``
        means uniform on ``[0, 1]``.
    K : int, optional
        Number of arms when ``means`` is not given.

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.envs import BernoulliBandit
    >>> env = BernoulliBandit(means=(0.3, 0.5, 0.9))
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> reward, outcome = env.pull(s, 0, jax.random.PRNGKey(1))
    >>> round(float(outcome.regret), 2)
    0.6
    """

    means: tuple[float, ...] | None = None
    K: int = 0

    fixed_arms: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.means is None:
            check_int("BernoulliBandit", "K", self.K, low=1)
            return
        means = tuple(self.means) if isinstance(self.means, tuple | list) else None
        if not means or not all(isinstance(m, int | float) and 0.0 <= float(m) <= 1.0 for m in means):
            raise InvalidInput(
                f"The 'means' parameter of BernoulliBandit must be a non-empty sequence of floats in [0, 1]. Got "
                f"{self.means!r} instead. Fix: pass means=(0.3, 0.5, 0.9), or K=... for means drawn per instance."
            )
        if self.K not in (0, len(means)):
            raise InvalidInput(
                f"The 'K' parameter of BernoulliBandit must match the {len(means)} means. Got K={self.K!r}. "
                "Fix: leave K out when the means are given."
            )
        object.__setattr__(self, "means", tuple(float(m) for m in means))
        object.__setattr__(self, "K", len(means))

    @property
    def d(self) -> int:
        """Feature dimension, ``K`` (one-hot)."""
        return self.K

    def reset(self, key: PRNGKey) -> BernoulliInstance:
        """One instance: the given means (``key`` unused), or ``K`` uniform draws from ``key``."""
        arms = jnp.eye(self.K, dtype=float)
        if self.means is None:
            means = jax.random.uniform(key, (self.K,), dtype=float)
        else:
            means = jnp.asarray(self.means, dtype=float)
        return self.with_parameter(BernoulliInstance(arms, means, jnp.max(means)), means)

    def parameter(self, env_state: BernoulliInstance) -> Array:
        """The means, shape (K,) (:class:`~bayesbandit.contract.Parametric`)."""
        return env_state.means

    def with_parameter(self, env_state: BernoulliInstance, parameter: Array) -> BernoulliInstance:
        """The instance with means ``parameter`` clipped into ``[0, 1]``, and its best mean."""
        means = jnp.clip(jnp.asarray(parameter, env_state.means.dtype), 0.0, 1.0)
        return BernoulliInstance(env_state.arms, means, jnp.max(means))

    def arms(self, env_state: BernoulliInstance, t: ArrayLike = 0) -> Array:
        """The one-hot features, shape (K, K)."""
        return env_state.arms

    def pull(
        self, env_state: BernoulliInstance, action: Array, key: PRNGKey, t: ArrayLike = 0
    ) -> tuple[Array, Outcome]:
        """Reward of arm ``action`` and the round's :class:`~bayesbandit.contract.Outcome`."""
        reward = _bernoulli(key, env_state.means)[action]
        return reward, Outcome(env_state.means[action], env_state.best_mean)
