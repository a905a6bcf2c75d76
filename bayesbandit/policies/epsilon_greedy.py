"""Epsilon-greedy on the MAP of a reward program (a baseline)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit._validation import check_scalar
from bayesbandit.inference.bind import BoundModel
from bayesbandit.inference.newton import NewtonInfo
from bayesbandit.policies._base import register_policy
from bayesbandit.policies._glm import GLMPolicy, GLMState

__all__ = ["EpsilonGreedy"]


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

    epsilon: float = 0.05

    def __post_init__(self) -> None:
        check_scalar("EpsilonGreedy", "epsilon", self.epsilon, low=0.0, high=1.0)

    def scores(self, state: GLMState, arms: Array, key: PRNGKey, bound: BoundModel) -> tuple[Array, Array, NewtonInfo]:
        key_coin, key_arm = jax.random.split(key)
        theta = state.fit.theta
        greedy = bound.mean_reward(theta, arms)
        uniform = jax.random.uniform(key_arm, greedy.shape, dtype=greedy.dtype)
        explore = jax.random.uniform(key_coin) < self.epsilon
        return jnp.where(explore, uniform, greedy), theta, state.fit.info
