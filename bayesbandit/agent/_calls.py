"""The calls an :class:`~bayesbandit.Agent` makes: compiled once per policy and shape, or plain Python.

For a JAX policy, ``select`` / ``update`` and their batched forms are ``jax.jit``-compiled and
shared by every agent of an equal policy (one compilation per argument shape). For a host policy
they are the policy's own functions, with Python loops for the batches.

A fixed-arm agent plays with two more: ``select_packed``, and ``round`` (:func:`_round`), the update
followed by the selection of the next draw from the updated state, the state in and out as one
vector (:mod:`._packed`). A select that finds that selection still current (no other update, no
other draw since) takes it, so select + update is one compiled call, not two. Compiled ahead, the
round starts compiling once the select is done, and until it is ready the agent updates with the
plain ``update`` (compiled beside the select): the first decision and update wait for no more XLA
than they would without the round.

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
from bayesbandit.agent._packed import Layout
from bayesbandit.contract import Buffered, Discounts
from bayesbandit.precision import default_float

__all__ = [
    "Calls",
    "calls_for",
    "CompileAhead",
    "draw_data",
    "draw_key",
    "packed_signature",
    "round_inputs",
    "signature",
]


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


class Reports(dict):
    """``(call, signature) -> Layout`` of a compiled call's packed report (and of a round's packed state, under
    ``"state"``), filled when the call is traced."""


# Where a report keeps each part: ``(converged, info)`` for an update (INFO); ``(converged, next action,
# update Info, select Info)`` for a round (:func:`_round`).
INFO = 1
NEXT_ACTION, UPDATE_INFO, SELECT_INFO = 1, 2, 3


def _report(reports: Reports, key: tuple, converged: Any, *rest: Any) -> Any:
    """``(converged, *rest)`` packed in one vector (:mod:`._packed`), its layout recorded in ``reports``.

    One output instead of one per leaf: an update's Info has about ten leaves, each an output
    buffer and an array object for the caller (about 2.5 us apiece on XLA:CPU).
    """
    report = (jnp.all(jnp.asarray(converged)), *rest)
    layout = Layout.exact(report)
    reports[key] = layout
    return layout.pack(report)


def _update_packed(policy: Any, reports: Reports, state: Any, arms: Any, action: Any, feedback: Any) -> Any:
    """``policy.update`` with its report ``(converged, info)`` packed (:func:`_report`)."""
    state_out, info = policy.update(state, arms, action, feedback)
    return state_out, _report(reports, ("update", signature(policy, state, arms)), info.converged, info)


def _select_packed(policy: Any, layout: Layout, state: Any, arms: Any, key: Any, draw: Any) -> tuple[Any, Any]:
    """:func:`_select` from a state packed by ``layout``."""
    return _select(policy, layout.unpack(state), arms, key, draw)


def round_inputs(action_shape: tuple[int, ...]) -> Layout:
    """How a round's host inputs, ``(action, feedback, draw)``, lie in the one vector it takes (:func:`_round`)."""
    return Layout.exact(
        (np.zeros(action_shape, np.int32), np.zeros(action_shape, default_float()), np.zeros(2, np.uint32))
    )


def _round(
    policy: Any, reports: Reports, layout: Layout, inputs_layout: Layout, state: Any, arms: Any, key: Any, inputs: Any
) -> tuple[Any, Any]:
    """A fixed-arm agent's update, and the selection of draw ``draw`` from the updated state, in one call.

    The action, its feedback and the next draw come as one host vector (``inputs_layout``, from
    :func:`round_inputs`): one transfer, not three (41.6 against 49.5 us a call). The state comes
    packed by ``layout`` and goes packed by its own (recorded in ``reports`` under
    ``"state"``: another only for a policy that changes its state's dtypes, which the agent then
    follows); the report is ``(converged, next action, update Info, select Info)``. The selection is
    what ``select`` would return next if nothing else happens first: the same state, arms, key and
    draw, so the same bits. A select that finds it still current takes it instead of a compiled call
    of its own (``Agent``), so a round of select and update is one call.
    """
    action, feedback, draw = inputs_layout.unpack(inputs)
    state_out, info = policy.update(layout.unpack(state), arms, action, feedback)
    next_action, select_info = _select(policy, state_out, arms, key, draw)
    out_layout = Layout.exact(state_out)  # the layout's own unless the update changes the state's dtypes
    ahead_id = packed_signature(arms, layout)
    reports[("state", ahead_id)] = out_layout
    return out_layout.pack(state_out), _report(
        reports, ("round", ahead_id), info.converged, next_action, info, select_info
    )


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
    update: Any  # (state, arms, action, feedback) -> (state, report (converged, info) packed when reports is set)
    select_many: Any  # (n, state, arms, key, draw) -> (actions, info stacked)
    update_many: Any  # (arms_per_row, state, arms, actions, feedback) -> (state, info stacked)
    discount: Any  # (state, gamma) -> policy.discount(state, gamma, refit=True) (Agent.decay); None without Discounts
    reports: Reports  # the packed reports' layouts (compiled calls; empty for a host policy's)
    select_packed: Any  # (layout, packed state, arms, key, draw) -> (action, info); None for a host policy
    round: Any  # (layout, inputs layout, packed state, arms, key, inputs) -> (packed state, report); ditto


@functools.lru_cache(maxsize=64)
def _jitted(policy: Any) -> Calls:
    """Compiled calls, shared by every agent of an equal policy (one compile per shape)."""
    reports = Reports()
    return Calls(
        jax.jit(functools.partial(_select, policy)),
        jax.jit(functools.partial(_update_packed, policy, reports)),
        jax.jit(functools.partial(_select_many, policy), static_argnums=0),
        jax.jit(functools.partial(_update_many, policy), static_argnums=0),
        jax.jit(functools.partial(_discount, policy)) if isinstance(policy, Discounts) else None,
        reports,
        jax.jit(functools.partial(_select_packed, policy), static_argnums=0),
        jax.jit(functools.partial(_round, policy, reports), static_argnums=(0, 1)),
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
            Reports(),
            None,
            None,
        )
    return per_policy(_jitted, policy)


def _ahead_id(capacity: int | None, arms: Any) -> tuple:
    """Which executables serve a call: the buffer's capacity and the arms' shape and dtype (:func:`signature`)."""
    return (capacity, None, None) if arms is None else (capacity, tuple(arms.shape), np.dtype(arms.dtype))


def packed_signature(arms: Any, layout: Layout) -> tuple:
    """Which executables serve a fixed-arm agent's packed calls: :func:`signature`'s, and the state's layout."""
    return (*_ahead_id(None, arms), layout)


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
        self._ready: dict[tuple, tuple[Future, ...]] = {}  # (capacity, argument specs) -> (select, update[, round])
        self._done: dict[tuple, Any] = {}  # (which, signature) -> its executable, once compiled
        self._pool: ThreadPoolExecutor | None = None

    def executable(self, which: int, call_signature: tuple, jitted: Any) -> Any:
        """``select`` (``which = 0``), the update (1) or a fixed-arm agent's round (2) to call: compiled ahead for this signature (:func:`signature`,
        and the state's :class:`Layout` for the packed calls) when scheduled (waiting for its compilation if
        needed), with ``jitted`` for arguments of other types; else ``jitted``."""
        compiled = self._done.get((which, call_signature))
        if compiled is None:
            futures = self._ready.get(call_signature) if self._ready else None
            if futures is None:
                return jitted
            compiled = self._done[(which, call_signature)] = futures[which].result()
        return functools.partial(_call_compiled, compiled, jitted)

    def prepare(self, state: Any, key: Any, arms: Any, layout: Layout | None = None) -> None:
        """Compile ``select`` and ``update`` for ``state`` and a fixed arm set, each in its own thread; with
        ``layout``, the packed select and the round (:func:`_round`), under :func:`packed_signature`."""
        if layout is None:
            select = self._calls.select.lower(state, _spec(arms), _spec(key), _DRAW)
        else:
            select = self._calls.select_packed.lower(layout, layout.spec(), _spec(arms), _spec(key), _DRAW)
        action = select.out_info[0]  # the update takes an action of this shape, and a float reward per arm of it
        zeros = np.zeros(action.shape, np.int32), np.zeros(action.shape, np.float64)
        if layout is None:
            self._submit(signature(self._policy, state, arms, self._buffered), state, key, (arms, *zeros), select)
            return
        # The round compiles after the select, and the agent plays its first rounds with the plain update
        # (two calls) until it is ready: the first decision and update wait for no more XLA than before.
        update = self._calls.update.lower(state, *(_spec(x) for x in (arms, *zeros)))
        inputs = round_inputs(action.shape)
        round_ = self._calls.round.lower(layout, inputs, layout.spec(), _spec(arms), _spec(key), inputs.spec())
        ahead_id = packed_signature(arms, layout)
        self._compile(ahead_id, select, update)
        round_future: Future = Future()

        def compile_round() -> None:
            try:
                round_future.set_result(round_.compile())
            except Exception as exc:  # noqa: BLE001 (handed to whoever waits for it)
                round_future.set_exception(exc)

        # In a worker, even when the select is already compiled (a callback on a done future runs at once,
        # in this thread: the agent's constructor).
        pool = self._pool
        assert pool is not None  # made by _compile
        self._ready[ahead_id][0].add_done_callback(lambda _: pool.submit(compile_round))
        self._ready[ahead_id] = (*self._ready[ahead_id], round_future)

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
        select = select or self._calls.select.lower(state, arms, _spec(key), _DRAW)
        self._compile(ahead_id, select, self._calls.update.lower(state, arms, action, feedback))

    def _compile(self, ahead_id: tuple, select: Any, update: Any) -> None:
        self._pool = self._pool or ThreadPoolExecutor(max_workers=2, thread_name_prefix="bayesbandit-compile")
        self._ready[ahead_id] = (self._pool.submit(select.compile), self._pool.submit(update.compile))

    def done(self, which: int, call_signature: tuple) -> bool:
        """Whether call ``which`` for this signature is compiled (or was never scheduled: the jitted one serves)."""
        futures = self._ready.get(call_signature)
        return futures is None or futures[which].done()

    def pending(self) -> list[Future]:
        """The background compilations scheduled so far."""
        return [future for pair in self._ready.values() for future in pair]

    def scheduled(self) -> list[tuple]:
        """What each was scheduled for: ``(capacity, arms shape, arms dtype)``."""
        return list(self._ready)
