"""The ``bayesbandit`` command: list, run and merge the named experiments.

::

    bayesbandit list
    bayesbandit run glm-logistic --quick --out results/
    bayesbandit run glm-logistic --workers 2                      # a local Dask cluster
    bayesbandit run glm-logistic --scheduler tcp://host:8786      # a Dask cluster
    bayesbandit run glm-logistic --shard 0/2 --out shard0/        # job 0 of 2 (a Slurm array)
    bayesbandit merge shard0/ shard1/ --out results/glm-logistic  # the figure from the shards
    bayesbandit run glm-logistic --coordinator host0:1234 --num-processes 2 --process-id 0
    bayesbandit run bai-adaptive --cells "B/K = 10, 16; B/K = 20, 16"  # two cells of a bai-* grid

``run`` writes a PNG plot, the results (netCDF) and a markdown summary table into ``--out``,
prints where they went and the summary table. Compiled executables are kept in JAX's persistent
compilation cache (``$BAYESBANDIT_JAX_CACHE``, default ``~/.cache/bayesbandit/jax``; set it to
an empty string to disable), so a second run of the same experiment skips most compilation.
"""

from __future__ import annotations

import argparse
import atexit
import inspect
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bayesbandit.experiments._provenance import MANIFEST, code_version, command_line, provenance, stamp

from bayesbandit import __version__
from bayesbandit.errors import BayesBanditError, IncompleteGrid, InvalidInput

__all__ = ["main"]


_SUBSETS = (
    ("policies", ",", "runs all its policies"),
    ("sections", ",", "has no sections"),
    ("cells", ";", "has no cells to choose"),
)
"""The flags that run part of an experiment: (flag and ``run`` keyword, separator, why an experiment
without that keyword refuses it)."""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1; got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bayesbandit", description="Bayesian bandits from NumPyro reward programs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the experiments with one-line descriptions")
    run = sub.add_parser("run", help="run an experiment: plot (PNG), results (netCDF), summary (markdown)")
    run.add_argument("experiment", help="experiment name (see `bayesbandit list`)")
    run.add_argument("--quick", action="store_true", help="a small smoke version (about a minute)")
    run.add_argument("--runs", type=_positive_int, default=None, help="number of runs (instances)")
    run.add_argument("--horizon", type=_positive_int, default=None, help="rounds per run")
    run.add_argument("--out", type=Path, default=None, help="output folder (default: results/EXPERIMENT)")
    run.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    run.add_argument("--no-progress", action="store_true", help="hide progress bars")
    run.add_argument(
        "--policies",
        default=None,
        help="comma-separated policy names or name prefixes, for experiments stored one policy per cell (default: all)",
    )
    run.add_argument(
        "--cells",
        default=None,
        help="';'-separated cells of a bai-* grid, by their labels in its summary, e.g. 'B/K = 10, 16' (default: all)",
    )
    run.add_argument(
        "--sections",
        default=None,
        help="comma-separated section names, for experiments made of sections (comb-clustered, sublinear-synthetic; default: all)",
    )
    run.add_argument(
        "--devices",
        type=_positive_int,
        default=None,
        help="host CPU devices to split the runs over (default: one per core; ignored on an accelerator)",
    )
    grid = run.add_argument_group("beyond one process (experiments made of parts; see `bayesbandit.scale`)")
    where = grid.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive_int, default=None, help="compute the parts on a local Dask cluster")
    where.add_argument("--scheduler", default=None, help="compute the parts on the Dask cluster at this address")
    grid.add_argument("--shard", default=None, metavar="K/N", help="compute only shard K of N (0-based) of the parts")
    grid.add_argument("--block", type=_positive_int, default=None, help="runs per part")
    spmd = run.add_argument_group("one JAX job over several processes (every process runs the same command)")
    spmd.add_argument("--coordinator", default=None, metavar="HOST:PORT", help="process 0's address")
    spmd.add_argument("--num-processes", type=_positive_int, default=None, help="processes in the job")
    spmd.add_argument("--process-id", type=int, default=None, help="this process's index, 0 to N-1")
    merge = sub.add_parser("merge", help="write an experiment's results from the parts its shards stored")
    merge.add_argument("folders", nargs="+", type=Path, help="the shards' --out folders")
    merge.add_argument("--out", type=Path, default=None, help="output folder (default: the first folder)")
    merge.add_argument("--no-progress", action="store_true", help="hide progress messages")
    return parser


def _description(module_name: str) -> str:
    import importlib

    try:
        return importlib.import_module(module_name).DESCRIPTION
    except Exception as exc:  # a broken or missing experiment must not break `list`
        return f"(unavailable: {type(exc).__name__}: {exc})"


def _use_host_devices(count: int) -> None:
    """Before JAX starts: ``count`` host CPU devices, over which ``simulate`` splits its runs.

    XLA:CPU runs one program on about one core; split over one device per core the runs use them
    all (1.8-1.9x on 2 cores, ``benchmarks/results/bench_sharding.md``), with the same results. A
    device count already in ``XLA_FLAGS`` is kept; an accelerator backend ignores the setting.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if count > 1 and "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={count}".strip()


def _enable_compilation_cache() -> None:
    """The persistent compilation cache, unless ``BAYESBANDIT_JAX_CACHE`` is set empty; never fatal."""
    if os.environ.get("BAYESBANDIT_JAX_CACHE") == "":
        return
    from bayesbandit.errors import InvalidInput
    from bayesbandit.runtime import enable_compilation_cache

    try:
        enable_compilation_cache()
    except InvalidInput:  # caching is an optimisation only
        pass


def _writable(folder: Path) -> bool:
    """Whether results can be written into ``folder``; if not, the message says why and what to do."""
    problem = _unwritable(folder)
    if problem:
        print(
            f"bayesbandit: cannot write results to {folder}: {problem}. Fix: pass --out with a folder you can write.",
            file=sys.stderr,
        )
    return problem is None


def _unwritable(folder: Path) -> str | None:
    """Why results cannot be written into ``folder`` (created if missing), or None if they can."""
    if folder.exists() and not folder.is_dir():
        return "it is a file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


_GRID_FLAGS = ("workers", "scheduler", "shard", "block")


def _grid_options(args: argparse.Namespace, made_of_parts: bool) -> dict[str, Any] | str:
    """The grid keywords for the experiment's ``run`` from the flags, or the message that refuses them."""
    given = [flag for flag in _GRID_FLAGS if getattr(args, flag) is not None]
    if not made_of_parts:
        if given:
            flags = ", ".join(f"--{flag}" for flag in given)
            return f"experiment {args.experiment!r} is not made of parts and runs in one process; drop {flags}"
        return {}
    options: dict[str, Any] = {}
    if args.shard is not None:
        from bayesbandit.scale import parse_shard

        options["shard_of"] = parse_shard(args.shard)  # InvalidInput on a bad K/N
    if args.block is not None:
        options["block"] = args.block
    return options


def _client(args: argparse.Namespace) -> Any:
    """The Dask client the flags ask for, or None."""
    if args.workers is not None:
        from bayesbandit.scale import local_cluster

        return local_cluster(workers=args.workers)
    if args.scheduler is not None:
        try:
            from distributed import Client
        except ImportError as exc:
            raise InvalidInput(
                '--scheduler needs Dask\'s distributed scheduler. Fix: pip install "bayesbandit[distributed]".'
            ) from exc
        return Client(args.scheduler, timeout=60)
    return None


def _report(name: str, paths: dict[str, Path], elapsed: float, out: Path, command: str, code: dict[str, Any]) -> None:
    """Stamp ``out`` with the run's provenance (:mod:`~experiments._provenance`; ``code`` as read at the start)
    and print what was written."""
    summaries = [Path(p) for p in paths.values() if Path(p).suffix == ".md" and Path(p).is_file()]
    stamp(out, provenance(command, elapsed, code), summaries)
    print(f"\n{name} finished in {elapsed:.1f} s; wrote:")
    for kind, path in paths.items():
        print(f"  {kind:<8} {path}")
    summary = paths.get("summary")
    if summary is not None and Path(summary).suffix == ".md" and Path(summary).exists():
        print()
        print(Path(summary).read_text())


def _start_processes(args: argparse.Namespace) -> str | None:
    """Join the JAX job the SPMD flags describe (before any computation); a message if they are incomplete."""
    spmd = (args.coordinator, args.num_processes, args.process_id)
    if all(flag is None for flag in spmd):
        return None
    if any(flag is None for flag in spmd):
        return "--coordinator, --num-processes and --process-id go together; pass all three to every process"
    from bayesbandit.sharding import initialize

    initialize(args.coordinator, args.num_processes, args.process_id)
    return None


def _merge(args: argparse.Namespace, command: str, code: dict[str, Any]) -> int:
    """``bayesbandit merge``: the experiment's results from the parts stored in the shards' folders."""
    from bayesbandit.experiments import load_experiment

    manifests = []
    for folder in args.folders:
        try:
            manifests.append(json.loads((folder / MANIFEST).read_text()))
        except (OSError, ValueError) as exc:
            print(
                f"bayesbandit: {folder} has no readable {MANIFEST} ({exc}). Fix: pass the --out folders of "
                f"`bayesbandit run EXPERIMENT --shard K/N` runs.",
                file=sys.stderr,
            )
            return 2
    first = manifests[0]
    for folder, manifest in zip(args.folders[1:], manifests[1:], strict=True):
        if (manifest.get("experiment"), manifest.get("options")) != (first.get("experiment"), first.get("options")):
            print(
                f"bayesbandit: {folder} holds {manifest.get('experiment')} with {manifest.get('options')}, but "
                f"{args.folders[0]} holds {first.get('experiment')} with {first.get('options')}. Fix: merge the "
                f"shards of one run (the same experiment and options).",
                file=sys.stderr,
            )
            return 2
    out = args.out if args.out is not None else args.folders[0]
    if not _writable(out):
        return 2
    from bayesbandit.runtime import enable_x64

    enable_x64()
    start = time.perf_counter()
    module = load_experiment(first["experiment"])
    sources = tuple(folder for folder in args.folders if folder.resolve() != out.resolve())
    try:
        paths = module.run(out, progress=not args.no_progress, **first["options"], sources=sources, compute=False)
    except IncompleteGrid as exc:
        print(f"bayesbandit: {exc}", file=sys.stderr)
        return 2
    if out.resolve() != args.folders[0].resolve():
        (out / MANIFEST).write_text(json.dumps(first, indent=1))
    _report(first["experiment"], paths, time.perf_counter() - start, out, command, code)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesbandit`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    command = command_line(["bayesbandit", *(sys.argv[1:] if argv is None else argv)])
    # Before JAX starts its CPU backend: the smallest XLA:CPU pool (one thread per host device).
    # The runs on each device are one program each, so more threads would only oversubscribe the
    # cores; the library's LAPACK calls never wait on the pool (bayesbandit/_linalg.py).
    os.environ.setdefault("PJRT_NPROC", "1")
    if args.command == "run":
        # With a Dask cluster this process only gathers the parts; its workers inherit the environment
        # (one device each: the cluster's processes share the cores).
        cluster = args.workers is not None or args.scheduler is not None
        _use_host_devices(1 if cluster else args.devices or os.cpu_count() or 1)
    from bayesbandit.experiments import EXPERIMENTS, load_experiment

    if args.command == "list":
        width = max(len(name) for name in EXPERIMENTS)
        for name, module in EXPERIMENTS.items():
            print(f"{name:<{width}}  {_description(module)}")
        return 0
    code = code_version()  # the code this run or merge starts from, before anyone can edit the checkout
    if args.command == "merge":
        return _merge(args, command, code)

    if args.experiment not in EXPERIMENTS:
        print(f"bayesbandit: unknown experiment {args.experiment!r}; known: {', '.join(EXPERIMENTS)}", file=sys.stderr)
        return 2
    out = args.out if args.out is not None else Path("results") / args.experiment
    if not _writable(out):
        return 2
    try:
        refused = _start_processes(args)
    except BayesBanditError as exc:
        refused = str(exc)
    if refused:
        print(f"bayesbandit: {refused}", file=sys.stderr)
        return 2
    _enable_compilation_cache()
    from bayesbandit.runtime import enable_fast_rng, enable_x64

    enable_x64()  # this process is ours: the experiments' Newton solves need float64
    enable_fast_rng()  # and its random draws on CPU compile without loops (the same numbers)
    module = load_experiment(args.experiment)
    start = time.perf_counter()
    options: dict[str, Any] = {"quick": args.quick, "runs": args.runs, "horizon": args.horizon, "seed": args.seed}
    for flag, separator, refusal in _SUBSETS:
        given = getattr(args, flag)
        if given is None:
            continue
        if flag not in inspect.signature(module.run).parameters:
            print(f"bayesbandit: experiment {args.experiment!r} {refusal}; drop --{flag}", file=sys.stderr)
            return 2
        options[flag] = [item.strip() for item in given.split(separator) if item.strip()]
    made_of_parts = "client" in inspect.signature(module.run).parameters  # the grid experiments take a client
    try:
        grid = _grid_options(args, made_of_parts)
    except BayesBanditError as exc:
        grid = str(exc)
    if isinstance(grid, str):
        print(f"bayesbandit: {grid}", file=sys.stderr)
        return 2
    import jax

    leader = jax.process_index() == 0
    if not leader:  # process 0 of the JAX job writes the results; this one's go to a folder removed at exit
        out = Path(tempfile.mkdtemp(prefix="bayesbandit-"))
        atexit.register(shutil.rmtree, out, ignore_errors=True)
    if made_of_parts:
        block = {"block": grid["block"]} if "block" in grid else {}
        manifest = {"experiment": args.experiment, "options": {**options, **block}}
        (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    try:
        client = _client(args)  # None unless --workers or --scheduler, which only grids accept
        try:
            if client is not None:
                grid["client"] = client
            paths = module.run(out, progress=not args.no_progress, **options, **grid)
        finally:
            if client is not None:
                client.close()
    except IncompleteGrid as exc:
        if "shard_of" not in grid:
            print(f"bayesbandit: {exc}", file=sys.stderr)
            return 2
        k, n = grid["shard_of"]
        print(
            f"\n{args.experiment}: shard {k}/{n} finished in {time.perf_counter() - start:.1f} s; its parts are in "
            f"{out / 'parts'} ({len(exc.missing)} parts of other shards not there yet). When every shard has "
            f"finished: bayesbandit merge FOLDER... --out DIR, with the shards' --out folders (or run the last "
            f"shard into a folder that holds the others' parts)."
        )
        return 0
    except BayesBanditError as exc:  # a user mistake (e.g. a horizon too short): no traceback
        print(f"bayesbandit: {exc}", file=sys.stderr)
        return 2
    if leader:
        _report(args.experiment, paths, time.perf_counter() - start, out, command, code)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
