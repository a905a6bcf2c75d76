"""The ``bayesbandit`` command: list and run the named experiments.

::

    bayesbandit list
    bayesbandit run glm-logistic --quick --out results/

``run`` writes a PNG plot, the results (netCDF) and a markdown summary table into ``--out``,
prints where they went and the summary table. Compiled executables are kept in JAX's persistent
compilation cache (``$BAYESBANDIT_JAX_CACHE``, default ``~/.cache/bayesbandit/jax``; set it to
an empty string to disable), so a second run of the same experiment skips most compilation.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import tempfile
import time
from pathlib import Path

from bayesbandit.errors import BayesBanditError

__all__ = ["main"]


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1; got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bayesbandit", description="Bayesian bandits from NumPyro reward programs.")
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
        "--devices",
        type=_positive_int,
        default=None,
        help="host CPU devices to split the runs over (default: one per core; ignored on an accelerator)",
    )
    run.add_argument(
        "--jobs", type=_positive_int, default=1, help="worker processes, for experiments made of parts (default 1)"
    )
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesbandit`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    # Before JAX starts its CPU backend: the smallest XLA:CPU pool (one thread per host device).
    # The runs on each device are one program each, so more threads would only oversubscribe the
    # cores; the library's LAPACK calls never wait on the pool (bayesbandit/_linalg.py).
    os.environ.setdefault("PJRT_NPROC", "1")
    if args.command == "run":
        _use_host_devices(args.devices or os.cpu_count() or 1)
    from bayesbandit.experiments import EXPERIMENTS, load_experiment

    if args.command == "list":
        width = max(len(name) for name in EXPERIMENTS)
        for name, module in EXPERIMENTS.items():
            print(f"{name:<{width}}  {_description(module)}")
        return 0

    if args.experiment not in EXPERIMENTS:
        print(f"bayesbandit: unknown experiment {args.experiment!r}; known: {', '.join(EXPERIMENTS)}", file=sys.stderr)
        return 2
    out = args.out if args.out is not None else Path("results") / args.experiment
    problem = _unwritable(out)
    if problem:
        print(
            f"bayesbandit: cannot write results to {out}: {problem}. Fix: pass --out with a folder you can write.",
            file=sys.stderr,
        )
        return 2
    _enable_compilation_cache()
    from bayesbandit.runtime import enable_fast_rng, enable_x64

    enable_x64()  # this process is ours: the experiments' Newton solves need float64
    enable_fast_rng()  # and its random draws on CPU compile without loops (the same numbers)
    module = load_experiment(args.experiment)
    start = time.perf_counter()
    options = {"quick": args.quick, "runs": args.runs, "horizon": args.horizon, "seed": args.seed}
    if args.jobs != 1:
        if "jobs" not in inspect.signature(module.run).parameters:
            print(f"bayesbandit: experiment {args.experiment!r} runs in one process; drop --jobs", file=sys.stderr)
            return 2
        options["jobs"] = args.jobs
    if args.policies is not None:
        if "policies" not in inspect.signature(module.run).parameters:
            print(
                f"bayesbandit: experiment {args.experiment!r} runs all its policies; drop --policies", file=sys.stderr
            )
            return 2
        options["policies"] = [name.strip() for name in args.policies.split(",") if name.strip()]
    try:
        paths = module.run(out, progress=not args.no_progress, **options)
    except BayesBanditError as exc:  # a user mistake (e.g. a horizon too short): no traceback
        print(f"bayesbandit: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    print(f"\n{args.experiment} finished in {elapsed:.1f} s; wrote:")
    for kind, path in paths.items():
        print(f"  {kind:<8} {path}")
    summary = paths.get("summary")
    if summary is not None and Path(summary).suffix == ".md" and Path(summary).exists():
        print()
        print(Path(summary).read_text())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
