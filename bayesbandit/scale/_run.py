"""Run a grid's parts here or on a Dask cluster, store each as it finishes, and gather them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import jax
import numpy as np
import xarray as xr

from bayesbandit.errors import IncompleteGrid, InvalidInput
from bayesbandit.precision import x64_enabled
from bayesbandit.scale._parts import Part, shard
from bayesbandit.scale._store import PartStore, Settings

__all__ = ["Grid", "run_grid", "concat_runs", "per_point", "local_cluster"]


@runtime_checkable
class Grid(Protocol):
    """An experiment cut into parts: what they are, what each was computed with, and how to compute one.

    A grid is sent whole to every worker that computes one of its parts, so it must pickle: a
    frozen dataclass of settings defined at a module's top level (an installed module, which the
    workers import) is the usual form. ``grid(part)`` must give the same dataset wherever it runs:
    derive every random number from the part's global run indices (:func:`bayesbandit.sim.simulate`'s
    ``first_run``) and a seed, never from a process's state.
    """

    def parts(self) -> list[Part]:
        """Every part, in the order they are submitted and sharded."""
        ...

    def settings(self, part: Part) -> Settings:
        """What a stored ``part`` must have been computed with to be reused (numbers and text)."""
        ...

    def __call__(self, part: Part) -> xr.Dataset:
        """Compute ``part``."""
        ...


@dataclass(frozen=True)
class _InWorker:
    """``grid(part)`` in a worker process with the submitting process's numeric settings.

    A Dask worker is a fresh process: JAX's 64-bit mode (which changes every number) and the
    straight-line Threefry lowering (same bits, faster) are set there as they are here.
    """

    grid: Grid
    x64: bool
    fast_rng: bool

    def __call__(self, part: Part) -> xr.Dataset:
        from bayesbandit import runtime

        if self.x64:
            runtime.enable_x64()
        if self.fast_rng:
            runtime.enable_fast_rng()
        return self.grid(part)


def _check_client(client: Any) -> None:
    if not (callable(getattr(client, "submit", None)) and callable(getattr(client, "cancel", None))):
        raise InvalidInput(
            f"The 'client' parameter of run_grid must be a dask.distributed.Client or None. Got "
            f"{type(client).__name__} instead. Fix: pass Client('tcp://scheduler:8786'), "
            f"bayesbandit.scale.local_cluster(2), or None to compute here."
        )


def run_grid(
    grid: Grid,
    *,
    store: PartStore | None = None,
    client: Any = None,
    shard_of: tuple[int, int] | None = None,
    compute: bool = True,
    progress: bool = False,
) -> dict[Part, xr.Dataset]:
    """Every part of ``grid``: loaded where ``store`` holds it, computed otherwise, each stored as it finishes.

    Parameters
    ----------
    grid : Grid
    store : PartStore, optional
        Finished parts: reused when computed with the same settings (a stopped run resumes, and
        shards that share a folder, or a merge given theirs, complete each other).
    client : dask.distributed.Client, optional
        Compute the missing parts on this cluster, one task per part, stored here as they come
        back. A task whose worker dies is rerun on another (Dask's scheduler does this); a part
        that raises stops the run with its exception. None computes here, one part after another.
    shard_of : (K, N), optional
        Compute only shard ``K`` of ``N`` (:func:`bayesbandit.scale.shard`) of the missing parts.
    compute : bool
        False computes nothing: every part must be stored (a merge).
    progress : bool
        A progress bar over the parts.

    Returns
    -------
    dict of Part to xarray.Dataset
        Every part of the grid, in plan order.

    Raises
    ------
    IncompleteGrid
        Some parts are neither stored nor computed (another shard's, or any with ``compute=False``),
        after this call computed and stored its own.

    Notes
    -----
    In a job of several JAX processes (:func:`bayesbandit.sharding.initialize`) every process
    must run the same computations, so stored parts are not reused there, and only process 0
    stores what it computed.
    """
    parts = grid.parts()
    if client is not None:
        _check_client(client)
    spmd = jax.process_count() > 1
    done: dict[Part, xr.Dataset] = {}
    if store is not None and not spmd:
        for part in parts:
            ds = store.load(part, grid.settings(part))
            if ds is not None:
                done[part] = ds
    mine = parts if shard_of is None else shard(parts, *shard_of)
    todo = [part for part in mine if part not in done] if compute else []
    if progress and done:
        where = store.folder if store is not None else ""
        print(f"{len(done)} of {len(parts)} parts already stored in {where}", flush=True)

    def finished(part: Part, ds: xr.Dataset) -> None:
        done[part] = ds
        if store is not None and jax.process_index() == 0:
            store.save(part, ds, grid.settings(part))

    from tqdm.auto import tqdm

    with tqdm(total=len(todo), desc="parts", unit="part", disable=not progress or not todo) as bar:
        if client is None:
            for part in todo:
                bar.set_postfix_str(str(part))
                finished(part, grid(part))
                bar.update()
        elif todo:
            from distributed import as_completed

            from bayesbandit import runtime

            task = _InWorker(grid, x64_enabled(), runtime.fast_rng_enabled())
            futures = {client.submit(task, part, pure=False): part for part in todo}
            try:
                for future in as_completed(futures):
                    finished(futures[future], future.result())
                    bar.update()
            finally:
                client.cancel(list(futures))
    missing = tuple(part for part in parts if part not in done)
    if missing:
        where = f" in {store.folder}" + "".join(f", {s}" for s in store.sources) if store is not None else ""
        raise IncompleteGrid(
            f"{len(missing)} of {len(parts)} parts of the grid are not stored{where} (first missing: "
            f"{missing[0]}); this call computed {len(todo)}. Fix: run the other shards into the same folder, "
            f"or pass their folders to `bayesbandit merge`.",
            missing,
        )
    return {part: done[part] for part in parts}


def concat_runs(blocks: Sequence[xr.Dataset]) -> xr.Dataset:
    """Run blocks of one grid point as one dataset, in run order.

    Variables with a ``run`` dimension are concatenated along it; times (variables with
    ``units = "s"``, e.g. ``simulate``'s ``compile_time`` and ``run_time``) are summed over the
    blocks; every other variable is the first block's (they describe the point, not the runs).
    The ``runs`` attribute becomes the total, ``first_run`` the smallest.
    """
    if not blocks:
        raise InvalidInput("concat_runs: no blocks given. Fix: pass at least one dataset with a 'run' dimension.")
    blocks = sorted(blocks, key=lambda ds: int(ds["run"].values[0]))
    per_run = [name for name, var in blocks[0].data_vars.items() if "run" in var.dims]
    out = xr.concat([ds[per_run] for ds in blocks], dim="run", data_vars="all", coords="minimal", compat="override")
    for name, var in blocks[0].data_vars.items():
        if name in per_run:
            continue
        if var.attrs.get("units") == "s":
            out[name] = sum((ds[name] for ds in blocks[1:]), start=var)
            out[name].attrs = dict(var.attrs)
        else:
            out[name] = var
    out.attrs = dict(blocks[0].attrs)
    runs = out["run"].values
    if len(np.unique(runs)) != len(runs):
        raise InvalidInput(
            f"concat_runs: the blocks overlap (run indices {runs[:1]}...{runs[-1:]} with repeats). "
            f"Fix: pass each block of runs once."
        )
    if "runs" in out.attrs:
        out.attrs["runs"] = len(runs)
    if "first_run" in out.attrs:
        out.attrs["first_run"] = int(runs.min())
    return out


def per_point(done: Mapping[Part, xr.Dataset]) -> dict[tuple[str | int, ...], xr.Dataset]:
    """Each grid point's parts (as :func:`run_grid` returns them) as one dataset (:func:`concat_runs`), in plan order."""
    points: dict[tuple[str | int, ...], list[xr.Dataset]] = {}
    for part, ds in done.items():
        points.setdefault(part.point, []).append(ds)
    return {point: concat_runs(blocks) for point, blocks in points.items()}


def local_cluster(*, workers: int = 2, threads_per_worker: int = 1, env: Mapping[str, str] | None = None) -> Any:
    """A Dask client of a cluster of ``workers`` new processes on this machine, bound to 127.0.0.1.

    Workers are started with ``spawn`` (never ``fork``: JAX is multithreaded and a forked child of
    a process that has started JAX can hang) and each runs one task at a time, so ``workers``
    JAX processes share the cores; with ``workers`` equal to the number of cores every part has
    one core. The client owns its cluster: ``client.close()``, or leaving
    ``with local_cluster(2) as client:``, stops the workers too.

    Parameters
    ----------
    workers : int
        Worker processes.
    threads_per_worker : int
        Tasks a worker runs at once (1: one part per process).
    env : mapping, optional
        Environment variables set in each worker before it starts (for example ``XLA_FLAGS``).

    Returns
    -------
    dask.distributed.Client
    """
    workers = int(workers)
    if workers < 1:
        raise InvalidInput(
            f"The 'workers' parameter of local_cluster must be an int >= 1. Got {workers!r} instead. "
            f"Fix: pass the number of worker processes, e.g. the number of cores."
        )
    try:
        import dask
        from distributed import Client
    except ImportError as exc:
        raise InvalidInput(
            "local_cluster needs Dask's distributed scheduler, which is not installed. "
            'Fix: pip install "bayesbandit[distributed]" (or pip install "dask[distributed]").'
        ) from exc
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}):
        # A client given no address starts a LocalCluster from these arguments and closes it with itself.
        return Client(
            n_workers=workers,
            threads_per_worker=threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            env=dict(env or {}),
        )
