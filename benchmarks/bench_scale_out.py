"""The Figure 1 grid on a local Dask cluster of 2 workers against the one-process run, and the cost of a task.

Both are the ``bayesbandit`` command a user runs, each in its own child process, one after the
other on the same machine: ``bayesbandit run glm-logistic`` (one process, the runs split over one
host device per core) and ``bayesbandit run glm-logistic --workers 2`` (a local Dask cluster of 2
spawned worker processes with one device each; the command's process only gathers). The grid is
Figure 1's: d in {5, 10, 15, 20} x 8 policies x 100 runs in blocks of 25 (128 parts), at a horizon
of ``--horizon`` rounds (default 5,000, a tenth of the paper's; the full horizon is a 38-minute run
per side on 2 cores). The compilation cache is off in both, so both compile everything they run.

Reported: wall time of each command (start to exit), the ratio, the compute time inside the parts
(``simulate``'s compile + run time, summed over parts), and the overhead per part of the cluster:
(workers x wall time - compute time in parts) / parts; also the round trip of an empty task on a
2-worker cluster (dispatch alone). The two results files must agree bit for bit.

Usage, from the repository root: ``python -m benchmarks.bench_scale_out [--quick] [--horizon N]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import xarray as xr

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import machine_info, md_table, write_results  # noqa: E402

WORKERS = 2


def command(out: Path, horizon: int, quick: bool, extra: list[str]) -> float:
    """Run the ``bayesbandit`` command into ``out``; its wall time in seconds."""
    argv = [sys.executable, "-m", "bayesbandit.experiments.cli", "run", "glm-logistic", "--out", str(out)]
    argv += ["--horizon", str(horizon), "--no-progress", *(["--quick"] if quick else []), *extra]
    env = {**os.environ, "BAYESBANDIT_JAX_CACHE": "", "JAX_PLATFORMS": "cpu"}
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, timeout=7200, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def part_seconds(out: Path) -> tuple[int, float]:
    """The number of stored parts and their compute time (``simulate``'s compile + run time) summed."""
    files = sorted((out / "parts").rglob("*.nc"))
    total = 0.0
    for path in files:
        with xr.open_dataset(path) as ds:
            total += float(ds["wall_time"].sum())
    return len(files), total


def empty_task_round_trip(tasks: int = 400) -> float:
    """Seconds per empty task submitted to and gathered from a 2-worker local cluster."""
    from bayesbandit.scale import local_cluster

    with local_cluster(workers=WORKERS) as client:
        client.gather(client.map(abs, range(-20, 0), pure=False))  # workers warm
        start = time.perf_counter()
        client.gather(client.map(abs, range(-tasks, 0), pure=False))
        return (time.perf_counter() - start) / tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the quick grid (d = 5, 4 runs, 2,000 rounds)")
    parser.add_argument("--horizon", type=int, default=None)
    args = parser.parse_args()
    horizon = args.horizon or (2_000 if args.quick else 5_000)
    info = machine_info()
    with tempfile.TemporaryDirectory() as tmp:
        one, cluster = Path(tmp) / "one", Path(tmp) / "cluster"
        wall_one = command(one, horizon, args.quick, [])
        wall_cluster = command(cluster, horizon, args.quick, ["--workers", str(WORKERS)])
        parts, in_one = part_seconds(one)
        _, in_cluster = part_seconds(cluster)
        a, b = (xr.load_dataset(p / "glm_logistic.nc") for p in (one, cluster))
        same = all(np.array_equal(a[v].values, b[v].values) for v in ("cumulative_regret", "total_reward"))
    trip = empty_task_round_trip()
    overhead = (WORKERS * wall_cluster - in_cluster) / parts
    rows = [
        ["one process (2 host devices)", f"{wall_one:.0f}", "1.00", f"{in_one:.0f}", "-"],
        [
            f"local Dask cluster, {WORKERS} workers",
            f"{wall_cluster:.0f}",
            f"{wall_cluster / wall_one:.2f}",
            f"{in_cluster:.0f}",
            f"{overhead:.2f}",
        ],
    ]
    text = "\n".join(
        [
            "# Figure 1's grid on a local Dask cluster against one process",
            "",
            f"`python -m benchmarks.bench_scale_out{' --quick' if args.quick else ''} --horizon {horizon}`: "
            f"glm-logistic{' (quick)' if args.quick else ''}, {parts} parts, horizon {horizon:,}, "
            "compilation cache off; each side is the `bayesbandit` command in its own process, one after the other.",
            "",
            md_table(
                [
                    "run",
                    "wall time (s)",
                    "ratio to one process",
                    "compute in parts (s, summed)",
                    "cluster overhead per part (s)",
                ],
                rows,
            ),
            "",
            f"- results equal bit for bit: {same}",
            f"- empty task round trip on a {WORKERS}-worker local cluster: {trip * 1e3:.2f} ms per task",
            "- compute in parts is `simulate`'s compile + run time: each worker compiles every policy structure it "
            "meets, where the one process compiles each once",
            "",
            "## Machine",
            "",
            info,
        ]
    )
    print(text)
    print("wrote", write_results("bench_scale_out", args.quick, text))


if __name__ == "__main__":
    main()
