"""Independent replications split over devices: one code path for one CPU, host CPU devices, GPUs.

``simulate``'s runs and ``bai.evaluate``'s replications are independent, so with several devices
(GPUs, TPU cores, or host CPU devices from ``XLA_FLAGS=--xla_force_host_platform_device_count=N``)
their leading axis is split over a one-axis mesh with :func:`jax.shard_map`: every device plays its
share with the same per-replication program and nothing is communicated. Callers pad the axis to
a multiple of the device count and drop the padding; with one device the plain ``jit`` path runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["RUNS_AXIS", "runs_mesh", "compile_over_runs"]

RUNS_AXIS = "runs"
"""The name of the mesh axis the runs are split along."""


def runs_mesh() -> Mesh | None:
    """A one-axis mesh over every device of the default backend, or None when there is one device."""
    devices = jax.devices()
    return Mesh(np.array(devices), (RUNS_AXIS,)) if len(devices) > 1 else None


def compile_over_runs(fn: Callable, args: tuple, in_specs: tuple, mesh: Mesh | None, options: Any = None) -> Any:
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
