"""Checks for the forgetting capabilities (:class:`~bayesbandit.contract.Discounts`, :class:`~bayesbandit.contract.Forgets`).

Run for the policies that have the capability, one arm or a super arm a round. Each check plays a
few rounds with the policy's own ``select`` and {0, 1} rewards, once on a fixed arm set
(``init(arms)``) and once contextually (``init(d=..., capacity=...)``), all under ``jit``, and
compares states leaf by leaf: floating-point leaves (the posterior) to a tolerance, the others
(counters such as the round count and rows written, flags) exactly where the check says so.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.contract import Combinatorial, Discounts, Forgets
from bayesbandit.testing._common import cached, policy_id

__all__ = [
    "DISCOUNT_CHECKS",
    "FORGET_CHECKS",
    "checks_for",
    "check_discount_identity",
    "check_discount_composes",
    "check_forget_inverts_update",
]

ROUNDS = 8
D = 3
CAPACITY = 16


def _arms(policy: Any) -> jax.Array:
    """Six arms in R^3 (one arm a round), or twenty on the unit sphere (a super arm a round)."""
    count = 20 if isinstance(policy, Combinatorial) else 6
    arms = jax.random.uniform(jax.random.PRNGKey(11), (count, D), minval=-1.0, maxval=1.0)
    return arms / jnp.linalg.norm(arms, axis=1, keepdims=True) if count == 20 else arms


@cached
def _played(policy: Any, contextual: bool) -> tuple:
    """``(state after ROUNDS rounds, arms, the next round's action and reward)``, all computed under ``jit``."""
    arms = _arms(policy)
    init = (lambda: policy.init(d=D, capacity=CAPACITY, key=jax.random.PRNGKey(0))) if contextual else None

    @jax.jit
    def run(arms: jax.Array) -> tuple:
        state = init() if init is not None else policy.init(arms, key=jax.random.PRNGKey(0))

        def step(state: Any, key: jax.Array) -> tuple:
            k_select, k_reward = jax.random.split(key)
            action, _ = policy.select(state, arms, k_select)
            reward = jax.random.bernoulli(k_reward, 0.5, jnp.shape(action)).astype(arms.dtype)
            return policy.update(state, arms, action, reward)[0], (action, reward)

        keys = jax.random.split(jax.random.PRNGKey(1), ROUNDS + 1)
        state, _ = jax.lax.scan(step, state, keys[:ROUNDS])
        action, _ = policy.select(state, arms, keys[-1])
        return state, action, jnp.ones(jnp.shape(action), arms.dtype)

    state, action, reward = run(arms)
    return state, arms, action, reward


def _scale(tree: Any) -> float:
    return 1.0 + max((float(np.max(np.abs(x))) for x in jax.tree.leaves(tree) if np.size(x)), default=0.0)


def _differences(a: Any, b: Any) -> tuple[float, bool]:
    """(largest difference of the floating-point leaves, whether the other leaves are equal)."""
    structure: Any = jax.tree.structure(a)
    assert structure == jax.tree.structure(b)
    worst, same = 0.0, True
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if np.issubdtype(x.dtype, np.floating):
            worst = max(worst, float(np.max(np.abs(x - y), initial=0.0)))
        else:
            same = same and np.array_equal(x, y)
    return worst, same


def _cases(policy: Any) -> list[tuple[str, tuple]]:
    return [(name, _played(policy, contextual)) for name, contextual in (("fixed arms", False), ("contextual", True))]


def check_discount_identity(policy: Any) -> None:
    """``discount(state, 1)`` returns an equal state, with and without refit, under ``jit``."""
    name = policy_id(policy)
    for case, (state, *_) in _cases(policy):
        for refit in (False, True):
            same = jax.jit(lambda s, r=refit: policy.discount(s, 1.0, refit=r))(state)
            worst, equal = _differences(state, same)
            assert equal and worst <= 1e-12 * _scale(state), (
                f"{name} ({case}, refit={refit}): discount by 1 moved the state by {worst:.3g}"
            )


def check_discount_composes(policy: Any) -> None:
    """Discounting by ``a`` then ``b`` equals discounting by ``a b`` (the weights multiply), and a discount
    below 1 changes the posterior."""
    name = policy_id(policy)
    for case, (state, *_) in _cases(policy):
        twice = jax.jit(lambda s: policy.discount(policy.discount(s, 0.8, refit=False), 0.5, refit=False))(state)
        once = jax.jit(lambda s: policy.discount(s, 0.4, refit=False))(state)
        worst, equal = _differences(twice, once)
        assert equal and worst <= 1e-9 * _scale(state), (
            f"{name} ({case}): discount(discount(s, 0.8), 0.5) and discount(s, 0.4) differ by {worst:.3g}"
        )
        moved, _ = _differences(state, once)
        assert moved > 1e-6, f"{name} ({case}): discount by 0.4 left the state as it was"


def check_forget_inverts_update(policy: Any) -> None:
    """``forget(update(state, obs), obs)`` restores every floating-point leaf of ``state`` (to the solver's
    tolerance where the policy refits), and forgetting an observation changes the posterior. A configuration
    that cannot forget (the online GLM posterior) raises InvalidInput naming the capability instead."""
    from bayesbandit.errors import InvalidInput

    name = policy_id(policy)

    @jax.jit
    def there_and_back(s: Any, arms: jax.Array, action: jax.Array, reward: jax.Array) -> tuple:
        updated, _ = policy.update(s, arms, action, reward)
        return updated, policy.forget(updated, arms, action, reward, refit=True)

    for case, (state, arms, action, reward) in _cases(policy):
        try:
            updated, back = there_and_back(state, arms, action, reward)
        except InvalidInput as exc:  # a configuration that cannot forget must say so, naming the capability
            assert "Forgets" in str(exc) and "Fix:" in str(exc), f"{name}: forget refused unclearly: {exc}"
            return
        worst, _ = _differences(state, back)
        # A refit stops within the solver's tolerance, and with quadratic_stop its Hessian factor is one
        # Newton step stale: the factor's entries differ by up to about 2e-4 of the state's scale.
        assert worst <= 1e-3 * _scale(state), f"{name} ({case}): forget(update(s, obs), obs) is {worst:.3g} from s"
        moved, _ = _differences(updated, back)
        assert moved > 1e-6, f"{name} ({case}): forget left the updated state as it was"


DISCOUNT_CHECKS = [check_discount_identity, check_discount_composes]
"""The checks of a policy with :class:`~bayesbandit.contract.Discounts`."""
FORGET_CHECKS = [check_forget_inverts_update]
"""The checks of a policy with :class:`~bayesbandit.contract.Forgets`."""


def checks_for(policy: Any) -> list:
    """The checks of the forgetting capabilities ``policy`` has (none for the others)."""
    return [
        *(DISCOUNT_CHECKS if isinstance(policy, Discounts) else []),
        *(FORGET_CHECKS if isinstance(policy, Forgets) else []),
    ]
