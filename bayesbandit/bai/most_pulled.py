"""A cumulative-regret bandit used for best-arm identification: run ``B`` rounds, recommend the most-pulled arm.

Azizi et al. (2022, sec. 8) compare GSE with LinUCB (Li et al. 2010) and UCB-GLM (Li, Lu and Zhou
2017) this way. :class:`MostPulled` turns *any* policy of the core contract
(:mod:`bayesbandit.contract`: ``init`` / ``select`` / ``update``) into a BAI algorithm: the policy
plays ``B`` rounds on the instance's arms, its rewards come from the stack of rewards (the ``j``-th
pull of arm ``i`` is the same draw for every algorithm), and the arm it pulled most is
recommended (ties at random). Sequential, so its cost is ``B`` times the policy's per-round cost.

Choices: the paper's code runs a *disjoint* LinUCB (one ridge regression per arm, no shared
parameter) and a UCB-GLM without the square root in its width; here the library's shared-parameter
:class:`bayesbandit.LinUCB` and :class:`bayesbandit.UCBGLM` are used as published, with their own
defaults unless configured otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from bayesbandit._numerics import random_argmax
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai._protocol import BAIEnv, BAIInfo, check_budget, check_call, stack_rewards, streams
from bayesbandit.contract import policy_kind
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput

__all__ = ["MostPulled"]


@dataclass(frozen=True)
class MostPulled:
    """Run a bandit ``policy`` for the whole budget and recommend its most-pulled arm.

    Parameters
    ----------
    policy : a JAX policy of the core contract (e.g. ``bb.LinUCB()``, ``bb.UCBGLM(logistic())``).

    Examples
    --------
    >>> import jax, bayesbandit as bb
    >>> from bayesbandit.bai import MostPulled, StaticInstance
    >>> env = StaticInstance(K=4, gap=2.0, noise_var=1.0)
    >>> identify = jax.jit(MostPulled(bb.LinUCB()).identify, static_argnums=(0, 2))  # one compiled program
    >>> arm, info = identify(env, env.reset(jax.random.key(0)), 40, jax.random.key(1))
    >>> int(info.pulls), int(arm)
    (40, 0)
    """

    policy: Any  # a Policy of the core contract (checked at construction)

    def __post_init__(self) -> None:
        if policy_kind(self.policy) != "jax":
            raise InvalidInput(
                f"MostPulled: the 'policy' argument must be a JAX policy of the core contract (kind 'jax'). "
                f"Got {type(self.policy).__name__} instead. Host policies cannot run inside a vmapped replication."
            )

    @property
    def name(self) -> str:
        return type(self.policy).__name__

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]:
        """Play ``budget`` rounds of the policy on the instance; recommend its most-pulled arm."""
        check_call("MostPulled", env, instance, key)
        num_arms = instance.arms.shape[0]
        budget = check_budget("MostPulled", budget, num_arms, 1)
        reward_key, own_key = streams(key)
        arms = instance.arms
        init_key, choice_key = jax.random.split(own_key)
        state = self.policy.init(arms, capacity=budget, key=init_key)

        def play(carry: tuple[Any, Array], t: Array) -> tuple[tuple[Any, Array], None]:
            state, counts = carry
            action, _ = self.policy.select(state, arms, jax.random.fold_in(own_key, t))
            reward = stack_rewards(env, instance, reward_key, action[None], counts[action][None])[0]
            state, _ = self.policy.update(state, arms, action, reward)
            return (state, counts.at[action].add(1)), None

        (state, counts), _ = jax.lax.scan(play, (state, jnp.zeros(num_arms, jnp.int32)), jnp.arange(budget))
        arm = random_argmax(choice_key, counts)  # uniform among the most pulled
        no_estimate = jnp.zeros((1, 0), arms.dtype)  # policies keep their estimates in their own state
        return arm, BAIInfo(jnp.sum(counts), counts, jnp.ones((1, num_arms), bool), no_estimate)
