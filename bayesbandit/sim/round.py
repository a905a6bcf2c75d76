"""The one round of a bandit run, and the common random numbers behind it.

:func:`play_round` is the only place where a policy meets an environment: the ``lax.scan``
runner, the host runner (:mod:`bayesbandit.sim.runner`), the sweep (:func:`bayesbandit.sim.sweep`),
the catalogue runner (:func:`bayesbandit.sim.simulate_catalogue`) and the diagnostics along a run
(:func:`bayesbandit.diagnostics.along_run`) all call it.

Common random numbers
---------------------
From a seed, three independent key streams are split (:func:`key_streams`), and run ``r``'s
key of each is ``fold_in(k, r)`` for its *global* index ``r``:

* instances: run ``r`` is ``env.reset(fold_in(k_env, r))``;
* feedback: round ``t`` of run ``r`` pulls with ``fold_in(fold_in(k_pull, r), t)``, which
  depends on (run, round) only, never on the policy (environments draw so that the same arm
  gets the same reward realisation whichever policy pulls it);
* policies: ``select`` in round ``t`` of run ``r`` gets ``fold_in(fold_in(k_policy, r), t)``
  and ``init`` gets ``fold_in(fold_in(k_policy, r), INIT_ROUND)`` (the same streams for
  every policy, so two identical policies give identical results).

A run's keys depend on its index only, never on how many runs there are or which of them are
played together, so the runs of an experiment may be cut into blocks played anywhere (other
processes, other machines: :mod:`bayesbandit.scale`) with the numbers of the whole run, bit for
bit. Under JAX's default partitionable Threefry ``fold_in(k, r)`` is also ``split(k, n)[r]``
for any ``n > r``.

A stream may also be a NumPy generator (:func:`round_key`), which host runners consume round by
round in order: the catalogue runner gives each run's policy ``default_rng([seed, run, 1])``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome

__all__ = ["RunKeys", "Round", "key_streams", "init_run", "round_key", "play_round", "INIT_ROUND"]

INIT_ROUND = 2**31 - 1
"""The policy stream's fold-in index for ``init`` (no round uses it)."""


class RunKeys(NamedTuple):
    """The key streams of a batch of runs (leading axis: run)."""

    env: Array  # (runs, key) instance keys
    pull: Array  # (runs, key) feedback streams
    policy: Array  # (runs, key) policy streams


class Round(NamedTuple):
    """Everything that happened in one round (what a ``record`` hook sees)."""

    t: Array  # () int32, round index (0-based): a NumPy scalar when the round is played on the host
    arms: Any  # the round's arm set, (K, d); None on a catalogue (the policy holds the arms)
    action: Array  # () arm index, or (k,) indices of a k-subset
    feedback: Array  # the reward(s) observed, with the action's shape
    outcome: Outcome  # expected reward of the action and of the best action
    select_info: Any  # the policy's select Info
    update_info: Any  # the policy's update Info

    @property
    def converged(self) -> Array:
        """Whether both the selection and the update finished without numerical failure."""
        return jnp.asarray(self.select_info.converged) & jnp.asarray(self.update_info.converged)


def key_streams(seed: int, runs: int, *, first_run: int = 0) -> RunKeys:
    """The keys of runs ``first_run, ..., first_run + runs - 1`` of the three streams of ``seed`` (module docstring)."""
    k_env, k_pull, k_policy = jax.random.split(jax.random.PRNGKey(seed), 3)
    index = jnp.arange(first_run, first_run + runs, dtype=jnp.uint32)
    return RunKeys(*(jax.vmap(jax.random.fold_in, in_axes=(None, 0))(k, index) for k in (k_env, k_pull, k_policy)))


def init_run(env_key: PRNGKey, policy_key: PRNGKey, policy: Any, env: Any, capacity: int) -> tuple[Any, Any]:
    """``(env_state, policy_state)`` of one run: a fresh instance and the policy's initial state.

    A fixed arm set is given to ``init`` (per-arm statistics); otherwise the feature dimension,
    with a row buffer of ``capacity`` rows.
    """
    env_state = env.reset(env_key)
    key = jax.random.fold_in(policy_key, INIT_ROUND)
    if env.fixed_arms:
        return env_state, policy.init(env.arms(env_state, 0), capacity=capacity, key=key)
    return env_state, policy.init(d=env.d, capacity=capacity, key=key)


def round_key(key: Any, t: ArrayLike) -> Any:
    """Round ``t``'s key of a stream: ``fold_in(key, t)``; a NumPy generator or ``None`` as it is.

    A generator is a sequential stream: round ``t`` draws what follows the draws of rounds
    ``0..t-1``, so only a runner that plays a run's rounds in order may pass one. ``None`` is no
    stream, for an environment that draws no noise per round (a catalogue's noise comes with its
    problem, from ``reset``).
    """
    if key is None or isinstance(key, np.random.Generator):
        return key
    return jax.random.fold_in(key, t)


def _apply_changes(policy: Any, policy_state: Any, change: Any) -> Any:
    """The policy's state after a catalogue change: departures first, then arrivals."""
    if change is None:
        return policy_state
    if change.remove_ids.size:
        policy_state = policy.remove_arms(policy_state, change.remove_ids)
    if change.add_ids.size:
        policy_state = policy.add_arms(policy_state, change.add_ids, change.add_features)
    return policy_state


def play_round(
    pull_key: Any, policy_key: Any, policy: Any, env: Any, env_state: Any, policy_state: Any, t: ArrayLike
) -> tuple[Any, Round]:
    """Round ``t`` of one run: the policy selects, the environment answers, the policy updates.

    On a catalogue environment (:class:`bayesbandit.contract.CatalogueEnv`, the one with ``changes``) the
    round first hands the catalogue's change to ``policy.remove_arms`` / ``add_arms``, and
    ``select`` and ``update`` get ``arms=None``: the policy holds the catalogue.

    Parameters
    ----------
    policy, env
        A policy and an environment on the contract of :mod:`bayesbandit.contract`.
    env_state, policy_state
        The run's instance and the policy's state before the round.
    pull_key, policy_key : PRNGKey or numpy.random.Generator
        The run's feedback and policy streams (:func:`round_key` gives round ``t``'s key).
    t : int
        The round.

    Returns
    -------
    policy_state
        After the update.
    Round
        What happened.
    """
    if callable(getattr(env, "changes", None)):
        policy_state = _apply_changes(policy, policy_state, env.changes(env_state, t))
        arms = None
    else:
        arms = env.arms(env_state, t)
    action, select_info = policy.select(policy_state, arms, round_key(policy_key, t))
    feedback, outcome = env.pull(env_state, action, round_key(pull_key, t), t)
    policy_state, update_info = policy.update(policy_state, arms, action, feedback)
    return policy_state, Round(_round_index(t), arms, action, feedback, outcome, select_info, update_info)


def _round_index(t: ArrayLike) -> Any:
    """``t`` as an int32 scalar: NumPy's for a host integer (no JAX dispatch per host round), JAX's otherwise."""
    if isinstance(t, int | np.integer):
        return np.int32(t)
    return jnp.asarray(t, jnp.int32)
