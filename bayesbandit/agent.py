"""A stateful agent over a pure policy: validation, key management, checkpoints.

``Agent`` is the convenience level over the pure policy API (the policy stays the expert
level). Every input is validated before any state changes; a bad input raises
:class:`bayesbandit.errors.InvalidInput` and leaves the agent as it was, bit for bit.

Checkpoints (:mod:`bayesbandit.checkpoint`) hold the state arrays and the PRNG key behind a JSON
header: the policy's class and hyper-parameters, a fingerprint of the reward program's
behaviour, a fingerprint of the arm set, and the state's layout. There is no pickle, so loading a
file never runs code from it; :meth:`Agent.load` takes the policy from the caller and refuses
(:class:`~bayesbandit.errors.CheckpointError`) a file written for another policy, program, arm
set or state layout. A reloaded agent continues bit-for-bit.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._base import Buffered, Combinatorial, Explains, ModelBased, policy_kind
from bayesbandit._process import OwningProcess
from bayesbandit._typing import ArrayLike
from bayesbandit.checkpoint import array_fingerprint, read_checkpoint, write_checkpoint
from bayesbandit.errors import CheckpointError, InvalidInput, NotConverged
from bayesbandit.inference.fingerprint import program_fingerprint
from bayesbandit.validation import check_action, check_arms, check_feedback, check_int

__all__ = ["Agent"]

_KIND = "bayesbandit-agent"


def _select_and_split(policy: Any, state: Any, arms: Any, key: Any) -> tuple[Any, Any, Any]:
    """One call: advance the agent's key and select with a fresh subkey."""
    key, sub = jax.random.split(key)
    action, info = policy.select(state, arms, sub)
    return key, action, info


def _select_many(policy: Any, n: int, state: Any, arms: Any, key: Any) -> tuple[Any, Any, Any]:
    """One call: advance the key and make ``n`` selections from the same state, each with its own subkey."""
    key, sub = jax.random.split(key)
    actions, info = jax.vmap(policy.select, in_axes=(None, None, 0))(state, arms, jax.random.split(sub, n))
    return key, actions, info


def _update_many(policy: Any, arms_per_row: bool, state: Any, arms: Any, actions: Any, feedback: Any) -> Any:
    """One call: ``update`` for each ``(action, feedback)`` row in turn (a scan), with one arm set or one per row."""

    def step(state: Any, row: Any) -> Any:
        x, action, value = row if arms_per_row else (arms, *row)
        return policy.update(state, x, action, value)

    return jax.lax.scan(step, state, (arms, actions, feedback) if arms_per_row else (actions, feedback))


class _Functions(NamedTuple):
    """What an agent calls: compiled for a JAX policy, plain Python (loops for the batches) for a host one."""

    select: Any  # (state, arms, key) -> (key, action, info)
    update: Any  # (state, arms, action, feedback) -> (state, info)
    select_many: Any  # (n, state, arms, key) -> (key, actions, info stacked)
    update_many: Any  # (arms_per_row, state, arms, actions, feedback) -> (state, info stacked)


@functools.lru_cache(maxsize=64)
def _jitted(policy: Any) -> _Functions:
    """Compiled functions, shared by every agent of an equal policy (one compile per shape)."""
    return _Functions(
        jax.jit(functools.partial(_select_and_split, policy)),
        jax.jit(policy.update),
        jax.jit(functools.partial(_select_many, policy), static_argnums=0),
        jax.jit(functools.partial(_update_many, policy), static_argnums=0),
    )


def _host_select_many(policy: Any, n: int, state: Any, arms: Any, key: Any) -> tuple[Any, Any, Any]:
    key, sub = jax.random.split(key)
    chosen = [policy.select(state, arms, k) for k in jax.random.split(sub, n)]
    return key, _stack([action for action, _ in chosen]), _stack([info for _, info in chosen])


def _host_update_many(policy: Any, arms_per_row: bool, state: Any, arms: Any, actions: Any, feedback: Any) -> Any:
    infos = []
    for i in range(len(actions)):
        state, info = policy.update(state, arms[i] if arms_per_row else arms, actions[i], feedback[i])
        infos.append(info)
    return state, _stack(infos)


def _stack(trees: list[Any]) -> Any:
    """Pytrees of the same structure stacked leaf by leaf along a new leading axis (NumPy)."""
    return jax.tree.map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *trees)


def _functions(policy: Any, kind: str) -> _Functions:
    if kind == "host":  # a host policy compiles its own parts
        return _Functions(
            functools.partial(_select_and_split, policy),
            policy.update,
            functools.partial(_host_select_many, policy),
            functools.partial(_host_update_many, policy),
        )
    try:
        return _jitted(policy)
    except TypeError:  # an unhashable policy (array hyper-parameters): compiled for this agent alone
        return _jitted.__wrapped__(policy)


def _ahead_id(capacity: int | None, arms: Any) -> tuple:
    """Which executables compiled ahead serve a call: the buffer's capacity and the arms' shape and dtype."""
    return (capacity, tuple(arms.shape), str(arms.dtype))


def _describe(value: Any) -> Any:
    """A JSON description of a hyper-parameter (stable across processes: no addresses)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, np.ndarray | jax.Array) and np.asarray(value).ndim == 0:
        return float(np.asarray(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _describe(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    return {"type": type(value).__name__}


def policy_description(policy: Any) -> dict[str, Any]:
    """The policy's class and hyper-parameters, as a checkpoint records them (the program apart)."""
    cls = type(policy)
    params = {f.name: _describe(getattr(policy, f.name)) for f in dataclasses.fields(policy) if f.name != "model"}
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "hyper_parameters": params}


def _key_data(key: Any) -> np.ndarray:
    return np.asarray(jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key)


def _layout(state: Any) -> dict[str, Any]:
    leaves, treedef = jax.tree.flatten(state)
    return {"treedef": str(treedef), "leaves": [[list(np.shape(x)), np.dtype(x.dtype).str] for x in leaves]}


class Agent:
    """Interactive bandit agent.

    Parameters
    ----------
    policy : Policy
        A policy, e.g. ``bb.GLMTSL(logistic(), a=1.0)``.
    arms : array, shape (K, d), optional
        A fixed arm set; then ``select()`` takes no argument.
    d : int, optional
        Feature dimension for contextual use; then ``select(arms)`` takes each round's arms.
    seed : int
        Seed of the agent's PRNG key (same seed, same choices).
    capacity : int, optional
        Initial row-buffer capacity when the policy keeps one (it doubles when full).
    compile_ahead : bool
        When a row buffer is half full, trace ``select`` and ``update`` for the doubled buffer
        (in the calling thread: NumPyro's handlers are not thread-safe) and compile them with XLA
        in a background thread, so the round in which the buffer grows does not stall on
        compilation (the doubled shape is new to XLA). Default true.

    Examples
    --------
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.enable_x64()
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (10, 3))
    >>> agent = bb.Agent(bb.GLMTSL(logistic()), arms=arms, seed=0)
    >>> arm = agent.select()
    >>> agent.update(arm, 1.0)
    >>> agent.num_updates
    1
    """

    def __init__(
        self,
        policy: Any,
        arms: ArrayLike | None = None,
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
        self._arms = None if arms is None else check_arms(arms, unchanged=None)
        self.d = int(self._arms.shape[1]) if self._arms is not None else check_int("Agent", "d", d, low=1)
        if self._arms is not None and d is not None and d != self.d:
            raise InvalidInput(f"The 'd' parameter of Agent is {d} but the arm set has d = {self.d}. Fix: omit d.")
        if isinstance(policy, ModelBased):
            policy.check_program(self.d)
        self._support = policy.reward_support(self.d)
        key, init_key = jax.random.split(jax.random.PRNGKey(seed))
        self._key = key
        self.state = policy.init(self._arms, d=self.d, capacity=capacity, key=init_key)
        self._functions = _functions(policy, kind)
        self._select, self._update = self._functions.select, self._functions.update
        self._combinatorial = isinstance(policy, Combinatorial)
        self._buffered = isinstance(policy, Buffered)
        self._explains = isinstance(policy, Explains)
        # The arms as the compiled calls take them: a fixed set on the device once; a contextual
        # round's NumPy array as given (the call copies it in, sooner than jax.device_put would).
        self._arms_call: Any = None if self._arms is None else jnp.asarray(self._arms)
        self._last_arms: np.ndarray | None = None
        self._last_arms_call: Any = None
        self._action_shape: tuple[int, ...] | None = None
        self.num_updates = 0
        self.last_select_info: Any = None
        self._warned: set[str] = set()
        self._kind = kind
        self._compile_ahead = bool(compile_ahead)
        self._ahead: dict[tuple, Future] = {}  # (capacity, argument specs) -> compiled (select, update)
        self._pool: ThreadPoolExecutor | None = None
        self._last_update_args: tuple | None = None  # the last update's (arms, action, feedback)
        self.last_update_info: Any = None

    def __reduce__(self) -> Any:
        self._process.refuse_pickle()

    # ------------------------------------------------------------------------------ acting
    def select(self, arms: ArrayLike | None = None, *, n: int | None = None) -> Any:
        """Choose an action: an index into the fixed arm set, or into ``arms`` (K, d) if given.

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
            select, _ = self._executables(self.state, arms_call)
            key, action, info = select(self.state, arms_call, self._key)
        else:
            key, action, info = self._functions.select_many(n, self.state, arms_call, self._key)
        self._key = key
        self._last_arms, self._last_arms_call = arms_np, arms_call
        self.last_select_info = info
        action = np.asarray(action)
        self._action_shape = action.shape if n is None else action.shape[1:]
        return int(action) if action.ndim == 0 else action

    def _round_arms(self, arms: ArrayLike | None) -> tuple[np.ndarray, Any]:
        """The arms a selection indexes, validated: ``(NumPy array, what the compiled calls take)``."""
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

    def update(self, action: Any, reward: Any) -> None:
        """Record ``reward`` for ``action`` (indices into the fixed set, or into the last ``select`` arms).

        Raises
        ------
        InvalidInput
            A malformed action or reward (wrong shape, out of range, non-finite, outside the
            reward model's support); the agent is unchanged.
        NotConverged
            The update produced non-finite state; the agent is unchanged.
        """
        self._process.check("update")
        arms = self._arms if self._arms is not None else self._last_arms
        if arms is None:
            raise InvalidInput(
                "update(action, reward) on a contextual agent needs a previous select(arms): the action indexes "
                "those arms. Fix: call select(arms) first; the agent state was not changed."
            )
        num_arms, shape = self._action_layout(arms.shape[0])
        index = check_action(action, num_arms, shape)
        value = check_feedback(reward, self._support.constraint, self._support.description, index.shape)
        state = self.policy.reserve(self.state, 1) if self._buffered else self.state
        if self._arms is not None:
            arms_call = self._arms_call
        else:
            arms_call = self._last_arms_call
        action_host = index.astype(np.int32)
        _, update = self._executables(state, arms_call)
        new_state, info = update(state, arms_call, action_host, value)
        self._commit(new_state, info, 1, lambda: (info, f"for reward {reward!r} of action {action!r}"))
        self._last_update_args = (arms_call, action_host, value)
        self._schedule_ahead()

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
        arms_np = self._batch_arms(arms, count)
        arms_per_row = arms_np.ndim == 3
        num_arms, shape = self._action_layout(arms_np.shape[-2])
        index = check_action(actions, num_arms, shape, count=count)
        value = check_feedback(rewards, self._support.constraint, self._support.description, index.shape)
        state = self.policy.reserve(self.state, count) if self._buffered else self.state
        if self._arms is not None:
            arms_call = self._arms_call
        elif arms is None:  # the last select's arms
            arms_call = self._last_arms_call
        else:
            arms_call = arms_np
        new_state, info = self._functions.update_many(arms_per_row, state, arms_call, index.astype(np.int32), value)

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
            floats = [np.asarray(x) for x in jax.tree.leaves(new_state) if jnp.issubdtype(x.dtype, jnp.inexact)]
            failed, where = failure()
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

    # ------------------------------------------------------------------------------ compiling ahead
    def _executables(self, state: Any, arms: Any) -> tuple[Any, Any]:
        """The (select, update) to call: executables compiled ahead for this buffer size, else the jitted ones."""
        if not self._ahead:
            return self._select, self._update
        future = self._ahead.get(_ahead_id(self.policy.capacity(state), arms))
        return future.result() if future is not None else (self._select, self._update)

    def _schedule_ahead(self) -> None:
        """Half-full buffer: compile for the doubled one in the background (see ``compile_ahead``)."""
        if not self._compile_ahead or self._last_update_args is None or not self._buffered:
            return
        capacity = self.policy.capacity(self.state)
        if capacity is None or self._kind != "jax" or 2 * self.policy.filled(self.state) < capacity:
            return
        arms, action, feedback = jax.tree.map(
            lambda a: jax.ShapeDtypeStruct(np.shape(a), jax.dtypes.canonicalize_dtype(a.dtype)), self._last_update_args
        )
        key = _ahead_id(2 * capacity, arms)
        if key in self._ahead:
            return
        # Tracing runs NumPyro handlers, whose stack is global, not per thread: trace and lower here,
        # and hand only XLA's compilation to the background thread. The doubled state is padded on the
        # host (no compile); its shapes are those the buffer will have after it grows.
        grown = self.policy.reserve(self.state, capacity - self.policy.filled(self.state) + 1)
        key_spec = jax.ShapeDtypeStruct(self._key.shape, self._key.dtype)
        lowered = (self._select.lower(grown, arms, key_spec), self._update.lower(grown, arms, action, feedback))
        self._pool = self._pool or ThreadPoolExecutor(max_workers=1, thread_name_prefix="bayesbandit-compile")
        self._ahead[key] = self._pool.submit(lambda: (lowered[0].compile(), lowered[1].compile()))

    # ------------------------------------------------------------------------------ saving
    def _header(self) -> dict[str, Any]:
        program = program_fingerprint(self.policy.bound(self.d)) if isinstance(self.policy, ModelBased) else None
        capacity = self.policy.capacity(self.state) if isinstance(self.policy, Buffered) else None
        return {
            "kind": _KIND,
            "policy": policy_description(self.policy),
            "program": program,
            "arms": None if self._arms is None else array_fingerprint(self._arms),
            "d": self.d,
            "capacity": capacity,
            "num_updates": self.num_updates,
            "action_shape": None if self._action_shape is None else list(self._action_shape),
            "has_last_arms": self._last_arms is not None and self._arms is None,
            "state": _layout(self.state),
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write a checkpoint atomically (see :mod:`bayesbandit.checkpoint`)."""
        self._process.check("save")
        header = self._header()
        arrays = [_key_data(self._key)]
        if self._arms is not None:
            arrays.append(self._arms)
        if header["has_last_arms"]:
            arrays.append(np.asarray(self._last_arms))
        arrays.extend(np.asarray(x) for x in jax.tree.leaves(self.state))
        write_checkpoint(path, header, arrays)

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
        if meta.get("kind") != _KIND:
            raise CheckpointError(f"{name!r} is a bayesbandit checkpoint but not of an Agent.")
        expected = policy_description(policy)
        if meta["policy"]["class"] != expected["class"]:
            raise CheckpointError(
                f"{name!r} was written for policy {meta['policy']['class']}, not {expected['class']}. "
                "Fix: pass the policy it was saved with."
            )
        saved_params, params = meta["policy"]["hyper_parameters"], expected["hyper_parameters"]
        if saved_params != params:
            diff = sorted(k for k in set(saved_params) | set(params) if saved_params.get(k) != params.get(k))
            raise CheckpointError(
                f"{name!r} was written for {expected['class']} with other hyper-parameters: "
                + ", ".join(f"{k}={saved_params.get(k)!r} (given {params.get(k)!r})" for k in diff)
                + ". Fix: pass the policy it was saved with."
            )
        d = int(meta["d"])
        program = program_fingerprint(policy.bound(d)) if isinstance(policy, ModelBased) else None
        if meta["program"] != program:
            raise CheckpointError(
                f"{name!r} was written for another reward program (its fingerprint differs from this policy's "
                "model). Fix: pass the policy with the program it was saved with."
            )
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
        agent = cls(policy, saved_arms, d=d, capacity=meta["capacity"])
        template = agent.state
        layout = _layout(template)
        if layout["treedef"] != meta["state"]["treedef"] or layout["leaves"] != [
            [list(np.shape(a)), a.dtype.str] for a in arrays
        ]:
            raise CheckpointError(
                f"{name!r} holds a state of another layout than {expected['class']} builds here "
                f"({meta['state']['treedef']}). Fix: pass the policy it was saved with."
            )
        treedef = jax.tree.structure(template)
        agent.state = jax.tree.unflatten(treedef, [jnp.asarray(a) for a in arrays])
        agent._key = key
        agent._last_arms = last_arms
        agent._last_arms_call = last_arms
        agent._action_shape = None if meta["action_shape"] is None else tuple(meta["action_shape"])
        agent.num_updates = int(meta["num_updates"])
        return agent
