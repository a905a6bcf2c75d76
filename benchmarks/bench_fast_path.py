"""The GLM fast path and the chord start against the generic Newton solver, side by side.

Four solvers for the same policies on the logistic bandit of Kveton et al. 2020 (K = 100,
d = 10, N(0, I) prior, instances and reward uniforms shared by run index: common random numbers):

* ``generic``: ``DenseNewton(derivatives="generic", reuse_factor=False, rank_one=False)``, the forward-over-reverse
  Hessian of the program's potential and the shifted Cholesky (the solver before the fast path);
* ``fast path``: ``DenseNewton(reuse_factor=False, rank_one=False)``: gradient and Hessian through the linear
  predictor, one plain Cholesky under the Gaussian prior;
* ``fast path + chord start``: each refit first steps with the previous fit's factor and the new
  gradient (the default for a full-history refit);
* ``+ one-row online solve (default)``: ``DenseNewton()``; the online Laplace update by one row
  solved as a root in one dimension (``history="online"`` only).

Reported: CPU time per round-run of ``simulate``-style runs (vmapped ``lax.scan``, interleaved A B
C A B C, median of ``reps``) and per call of the Agent's unbatched ``update``, compile times,
Newton steps (Hessian evaluations) per update and per perturbed solve, and final regret with the
paired difference against ``generic`` over every instance: the variants must not change regret.

Usage, from the repository root: ``python -m benchmarks.bench_fast_path [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
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
SOLVERS = {
    "generic": DenseNewton(derivatives="generic", reuse_factor=False, rank_one=False),
    "fast path": DenseNewton(reuse_factor=False, rank_one=False),
    "fast path + chord start": DenseNewton(rank_one=False),
    "+ one-row online solve (default)": DenseNewton(),
}
FULL = ("generic", "fast path", "fast path + chord start")  # the one-row solve is for the online update only
POLICIES = {
    "GLM-TSL (a = 1)": (lambda solver: bb.GLMTSL(logistic(), a=1.0, solver=solver), FULL),
    "GLM-FPL (a = 1)": (lambda solver: bb.GLMFPL(logistic(), a=1.0, solver=solver), FULL),
    "GLM-TSL online (a = 1)": (lambda solver: bb.GLMTSL(logistic(), a=1.0, history="online", solver=solver), SOLVERS),
}


def compiled(fn, *args) -> tuple[object, float]:
    start = time.perf_counter()
    out = jax.jit(fn).lower(*args).compile()
    return out, time.perf_counter() - start


def simulate_rows(runs: int, rounds: int, reps: int) -> tuple[list, list]:
    inst = make_instances(runs, K, D, rounds)
    keys = run_keys(runs)
    speed, regret = [], []
    for pname, (make, names) in POLICIES.items():
        built = {name: compiled(jax_runner(make(SOLVERS[name]), True), *inst, keys) for name in names}
        outputs = {name: jax.block_until_ready(fn(*inst, keys)) for name, (fn, _) in built.items()}
        contenders = {
            name: ((lambda fn=fn: jax.block_until_ready(fn(*inst, keys))), runs * rounds)
            for name, (fn, _) in built.items()
        }
        cpu = interleaved_cpu(contenders, reps)
        base_regret = np.asarray(outputs["generic"][0]).sum(axis=1)
        for name in names:
            regret_runs, select_steps, update_steps = (np.asarray(a) for a in outputs[name])
            total = regret_runs.sum(axis=1)
            diff_mean, diff_se = mean_se(total - base_regret)
            reg_mean, reg_se = mean_se(total)
            steps = f"{update_steps.mean():.2f} / {update_steps.max(axis=0).mean():.2f}"
            if select_steps.any():
                steps += f"; perturbed {select_steps.mean():.2f} / {select_steps.max(axis=0).mean():.2f}"
            speed.append(
                [
                    pname,
                    name,
                    f"{cpu[name] * 1e6:.1f}",
                    f"x{cpu['generic'] / cpu[name]:.2f}",
                    f"{built[name][1]:.2f}",
                    steps,
                ]
            )
            z = diff_mean / diff_se if diff_se > 0 else 0.0
            regret.append(
                [pname, name, f"{reg_mean:.2f} ± {reg_se:.2f}", f"{diff_mean:+.3f} ± {diff_se:.3f}", f"{z:+.2f}"]
            )
            print(speed[-1], regret[-1], flush=True)
    return speed, regret


def agent_rows(calls: int, reps: int) -> list:
    rng = np.random.default_rng(0)
    arms = rng.uniform(-1.0, 1.0, (K, D))
    rows = []
    for history, names in (("full", FULL), ("online", tuple(SOLVERS))):
        built = {}
        for name in names:
            policy = bb.GLMTSL(logistic(), a=1.0, history=history, solver=SOLVERS[name])
            state = policy.init(arms)
            observe = jax.jit(lambda s, a, r, p=policy: p.update(s, arms, a, r)[0])
            for t in range(300):  # a posterior with some data
                state = observe(state, t % K, float(rng.random() < 0.5))
            fn, compile_s = compiled(lambda s, p=policy: p.update(s, arms, 3, 1.0), state)
            built[name] = (fn, state, compile_s)
        contenders = {
            name: ((lambda fn=fn, s=s: [jax.block_until_ready(fn(s)) for _ in range(calls)]), calls)
            for name, (fn, s, _) in built.items()
        }
        cpu = interleaved_cpu(contenders, reps)
        for name, (_, _, compile_s) in built.items():
            rows.append(
                [
                    f"Agent GLM-TSL update, history={history!r}",
                    name,
                    f"{cpu[name] * 1e6:.1f}",
                    f"x{cpu['generic'] / cpu[name]:.2f}",
                    f"{compile_s:.2f}",
                    "",
                ]
            )
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, rounds and repetitions")
    args = parser.parse_args(argv)
    runs, rounds, reps, calls = (8, 300, 2, 200) if args.quick else (100, 2_000, 3, 2_000)
    agent_reps = 2 if args.quick else 7
    warm_up_jax()
    assert (
        bb.bind(logistic(), np.zeros((1, D))).linear_predictor is not None
    )  # bind and detect before any compile is timed
    speed, regret = simulate_rows(runs, rounds, reps)
    speed += agent_rows(calls, agent_reps)
    text = "\n".join(
        [
            "# GLM fast path and chord start vs the generic Newton solver",
            "",
            machine_info(),
            "",
            f"Logistic bandit, K = {K}, d = {D}, N(0, I) prior; "
            f"simulate: {runs} runs x {rounds:,} rounds vmapped; Agent: {calls:,} calls of the compiled update "
            f"after 300 observations. CPU time, interleaved, median of {reps} (Agent: {agent_reps}). "
            "Compile times exclude binding the program and detecting its linear predictor (done first).",
            "",
            "## Time",
            "",
            "Newton steps: Hessian evaluations per update, mean over round-runs / mean over rounds of the "
            "maximum over runs (what a vmapped round waits for); GLM-FPL's perturbed solve likewise.",
            "",
            md_table(
                ["workload", "solver", "us per round-run / call", "vs generic", "compile s", "Newton steps"], speed
            ),
            "",
            "## Regret (paired over instances, common random numbers)",
            "",
            md_table(["policy", "solver", "final regret", "paired difference vs generic", "z"], regret),
        ]
    )
    print(write_results("bench_fast_path", args.quick, text))


if __name__ == "__main__":
    main()
