"""``simulate`` with its runs split over devices: 1 against N host CPU devices, the same runs.

XLA:CPU runs one compiled program on about one core, so on a machine with several cores the
runs axis split over ``N`` host devices (``XLA_FLAGS=--xla_force_host_platform_device_count=N``,
which must be set before JAX starts: each setting runs in its own child process) uses them all.
The problem is the logistic bandit of Kveton et al. (2020) at d = 10, K = 100 (GLM-TSL, GLM-FPL
and LinTS, ``R`` runs of ``n`` rounds); reported are the steady run time and the compile time
``simulate`` measures, and whether every action agrees with the single-device run.

Usage, from the repository root: ``python -m benchmarks.bench_sharding [--quick] [--devices N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import RESULTS, machine_info, md_table, write_results  # noqa: E402

CHILD = textwrap.dedent(
    """
    import json, sys
    import jax
    import numpy as np
    import bayesbandit as bb
    from bayesbandit.models import logistic

    bb.runtime.enable_x64()
    runs, rounds, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    env = bb.envs.LogisticBandit(K=100, d=10)
    policies = {
        "GLM-TSL": bb.GLMTSL(logistic(), a=1.0),
        "GLM-FPL": bb.GLMFPL(logistic(), a=0.5),
        "LinTS": bb.LinTS(v=0.5),
    }
    ds = bb.simulate(policies, env, horizon=rounds, runs=runs, seed=0, progress=False)
    np.save(path, ds.action.values)
    print(json.dumps({
        "devices": len(jax.devices()),
        "run_time": ds.run_time.values.tolist(),
        "compile_time": ds.compile_time.values.tolist(),
        "regret": ds.regret.sum("round").mean("run").values.tolist(),
    }))
    """
)
POLICIES = ("GLM-TSL", "GLM-FPL", "LinTS")


def child(devices: int, runs: int, rounds: int, path: str) -> dict:
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(runs), str(rounds), path], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and rounds")
    parser.add_argument("--devices", type=int, default=None, help="host devices to compare with 1 (default: CPUs)")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args(argv)
    devices = args.devices or os.cpu_count() or 2
    runs, rounds = (20, 300) if args.quick else (100, 2_000)
    tmp = os.path.join(args.out_dir, ".sharding")
    os.makedirs(tmp, exist_ok=True)
    one = child(1, runs, rounds, os.path.join(tmp, "one.npy"))
    many = child(devices, runs, rounds, os.path.join(tmp, "many.npy"))
    same = np.load(os.path.join(tmp, "one.npy")) == np.load(os.path.join(tmp, "many.npy"))
    rows = []
    for i, name in enumerate(POLICIES):
        rows.append(
            [
                name,
                f"{one['run_time'][i]:.2f} s",
                f"{many['run_time'][i]:.2f} s",
                f"×{one['run_time'][i] / many['run_time'][i]:.2f}",
                f"{one['compile_time'][i]:.1f} s / {many['compile_time'][i]:.1f} s",
                f"{bool(same[i].all())}",
            ]
        )
        print(rows[-1], flush=True)
    text = "\n".join(
        [
            "# simulate over several devices",
            "",
            machine_info(),
            "",
            f"Logistic bandit, d = 10, K = 100, {runs} runs x {rounds} rounds; steady run time (compile apart) "
            f"on 1 and on {many['devices']} host CPU devices, each in its own process.",
            "",
            md_table(
                [
                    "policy",
                    "1 device",
                    f"{many['devices']} devices",
                    "speed-up",
                    "compile (1 / N)",
                    "same actions in every run",
                ],
                rows,
            ),
        ]
    )
    for name in ("one.npy", "many.npy"):
        os.remove(os.path.join(tmp, name))
    os.rmdir(tmp)
    print(write_results("bench_sharding", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
