"""Independent replications split over devices: one code path for one CPU, host CPU devices, GPUs, hosts.

``simulate``'s runs and ``bai.replicate``'s replications are independent, so with several devices
(GPUs, TPU cores, or host CPU devices from ``XLA_FLAGS=--xla_force_host_platform_device_count=N``)
their leading axis is split over a one-axis mesh with :func:`jax.shard_map`: every device plays its
share with the same per-replication program and nothing is communicated. Callers pad the axis to
a multiple of the device count and drop the padding; with one device the plain ``jit`` path runs.

Several processes, one job (SPMD)
---------------------------------
The same mesh spans several processes, on one host or many, once each calls :func:`initialize`
(:func:`jax.distributed.initialize`) before any computation: :func:`jax.devices` then lists every
process's devices, and each process plays the runs on its own devices. The runners (the compiled
runner of :func:`bayesbandit.simulate`, :func:`bayesbandit.bai.replicate`) place their inputs with
:func:`to_mesh` and read their outputs with :func:`to_host`. Every process computes the same
whole inputs (the keys follow from the seed) and fills only its own devices' shards
(:func:`jax.make_array_from_callback`), and the outputs are gathered across processes
(:func:`jax.experimental.multihost_utils.process_allgather`). Each run plays the same program with
the same keys wherever it lands, so the results are those of one process, bit for bit
(``tests/test_distributed.py``). With one process both helpers leave the plain path as it was.

Limits:

* every process must run the same program in the same order: the same calls with the same
  policies and arguments (seed, runs, horizon). Integer and key inputs are compared across
  processes before each compiled call (:func:`to_mesh`), so a different seed or run count raises
  :class:`~bayesbandit.errors.ConfigurationError` in every process; other differences (another
  policy, other hyper-parameters) are not detected, and their results are undefined (runs of
  different programs mixed, or processes waiting on each other);
* a lost process ends the job: the coordinator declares a process dead after
  ``heartbeat_timeout`` seconds without news and ends the others, and a process that cannot
  reach the coordinator within ``initialization_timeout`` seconds is ended by JAX;
* host policies (``kind="host"``) are not split: every process plays all their runs;
* results are returned in every process (each holds the whole dataset);
* the runs are padded to a multiple of the global device count (every process's devices), with
  copies of the first runs whose results are dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax._src import xla_bridge
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from bayesbandit.errors import ConfigurationError, InvalidInput
from bayesbandit.validation import check_int

__all__ = ["RUNS_AXIS", "initialize", "runs_mesh", "compile_over_runs", "to_mesh", "to_host"]

RUNS_AXIS = "runs"
"""The name of the mesh axis the runs are split along."""


def initialize(
    coordinator_address: str,
    num_processes: int,
    process_id: int,
    *,
    initialization_timeout: int = 300,
    heartbeat_timeout: int = 100,
) -> None:
    """Join this process to a job of ``num_processes`` processes that split the runs (module docstring).

    Call it in every process, first thing, before any JAX computation, with the same
    ``coordinator_address`` and ``num_processes`` and a different ``process_id``. Process 0 runs
    the coordinator, bound to ``coordinator_address`` itself (JAX's default binds every network
    interface); the others connect to it. Every process uses all of its local devices (JAX's
    automatic cluster detection is off: the arguments are the whole configuration). CPU
    processes exchange results through gloo, JAX's default from version 0.5.1.

    Parameters
    ----------
    coordinator_address : str
        ``"host:port"`` of process 0, reachable from every process, e.g. ``"10.0.0.1:1234"``
        (``"127.0.0.1:1234"`` for processes on one host).
    num_processes : int
        The number of processes in the job, at least 1.
    process_id : int
        This process's index, in ``[0, num_processes)``.
    initialization_timeout : int
        Seconds to wait for every process to connect; past it JAX ends the process.
    heartbeat_timeout : int
        Seconds without news after which the coordinator declares a process dead and ends the job.

    Raises
    ------
    InvalidInput
        An argument is malformed.
    ConfigurationError
        JAX's backend already exists (a computation has run) or this process already joined a job.

    Examples
    --------
    Two processes on one host, each started with its index ``i`` (0 and 1):

    >>> import bayesbandit as bb
    >>> bb.sharding.initialize("127.0.0.1:1234", 2, i)  # doctest: +SKIP
    >>> ds = bb.simulate({"lints": bb.LinTS(v=0.5)}, bb.envs.LinearBandit(K=5, d=2), 100, runs=64)  # doctest: +SKIP
    """
    _check_address(coordinator_address)
    num_processes = check_int("initialize", "num_processes", num_processes, low=1)
    process_id = check_int("initialize", "process_id", process_id, low=0, high=num_processes - 1)
    initialization_timeout = check_int("initialize", "initialization_timeout", initialization_timeout, low=1)
    heartbeat_timeout = check_int("initialize", "heartbeat_timeout", heartbeat_timeout, low=1)
    if jax.distributed.is_initialized():
        raise ConfigurationError(
            "initialize() was called in a process that already joined a job. Fix: call bb.sharding.initialize() "
            "once per process."
        )
    if xla_bridge.backends_are_initialized():
        raise ConfigurationError(
            "initialize() was called after JAX created its backend (a computation has already run, or jax.devices() "
            "was called), so this process can no longer join a job. Fix: call bb.sharding.initialize() right after "
            "the imports, before any JAX computation (bb.runtime.enable_x64() may come before or after it)."
        )
    jax.distributed.initialize(
        coordinator_address=coordinator_address,
        num_processes=num_processes,
        process_id=process_id,
        cluster_detection_method="deactivate",
        initialization_timeout=initialization_timeout,
        heartbeat_timeout_seconds=heartbeat_timeout,
        coordinator_bind_address=coordinator_address,
    )


def _check_address(address: Any) -> None:
    """Raise InvalidInput unless ``address`` is ``"host:port"`` with a port in [1, 65535]."""
    host, _, port = address.rpartition(":") if isinstance(address, str) else ("", "", "")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise InvalidInput(
            "The 'coordinator_address' parameter of initialize must be a string 'host:port' with a port in "
            f"[1, 65535]. Got {address!r} instead. Fix: pass process 0's address and a free port, e.g. "
            "'10.0.0.1:1234', the same in every process."
        )


def runs_mesh() -> Mesh | None:
    """A one-axis mesh over every device of the default backend (of every process), or None when there is one."""
    devices = jax.devices()
    return Mesh(np.array(devices), (RUNS_AXIS,)) if len(devices) > 1 else None


def compile_over_runs(fn: Callable, args: tuple, in_specs: tuple, mesh: Mesh | None, *, options: Any = None) -> Any:
    """``jit(fn)`` compiled for ``args``; with a mesh, ``shard_map`` over the runs axis.

    ``in_specs`` gives per argument ``PartitionSpec(RUNS_AXIS)`` (split: its leading axis is the
    runs axis) or ``PartitionSpec()`` (the same on every device); every output is split.
    """
    if mesh is None:
        return jax.jit(fn, compiler_options=options).lower(*args).compile()
    runs = PartitionSpec(RUNS_AXIS)
    # check_vma off: policies build per-run carries from constants (a Newton loop's start), and no value
    # is ever reduced across devices, so the replication types it checks carry no information here.
    sharded = jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=runs, check_vma=False)
    shardings = tuple(NamedSharding(mesh, spec) for spec in in_specs)
    return (
        jax.jit(sharded, in_shardings=shardings, out_shardings=NamedSharding(mesh, runs), compiler_options=options)
        .lower(*args)
        .compile()
    )


def to_mesh(tree: Any, mesh: Mesh | None, spec: PartitionSpec) -> Any:
    """``tree``'s arrays as global arrays on ``mesh`` laid out by ``spec``; with one process, ``tree`` itself.

    Every process passes the same whole values; each fills only the shards of its own devices.
    Before that, the integer, boolean and key leaves (random-number keys, round indices: what
    the arguments determine exactly) are compared across processes, and a difference raises.

    Raises
    ------
    ConfigurationError
        The processes passed different integer or key values: they do not run the same program.
    """
    if mesh is None or jax.process_count() == 1:
        return tree
    _check_agreement(tree)
    sharding = NamedSharding(mesh, spec)

    def put(leaf: Any) -> jax.Array:
        value = leaf if _is_key(leaf) else np.asarray(leaf)  # typed keys have no NumPy form; they index alike
        return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])

    return jax.tree.map(put, tree)


def to_host(tree: Any) -> Any:
    """``tree``'s arrays as NumPy arrays; global arrays of several processes are gathered into every process."""
    if jax.process_count() == 1:
        return jax.device_get(tree)

    def get(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
            return multihost_utils.process_allgather(leaf, tiled=True)
        return jax.device_get(leaf)

    return jax.tree.map(get, tree)


def _is_key(leaf: Any) -> bool:
    return isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def _check_agreement(tree: Any) -> None:
    """Raise ConfigurationError unless every process holds the same integer, boolean and key leaves of ``tree``."""
    digest = hashlib.blake2b(digest_size=8)
    for leaf in jax.tree.leaves(tree):
        value = np.asarray(jax.random.key_data(leaf)) if _is_key(leaf) else np.asarray(leaf)
        if value.dtype.kind in "biu":
            digest.update(f"{value.dtype.str}{value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
    mine = np.frombuffer(digest.digest(), np.uint32)
    every = multihost_utils.process_allgather(mine)  # (processes, 2)
    if not (every == mine).all():
        raise ConfigurationError(
            f"Process {jax.process_index()} of {jax.process_count()} holds other keys or indices than the others "
            "for the same step: the processes do not run the same program. Fix: run the same calls with the same "
            "arguments (seed, runs, horizon, policies) in every process."
        )
