"""Paired evaluation of best-arm-identification algorithms on common random numbers.

Replication ``r`` of :func:`replicate` gives every algorithm

* the same instance: ``env.reset(fold_in(fold_in(k, 0), r))``;
* the same rewards: the stack of rewards keyed by ``fold_in(fold_in(k, 1), r)``
  (``bayesbandit.bai._protocol``), so the ``j``-th pull of an arm returns the same value
  whichever algorithm pulls it;
* the same tie-breaking stream.

A replication's keys depend on its index ``r`` only, so replications ``a..b-1`` evaluated alone
(``first_replication=a``) are those of a larger evaluation, and blocks evaluated anywhere join
into it (:func:`concat_replications`, :mod:`bayesbandit.scale`).

Differences between algorithms are therefore paired: the standard error of a difference of
accuracies is that of the per-replication difference, ``sd(c_a - c_b) / sqrt(R)``, often far
smaller than the two binomial errors combined.

With several devices each batch of replications is split over them (:mod:`bayesbandit.sharding`),
also when they belong to several processes of one job (:func:`bayesbandit.sharding.initialize`:
the batches are placed as global arrays and the results gathered into every process); the
results are the same as on one device.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from jax.sharding import PartitionSpec

from bayesbandit._compile import options_key
from bayesbandit._typing import Array
from bayesbandit.bai._protocol import BAIAlgorithm, BAIEnv, check_budget, check_env, check_instance, is_correct
from bayesbandit.envs import Instance, describe
from bayesbandit.errors import InvalidInput
from bayesbandit.sharding import RUNS_AXIS, compile_over_runs, runs_mesh, to_host, to_mesh
from bayesbandit.validation import check_compiler_options, check_int

__all__ = ["replicate", "replication_keys", "summarize_replications", "concat_replications"]


def replication_keys(seed: int, replications: int, *, first: int = 0) -> tuple[Array, Array]:
    """(instance keys, run keys) of replications ``first..first + replications - 1``, each ``(replications, key)``.

    The pairing of :func:`~bayesbandit.bai.replicate`: replication ``r``'s keys are
    ``fold_in(fold_in(k, 0), r)`` and ``fold_in(fold_in(k, 1), r)``, whatever the other replications.
    """
    base = jax.random.key(seed)
    index = jnp.arange(first, first + replications, dtype=jnp.uint32)
    over = jax.vmap(jax.random.fold_in, in_axes=(None, 0))
    return over(jax.random.fold_in(base, 0), index), over(jax.random.fold_in(base, 1), index)


def _check_algorithms(algorithms: Any) -> dict[str, BAIAlgorithm]:
    if not isinstance(algorithms, Mapping) or not algorithms:
        raise InvalidInput(
            "replicate: the 'algorithms' argument must be a non-empty mapping from names to algorithms. "
            f"Got {type(algorithms).__name__} {algorithms!r} instead. Fix: pass e.g. {{'GSE': GSE()}}."
        )
    for name, algorithm in algorithms.items():
        if isinstance(algorithm, type) or not callable(getattr(algorithm, "identify", None)):
            raise InvalidInput(
                f"replicate: algorithm {name!r} must be an algorithm object with an identify(env, instance, budget, "
                f"key) method. Got {algorithm!r}. Fix: pass an instance, e.g. {{{name!r}: GSE()}}."
            )
    return {str(k): v for k, v in algorithms.items()}


def _runner(algorithm: BAIAlgorithm, env: BAIEnv, budget: int) -> Any:
    def one(instance: Instance, key: Array) -> tuple[Array, Array, Array]:
        arm, info = algorithm.identify(env, instance, budget, key)
        return arm, is_correct(instance, arm), info.pulls

    return jax.vmap(one)


_COMPILED: OrderedDict[Any, Any] = OrderedDict()
_CACHE_SIZE = 32  # executables kept (least recently used dropped): each holds native code and memory maps


def _compile(
    algorithm: BAIAlgorithm, env: BAIEnv, budget: int, example: Any, mesh: Any, options: dict[str, Any] | None
) -> tuple[Any, float]:
    """The compiled replication batch (split over the mesh's devices, if any; XLA ``options``) and the
    seconds compiling took now (0 when reused: the executables of the last 32 hashable (algorithm,
    env, budget, batch size, devices, options) are kept)."""
    devices = None if mesh is None else tuple(mesh.devices.flat)
    try:
        key: Any = (algorithm, env, budget, example[1].shape, devices, options_key(options))
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _COMPILED:
        _COMPILED.move_to_end(key)
        return _COMPILED[key], 0.0
    t0 = time.perf_counter()
    split = (PartitionSpec(RUNS_AXIS), PartitionSpec(RUNS_AXIS))
    # identify checks the budget
    compiled = compile_over_runs(_runner(algorithm, env, budget), example, split, mesh, options=options)
    if key is not None:
        _COMPILED[key] = compiled
        while len(_COMPILED) > _CACHE_SIZE:
            _COMPILED.popitem(last=False)
    return compiled, time.perf_counter() - t0


def _batches(tree: Any, size: int, batch: int) -> list[tuple[Any, int]]:
    """Slices of the leading axis, the last padded (by repeating row 0) to ``batch`` rows."""
    out = []
    for start in range(0, size, batch):
        stop = min(start + batch, size)
        idx = np.r_[np.arange(start, stop), np.zeros(batch - (stop - start), int)]
        out.append((jax.tree.map(lambda a, i=idx: a[i], tree), stop - start))
    return out


def replicate(
    algorithms: Mapping[str, BAIAlgorithm],
    env: BAIEnv,
    budget: int,
    *,
    replications: int = 1000,
    seed: int = 0,
    batch_size: int = 250,
    progress: bool = False,
    first_replication: int = 0,
    compiler_options: dict[str, Any] | None = None,
) -> xr.Dataset:
    """Paired replications of BAI algorithms on one environment and budget.

    Parameters
    ----------
    algorithms : mapping of name -> algorithm
        Each has ``identify(env, instance, budget, key)``.
    env : BAI environment
        e.g. :class:`bayesbandit.bai.AdaptiveInstance`.
    budget : int
        Total pulls ``B``.
    replications : int
        Paired replications ``R``.
    seed : int
    batch_size : int
        Replications vmapped at once (memory); rounded up to a multiple of the device count.
    progress : bool
        Show a progress bar per algorithm.
    first_replication : int
        The global index of the first replication: replications ``first_replication, ...,
        first_replication + replications - 1`` are run (the ``replication`` coordinate), each
        with the keys of its index, so blocks join into one evaluation
        (:func:`concat_replications`).
    compiler_options : dict, optional
        XLA options for the compiled replications, as in :func:`bayesbandit.simulate`
        (``{"xla_backend_optimization_level": 0}`` compiles faster and runs slower).

    Returns
    -------
    xarray.Dataset
        Per (algorithm, replication): ``correct``, ``arm``, ``pulls``. Per algorithm:
        ``accuracy`` and its binomial standard error ``accuracy_se``, ``mean_pulls``,
        ``max_pulls``, ``seconds`` (run time, compilation excluded) and ``compile_seconds``. Per
        pair (algorithm, versus): ``difference`` (accuracy of ``algorithm`` minus that of ``versus``
        over the same replications) and its paired standard error ``difference_se``.
    """
    check_env("replicate", env)
    named = _check_algorithms(algorithms)
    replications = check_int("replicate", "replications", replications, low=2)
    batch_size = check_int("replicate", "batch_size", batch_size, low=1)
    seed = check_int("replicate", "seed", seed, low=0, high=2**32 - 1)
    first_replication = check_int("replicate", "first_replication", first_replication, low=0, high=2**32 - replications)
    if not isinstance(progress, bool):
        raise InvalidInput(
            f"replicate: the 'progress' argument must be a bool. Got {progress!r}. Fix: pass True or False."
        )
    budget = check_budget("replicate", budget, env.num_arms, 1)
    compiler_options = check_compiler_options("replicate", compiler_options)
    batch = min(batch_size, replications)
    mesh = runs_mesh()  # several devices: each batch is split over them (bayesbandit.sharding)
    if mesh is not None:
        batch = -(-batch // mesh.size) * mesh.size
    instance_keys, run_keys = replication_keys(seed, replications, first=first_replication)
    instances = jax.jit(jax.vmap(env.reset))(instance_keys)
    check_instance("replicate", instances)
    columns: dict[str, dict[str, np.ndarray]] = {}
    timing: dict[str, tuple[float, float]] = {}
    per_replication = PartitionSpec(RUNS_AXIS)
    chunks = [(to_mesh(c, mesh, per_replication), v) for c, v in _batches((instances, run_keys), replications, batch)]
    for name, algorithm in named.items():
        compiled, compile_seconds = _compile(algorithm, env, budget, chunks[0][0], mesh, compiler_options)
        parts: list[tuple[np.ndarray, ...]] = []
        bar = _progress(progress, len(chunks), name)
        t0 = time.perf_counter()
        for chunk, valid in chunks:
            arm, correct, pulls = to_host(compiled(*chunk))
            parts.append((np.asarray(arm)[:valid], np.asarray(correct)[:valid], np.asarray(pulls)[:valid]))
            bar.update(1)
        bar.close()
        timing[name] = (time.perf_counter() - t0, compile_seconds)
        arm, correct, pulls = (np.concatenate(p) for p in zip(*parts))
        columns[name] = {"arm": arm, "correct": correct, "pulls": pulls}
    return _dataset(columns, timing, env, budget, replications, seed, first_replication)


def _progress(enabled: bool, total: int, name: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=name, unit="batch", disable=not enabled, leave=False)


def summarize_replications(
    names: list[str],
    correct: np.ndarray,
    arm: np.ndarray,
    pulls: np.ndarray,
    seconds: np.ndarray,
    compile_seconds: np.ndarray,
    attrs: dict[str, Any],
    *,
    first_replication: int = 0,
) -> xr.Dataset:
    """The dataset of :func:`~bayesbandit.bai.replicate` from per-(algorithm, replication) arrays of paired runs
    (replications ``first_replication, ...``)."""
    replications = np.shape(correct)[1] if np.ndim(correct) == 2 else 0
    if replications < 2:
        raise InvalidInput(
            "summarize_replications: 'correct' must have shape (algorithms, replications) with at least 2 replications (the "
            f"paired standard errors divide by R - 1). Got shape {np.shape(correct)}. Fix: run more replications."
        )
    c = correct.astype(float)
    accuracy = c.mean(axis=1)
    diff = c[:, None, :] - c[None, :, :]
    return xr.Dataset(
        {
            "correct": (("algorithm", "replication"), correct.astype(bool)),
            "arm": (("algorithm", "replication"), arm),
            "pulls": (("algorithm", "replication"), pulls),
            "accuracy": ("algorithm", accuracy),
            "accuracy_se": ("algorithm", np.sqrt(accuracy * (1 - accuracy) / replications)),
            "mean_pulls": ("algorithm", pulls.mean(axis=1)),
            "max_pulls": ("algorithm", pulls.max(axis=1)),
            "seconds": ("algorithm", seconds, {"units": "s"}),
            "compile_seconds": ("algorithm", compile_seconds, {"units": "s"}),
            "difference": (("algorithm", "versus"), diff.mean(axis=2)),
            "difference_se": (("algorithm", "versus"), diff.std(axis=2, ddof=1) / np.sqrt(replications)),
        },
        coords={
            "algorithm": names,
            "versus": names,
            "replication": np.arange(first_replication, first_replication + replications),
        },
        attrs=attrs,
    )


def concat_replications(blocks: Sequence[xr.Dataset]) -> xr.Dataset:
    """Blocks of replications of one :func:`~bayesbandit.bai.replicate` (same algorithms, environment, budget
    and seed) as the one evaluation of all of them: per-replication results joined in replication order,
    times summed, accuracies and paired differences computed over every replication."""
    if not blocks:
        raise InvalidInput("concat_replications: no blocks given. Fix: pass at least one replicate result.")
    blocks = sorted(blocks, key=lambda ds: int(ds["replication"].values[0]))
    index = np.concatenate([ds["replication"].values for ds in blocks])
    if len(np.unique(index)) != len(index) or np.any(np.diff(index) != 1):
        raise InvalidInput(
            f"concat_replications: the blocks must cover consecutive replications once each; got replications "
            f"{index.min()}..{index.max()} with {len(index)} entries. Fix: pass each block once, none missing."
        )
    joined = {var: np.concatenate([ds[var].values for ds in blocks], axis=1) for var in ("correct", "arm", "pulls")}
    seconds = {var: np.sum([ds[var].values for ds in blocks], axis=0) for var in ("seconds", "compile_seconds")}
    attrs = {**blocks[0].attrs, "replications": len(index)}
    names = blocks[0].algorithm.values.tolist()
    return summarize_replications(names, **joined, **seconds, attrs=attrs, first_replication=int(index[0]))


def _dataset(
    columns: dict[str, dict[str, np.ndarray]],
    timing: dict[str, tuple[float, float]],
    env: BAIEnv,
    budget: int,
    replications: int,
    seed: int,
    first_replication: int,
) -> xr.Dataset:
    names = list(columns)
    attrs = {
        "env": describe(env),
        "budget": budget,
        "replications": replications,
        "seed": seed,
        "correct": "mu_arm >= max_i mu_i (every best arm counts)",
        "devices": str(jax.devices()),
    }
    return summarize_replications(
        names,
        np.stack([columns[n]["correct"] for n in names]),
        np.stack([columns[n]["arm"] for n in names]),
        np.stack([columns[n]["pulls"] for n in names]),
        np.array([timing[n][0] for n in names]),
        np.array([timing[n][1] for n in names]),
        attrs,
        first_replication=first_replication,
    )
