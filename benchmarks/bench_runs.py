"""Cost per round-run of compiled ``simulate`` against the number of runs, on the default backend.

Full-history GLM-TSL, online GLM-TSL and LinTS on ``LogisticBandit(K=100, d=10,
theta_cov="unit")`` for ``R = 1, 10, 100, 1,000, 10,000`` runs, every point at the same horizon
(the early rounds of a run take more Newton steps, so points compared at different horizons
mix two effects). Each point is the second ``simulate`` call of its shape (the first compiles):
its ``run_time`` (wall, compile excluded) and the process CPU time of the call, in microseconds
per round-run, with the compile time of the first call.

Every child process enables float64 and the straight-line random-bit hash
(``bb.runtime.enable_fast_rng``), as the ``bayesbandit`` command does. Variants, each in its own
process (XLA flags are read when the backend starts):

* ``default``: the library as it is;
* ``fixed-2``: GLM-TSL with ``DenseNewton(fixed_steps=2)`` (two Newton steps as straight-line
  code before the loop);
* ``loop-free-4``: GLM-TSL with ``DenseNewton(fixed_steps=4, loop=False)`` (four derivative
  evaluations and no loop: a program whose trip counts never differ across runs);
* ``lapack`` (GPU only): Cholesky factors and triangular solves of every size as the library
  calls of JAX (cuSOLVER, cuBLAS) instead of unrolled array expressions for ``n <= 16``
  (:data:`bayesbandit._linalg.SMALL_ON_ACCELERATORS`);
* ``graphs`` (GPU only): XLA's command buffers (CUDA graphs) extended to ``while`` loops and
  conditionals (``--xla_gpu_enable_command_buffer``), so a round's loops replay on the device
  without returning to the host between trips.

Usage, from the repository root: ``python -m benchmarks.bench_runs [--quick] [--horizon N]
[--runs 1,10,...] [--variants default,fixed-2,...] [--out-dir DIR]``. On a GPU machine without
the package installed: ``PYTHONPATH=. python3 -m benchmarks.bench_runs ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GRAPH_FLAGS = "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL"
VARIANTS: dict[str, tuple[str, dict[str, Any], int]] = {
    # name: (XLA flags, DenseNewton arguments of the GLM-TSL rows, bayesbandit._linalg.SMALL_ON_ACCELERATORS)
    "default": ("", {}, 16),
    "fixed-2": ("", {"fixed_steps": 2}, 16),
    "loop-free-4": ("", {"fixed_steps": 4, "loop": False}, 16),
    "lapack": ("", {}, 0),
    "graphs": (GRAPH_FLAGS, {}, 16),
    "graphs+fixed-2": (GRAPH_FLAGS, {"fixed_steps": 2}, 16),
}
RUNS = (1, 10, 100, 1_000, 10_000)
CHILD_TIMEOUT = 1_800


_LAUNCHES = re.compile(r"\s(fusion|custom-call|while|conditional|dot|sort|scatter|gather|copy)\(")


def launches(hlo: str) -> tuple[int, int]:
    """(instructions that launch work, ``while`` loops) in a compiled program's HLO text.

    Counted in the computations that are not the bodies of fusions (a fusion is one kernel, a
    custom call one library call): the program's size in kernels, all its loops' bodies included.
    """
    count, loops, fused = 0, 0, False
    for line in hlo.splitlines():
        if line and not line.startswith(" "):
            fused = "fused" in line.split(" ")[0] or "wrapped" in line.split(" ")[0]
        elif not fused and (match := _LAUNCHES.search(line)):
            count += 1
            loops += match.group(1) == "while"
    return count, loops


def child(variant: str, runs_list: list[int], horizon: int, policies: list[str]) -> None:
    """Time every (policy, runs) point in this process; one JSON line per point on stdout."""
    import jax
    from bayesbandit.models import logistic

    import bayesbandit as bb
    from bayesbandit import _linalg
    from bayesbandit.envs import LogisticBandit
    from bayesbandit.inference import DenseNewton
    from bayesbandit.sim import scan

    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()  # as the bayesbandit command does (CPU only: accelerators hash without a loop anyway)
    env = LogisticBandit(K=100, d=10, theta_cov="unit")
    _, solver, small = VARIANTS[variant]
    _linalg.SMALL_ON_ACCELERATORS = small
    catalogue = {
        "GLM-TSL full": bb.GLMTSL(logistic(), a=1.0, solver=DenseNewton(**solver)),
        "GLM-TSL online": bb.GLMTSL(logistic(), a=1.0, history="online", solver=DenseNewton(**solver)),
        "LinTS": bb.LinTS(),
    }
    for name in policies:
        if solver and name == "LinTS":
            continue  # a solver variant changes the GLM-TSL rows only
        for runs in runs_list:
            first = bb.simulate(catalogue[name], env, horizon, runs=runs, seed=0, progress=False)
            chunk = next(reversed(scan._COMPILED.values()))[1]  # the program simulate just compiled
            kernels, loops = launches(chunk.as_text())
            cpu = time.process_time()
            ds = bb.simulate(catalogue[name], env, horizon, runs=runs, seed=0, progress=False)
            cpu = time.process_time() - cpu
            work = runs * horizon
            point = {
                "variant": variant,
                "policy": name,
                "runs": runs,
                "horizon": horizon,
                "wall_us": float(ds.run_time[0]) / work * 1e6,
                "cpu_us": cpu / work * 1e6,
                "compile_s": float(first.compile_time[0]),
                "regret": float(ds.regret.sum("round").mean()),
                "not_converged": int(ds.not_converged.sum()),
                "kernels": kernels,
                "loops": loops,
                "device": str(jax.devices()[0].device_kind),
            }
            print(json.dumps(point), flush=True)


def run_variant(variant: str, runs_list: list[int], horizon: int, policies: list[str], log: Any) -> list[dict]:
    """One child process for ``variant``; its points as they come (those it finished, if it fails or times out)."""
    env = dict(os.environ)
    flags = VARIANTS[variant][0]
    if flags:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flags).strip()
    command = [sys.executable, "-m", "benchmarks.bench_runs", "--child", variant, "--horizon", str(horizon)]
    command += ["--runs", ",".join(map(str, runs_list)), "--policies", ",".join(policies)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    points = []
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
        watchdog = threading.Timer(CHILD_TIMEOUT, proc.kill)
        watchdog.start()
        try:
            for line in proc.stdout:  # type: ignore[union-attr]
                if line.startswith("{"):
                    points.append(json.loads(line))
                    print(line.strip(), file=log, flush=True)
                    print(line.strip(), flush=True)
            returncode = proc.wait()
        finally:
            watchdog.cancel()
        if returncode:
            errors.seek(0)
            message = f"{variant}: exit status {returncode}: {errors.read()[-2000:]}"
            print(message, file=log, flush=True)
            print(message, flush=True)
    return points


def report(points: list[dict], header: str, horizon: int) -> str:
    from benchmarks._common import md_table

    rows = [
        [
            p["variant"],
            p["policy"],
            f"{p['runs']:,}",
            f"{p['wall_us']:.3f}",
            f"{p['cpu_us']:.3f}",
            f"{p['compile_s']:.1f}",
            f"{p['regret']:.2f}",
            str(p["not_converged"]),
            f"{p['kernels']} / {p['loops']}",
        ]
        for p in points
    ]
    device = points[0]["device"] if points else "n/a"
    return "\n".join(
        [
            "# Cost per round-run against runs",
            "",
            header,
            f"- device: {device}",
            "",
            f"`LogisticBandit(K=100, d=10, theta_cov='unit')`, seed 0, {horizon} rounds at every point. Wall: the "
            "second `simulate` call's `run_time` (compile excluded); CPU: the process CPU time of that call "
            "(on a GPU, the host's). Microseconds per round-run. Regret: mean cumulative regret over the runs "
            "(equal across variants that compute the same thing). Not converged: rounds in all. Kernels / loops: "
            "instructions of the compiled program that launch work (fusions, library calls, loops, copies; outside "
            "fusions) and its `while` loops, all loop bodies included (`launches`).",
            "",
            md_table(
                [
                    "variant",
                    "policy",
                    "runs",
                    "wall us",
                    "CPU us",
                    "compile s",
                    "regret",
                    "not converged",
                    "kernels / loops",
                ],
                rows,
            ),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="runs 1, 100, 1,000 at 100 rounds")
    parser.add_argument("--horizon", type=int, default=200)
    parser.add_argument("--runs", default=",".join(map(str, RUNS)))
    parser.add_argument("--variants", default="default,fixed-2")
    parser.add_argument("--policies", default="GLM-TSL full,GLM-TSL online,LinTS")
    parser.add_argument("--out-dir", default=None, help="where the markdown report is written")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    runs_list = [int(r) for r in args.runs.split(",")]
    policies = args.policies.split(",")
    horizon = args.horizon
    if args.quick:
        runs_list, horizon = [1, 100, 1_000], 100
    if args.child:
        child(args.child, runs_list, horizon, policies)
        return
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # this process and the children share a GPU
    from benchmarks._common import RESULTS, machine_info, write_results

    out_dir = args.out_dir or RESULTS
    os.makedirs(out_dir, exist_ok=True)
    points: list[dict] = []
    with open(os.path.join(out_dir, "bench_runs.jsonl"), "a") as log:
        for variant in args.variants.split(","):
            points += run_variant(variant, runs_list, horizon, policies, log)
            text = report(points, machine_info(), horizon)
            path = write_results("bench_runs", args.quick, text, out_dir)
    print(path)


if __name__ == "__main__":
    main()
