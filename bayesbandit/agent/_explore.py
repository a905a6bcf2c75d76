"""An agent's initial exploration, counted in decisions made rather than rewards received.

A policy with the :class:`~bayesbandit.contract.ExploresFirst` capability pulls its first ``d``
arms by a reward-blind rule (Kveton et al. 2020, Section 5.1), counting its rounds in rewards
(``state.t``). Served, the first decisions arrive together, before any reward: counted in rewards,
every one of them would be exploration round 0, the same arm with probability 1. An
:class:`~bayesbandit.Agent` therefore runs the policy without its own initial exploration and
applies the rule itself, to its ``n``-th decision for ``n < rounds``:

* ``"order"`` (a fixed arm set): the ``n``-th index of the state's ``explore_order`` (greedy pivoted
  Gram-Schmidt), so ``d`` concurrent decisions pull ``d`` distinct arms that span the features;
* ``"design"`` (each round's arms): the arm maximising ``x^T (G + eps I)^{-1} x``, where ``G`` sums
  ``x x^T`` over the arms the earlier exploration decisions chose (decided, not yet rewarded), ties
  at random;
* ``"uniform"`` (DeepFPL): an arm drawn uniformly.

Played one decision and one reward at a time, the ``n``-th decision has seen ``n`` rewards and the
rule chooses what the policy's own would have. Each rule is a function of the decision's number,
its arms, ``G`` and a key, so a decision's propensity is exact: 1 for ``"order"``, the tie
probability for ``"design"``, ``1 / K`` for ``"uniform"``. Concurrent contextual decisions that
start before an earlier one has recorded its arm share that ``G``: each still pulls its own round's
most informative arm.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._numerics import random_argmax, tie_probabilities
from bayesbandit.contract import ExploresFirst
from bayesbandit.policies._explore import exploration_scores

__all__ = ["Explore", "initial_exploration"]

_EXPLORE_STREAM = 0x4558504C  # folded into a decision's key for the exploration rule's own draws


class Explore(NamedTuple):
    """The rule (``"none"``, ``"order"``, ``"design"``, ``"uniform"``) and how many decisions it lasts. Static."""

    rule: str
    rounds: int

    def exploring(self, number: Any) -> Any:
        """Whether decision ``number`` (a traced int) is an exploration decision."""
        return number < self.rounds

    def choose(self, key: Any, arms: Any, number: Any, design: Any, action: Any) -> tuple[Any, Any]:
        """``(action, exploring)``: the policy's ``action``, or in an exploration decision the rule's arm."""
        if self.rule == "none":
            return action, jnp.asarray(False)
        exploring = self.exploring(number)
        key = jax.random.fold_in(key, _EXPLORE_STREAM)
        if self.rule == "order":
            pick = design[jnp.minimum(number, self.rounds - 1)]
        elif self.rule == "design":  # the scores only in an exploration decision (a cond, not a select)
            pick = jax.lax.cond(
                exploring,
                lambda: random_argmax(key, exploration_scores(design, arms)).astype(action.dtype),
                lambda: action,
            )
        else:
            pick = jax.random.randint(key, (), 0, arms.shape[0], jnp.int32)
        return jnp.where(exploring, pick.astype(action.dtype), action), exploring

    def law(self, arms: Any, number: Any, design: Any, law: Any) -> Any:
        """The law of :meth:`choose`'s arm, given the policy's ``law``: exact (module docstring)."""
        if self.rule == "none":
            return law
        num_arms = arms.shape[0]
        if self.rule == "order":
            rule = (jnp.arange(num_arms) == design[jnp.minimum(number, self.rounds - 1)]).astype(law.dtype)
        elif self.rule == "design":
            scores = lambda: tie_probabilities(exploration_scores(design, arms)).astype(law.dtype)  # noqa: E731
            rule = jax.lax.cond(self.exploring(number), scores, lambda: law)
        else:
            rule = jnp.full(num_arms, 1.0 / num_arms, law.dtype)
        return jnp.where(self.exploring(number), rule, law)


def initial_exploration(policy: Any, state: Any, fixed_arms: bool, d: int) -> tuple[Any, Explore, np.ndarray]:
    """``(the policy to run, its Explore, the rule's design)`` for an agent of ``policy`` (module docstring).

    The design is what the compiled selection takes besides the state: the exploration order of a
    fixed arm set (int32, ``(rounds,)``), the starting ``G`` (zeros, ``(d, d)``), or an empty array.
    """
    none = np.zeros((0,), np.int32)
    if not isinstance(policy, ExploresFirst):
        return policy, Explore("none", 0), none
    rule, rounds = policy.initial_exploration(d)
    if rounds == 0:
        return policy, Explore("none", 0), none
    run = policy.without_initial_exploration()
    if rule == "uniform":
        return run, Explore("uniform", rounds), none
    order = getattr(state, "explore_order", None)
    if fixed_arms and order is not None:
        return run, Explore("order", rounds), np.asarray(order, np.int32)
    return run, Explore("design", rounds), np.zeros((d, d))
