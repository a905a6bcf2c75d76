"""The calls an :class:`~bayesbandit.Agent` makes: compiled once per policy and shape, or plain Python.

For a JAX policy, ``select`` / ``update`` and their batched forms are ``jax.jit``-compiled and
shared by every agent of an equal policy (one compilation per argument shape). For a host policy
they are the policy's own functions, with Python loops for the batches.

:class:`CompileAhead` compiles ``select`` and ``update`` before they are called, side by side in
background threads: a fixed-arm agent's first two calls when it is created (the first decision
waits for one compilation, not two in turn), and, when a row buffer is half full, the calls for
the doubled buffer, so the round in which it grows does not stall on XLA. It traces in the calling
thread (NumPyro's handler stack is global, not per thread).
"""

from __future__ import annotations

import functools
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import per_policy
from bayesbandit.contract import Buffered, Discounts
from bayesbandit.precision import default_float

__all__ = ["Calls", "calls_for", "CompileAhead", "draw_data", "draw_key"]


def draw_data(draw: int) -> np.ndarray:
    """The agent's draw counter as the two uint32 words :func:`draw_key` folds in."""
    return np.array([draw >> 32, draw & 0xFFFFFFFF], np.uint32)


def draw_key(key: Any, draw: Any) -> Any:
    """The key of the agent's ``draw``-th selection: its seed key with the counter's words folded in.

    A counter, not a chain of splits: a selection's key is known before the one before it ends, so
    threads select side by side, and the same seed and count give the same key however the calls
    interleave.
    """
    return jax.random.fold_in(jax.random.fold_in(key, draw[0]), draw[1])


def _select(policy: Any, state: Any, arms: Any, key: Any, draw: Any) -> tuple[Any, Any]:
    """One call: select with the key of draw ``draw``."""
    return policy.select(state, arms, draw_key(key, draw))


def signature(policy: Any, state: Any, arms: Any, buffered: bool | None = None) -> tuple:
    """What a compiled call's argument shapes are, for the caches keyed on them: the row buffer's capacity
    (None without one) and the arms' shape and dtype (None for a catalogue). The same inside a trace.
    ``buffered``: whether ``policy`` is :class:`~bayesbandit.contract.Buffered`, when the caller knows
    (a protocol ``isinstance`` costs tens of microseconds)."""
    buffered = isinstance(policy, Buffered) if buffered is None else buffered
    return _ahead_id(policy.capacity(state) if buffered else None, arms)


class InfoSpecs(dict):
    """``signature -> (treedef, leaf shapes, leaf dtypes)`` of a compiled update's Info, filled when it is traced."""


def _pack(specs: InfoSpecs, key: tuple, info: Any, converged: Any) -> Any:
    """``converged``, then ``info``'s leaves, as one flat float vector: one output buffer, not one per leaf.

    Each output of a compiled call costs the caller a buffer and an array object (about 2.5 us on
    XLA:CPU); an update's Info has about ten leaves: packed, the online GLM-TSL update takes 46
    instead of 64 us (K = 100, d = 10, low-latency settings). A ``select``'s Info is left as it
    is: packing its per-arm scores made that call slower (58 against 39 us). The structure is
    recorded in ``specs`` (at trace time) for :class:`PackedInfo`. Booleans and integers are exact
    in the float type (float64, or float32 without x64: integers below ``2^24``).
    """
    leaves, treedef = jax.tree.flatten(info)
    leaves = [jnp.asarray(x) for x in leaves]
    specs[key] = (treedef, [x.shape for x in leaves], [np.dtype(x.dtype) for x in leaves])
    dtype = default_float()
    return jnp.concatenate([jnp.reshape(converged, (1,)).astype(dtype), *(jnp.ravel(x).astype(dtype) for x in leaves)])


def _update_packed(policy: Any, specs: InfoSpecs, state: Any, arms: Any, action: Any, feedback: Any) -> Any:
    """``policy.update`` with the Info packed, whether every part converged first (:func:`_pack`)."""
    state_out, info = policy.update(state, arms, action, feedback)
    converged = jnp.all(jnp.asarray(info.converged))
    return state_out, _pack(specs, signature(policy, state, arms), info, converged)


class PackedInfo:
    """A compiled ``update``'s Info as the flat vector :func:`_pack` made, unpacked on first use.

    ``all_converged`` reads the first element alone; :meth:`unpack` gives the Info's own structure
    with NumPy leaves.
    """

    __slots__ = ("_flat", "_specs", "_key", "_tree")

    def __init__(self, flat: Any, specs: InfoSpecs, key: tuple) -> None:
        self._flat = np.asarray(flat)  # one copy to the host: the flag is read at once
        self._specs, self._key, self._tree = specs, key, None

    @property
    def all_converged(self) -> bool:
        return bool(self._flat[0])

    def unpack(self) -> Any:
        if self._tree is None:
            treedef, shapes, dtypes = self._specs[self._key]
            flat, start, leaves = self._flat, 1, []
            for shape, dtype in zip(shapes, dtypes, strict=True):
                size = int(np.prod(shape, dtype=np.int64))
                leaves.append(flat[start : start + size].reshape(shape).astype(dtype))
                start += size
            self._tree = jax.tree.unflatten(treedef, leaves)
        return self._tree


def _select_many(policy: Any, n: int, state: Any, arms: Any, key: Any, draw: Any) -> tuple[Any, Any]:
    """One call: ``n`` selections from the same state, each with its own key split from draw ``draw``'s."""
    keys = jax.random.split(draw_key(key, draw), n)
    return jax.vmap(policy.select, in_axes=(None, None, 0))(state, arms, keys)


def _update_many(policy: Any, arms_per_row: bool, state: Any, arms: Any, actions: Any, feedback: Any) -> Any:
    """One call: ``update`` for each ``(action, feedback)`` row in turn (a scan), with one arm set or one per row."""

    def step(state: Any, row: Any) -> Any:
        x, action, value = row if arms_per_row else (arms, *row)
        return policy.update(state, x, action, value)

    return jax.lax.scan(step, state, (arms, actions, feedback) if arms_per_row else (actions, feedback))


def _host_select_many(policy: Any, n: int, state: Any, arms: Any, key: Any, draw: Any) -> tuple[Any, Any]:
    chosen = [policy.select(state, arms, k) for k in jax.random.split(draw_key(key, draw), n)]
    return _stack([action for action, _ in chosen]), _stack([info for _, info in chosen])


def _host_update_many(policy: Any, arms_per_row: bool, state: Any, arms: Any, actions: Any, feedback: Any) -> Any:
    infos = []
    for i in range(len(actions)):
        state, info = policy.update(state, arms[i] if arms_per_row else arms, actions[i], feedback[i])
        infos.append(info)
    return state, _stack(infos)


def _stack(trees: list[Any]) -> Any:
    """Pytrees of the same structure stacked leaf by leaf along a new leading axis (NumPy)."""
    return jax.tree.map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *trees)


class Calls(NamedTuple):
    """What an agent calls: compiled for a JAX policy, plain Python (loops for the batches) for a host one."""

    select: Any  # (state, arms, key, draw) -> (action, info)
    update: Any  # (state, arms, action, feedback) -> (state, info packed when info_specs is set)
    select_many: Any  # (n, state, arms, key, draw) -> (actions, info stacked)
    update_many: Any  # (arms_per_row, state, arms, actions, feedback) -> (state, info stacked)
    discount: Any  # (state, gamma) -> policy.discount(state, gamma, refit=True) (Agent.decay); None without Discounts
    info_specs: InfoSpecs | None  # the packed update Infos' structures (compiled calls); None: Infos as they are


@functools.lru_cache(maxsize=64)
def _jitted(policy: Any) -> Calls:
    """Compiled calls, shared by every agent of an equal policy (one compile per shape)."""
    specs = InfoSpecs()
    return Calls(
        jax.jit(functools.partial(_select, policy)),
        jax.jit(functools.partial(_update_packed, policy, specs)),
        jax.jit(functools.partial(_select_many, policy), static_argnums=0),
        jax.jit(functools.partial(_update_many, policy), static_argnums=0),
        jax.jit(functools.partial(_discount, policy)) if isinstance(policy, Discounts) else None,
        specs,
    )


def _discount(policy: Any, state: Any, gamma: Any) -> Any:
    return policy.discount(state, gamma, refit=True)


def calls_for(policy: Any, kind: str) -> Calls:
    """The calls of ``policy`` of ``kind`` (``"jax"`` or ``"host"``)."""
    if kind == "host":  # a host policy compiles its own parts
        return Calls(
            functools.partial(_select, policy),
            policy.update,
            functools.partial(_host_select_many, policy),
            functools.partial(_host_update_many, policy),
            None,
            None,
        )
    return per_policy(_jitted, policy)


def _ahead_id(capacity: int | None, arms: Any) -> tuple:
    """Which executables serve a call: the buffer's capacity and the arms' shape and dtype (:func:`signature`)."""
    return (capacity, None, None) if arms is None else (capacity, tuple(arms.shape), np.dtype(arms.dtype))


def _spec(value: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(np.shape(value), jax.dtypes.canonicalize_dtype(np.asarray(value).dtype))


_DRAW = jax.ShapeDtypeStruct((2,), np.uint32)


def _call_compiled(compiled: Any, jitted: Any, *args: Any) -> Any:
    """``compiled(*args)``; arguments of other types than it was compiled for (a state whose dtype changed)
    are refused before anything runs, and go to ``jitted``, which compiles for them."""
    try:
        return compiled(*args)
    except TypeError:
        return jitted(*args)


class CompileAhead:
    """``select`` and ``update`` compiled in background threads, before they are called.

    :meth:`prepare` compiles both for the agent's first call, side by side (the first ``select``
    waits for its own compilation only); :meth:`schedule`, for a policy with a row buffer, compiles
    them for the doubled buffer once the buffer is half full (see the module docstring).
    Tracing and lowering run in the calling thread (NumPyro's handler stack is global, not per
    thread); only XLA's compilation runs in the background.

    Parameters
    ----------
    policy : JAX policy
        With a row buffer (``capacity``, ``filled``, ``reserve``), its executables are per capacity.
    calls : Calls
        The jitted calls to lower.
    """

    def __init__(self, policy: Any, calls: Calls) -> None:
        self._policy = policy
        self._calls = calls
        self._buffered = isinstance(policy, Buffered)
        self._ready: dict[tuple, tuple[Future, Future]] = {}  # (capacity, argument specs) -> (select, update)
        self._pool: ThreadPoolExecutor | None = None

    def executable(self, which: int, call_signature: tuple) -> Any:
        """``select`` (``which = 0``) or ``update`` (1) to call: compiled ahead for this :func:`signature` (the
        state's buffer and the arms) when scheduled (waiting for its compilation if needed), else the jitted one."""
        futures = self._ready.get(call_signature) if self._ready else None
        if futures is None:
            return self._calls[which]
        return functools.partial(_call_compiled, futures[which].result(), self._calls[which])

    def prepare(self, state: Any, key: Any, arms: Any) -> None:
        """Compile ``select`` and ``update`` for ``state`` and a fixed arm set, each in its own thread."""
        select = self._calls.select.lower(state, _spec(arms), _spec(key), _DRAW)
        action = select.out_info[0]  # the update takes an action of this shape, and a float reward per arm of it
        zeros = np.zeros(action.shape, np.int32), np.zeros(action.shape, np.float64)
        self._submit(signature(self._policy, state, arms, self._buffered), state, key, (arms, *zeros), select)

    def schedule(self, state: Any, key: Any, update_args: tuple) -> None:
        """Half-full buffer: compile for the doubled one in the background."""
        capacity = self._policy.capacity(state) if self._buffered else None
        if capacity is None or 2 * self._policy.filled(state) < capacity:
            return
        if _ahead_id(2 * capacity, update_args[0]) in self._ready:
            return
        # The doubled state is padded on the host (no compile); its shapes are those the buffer will
        # have after it grows.
        grown = self._policy.reserve(state, capacity - self._policy.filled(state) + 1)
        self._submit(_ahead_id(2 * capacity, update_args[0]), grown, key, update_args)

    def _submit(self, ahead_id: tuple, state: Any, key: Any, update_args: tuple, select: Any = None) -> None:
        arms, action, feedback = jax.tree.map(_spec, update_args)
        lowered = (
            select or self._calls.select.lower(state, arms, _spec(key), _DRAW),
            self._calls.update.lower(state, arms, action, feedback),
        )
        self._pool = self._pool or ThreadPoolExecutor(max_workers=2, thread_name_prefix="bayesbandit-compile")
        self._ready[ahead_id] = (self._pool.submit(lowered[0].compile), self._pool.submit(lowered[1].compile))

    def pending(self) -> list[Future]:
        """The background compilations scheduled so far."""
        return [future for pair in self._ready.values() for future in pair]

    def scheduled(self) -> list[tuple]:
        """What each was scheduled for: ``(capacity, arms shape, arms dtype)``."""
        return list(self._ready)
