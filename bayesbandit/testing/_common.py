"""What the check suites share: cached runs, tree comparisons, the rejected-input probe, readable ids."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import numpy as np

from bayesbandit.errors import InvalidInput

__all__ = ["cached", "clear_caches", "snapshot", "same_tree", "rejects", "policy_id", "run_outputs", "CheckError"]

_F = TypeVar("_F", bound=Callable[..., Any])
_CACHES: list[dict] = []

CheckError = AssertionError  # what a failing check raises


def cached(fn: _F) -> _F:
    """Memoise ``fn`` on its (hashable) arguments; unhashable arguments (array hyper-parameters) run uncached.

    The checks of one policy share its runs through this cache; :func:`clear_caches` empties every one.
    """
    memo: dict = {}
    _CACHES.append(memo)

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        try:
            hash(args)
        except TypeError:
            return fn(*args)
        if args not in memo:
            memo[args] = fn(*args)
        return memo[args]

    return wrapper  # type: ignore[return-value]


def clear_caches() -> None:
    """Forget every cached run (call it with ``jax.clear_caches()``: a cached run counts its traces)."""
    for memo in _CACHES:
        memo.clear()


def snapshot(tree: Any) -> list[np.ndarray]:
    """A deep NumPy copy of a pytree's leaves, for before/after comparisons."""
    return [np.array(x, copy=True) for x in jax.tree.leaves(tree)]


def same_tree(a: Any, b: Any) -> bool:
    """Same structure, and leaves of the same shape, dtype and bits (NaN equal to NaN)."""
    structure: Any = jax.tree.structure(a)
    if structure != jax.tree.structure(b):
        return False
    return all(
        x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
        for x, y in zip(snapshot(a), snapshot(b), strict=True)
    )


def same_host_state(policy: Any, a: Any, b: Any) -> bool:
    """Two host states hold the same parts (:class:`~bayesbandit.contract.HostState`): meta equal, arrays bit for bit."""
    (meta_a, arrays_a), (meta_b, arrays_b) = policy.state_parts(a), policy.state_parts(b)
    return meta_a == meta_b and len(arrays_a) == len(arrays_b) and same_tree(arrays_a, arrays_b)


def rejects(agent: Any, what: str, method: str, *args: Any) -> None:
    """``agent.<method>(*args)`` raises :class:`~bayesbandit.errors.InvalidInput` and leaves the state and draw
    count as they were."""
    name = type(agent.policy).__name__
    before, draws = snapshot(agent.state), agent._draws
    try:
        getattr(agent, method)(*args)
    except InvalidInput:
        pass
    except Exception as exc:
        raise CheckError(f"{name}: {what} raised {exc!r}, not InvalidInput") from exc
    else:
        raise CheckError(f"{name}: {what} was accepted")
    after = snapshot(agent.state)
    assert len(before) == len(after) and all(
        np.array_equal(x, y, equal_nan=True) for x, y in zip(before, after, strict=True)
    ), f"{name}: {what} changed the state"
    assert agent._draws == draws, f"{name}: {what} used a draw"


def _short(value: Any) -> str:
    if isinstance(value, bool | int | float | str) or value is None:
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return policy_id(value)
    return type(value).__name__


def policy_id(obj: Any) -> str:
    """``Class(field=value, ...)`` with the fields that differ from their defaults (models left out)."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return type(obj).__name__
    shown = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name == "model" or not f.repr:
            continue
        default = f.default if f.default is not dataclasses.MISSING else dataclasses.MISSING
        if default is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        try:
            unchanged = default is not dataclasses.MISSING and bool(value == default)
        except Exception:  # arrays compare element-wise
            unchanged = False
        if not unchanged:
            shown.append(f"{f.name}={_short(value)}")
    return f"{type(obj).__name__}({', '.join(shown)})"


def save_load_continues(policy: Any, agent: Any, play: Callable[[Any, int, int], list]) -> None:
    """Through the public :class:`~bayesbandit.Agent` API: play 5 rounds, save, load, then play 5 more rounds
    with both agents; the loaded one must hold the same state and choose the same actions, bit for bit."""
    import tempfile
    from pathlib import Path

    from bayesbandit.agent import Agent

    name = policy_id(policy)
    same = same_tree if policy.kind == "jax" else functools.partial(same_host_state, policy)
    play(agent, 5, 1)
    with tempfile.TemporaryDirectory(prefix="bayesbandit-check-") as tmp:
        path = Path(tmp) / "agent.bb"
        agent.save(path)
        loaded = Agent.load(path, policy)
    assert same(agent.state, loaded.state), f"{name}: the loaded state differs"
    a, b = play(agent, 5, 2), play(loaded, 5, 2)
    assert a == b, f"{name}: after loading, actions {b} instead of {a}"
    assert same(agent.state, loaded.state), f"{name}: the states diverged after loading"


def chunked_program(init_one: Callable, step: Callable, rounds: int, chunks: int) -> tuple[Any, Any, list]:
    """A vmapped run in ``chunks`` compiled chunks of ``rounds`` rounds: ``(start, chunk, traces)``.

    ``start(keys)`` splits each run's key into a problem key (``init_one(k) -> (state, env)``) and the
    keys of its ``rounds * chunks`` rounds, shaped ``(chunks, rounds, ...)``; ``chunk(state, env, keys,
    checked)`` scans ``step(env, state, key, checked) -> (state, outputs)`` over one chunk's keys.
    ``checked`` (a bool shared by every run; :func:`run_chunks` sets it for the first chunk only) says
    whether the steps make the checks that only the mechanical checks read, such as a second ``select``:
    under ``lax.cond`` the later chunks skip their work. Every chunk calls one program, so a long run
    compiles what a short one does; ``traces`` grows by one per trace of it.
    """
    traces: list[int] = []

    def start(keys: jax.Array) -> tuple:
        def one(key: jax.Array) -> tuple:
            k_problem, k_rounds = jax.random.split(key)
            state, env = init_one(k_problem)
            round_keys = jax.random.split(k_rounds, rounds * chunks)
            return state, env, round_keys.reshape(chunks, rounds, *round_keys.shape[1:])

        return jax.vmap(one)(keys)

    def chunk(state: Any, env: Any, keys: jax.Array, checked: jax.Array) -> tuple:
        traces.append(1)  # runs once per trace, never on a cached call

        def one(state: Any, env: Any, keys: jax.Array) -> tuple:
            return jax.lax.scan(lambda s, k: step(env, s, k, checked), state, keys)

        return jax.vmap(one)(state, env, keys)

    return jax.jit(start), jax.jit(chunk), traces


def run_chunks(name: str, program: tuple, keys: jax.Array, chunks: int) -> tuple:
    """(final state, env, outputs of the first ``chunks`` chunks joined along the round axis), as NumPy."""
    start, chunk, _ = program
    try:
        state, env, round_keys = start(keys)
        outputs = []
        for c in range(chunks):
            state, out = chunk(state, env, round_keys[:, c], c == 0)
            outputs.append(out)
    except Exception as exc:  # a policy that does not trace fails the contract, not the harness
        raise AssertionError(f"{name}: the policy does not run under jit(vmap(scan)): {exc!r}") from exc
    joined = jax.tree.map(lambda *xs: np.concatenate([np.asarray(x) for x in xs], axis=1), *outputs)
    return jax.tree.map(np.asarray, state), jax.tree.map(np.asarray, env), joined


def run_outputs(policy: Any, program: tuple, keys: jax.Array, chunks: int) -> tuple:
    """(actions, regret, uniform play's regret per round, final state, repeat flags) of a check's run.

    ``program`` is a :func:`chunked_program` whose rounds output ``(action, regret, repeat)`` and
    whose environments end with uniform play's regret per round.
    """
    state, env, (actions, regret, repeat) = run_chunks(policy_id(policy), program, keys, chunks)
    return actions, regret, env[-1], state, repeat
