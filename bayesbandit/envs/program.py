"""A bandit whose rewards come from a reward program itself: the problem of the program's own family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.envs._common import Instance, check_sizes, uniform_arms
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.validation import check_scalar

__all__ = ["ProgramBandit"]


@dataclass(frozen=True, kw_only=True)
class ProgramBandit:
    """``K`` fixed arms uniform on ``[-h, h]^d`` and rewards drawn from a reward program at a true parameter.

    ``reset`` draws the arms and the true parameters ``theta*`` from the program's prior
    (:meth:`~bayesbandit.inference.BoundModel.sample_prior`: every latent site, a noise scale or
    cut-points included); the mean reward of arm ``i`` is the observed distribution's mean at
    ``x_i`` (:meth:`~bayesbandit.inference.BoundModel.mean_reward`; an ordinal reward's expected
    label), and a reward is a draw from it. The rewards of all ``K`` arms of a round come from the
    round's key and the pulled arm's is returned (common random numbers, as in
    :mod:`bayesbandit.envs.glm`); a discrete reward is returned as the float of its integer.

    The instance's ``theta`` is the flat unconstrained parameter vector of the bound program
    (``p`` values, not ``d``).

    Parameters
    ----------
    model : NumPyro program
        ``model(x, y=None)``, the reward-program contract of :func:`bayesbandit.bind`.
    K, d : int
        Number of arms and feature dimension.
    half_width : float, > 0
        Features are uniform on ``[-half_width, half_width]^d``.
    obs_site : str
        Name of the observed reward site.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import poisson
    >>> env = bb.envs.ProgramBandit(model=poisson(), K=5, d=2)
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> reward, outcome = env.pull(s, 3, jax.random.PRNGKey(1))
    >>> float(reward) == int(reward), bool(outcome.regret >= 0)
    (True, True)
    """

    model: Any
    K: int = 20
    d: int = 3
    half_width: float = 1.0
    obs_site: str = "y"

    fixed_arms: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_sizes(type(self).__name__, self.K, self.d)
        check_scalar(type(self).__name__, "half_width", self.half_width, low=0.0, low_open=True, high=float("inf"))

    @property
    def bound(self) -> BoundModel:
        """The program bound to ``d`` features."""
        return bound_for(self.model, (self.d,), obs_site=self.obs_site)

    def reset(self, key: PRNGKey) -> Instance:
        """Draw one instance: arms (K, d), theta* (p,) from the prior, the arms' means and the best one."""
        key_arms, key_theta = jax.random.split(key)
        arms = uniform_arms(key_arms, self.K, self.d, self.half_width)
        theta = self.bound.sample_prior(key_theta, arms.dtype)
        means = self.bound.mean_reward(theta, arms)
        return Instance(arms, theta, means, jnp.max(means))

    def arms(self, env_state: Instance, t: ArrayLike = 0) -> Array:
        """The fixed arm set, shape (K, d) (``t`` is ignored)."""
        return env_state.arms

    def pull(self, env_state: Instance, action: Array, key: PRNGKey, t: ArrayLike = 0) -> tuple[Array, Outcome]:
        """A reward of arm ``action`` drawn from the program at ``theta*``, and the round's Outcome."""
        rewards = self.bound.sample_rewards(env_state.theta, env_state.arms, key)
        return rewards[action].astype(env_state.means.dtype), Outcome(env_state.means[action], env_state.best_mean)
