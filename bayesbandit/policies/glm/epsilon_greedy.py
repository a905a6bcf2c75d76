"""Epsilon-greedy on the MAP of a reward program (a baseline)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.inference.potential import BoundModel
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState
from bayesbandit.validation import check_scalar

__all__ = ["EpsilonGreedy", "EpsilonGreedyInfo"]


class EpsilonGreedyInfo(NamedTuple):
    """What epsilon-greedy's ``select`` reports."""

    converged: Array  # () bool: the MAP is finite
    scores: Array  # (K,) MAP mean rewards, or uniform noise in a random round
    theta: Array  # (p,) the MAP
    at_random: Array  # () bool: the epsilon coin chose a uniformly random arm
    exploring: Array  # () bool: an initial-exploration round


@register_policy(data_fields=["epsilon"])
class EpsilonGreedy(GLMPolicy):
    """With probability ``epsilon`` pull a uniformly random arm, else the arm with the highest
    mean reward under the MAP ``bar theta_t``.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.EpsilonGreedy(logistic(), epsilon=0.1).epsilon
    0.1
    """

    _: KW_ONLY
    epsilon: float = 0.05

    def __post_init__(self) -> None:
        self._check_common()
        check_scalar("EpsilonGreedy", "epsilon", self.epsilon, low=0.0, high=1.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, EpsilonGreedyInfo]:
        key_coin, key_arm = jax.random.split(key)
        theta = state.fit.theta
        greedy = bound.mean_reward(theta, arms)
        uniform = jax.random.uniform(key_arm, greedy.shape, dtype=greedy.dtype)
        at_random = jax.random.uniform(key_coin) < self.epsilon
        scores = jnp.where(at_random, uniform, greedy)
        return scores, EpsilonGreedyInfo(jnp.all(jnp.isfinite(theta)), scores, theta, at_random, jnp.asarray(False))

    def action_probabilities(self, state: GLMState, arms: Array) -> Array:
        """The probability of each arm under ``select(state, arms, key)`` over ``key``, shape (K,):
        ``(1 - epsilon) / |ties|`` on the greedy arms' ties plus ``epsilon / K`` on every arm (a
        uniform draw's argmax), or the initial-exploration rule's law in its rounds."""
        arms = jnp.asarray(arms, dtype=float)
        greedy = self.bound(arms.shape[1]).mean_reward(state.fit.theta, arms)
        law, exploring = self._choice_law(state, arms, greedy)
        return jnp.where(exploring, law, (1.0 - self.epsilon) * law + self.epsilon / arms.shape[0])
