"""The compiled runner: ``lax.scan`` over rounds inside ``vmap`` over runs, for ``kind = "jax"`` policies.

The horizon is cut into equal chunks (the last one padded: the extra rounds run and are
dropped), each one ``scan`` carried over from the previous, so a progress bar can advance while
the executable is compiled once. The policy is an *argument* of the jitted chunk (its numeric
hyper-parameters are pytree leaves), so policies that differ only in numbers, e.g. GLM-TSL with
the theory ``a`` and with ``a = 1``, share one executable. Compilation is ahead of time
(``jit(...).lower(...).compile()``) and timed on its own; a reused executable reports a compile
time of 0.

On a CPU a device plays its runs in blocks of at most ``CPU_BLOCK`` (256), one block after
another (``lax.map`` over blocks of the vmapped chunk): a block's state stays in the cache, and a
vmapped Newton loop waits for the slowest run of its block rather than of all runs. Measured at
10,000 runs (K = 100, d = 10, 200 rounds, full-history GLM-TSL): 40 us per round-run in blocks
against 71 us in one batch, the same as at 1,000 runs (``benchmarks/results/bench_runs.md``).
An accelerator plays all of its runs at once. Runs are independent, so the results do not
depend on the blocks (``tests/test_simulate.py``).

Runs are independent, so with several devices the runs axis is split over them
(:mod:`bayesbandit.sharding`): every device plays its share of the runs with the same per-run
program, with no communication. The number of runs is padded to a multiple of the device
count with copies of the first runs, whose results are dropped. One device takes the plain path;
the results are the same either way (``tests/test_sharding.py``). The devices may belong to
several processes of one job (:func:`bayesbandit.sharding.initialize`): the inputs are then
placed as global arrays and the outputs gathered into every process, with the same results
(``tests/test_distributed.py``).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec

from bayesbandit._compile import options_key
from bayesbandit.sharding import RUNS_AXIS, compile_over_runs, runs_mesh, to_host, to_mesh
from bayesbandit.sim.round import Round, RunKeys, init_run, play_round

__all__ = ["run_scan", "round_outputs", "runs_mesh"]

_CACHE_SIZE = 32
CPU_BLOCK = 256
"""Most runs one CPU device plays at once (module docstring)."""
_COMPILED: OrderedDict = OrderedDict()  # (env, record, policy treedef and avals, shapes) -> executables

Record = Callable[[Round], dict[str, Any]] | None


def round_outputs(rnd: Round, record: Record) -> dict[str, Any]:
    """What the runners keep of a round: regret, reward, action, and the ``record`` hook's outputs."""
    out = {
        "regret": rnd.outcome.regret,
        "reward": jnp.asarray(rnd.feedback, float),
        "action": jnp.asarray(rnd.action, jnp.int32),
    }
    if record is not None:
        out.update(record(rnd))
    return out


def _chunk(policy: Any, env: Any, record: Record, carry: tuple, ts: jax.Array) -> tuple[tuple, dict]:
    """``scan`` of one chunk of rounds ``ts`` for one run (vmapped over runs by the caller)."""

    def body(carry, t):
        env_state, pstate, pull_key, policy_key, failures = carry
        pstate, rnd = play_round(pull_key, policy_key, policy, env, env_state, pstate, t)
        failures = failures + (~rnd.converged).astype(jnp.int32)
        return (env_state, pstate, pull_key, policy_key, failures), round_outputs(rnd, record)

    return jax.lax.scan(body, carry, ts)


def _split_policy(policy: Any) -> tuple[list, Callable[[list], Any], Any]:
    """(dynamic leaves, rebuild, cache identity): numeric leaves are jit arguments, the rest static.

    A policy that is not a registered pytree is closed over whole (cached only if hashable).
    """
    leaves, treedef = jax.tree.flatten(policy)
    if len(leaves) == 1 and leaves[0] is policy:
        try:
            ident = ("static", hash(policy), policy)
        except TypeError:
            ident = None
        return [], lambda _: policy, ident
    dyn = [jnp.asarray(x) for x in leaves]
    # The class is part of the identity as well as of the structure (contract.register_dataclass_node), so a
    # policy registered with JAX's own register_dataclass never shares another class's executable either.
    return dyn, lambda d: jax.tree.unflatten(treedef, d), (type(policy), treedef, tuple(jax.typeof(x) for x in dyn))


def run_blocks(runs: int, devices: int, block: int | None) -> tuple[int, int]:
    """(blocks per device, runs per block) for ``runs`` split over ``devices`` in blocks of at most ``block``.

    ``block=None``: one block per device. The blocks are balanced (they differ from ``block`` by
    less than their number), so the padding is at most one run per block.
    """
    per_device = math.ceil(runs / devices)
    count = 1 if block is None else math.ceil(per_device / block)
    return count, math.ceil(per_device / count)


def _pad_runs(keys: RunKeys, padded: int) -> RunKeys:
    """``keys`` with copies of the first runs appended, to ``padded`` runs."""
    runs = keys.env.shape[0]
    if padded == runs:
        return keys
    index = jnp.arange(padded) % runs
    return RunKeys(*(k[index] for k in keys))


def _in_blocks(fn: Callable, count: int) -> Callable:
    """``fn(d, carry, ts)`` (vmapped over the carry's runs) applied to ``count`` blocks of runs one after another."""
    if count == 1:
        return fn

    def blocked(d, carry, ts):
        split = jax.tree.map(lambda x: x.reshape(count, x.shape[0] // count, *x.shape[1:]), carry)
        new, out = jax.lax.map(lambda c: fn(d, c, ts), split)
        return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), (new, out))

    return blocked


def _executables(split, env, record, capacity: int, keys: RunKeys, chunk_len: int, blocks: int, options, mesh):
    """Ahead-of-time compiled (init, chunk) for this policy structure; cached. Returns (init, chunk, seconds)."""
    dyn, rebuild, ident = split
    runs = keys.env.shape[0]
    devices = None if mesh is None else tuple(mesh.devices.flat)
    cache_key = (env, record, ident, capacity, runs, chunk_len, blocks, options_key(options), devices)
    if ident is not None and cache_key in _COMPILED:
        _COMPILED.move_to_end(cache_key)
        return (*_COMPILED[cache_key], 0.0)
    start = time.perf_counter()
    cpu = _platform(mesh) == "cpu"

    # On CPU lax.map, not vmap: init runs once per run, and a batched Newton while-loop compiles slowly. On
    # an accelerator one batch: a map there would run the runs one after another.
    def init(d, env_keys, policy_keys):
        batch = None if cpu else env_keys.shape[0]
        one = lambda k: init_run(k[0], k[1], rebuild(d), env, capacity)  # noqa: E731
        return jax.lax.map(one, (env_keys, policy_keys), batch_size=batch)

    per_run, shared = PartitionSpec(RUNS_AXIS), PartitionSpec()
    init_c = compile_over_runs(init, (dyn, keys.env, keys.policy), (shared, per_run, per_run), mesh, options=options)
    env_state, pstate = jax.eval_shape(init, dyn, keys.env, keys.policy)
    failures = jax.ShapeDtypeStruct((runs,), jnp.int32)
    carry = (env_state, pstate, keys.pull, keys.policy, failures)
    ts = jax.ShapeDtypeStruct((chunk_len,), jnp.int32)
    chunk = _in_blocks(jax.vmap(lambda d, c, t: _chunk(rebuild(d), env, record, c, t), in_axes=(None, 0, None)), blocks)
    chunk_c = compile_over_runs(chunk, (dyn, carry, ts), (shared, per_run, shared), mesh, options=options)
    seconds = time.perf_counter() - start
    if ident is not None:
        _COMPILED[cache_key] = (init_c, chunk_c)
    while len(_COMPILED) > _CACHE_SIZE:
        _COMPILED.popitem(last=False)
    return init_c, chunk_c, seconds


def _platform(mesh) -> str:
    """The platform the runs play on: the mesh's devices', else the default device's."""
    return (jax.devices()[0] if mesh is None else mesh.devices.flat[0]).platform


def _block_size(mesh) -> int | None:
    """Most runs one device plays at once: ``CPU_BLOCK`` on CPUs, all of its runs on accelerators."""
    return CPU_BLOCK if _platform(mesh) == "cpu" else None


def run_scan(
    policy: Any, env: Any, record: Record, horizon: int, num_chunks: int, keys: RunKeys, bar: Any, options: Any
) -> tuple[dict[str, np.ndarray], np.ndarray, float, float]:
    """All runs of one policy, compiled. Returns (outputs (runs, horizon, ...), failures (runs,), compile s, run s).

    With several devices the runs are split over them (module docstring).
    """
    chunk_len = math.ceil(horizon / num_chunks)
    num_chunks = math.ceil(horizon / chunk_len)
    capacity = num_chunks * chunk_len
    split = _split_policy(policy)
    runs = keys.env.shape[0]
    mesh = runs_mesh()
    devices = 1 if mesh is None else mesh.size
    blocks, block = run_blocks(runs, devices, _block_size(mesh))
    keys = to_mesh(_pad_runs(keys, devices * blocks * block), mesh, PartitionSpec(RUNS_AXIS))
    dyn = to_mesh(split[0], mesh, PartitionSpec())
    init_c, chunk_c, compile_s = _executables(split, env, record, capacity, keys, chunk_len, blocks, options, mesh)
    start = time.perf_counter()
    env_state, pstate = init_c(dyn, keys.env, keys.policy)
    failures = to_mesh(jnp.zeros(keys.env.shape[0], jnp.int32), mesh, PartitionSpec(RUNS_AXIS))
    carry = (env_state, pstate, keys.pull, keys.policy, failures)
    outs = []
    for c in range(num_chunks):
        ts = to_mesh(jnp.arange(c * chunk_len, (c + 1) * chunk_len, dtype=jnp.int32), mesh, PartitionSpec())
        carry, out = chunk_c(dyn, carry, ts)
        outs.append(to_host(out))  # waits for the chunk: the bar shows real progress
        if bar is not None:
            bar.update(min(chunk_len, horizon - c * chunk_len))
    run_s = time.perf_counter() - start
    out = {k: np.concatenate([o[k] for o in outs], axis=1)[:runs, :horizon] for k in outs[0]}
    return out, np.asarray(to_host(carry[4]))[:runs], compile_s, run_s
