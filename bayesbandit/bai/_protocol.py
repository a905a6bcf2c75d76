"""The fixed-budget best-arm-identification contract, and the stack of rewards every algorithm draws from.

An algorithm is a frozen dataclass with one pure function::

    arm, info = algorithm.identify(env, instance, budget, key)

``env`` is a BAI environment (:mod:`bayesbandit.bai.instances`): ``env.reset(key) -> Instance`` and
``env.reward(instance, arm, key) -> reward``. ``budget`` is a Python int (it fixes array shapes);
``instance`` and ``key`` may be traced, so ``jax.vmap`` over replications runs 1,000 of them as one
program. ``info`` is a :class:`BAIInfo`.

Common random numbers (a *stack of rewards*, Lattimore and Szepesvari 2020, sec. 4.6): the ``j``-th
pull of arm ``i`` in a replication returns ``env.reward(instance, i, fold_in(fold_in(k, i), j))``
with ``k`` the replication's reward key. Two algorithms given the same key see the same reward for
the same pull of the same arm, whatever order they pull in; :func:`streams` splits a replication's
key into that reward key and the algorithm's own key (tie-breaks, random allocations), so ties are
common too.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_key

__all__ = [
    "BAIAlgorithm",
    "BAIEnv",
    "BAIInfo",
    "streams",
    "stack_rewards",
    "is_correct",
    "check_budget",
    "check_call",
    "check_env",
    "check_instance",
    "noise_variance",
]


@runtime_checkable
class BAIEnv(Protocol):
    """A best-arm-identification environment: instances and the reward of one pull."""

    num_arms: int
    dim: int

    def reset(self, key: PRNGKey) -> Instance: ...

    def reward(self, instance: Instance, arm: Array, key: PRNGKey) -> Array: ...


class BAIInfo(NamedTuple):
    """What one identification did.

    ``stages`` is the number of elimination stages (1 for fully sequential algorithms);
    ``survivors[t]`` marks the arms alive at the start of stage ``t``; ``theta[t]`` is the estimate
    the stage ended with (its meaning is the algorithm's: OLS or MAP parameters in the arms'
    coordinates for GSE, per-arm means for Sequential Halving, posterior means for BayesGap).
    """

    pulls: Array  # () int32: pulls actually spent
    counts: Array  # (K,) int32: pulls per arm
    survivors: Array  # (S, K) bool
    theta: Array  # (S, p)


@runtime_checkable
class BAIAlgorithm(Protocol):
    """``identify(env, instance, budget, key) -> (arm, BAIInfo)``, pure and jittable."""

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]: ...


def streams(key: PRNGKey) -> tuple[PRNGKey, PRNGKey]:
    """Split a replication's key into (reward key, algorithm key), the same way for every algorithm."""
    reward_key, own_key = jax.random.split(key)
    return reward_key, own_key


def stack_rewards(env: BAIEnv, instance: Instance, reward_key: PRNGKey, arms: Array, index: Array) -> Array:
    """Rewards of pulls ``(arms[m], index[m])``: the ``index[m]``-th pull of arm ``arms[m]``.

    .. math::  Y_{i,j} = \\mathrm{reward}(i; \\mathrm{fold\\_in}(\\mathrm{fold\\_in}(k, i), j))
    """

    def one(arm: Array, j: Array) -> Array:
        return env.reward(instance, arm, jax.random.fold_in(jax.random.fold_in(reward_key, arm), j))

    return jax.vmap(one)(jnp.asarray(arms), jnp.asarray(index))


def is_correct(instance: Instance, arm: Array, *, rtol: float = 1e-12) -> Array:
    """Whether ``arm`` is *a* best arm: ``mu_arm >= max_i mu_i`` up to rounding (ties all count)."""
    best = jnp.max(instance.means)
    return instance.means[arm] >= best - rtol * jnp.maximum(jnp.abs(best), 1.0)


def check_budget(owner: str, budget: Any, num_arms: int, num_stages: int) -> int:
    """``budget`` is an int that gives every arm one pull and every stage at least one pull."""
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer):
        raise InvalidInput(
            f"{owner}: the 'budget' argument must be a Python int (it fixes array shapes). "
            f"Got {type(budget).__name__} {budget!r} instead. Fix: pass the number of pulls as an int, e.g. "
            f"budget={max(num_arms, num_stages) * 10}."
        )
    budget = int(budget)
    if budget < num_arms:
        raise InvalidInput(
            f"{owner}: the 'budget' argument must be at least the number of arms ({num_arms}), so that "
            f"every arm can be pulled once. Got {budget}. Fix: raise the budget or pass fewer arms."
        )
    if budget < num_stages:
        raise InvalidInput(
            f"{owner}: the 'budget' argument must cover one pull per stage ({num_stages} stages). "
            f"Got {budget}. Fix: raise the budget or the elimination rate eta."
        )
    return budget


def check_env(owner: str, env: object) -> None:
    """``env`` has the BAI environment methods."""
    if not all(hasattr(env, name) for name in ("reset", "reward", "num_arms", "dim")):
        raise InvalidInput(
            f"{owner}: the 'env' argument must be a best-arm-identification environment with reset, reward, "
            f"num_arms and dim. Got {type(env).__name__} instead. Fix: pass one of bayesbandit.bai.instances "
            "(e.g. AdaptiveInstance(K=8)) or an object with those members."
        )


def check_call(owner: str, env: Any, instance: Any, key: Any) -> None:
    """The arguments of ``identify`` other than the budget: an environment, an instance and a key."""
    check_env(owner, env)
    check_instance(owner, instance)
    check_key(owner, key)


def noise_variance(owner: str, given: float | None, env: BAIEnv) -> float:
    """The reward noise variance an algorithm was given, else the environment's ``noise_var``."""
    if given is not None:
        return float(given)
    noise_var = getattr(env, "noise_var", None)
    if noise_var is None:
        raise InvalidInput(
            f"{owner}: the environment {type(env).__name__} has no 'noise_var' attribute, so the "
            f"reward noise variance is unknown. Fix: pass {owner}(noise_var=...) (e.g. 0.25 for Bernoulli rewards)."
        )
    return float(noise_var)


def check_instance(owner: str, instance: Instance) -> None:
    """Finite features and means, and no two arms with the same features (on concrete instances).

    Batched instances (a leading replications axis) are checked replication by replication.
    Traced instances (inside ``jit`` / ``vmap``) are not checked: :func:`bayesbandit.bai.replicate`
    checks every instance on the host before it runs anything.
    """
    if not (hasattr(instance, "arms") and hasattr(instance, "means")):
        raise InvalidInput(
            f"{owner}: the 'instance' argument must be an Instance with 'arms' (K, d) and 'means' (K,). "
            f"Got {type(instance).__name__} instead. Fix: pass env.reset(key)."
        )
    if isinstance(instance.arms, jax.core.Tracer) or isinstance(instance.means, jax.core.Tracer):
        return
    arms = np.asarray(instance.arms)
    means = np.asarray(instance.means)
    if arms.ndim < 2:
        raise InvalidInput(
            f"{owner}: the instance's 'arms' must have shape (K, d). Got shape {arms.shape}. "
            "Fix: pass one feature vector per row."
        )
    if not np.all(np.isfinite(arms)):
        raise InvalidInput(
            f"{owner}: the instance's 'arms' must be finite. Got NaN or inf features. "
            "Fix: drop or impute the rows with missing features first."
        )
    if not np.all(np.isfinite(means)):
        raise InvalidInput(
            f"{owner}: the instance's 'means' must be finite. Got NaN or inf. Fix: check the environment's reset."
        )
    batch = arms.reshape(-1, *arms.shape[-2:])
    for r, x in enumerate(batch):
        _, first, counts = np.unique(x, axis=0, return_index=True, return_counts=True)
        if np.any(counts > 1):
            dup = int(first[np.argmax(counts > 1)])
            where = f" in replication {r}" if batch.shape[0] > 1 else ""
            raise InvalidInput(
                f"{owner}: the arms must be distinct feature vectors. Arm {dup}{where} appears "
                f"{int(counts.max())} times; identical arms have identical means, so no best arm is "
                "identifiable among them. Fix: merge duplicates (e.g. average their rewards) first."
            )
