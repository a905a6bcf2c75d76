"""Newton's fixed-effort start against the loop alone, side by side: time per round-run and regret.

Two solvers for the same policies on the logistic bandit of Kveton et al. 2020 (K = 100, d = 10,
N(0, I) prior):

* ``loop``: ``DenseNewton(fixed_steps=0)``, the solver before the fixed-effort start: the
  chord step and every Newton iteration inside ``while_loop`` s, the Armijo tests on potential
  values;
* ``fixed steps``: ``DenseNewton(fixed_steps=2)``: the chord step and two
  Newton evaluations as straight-line code, trials accepted without a potential value on the
  convex fast path, the loop only for lanes that have not stopped
  (:func:`bayesbandit.inference.newton_minimize`).

Reported:

1. CPU time per round-run of ``simulate``-style runs (vmapped ``lax.scan`` over rounds,
   instances and reward uniforms shared by run index; interleaved A B A B, median of ``reps``)
   for full-history GLM-TSL, online GLM-TSL and GLM-FPL, with Newton steps per update (mean
   over round-runs / mean over rounds of the maximum over runs: what a vmapped round waits for);
2. the same for full-history GLM-TSL at 1, 10, 100 and 1,000 runs (one horizon for all);
3. regret from :func:`bayesbandit.simulate` (both solvers in one call: common random numbers),
   the paired difference over instances with its standard error, and the not-converged totals.

Usage, from the repository root: ``python -m benchmarks.bench_fused_update [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import jax
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.envs import LogisticBandit
from bayesbandit.inference import DenseNewton

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import (  # noqa: E402
    interleaved_cpu,
    jax_runner,
    machine_info,
    make_instances,
    md_table,
    mean_se,
    run_keys,
    warm_up_jax,
    write_results,
)

K, D = 100, 10
SOLVERS = {"loop (default)": DenseNewton(fixed_steps=0), "fixed steps": DenseNewton(fixed_steps=2)}
POLICIES = {
    "GLM-TSL (a = 1)": lambda solver: bb.GLMTSL(logistic(), a=1.0, solver=solver),
    "GLM-TSL online (a = 1)": lambda solver: bb.GLMTSL(logistic(), a=1.0, history="online", solver=solver),
    "GLM-FPL (a = 1)": lambda solver: bb.GLMFPL(logistic(), a=1.0, solver=solver),
}


def _steps(a: np.ndarray) -> str:
    return f"{a.mean():.2f} / {a.max(axis=0).mean():.2f}"


def time_rows(policies: dict, runs: int, rounds: int, reps: int, label: str) -> list:
    """One row per policy and solver: us per round-run, the ratio, Newton steps (update; FPL: perturbed)."""
    inst = make_instances(runs, K, D, rounds)
    keys = run_keys(runs)
    rows = []
    for pname, make in policies.items():
        built = {name: jax.jit(jax_runner(make(s), True)).lower(*inst, keys).compile() for name, s in SOLVERS.items()}
        outputs = {name: [np.asarray(a) for a in fn(*inst, keys)] for name, fn in built.items()}
        contenders = {
            name: ((lambda fn=fn: jax.block_until_ready(fn(*inst, keys))), runs * rounds) for name, fn in built.items()
        }
        cpu = interleaved_cpu(contenders, reps)
        for name in SOLVERS:
            _, select_steps, update_steps = outputs[name]
            steps = _steps(update_steps) + (f"; perturbed {_steps(select_steps)}" if select_steps.any() else "")
            rows.append(
                [pname, label, name, f"{cpu[name] * 1e6:.2f}", f"x{cpu['loop (default)'] / cpu[name]:.2f}", steps]
            )
            print(rows[-1], flush=True)
    return rows


def regret_rows(runs: int, rounds: int) -> list:
    """Paired regret and not-converged totals from ``bb.simulate`` (both solvers in one call)."""
    rows = []
    for pname, make in POLICIES.items():
        ds = bb.simulate(
            {name: make(s) for name, s in SOLVERS.items()}, LogisticBandit(K=K, d=D), rounds, runs=runs, seed=0
        )
        final = ds["regret"].sum("round")
        base = final.sel(policy="loop (default)").values
        for name in SOLVERS:
            total = final.sel(policy=name).values
            diff, diff_se = mean_se(total - base)
            reg, reg_se = mean_se(total)
            z = diff / diff_se if diff_se > 0 else 0.0
            not_converged = int(ds["not_converged"].sel(policy=name).sum())
            rows.append(
                [pname, name, f"{reg:.2f} ± {reg_se:.2f}", f"{diff:+.3f} ± {diff_se:.3f}", f"{z:+.2f}", not_converged]
            )
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, rounds and repetitions")
    args = parser.parse_args(argv)
    runs, rounds, reps = (8, 200, 2) if args.quick else (100, 2_000, 3)
    scale_runs, scale_rounds = ((1, 10, 40), 100) if args.quick else ((1, 10, 100, 1_000), 300)
    warm_up_jax()
    load = os.getloadavg()
    speed = time_rows(POLICIES, runs, rounds, reps, f"{runs} x {rounds:,}")
    tsl = {"GLM-TSL (a = 1)": POLICIES["GLM-TSL (a = 1)"]}
    scaling = []
    for n in scale_runs:
        scaling += time_rows(tsl, n, scale_rounds, reps, f"{n:,} x {scale_rounds:,}")
    regret = regret_rows(runs, rounds)
    text = "\n".join(
        [
            "# Newton's fixed-effort start vs the loop alone",
            "",
            machine_info(),
            f"- load average after warm-up: {', '.join(f'{v:.2f}' for v in load)}; at the end: "
            f"{', '.join(f'{v:.2f}' for v in os.getloadavg())} (2 cores shared with other jobs: timings under load)",
            "",
            f"Logistic bandit, K = {K}, d = {D}, N(0, I) prior. ``loop (default)``: ``DenseNewton(fixed_steps=0)``; "
            "``fixed steps``: ``DenseNewton(fixed_steps=2)``. CPU time per round-run of "
            f"vmapped scanned runs, interleaved, median of {reps}. Newton steps: derivative evaluations per "
            "update, mean over round-runs / mean over rounds of the maximum over runs (what a vmapped round "
            "waits for); the two solvers count differently (the fixed steps evaluate at the accepted point "
            "where the loop's quadratic stop skips that evaluation), so compare times, not steps.",
            "",
            "## Time per round-run",
            "",
            md_table(
                ["policy", "runs x rounds", "solver", "us per round-run", "speed-up vs loop", "Newton steps"], speed
            ),
            "",
            "## Full-history GLM-TSL against the number of runs",
            "",
            md_table(
                ["policy", "runs x rounds", "solver", "us per round-run", "speed-up vs loop", "Newton steps"], scaling
            ),
            "",
            f"## Regret (bb.simulate, {runs} instances x {rounds:,} rounds, paired: common random numbers)",
            "",
            "The MAP is the same to the tolerance (1e-8 nats), not to the last bit: a run's samples, and "
            "so its later choices, can differ. The paired difference is the check.",
            "",
            md_table(
                ["policy", "solver", "final regret", "paired difference vs loop", "z", "not converged (round-runs)"],
                regret,
            ),
        ]
    )
    print(write_results("bench_fused_update", args.quick, text))


if __name__ == "__main__":
    main()
