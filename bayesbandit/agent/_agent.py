"""``Agent``: one stateful agent over any policy, with validation, keys, failure handling and checkpoints.

``Agent`` is the convenience level over the pure policy API (the policy stays the expert level).
It serves every kind of policy the contract has (``docs/contract.md``): JAX and host policies,
over a fixed arm set, each round's contextual arms, k-subsets of them, or a catalogue of item ids
that changes while it runs (``add_arms`` / ``remove_arms``). Every input is validated before any
state changes; a bad input raises an exception from :mod:`bayesbandit.errors` and leaves the agent
as it was.

The calls it makes live in :mod:`._calls` (compiled once per policy and shape), the checkpoint
schema in :mod:`._persist`. A reloaded agent continues bit-for-bit.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._process import OwningProcess
from bayesbandit._typing import ArrayLike
from bayesbandit.agent._calls import CompileAhead, calls_for
from bayesbandit.agent._persist import (
    KIND,
    check_policy,
    key_data,
    policy_description,
    program_of,
    state_arrays,
    state_from_arrays,
)
from bayesbandit.checkpoint import array_fingerprint, read_checkpoint, write_checkpoint
from bayesbandit.contract import Buffered, Catalogued, Combinatorial, Explains, ModelBased, policy_kind
from bayesbandit.errors import CheckpointError, InvalidInput, NotConverged
from bayesbandit.validation import check_action, check_arms, check_feedback, check_int, check_item_ids

__all__ = ["Agent"]


class Agent:
    """Interactive bandit agent over any policy.

    Parameters
    ----------
    policy : Policy
        A policy, e.g. ``bb.GLMTSL(logistic(), a=1.0)`` or ``bb.SubTS()``.
    arms : array, shape (K, d), or Catalogue, optional
        A fixed arm set; then ``select()`` takes no argument. For a catalogue policy
        (:class:`~bayesbandit.contract.Catalogued`: ``SubTS``, ``SubElim``), the initial catalogue, a
        :class:`~bayesbandit.Catalogue` of ids and features or a ``(K, d)`` array (ids ``0 .. K-1``);
        ``select()`` returns an item id, and ``add_arms`` / ``remove_arms`` change the catalogue.
    d : int, optional
        Feature dimension for contextual use; then ``select(arms)`` takes each round's arms
        (for a catalogue policy: the dimension of an initially empty catalogue).
    seed : int
        Seed of the agent's PRNG key (same seed, same choices).
    capacity : int, optional
        Initial row-buffer capacity when the policy keeps one (it doubles when full).
    compile_ahead : bool
        Compile ``select`` and ``update`` with XLA in background threads before they are called:
        for a fixed arm set both when the agent is created, side by side (the first ``select``
        waits for its own compilation only), and when a row buffer is half full, both for the
        doubled buffer, so the round in which the buffer grows does not stall on compilation (the
        doubled shape is new to XLA). Tracing stays in the calling thread (NumPyro's handlers are
        not thread-safe). Default true.

    Examples
    --------
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (10, 3))
    >>> agent = bb.Agent(bb.GLMTSL(logistic()), arms=arms, seed=0)
    >>> arm = agent.select()
    >>> agent.update(arm, 1.0)
    >>> agent.num_updates
    1

    A catalogue of item ids that changes while the agent runs:

    >>> features = np.random.default_rng(0).normal(size=(50, 4))
    >>> agent = bb.Agent(bb.SubTS(index="exact"), bb.Catalogue(np.arange(100, 150), features), seed=0)
    >>> item = agent.select()
    >>> agent.update(item, 1.0)
    >>> agent.add_arms(np.array([7]), np.ones((1, 4)))
    >>> agent.remove_arms(np.array([100]))
    >>> 100 <= item < 150, agent.num_updates
    (True, 1)
    """

    def __init__(
        self,
        policy: Any,
        arms: Any = None,
        *,
        d: int | None = None,
        seed: int = 0,
        capacity: int | None = None,
        compile_ahead: bool = True,
    ) -> None:
        kind = policy_kind(policy)
        self._process = OwningProcess("Agent")
        if arms is None and d is None:
            raise InvalidInput(
                "Agent needs a fixed arm set or a feature dimension. Fix: Agent(policy, arms=...) with arms of "
                "shape (K, d), or Agent(policy, d=...) and pass each round's arms to select(arms)."
            )
        seed = check_int("Agent", "seed", seed, low=0, high=2**32 - 1)
        if capacity is not None:
            capacity = check_int("Agent", "capacity", capacity, low=1)
        self.policy = policy
        self._catalogue = isinstance(policy, Catalogued)
        key, init_key = jax.random.split(jax.random.PRNGKey(seed))
        if self._catalogue:  # the arm set lives in the policy state (which validates it)
            self._arms = None
            self.state = policy.init(arms, d=d, capacity=capacity, key=init_key)
            features = getattr(arms, "features", arms)
            self.d = int(np.shape(features)[-1]) if features is not None else check_int("Agent", "d", d, low=1)
        else:
            self._arms = None if arms is None else check_arms(arms, unchanged=None)
            self.d = int(self._arms.shape[1]) if self._arms is not None else check_int("Agent", "d", d, low=1)
            if self._arms is not None and d is not None and d != self.d:
                raise InvalidInput(f"The 'd' parameter of Agent is {d} but the arm set has d = {self.d}. Fix: omit d.")
        if isinstance(policy, ModelBased):
            policy.check_program(self.d)
        self._support = policy.reward_support(self.d)
        if not self._catalogue:
            self.state = policy.init(self._arms, d=self.d, capacity=capacity, key=init_key)
        self._key = key
        self._kind = kind
        self._calls = calls_for(policy, kind)
        self._select, self._update = self._calls.select, self._calls.update
        self._combinatorial = isinstance(policy, Combinatorial)
        self._buffered = isinstance(policy, Buffered)
        self._explains = isinstance(policy, Explains)
        self._ahead = CompileAhead(policy, self._calls) if compile_ahead and kind == "jax" else None
        # The arms as the compiled calls take them: a fixed set on the device once; a contextual
        # round's NumPy array as given (the call copies it in, sooner than jax.device_put would).
        self._arms_call: Any = None if self._arms is None else jnp.asarray(self._arms)
        if self._ahead is not None and self._arms_call is not None:
            self._ahead.prepare(self.state, self._key, self._arms_call)
        self._last_arms: np.ndarray | None = None
        self._last_arms_call: Any = None
        self._action_shape: tuple[int, ...] | None = None
        self.num_updates = 0
        self.last_select_info: Any = None
        self.last_update_info: Any = None
        self._warned: set[str] = set()

    def __reduce__(self) -> Any:
        self._process.refuse_pickle()

    # ------------------------------------------------------------------------------ acting
    def select(self, arms: ArrayLike | None = None, *, n: int | None = None) -> Any:
        """Choose an action: an index into the fixed arm set, or into ``arms`` (K, d) if given; an item id for a catalogue.

        Parameters
        ----------
        arms : array, shape (K, d), optional
            This round's arms (contextual agents only).
        n : int, optional
            Make ``n`` decisions at once, for batched or delayed feedback: each is a selection
            from the current state with its own random key, so Thompson sampling draws ``n``
            independent posterior samples (GLM-FPL ``n`` independent perturbations, epsilon-greedy
            ``n`` independent coin flips) and the ``n`` arms differ where the posterior is
            uncertain; a deterministic policy (UCB) returns its best arm ``n`` times, up to
            random tie-breaks. Report the rewards with :meth:`update_many`.

        Returns
        -------
        An ``int`` (or an int array of indices for a k-subset policy); with ``n``, an int array
        of shape ``(n,)`` (``(n, k)``).
        """
        self._process.check("select")
        if n is not None:
            n = check_int("Agent.select", "n", n, low=1)
        arms_np, arms_call = self._round_arms(arms)
        if n is None:
            select = self._ahead.executable(0, self.state, arms_call) if self._ahead else self._select
            key, action, info = select(self.state, arms_call, self._key)
        else:
            key, action, info = self._calls.select_many(n, self.state, arms_call, self._key)
        self._key = key
        self._last_arms, self._last_arms_call = arms_np, arms_call
        self.last_select_info = info
        action = np.asarray(action)
        self._action_shape = action.shape if n is None else action.shape[1:]
        return int(action) if action.ndim == 0 else action

    def _round_arms(self, arms: ArrayLike | None) -> tuple[np.ndarray | None, Any]:
        """The arms a selection indexes, validated: ``(NumPy array, what the compiled calls take)``."""
        if self._catalogue:
            if arms is not None:
                raise InvalidInput(
                    "this agent's arms are a catalogue of item ids held by the policy: select() takes no arms. "
                    "Fix: call select() and change the catalogue with add_arms / remove_arms; the agent state was "
                    "not changed."
                )
            return None, None
        if arms is not None and self._arms is not None:
            given = check_arms(arms, dim=self.d)
            if not np.array_equal(given, self._arms):
                raise InvalidInput(
                    "this agent has a fixed arm set, and update(action) credits an arm of that set: select(arms) "
                    "with other arms would record rewards against the wrong arm. Fix: call select() with no "
                    "argument, or make a contextual agent, Agent(policy, d=d), and pass each round's arms; "
                    "the agent state was not changed."
                )
            arms = None
        if arms is None:
            if self._arms is None:
                raise InvalidInput(
                    "this agent has no fixed arm set. Fix: pass this round's arms, select(arms) with shape (K, d)."
                )
            arms_np, arms_call = self._arms, self._arms_call
        else:
            arms_np = check_arms(arms, dim=self.d)
            arms_call = arms_np
        if self._combinatorial:
            self.policy.check_arms(arms_np.shape[0])
        return arms_np, arms_call

    def _action_layout(self, num_arms: int) -> tuple[int, tuple[int, ...]]:
        """``(index range, action shape)``: a k-subset policy's actions index ``blocks`` copies of the arms."""
        if self._combinatorial:
            return self.policy.blocks * num_arms, self.policy.action_shape
        return num_arms, self._action_shape or ()

    def _held(self, ids: np.ndarray) -> np.ndarray:
        return self.policy.held(self.state, ids)

    def update(self, action: Any, reward: Any) -> None:
        """Record ``reward`` for ``action`` (indices into the fixed set, or into the last ``select`` arms; an item id).

        Raises
        ------
        InvalidInput
            A malformed action or reward (wrong shape, out of range, non-finite, outside the
            reward model's support); the agent is unchanged.
        UnknownArm
            An item id that is not in the catalogue; the agent is unchanged.
        NotConverged
            The update produced non-finite state; the agent is unchanged.
        """
        self._process.check("update")
        if self._catalogue:
            index = check_item_ids(action, self._held)
            arms_call = None
        else:
            arms = self._arms if self._arms is not None else self._last_arms
            if arms is None:
                raise InvalidInput(
                    "update(action, reward) on a contextual agent needs a previous select(arms): the action indexes "
                    "those arms. Fix: call select(arms) first; the agent state was not changed."
                )
            num_arms, shape = self._action_layout(arms.shape[0])
            index = check_action(action, num_arms, shape)
            arms_call = self._arms_call if self._arms is not None else self._last_arms_call
        value = check_feedback(reward, self._support.constraint, self._support.description, index.shape)
        state = self.policy.reserve(self.state, 1) if self._buffered else self.state
        action_host = index if self._catalogue else index.astype(np.int32)
        update = self._ahead.executable(1, state, arms_call) if self._ahead else self._update
        new_state, info = update(state, arms_call, action_host, value)
        self._commit(new_state, info, 1, lambda: (info, f"for reward {reward!r} of action {action!r}"))
        if self._ahead is not None:
            self._ahead.schedule(self.state, self._key, (arms_call, action_host, value))

    def update_many(self, actions: Any, rewards: Any, *, arms: ArrayLike | None = None) -> None:
        """Record several rewards in one compiled call (batched or delayed feedback), in order.

        The same as ``update(actions[i], rewards[i])`` for each ``i`` in turn, run as one
        ``lax.scan``. Every row is validated before anything is recorded: a bad row raises and
        the agent is unchanged.

        Parameters
        ----------
        actions : int array, shape (m,) or (m, k)
            What :meth:`select` returned (for example ``select(n=m)``).
        rewards : array, shape (m,) or (m, k)
        arms : array, shape (K, d) or (m, K, d), optional
            Contextual agents only: the arms the actions index, one set for all rows or one per
            row. Default: the arms of the last ``select``.

        Raises
        ------
        InvalidInput
            A malformed row (wrong shape, out of range, non-finite, outside the reward model's
            support) or arms; the agent is unchanged.
        UnknownArm
            An item id that is not in the catalogue; the agent is unchanged.
        NotConverged
            The updates produced non-finite state; the agent is unchanged.
        """
        self._process.check("update_many")
        count = int(np.shape(actions)[0]) if np.ndim(actions) >= 1 else 0
        if count == 0:
            raise InvalidInput(
                f"update_many needs a non-empty array of actions, one row per reward; got {actions!r}; "
                "the agent state was not changed."
            )
        if self._catalogue:
            if arms is not None:
                raise InvalidInput(
                    "this agent's arms are a catalogue held by the policy: omit arms=; the agent state was not changed."
                )
            index, arms_per_row, arms_call = check_item_ids(actions, self._held, count=count), False, None
        else:
            arms_np = self._batch_arms(arms, count)
            arms_per_row = arms_np.ndim == 3
            num_arms, shape = self._action_layout(arms_np.shape[-2])
            index = check_action(actions, num_arms, shape, count=count).astype(np.int32)
            if self._arms is not None:
                arms_call = self._arms_call
            elif arms is None:  # the last select's arms
                arms_call = self._last_arms_call
            else:
                arms_call = arms_np
        value = check_feedback(rewards, self._support.constraint, self._support.description, index.shape)
        state = self.policy.reserve(self.state, count) if self._buffered else self.state
        new_state, info = self._calls.update_many(arms_per_row, state, arms_call, index, value)

        def first_failure() -> tuple[Any, str]:
            row = int(np.argmin(np.asarray(info.converged).reshape(count, -1).all(axis=1)))
            return jax.tree.map(lambda leaf: leaf[row], info), f"in row {row} (reward {value[row]!r})"

        self._commit(new_state, info, count, first_failure)

    def _batch_arms(self, arms: ArrayLike | None, count: int) -> np.ndarray:
        """The arms ``update_many``'s actions index: the fixed set, the given ones, or the last select's."""
        if self._arms is not None:
            if arms is not None and not np.array_equal(np.asarray(arms), self._arms):
                raise InvalidInput(
                    "this agent has a fixed arm set; update_many(actions, rewards) indexes it. Fix: omit arms=; "
                    "the agent state was not changed."
                )
            return self._arms
        if arms is None:
            if self._last_arms is None:
                raise InvalidInput(
                    "update_many on a contextual agent needs the arms its actions index: pass arms= (shape (K, d) "
                    "or (m, K, d)) or call select(arms) first; the agent state was not changed."
                )
            return self._last_arms
        given = np.asarray(arms)
        if given.ndim == 3:
            if given.shape[0] != count:
                raise InvalidInput(
                    f"arms passed to update_many has {given.shape[0]} arm sets for {count} actions; expected shape "
                    f"({count}, K, {self.d}); the agent state was not changed."
                )
            return check_arms(given.reshape(-1, given.shape[-1]), dim=self.d).reshape(given.shape)
        return check_arms(given, dim=self.d)

    def _commit(self, new_state: Any, info: Any, count: int, failure: Any) -> None:
        """Keep the updated state, or raise if it is not finite; warn (once per kind) if a fit did not converge.

        ``failure()`` returns the info of the update to explain and words saying which one it was.
        """
        if not bool(np.all(np.asarray(info.converged))):
            failed, where = failure()
            if self._kind == "jax":
                floats = [np.asarray(x) for x in jax.tree.leaves(new_state) if jnp.issubdtype(x.dtype, jnp.inexact)]
                if not all(np.isfinite(x).all() for x in floats):
                    raise NotConverged(
                        f"the update {where} made the policy state non-finite; the agent state was not changed."
                    )
            if self._explains:
                message = self.policy.explain_update(failed, self.d)
            else:
                message = f"{type(self.policy).__name__}.update did not converge: {failed}."
            kind = re.sub(r"\[[^\]]*\]|\(.*?\)|[-+]?\d[\d.e+-]*", "#", message)  # the message without its numbers
            if kind not in self._warned:  # once per kind of problem, not every round
                self._warned.add(kind)
                warnings.warn(message, RuntimeWarning, stacklevel=3)
        self.state = new_state
        self.last_update_info = info
        self.num_updates += count

    # ------------------------------------------------------------------------------ the catalogue
    def add_arms(self, ids: Any, features: Any) -> None:
        """Items arriving in the catalogue (a :class:`~bayesbandit.contract.Catalogued` policy): validated first.

        Raises
        ------
        InvalidInput
            The policy's arm set cannot change, or the ids are not new, or the features are not
            finite rows of the catalogue's dimension; the agent is unchanged.
        """
        self._process.check("add_arms")
        self.state = self._catalogue_policy("add_arms").add_arms(self.state, ids, features)

    def remove_arms(self, ids: Any) -> None:
        """Items leaving the catalogue (a :class:`~bayesbandit.contract.Catalogued` policy): validated first.

        Raises
        ------
        InvalidInput, UnknownArm
            The policy's arm set cannot change, or an id is not held; the agent is unchanged.
        """
        self._process.check("remove_arms")
        self.state = self._catalogue_policy("remove_arms").remove_arms(self.state, ids)

    def _catalogue_policy(self, method: str) -> Any:
        if not self._catalogue:
            raise InvalidInput(
                f"Agent.{method}: {type(self.policy).__name__} acts on a fixed or per-round arm set, not a catalogue "
                "of item ids. Fix: use a catalogue policy (SubTS, SubElim), or pass each round's arms to select(arms); "
                "the agent state was not changed."
            )
        return self.policy

    # ------------------------------------------------------------------------------ saving
    def save(self, path: str | os.PathLike) -> None:
        """Write a checkpoint atomically (:mod:`bayesbandit.checkpoint`; the schema: :mod:`._persist`).

        Raises
        ------
        InvalidInput
            A host policy that cannot hand its state to a checkpoint (no ``HostState`` capability).
        """
        self._process.check("save")
        layout, state = state_arrays(self.policy, self._kind, self.state)
        has_last_arms = self._last_arms is not None and self._arms is None
        header = {
            "kind": KIND,
            "policy": policy_description(self.policy),
            "program": program_of(self.policy, self.d),
            "arms": None if self._arms is None else array_fingerprint(self._arms),
            "d": self.d,
            "capacity": self.policy.capacity(self.state) if self._buffered else None,
            "num_updates": self.num_updates,
            "action_shape": None if self._action_shape is None else list(self._action_shape),
            "has_last_arms": has_last_arms,
            "state": layout,
        }
        arrays = [key_data(self._key)]
        if self._arms is not None:
            arrays.append(self._arms)
        if has_last_arms:
            arrays.append(np.asarray(self._last_arms))
        write_checkpoint(path, header, [*arrays, *state])

    @classmethod
    def load(cls, path: str | os.PathLike, policy: Any, *, arms: ArrayLike | None = None) -> Agent:
        """Read a checkpoint written by :meth:`save` for ``policy``.

        Parameters
        ----------
        path : path-like
        policy : Policy
            The policy the checkpoint was written for (same class, hyper-parameters and reward
            program); the file holds no code, so the caller supplies it.
        arms : array, shape (K, d), optional
            If given, the arm set the agent must have been saved with.

        Raises
        ------
        CheckpointError
            Unreadable, corrupted, of an unknown format version, or written for another
            policy, reward program, arm set or state layout (the message names which).
        """
        name = os.fspath(path)
        meta, arrays = read_checkpoint(path)
        check_policy(path, meta, policy)
        arrays = list(arrays)
        key = jnp.asarray(arrays.pop(0))
        saved_arms = arrays.pop(0) if meta["arms"] is not None else None
        last_arms = arrays.pop(0) if meta["has_last_arms"] else None
        if arms is not None:
            given = check_arms(arms, unchanged=None)
            if saved_arms is None or array_fingerprint(given) != meta["arms"]:
                raise CheckpointError(
                    f"{name!r} was written for another arm set than the one given. Fix: load without arms=, "
                    "or pass the arm set it was saved with."
                )
        agent = cls(policy, saved_arms, d=int(meta["d"]), capacity=meta["capacity"])
        agent.state = state_from_arrays(name, policy, agent._kind, agent.state, meta["state"], arrays)
        agent._key = key
        agent._last_arms = last_arms
        agent._last_arms_call = last_arms
        agent._action_shape = None if meta["action_shape"] is None else tuple(meta["action_shape"])
        agent.num_updates = int(meta["num_updates"])
        return agent
