"""The engine behind an :class:`~bayesbandit.Agent`: its policy's calls, chosen once at construction.

Two engines, one interface (``select``, ``select_logged``, ``select_many``, ``update``,
``update_many``, ``discount``):

* :class:`CompiledEngine`, for a JAX policy: each call is a program compiled by XLA, once per
  argument signature (shapes and dtypes), and shared by every agent of an equal policy. A program
  is compiled ahead (:meth:`CompiledEngine.prepare`, in background threads), or on its first call;
  :meth:`CompiledEngine.run_if_ready` runs a call only if its program is compiled, so an agent never
  waits for XLA while it holds its lock.
* :class:`HostEngine`, for a host policy: the policy's own functions, Python loops for the batches.

A selection is the policy's ``select`` with the key of the agent's ``n``-th draw
(:func:`draw_key`), then the agent's initial-exploration rule (:mod:`._explore`). ``select_logged``
also computes the decision's propensity in the same compiled call (:mod:`bayesbandit.propensities`):
exact for an :class:`~bayesbandit.contract.ExactLaw` policy, else the action's frequency among
itself and ``M - 1`` more selections, ``vmap``-ed, on keys apart from every selection's.

Tracing is serialised process-wide (:data:`bayesbandit.runtime.trace_lock`): NumPyro's effect
handlers live on one global stack, so two threads tracing reward programs at once corrupt each
other's traces. A program is traced and lowered in the thread that asks for it, under the lock (so
an agent never traces in a thread of its own while its caller traces something else); XLA's
compilation runs there or in a background thread, and every compiled call runs side by side.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import TRACE_LOCK, per_policy
from bayesbandit.agent._explore import Explore
from bayesbandit.contract import Combinatorial, Discounts, ExactLaw, policy_kind
from bayesbandit.propensities import _hits, logged_propensity

__all__ = ["CompiledEngine", "HostEngine", "draw_data", "draw_key", "engine_for", "to_host"]

_PROPENSITY_STREAM = 0x50524F50  # folded into a draw's key for its propensity's Monte Carlo draws


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


def _number(draw: Any) -> Any:
    """The draw counter's words as one number for the exploration rule (saturated past 2^32)."""
    return jnp.where(draw[0] > 0, jnp.uint32(0xFFFFFFFF), draw[1])


def to_host(tree: Any) -> Any:
    """A pytree with NumPy leaves (an Info as :attr:`Agent.last_select_info` returns it)."""
    return jax.tree.map(np.asarray, tree)


# ---------------------------------------------------------------------------------------------- the calls
def _choose(policy: Any, explore: Explore, state: Any, arms: Any, key: Any, number: Any, design: Any) -> Any:
    """One selection with ``key``: the policy's, or in an exploration decision the rule's."""
    action, info = policy.select(state, arms, key)
    action, exploring = explore.choose(key, arms, number, design, action)
    if explore.rule != "none" and "exploring" in getattr(info, "_fields", ()):
        info = info._replace(exploring=exploring | info.exploring)
    return action, info


def _select(policy: Any, explore: Explore, state: Any, arms: Any, key: Any, draw: Any, design: Any) -> Any:
    """Draw ``draw``'s selection."""
    return _choose(policy, explore, state, arms, draw_key(key, draw), _number(draw), design)


def _select_logged(
    policy: Any, explore: Explore, samples: int, state: Any, arms: Any, key: Any, draw: Any, design: Any
) -> Any:
    """Draw ``draw``'s selection, its Info and its propensity ``(value, se)``, in one call (module docstring)."""
    number, own = _number(draw), draw_key(key, draw)
    action, info = _choose(policy, explore, state, arms, own, number, design)
    if isinstance(policy, ExactLaw) and not isinstance(policy, Combinatorial):
        law = explore.law(arms, number, design, policy.action_probabilities(state, arms))
        return action, info, (law[action], jnp.zeros((), law.dtype))
    keys = jax.random.split(jax.random.fold_in(own, _PROPENSITY_STREAM), samples - 1)
    others, _ = jax.vmap(lambda k: _choose(policy, explore, state, arms, k, number, design))(keys)
    value = (1.0 + jnp.sum(_hits(policy, others, action))) / samples
    return action, info, (value, jnp.sqrt(value * (1.0 - value) / samples))


def _select_many(policy: Any, explore: Explore, n: int, state: Any, arms: Any, key: Any, draw: Any, design: Any) -> Any:
    """Draws ``draw .. draw + n - 1`` from one state: decision ``j`` on the ``j``-th key split from the first's.

    The batch's exploration decisions follow the rule in turn: under ``"design"`` each adds its arm to
    the ``G`` the next one sees, as decisions one at a time would.
    """
    keys = jax.random.split(draw_key(key, draw), n)
    actions, info = jax.vmap(policy.select, in_axes=(None, None, 0))(state, arms, keys)
    if explore.rule == "none":
        return actions, info
    numbers = _number(draw) + jnp.arange(n, dtype=jnp.uint32)

    def step(gram: Any, row: Any) -> tuple[Any, Any]:
        key, number, action = row
        action, exploring = explore.choose(key, arms, number, gram, action)
        x = arms[action]
        return gram + jnp.where(exploring, jnp.outer(x, x), 0.0), (action, exploring)

    def explored() -> tuple[Any, Any]:
        if explore.rule == "design":  # each sees the arms the ones before it chose
            return jax.lax.scan(step, design, (keys, numbers, actions))[1]
        return jax.vmap(lambda k, m, a: explore.choose(k, arms, m, design, a))(keys, numbers, actions)

    # past the exploration decisions the batch skips the rule
    actions, exploring = jax.lax.cond(explore.exploring(_number(draw)), explored, lambda: (actions, jnp.zeros(n, bool)))
    if "exploring" in getattr(info, "_fields", ()):
        info = info._replace(exploring=exploring | info.exploring)
    return actions, info


def _update_many(policy: Any, arms_per_row: bool, state: Any, arms: Any, actions: Any, feedback: Any) -> Any:
    """``update`` for each ``(action, feedback)`` row in turn (a scan), with one arm set or one per row."""

    def step(state: Any, row: Any) -> Any:
        x, action, value = row if arms_per_row else (arms, *row)
        return policy.update(state, x, action, value)

    return jax.lax.scan(step, state, (arms, actions, feedback) if arms_per_row else (actions, feedback))


def _discount(policy: Any, state: Any, gamma: Any) -> Any:
    return policy.discount(state, gamma, refit=True)


# ---------------------------------------------------------------------------------------------- the engines
def _spec(x: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype)


def _signature(call: Hashable, args: tuple) -> tuple:
    """What selects a compiled program: the call (with its static arguments) and the arguments' shapes and dtypes."""
    leaves, treedef = jax.tree.flatten(args)
    return call, treedef, tuple([(x.shape, x.dtype) for x in leaves])


class CompiledEngine:
    """A JAX policy's calls, each compiled once per argument signature (module docstring).

    Parameters
    ----------
    policy : JAX policy
        The policy the agent runs (without its own initial exploration: :mod:`._explore`).
    explore : Explore
        The agent's initial-exploration rule.
    """

    def __init__(self, policy: Any, explore: Explore) -> None:
        self.policy = policy
        bind = functools.partial
        self._functions: dict[str, Callable[..., Any]] = {
            "select": bind(_select, policy, explore),
            "select_logged": bind(_select_logged, policy, explore),
            "select_many": bind(_select_many, policy, explore),
            "update": policy.update,
            "update_many": bind(_update_many, policy),
            "discount": bind(_discount, policy),
        }
        self.discounts = isinstance(policy, Discounts)
        self._jitted: dict[tuple, Any] = {}
        self._programs: dict[tuple, Future] = {}  # signature -> its compiled program (a future while compiling)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    # -------------------------------------------------------------------------- calling

    def run(self, call: tuple, *args: Any) -> Any:
        """``call`` (its name and static arguments, e.g. ``("select_logged", 1000)``) on ``args``."""
        return self._program(call, args).result()(*args)

    def run_if_ready(self, call: tuple, *args: Any) -> Any:
        """:meth:`run`, if its program is compiled; else ``None`` (nothing runs)."""
        future = self._programs.get(_signature(call, args))
        return future.result()(*args) if future is not None and future.done() else None

    # -------------------------------------------------------------------------- compiling
    @property
    def compiled(self) -> int:
        """Programs compiled so far."""
        return sum(future.done() and future.exception() is None for future in list(self._programs.values()))

    def compile(self, call: tuple, *args: Any) -> None:
        """Compile ``call`` for arguments like ``args`` (arrays or ``ShapeDtypeStruct``) in this thread, if not yet."""
        self._program(call, args).result()

    def prepare(self, calls: list[tuple[tuple, tuple]]) -> list[Future]:
        """Trace and lower each ``(call, args)`` in this thread, and compile it in a background thread."""
        return [self._program(call, args, background=True) for call, args in calls]

    def _program(self, call: tuple, args: tuple, background: bool = False) -> Future:
        """The future of ``call``'s program for ``args``; the caller that finds none traces and lowers it (in its
        own thread, so a program's tracing never overlaps the caller's own), and compiles it here or in the
        background."""
        signature = _signature(call, args)
        future = self._programs.get(signature)
        if future is not None:
            return future
        with self._lock:
            future = self._programs.get(signature)
            if future is not None:
                return future
            future = self._programs[signature] = Future()
            jitted = self._jitted.get(call)
            if jitted is None:
                jitted = self._jitted[call] = jax.jit(functools.partial(self._functions[call[0]], *call[1:]))
            if background and self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="bayesbandit-compile")
        try:
            with TRACE_LOCK:
                lowered = jitted.lower(*jax.tree.map(_spec, args))
        except BaseException as exc:
            self._failed(signature, future, exc)
            raise
        if background:
            assert self._pool is not None
            self._pool.submit(self._compile, signature, future, lowered)
        else:
            self._compile(signature, future, lowered)
            future.result()  # raises what the compilation raised
        return future

    def _compile(self, signature: tuple, future: Future, lowered: Any) -> None:
        try:
            future.set_result(lowered.compile())
        except BaseException as exc:  # handed to whoever waits for it
            self._failed(signature, future, exc)

    def _failed(self, signature: tuple, future: Future, exc: BaseException) -> None:
        with self._lock:
            del self._programs[signature]  # a later call tries again
        future.set_exception(exc)


class HostEngine:
    """A host policy's calls: its own functions (it compiles its own parts), Python loops for the batches."""

    discounts = False
    compiled = 0

    def __init__(self, policy: Any, explore: Explore) -> None:
        self.policy = policy

    def select(self, state: Any, arms: Any, key: Any, draw: np.ndarray, design: Any) -> tuple[Any, Any]:
        return self.policy.select(state, arms, draw_key(key, draw))

    def select_logged(
        self, samples: int, state: Any, arms: Any, key: Any, draw: np.ndarray, design: Any
    ) -> tuple[Any, Any, tuple[float, float]]:
        own = draw_key(key, draw)
        action, info = self.policy.select(state, arms, own)
        key = jax.random.fold_in(own, _PROPENSITY_STREAM)
        law = logged_propensity(key, self.policy, state, arms, np.asarray(action), samples=samples)
        return action, info, (law.value, law.se)

    def select_many(self, n: int, state: Any, arms: Any, key: Any, draw: np.ndarray, design: Any) -> Any:
        chosen = [self.policy.select(state, arms, k) for k in jax.random.split(draw_key(key, draw), n)]
        return _stack([action for action, _ in chosen]), _stack([info for _, info in chosen])

    def update(self, state: Any, arms: Any, action: Any, feedback: Any) -> Any:
        return self.policy.update(state, arms, action, feedback)

    def update_many(self, arms_per_row: bool, state: Any, arms: Any, actions: Any, feedback: Any) -> Any:
        infos = []
        for i in range(len(actions)):
            state, info = self.policy.update(state, arms[i] if arms_per_row else arms, actions[i], feedback[i])
            infos.append(info)
        return state, _stack(infos)

    def run(self, call: tuple, *args: Any) -> Any:
        """``call`` (its name and static arguments) on ``args``, as :meth:`CompiledEngine.run`."""
        return getattr(self, call[0])(*call[1:], *args)

    run_if_ready = run

    def compile(self, call: tuple, *args: Any) -> None:
        return None

    def prepare(self, calls: list[tuple[tuple, tuple]]) -> list[Future]:
        return []


def _stack(trees: list[Any]) -> Any:
    """Pytrees of the same structure stacked leaf by leaf along a new leading axis (NumPy)."""
    return jax.tree.map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *trees)


@functools.lru_cache(maxsize=64)
def _compiled_engine(policy: Any, explore: Explore) -> CompiledEngine:
    """One engine, and its compiled programs, per equal policy and rule: shared by the agents that run them."""
    return CompiledEngine(policy, explore)


def engine_for(policy: Any, explore: Explore) -> CompiledEngine | HostEngine:
    """The engine of ``policy``: compiled for a JAX policy, its own functions for a host one."""
    if policy_kind(policy) == "host":
        return HostEngine(policy, explore)
    return per_policy(_compiled_engine, policy, explore)
