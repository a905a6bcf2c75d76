"""Per-round cost of GLM-TSL and GLM-FPL on the logistic bandit (d=10, K=100).

Measures, for each policy:

(a) one run, the whole experiment ``jit``-compiled as a ``lax.scan`` over rounds;
(b) the same vmapped over many runs (one compiled program for all runs);
(c) the interactive path: one ``bayesbandit.Agent.select()`` + ``Agent.update()`` per round
    (already compiled), which adds Python, validation and dispatch overhead per call.

Compile time (``jax.jit(f).lower(args).compile()``) is reported apart from steady-state time
(the compiled call, ``block_until_ready``, median of 3).

Newton steps reported: per update, the update's own solve (its ``NewtonInfo.num_steps``); per
select (GLM-FPL only), the perturbed solve done in ``select`` (``info.solver.num_steps``).
GLM-TSL's select does no solve: its choice samples around the previous update's MAP.

Usage, from the repository root: ``python -m benchmarks.bench_policies [--quick]`` or
``python benchmarks/bench_policies.py [--quick]`` (``--out-dir DIR`` writes the report elsewhere).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax.numpy as jnp
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb

bb.runtime.enable_x64()  # right after importing bayesbandit, before any array: the GLM policies' Newton solves need float64

if not __package__:  # run as a file (python benchmarks/bench_policies.py): make the package `benchmarks` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import (  # noqa: E402
    RESULTS,
    compile_and_time,
    jax_runner,
    machine_info,
    make_instances,
    max_rss_mib,
    md_table,
    run_keys,
    warm_up_jax,
    write_results,
    xla_memory_mib,
)

K, D = 100, 10


def policies():
    return {"GLM-TSL (a=1)": bb.GLMTSL(logistic(), a=1.0), "GLM-FPL (a=0.5)": bb.GLMFPL(logistic(), a=0.5)}


def agent_round_us(policy, arms, theta, u, rounds: int, blocks: int = 3) -> tuple[float, float]:
    """Median (over blocks) microseconds per select+update round of ``bb.Agent``; also the first-call time."""
    mu = 1.0 / (1.0 + np.exp(-(arms @ theta)))
    agent = bb.Agent(policy, arms=arms, seed=0)
    t0 = time.perf_counter()
    arm = agent.select()  # first calls compile select and update
    agent.update(arm, float(u[0] < mu[arm]))
    first = time.perf_counter() - t0
    t = 1
    per_block = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(rounds):
            arm = agent.select()
            agent.update(arm, float(u[t % len(u)] < mu[arm]))
            t += 1
        per_block.append((time.perf_counter() - t0) / rounds * 1e6)
    return statistics.median(per_block), first


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and runs (< 3 minutes)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--out-dir", default=RESULTS, help="where to write the report (default: benchmarks/results)")
    args = parser.parse_args(argv)
    n = args.rounds or (500 if args.quick else 2000)
    runs = args.runs or (20 if args.quick else 100)
    agent_rounds = 100 if args.quick else 300

    header = machine_info()
    warm = warm_up_jax()
    arms, theta, u = make_instances(runs, K, D, n)
    keys = run_keys(runs)
    one_args = (jnp.asarray(arms[0]), jnp.asarray(theta[0]), jnp.asarray(u[0]), keys[0])
    all_args = (jnp.asarray(arms), jnp.asarray(theta), jnp.asarray(u), keys)

    rows, agent_rows, notes = [], [], []
    for name, policy in policies().items():
        for mode, vmapped, fargs, nr in (("1 run", False, one_args, 1), (f"vmap {runs} runs", True, all_args, runs)):
            rss0 = max_rss_mib()
            c_s, med, times, out, compiled = compile_and_time(jax_runner(policy, vmapped), fargs, reps=3)
            regret, sel_steps, upd_steps = (np.asarray(o) for o in out)
            us = med / (n * nr) * 1e6
            rows.append(
                [
                    name,
                    mode,
                    f"{c_s:.2f}",
                    f"{med:.3f}",
                    f"{us:.1f}",
                    f"{n * nr / med:,.0f}",
                    f"{np.mean(upd_steps):.2f}",
                    f"{np.mean(sel_steps):.2f}" if "FPL" in name else "-",
                    f"{np.mean(regret.reshape(nr, n).sum(axis=1)):.1f}",
                    xla_memory_mib(compiled),
                    f"{max_rss_mib() - rss0:+.0f}",
                ]
            )
            print(md_table(["policy", "mode"], [rows[-1][:2]]).splitlines()[-1], rows[-1][2:], flush=True)
        if args.quick and "FPL" in name:
            continue  # keeps --quick under 3 minutes (the Agent's first FPL call compiles for ~10-30 s)
        us_agent, first = agent_round_us(policy, arms[0], theta[0], u[0], agent_rounds)
        one_us = float(rows[-2][4])
        agent_rows.append(
            [
                name,
                f"{us_agent:.0f}",
                f"{first:.2f}",
                f"{one_us:.1f}",
                f"{us_agent / one_us:.1f}x",
                f"{1e6 / us_agent:,.0f}",
            ]
        )
        print(agent_rows[-1], flush=True)

    tsl_1, tsl_v = float(rows[0][4]), float(rows[1][4])
    fpl_1, fpl_v = float(rows[2][4]), float(rows[3][4])
    notes.append(
        f"- vmap speed-up per run (1-run us / vmapped us): GLM-TSL {tsl_1 / tsl_v:.2f}x, GLM-FPL {fpl_1 / fpl_v:.2f}x"
    )
    notes.append(f"- GLM-FPL / GLM-TSL cost per round: 1 run {fpl_1 / tsl_1:.2f}x, vmapped {fpl_v / tsl_v:.2f}x")

    text = "\n\n".join(
        [
            f"# bench_policies{' (quick)' if args.quick else ''}",
            header,
            f"Settings: logistic bandit, d={D}, K={K}, arms ~ U[-1,1]^d, theta* ~ N(0, 3/d I), Bernoulli rewards; "
            f"{n} rounds per run; vmapped over {runs} runs; steady-state time = median of 3 calls of the compiled "
            f"program; JAX warm-up (first trivial compile of the process) {warm:.2f} s, not charged below. "
            f"Agent path: {agent_rounds} rounds x 3 blocks, median block.",
            "## Whole experiment under jit (lax.scan over rounds)",
            md_table(
                [
                    "policy",
                    "mode",
                    "compile (s)",
                    "steady call (s)",
                    "us / round / run",
                    "rounds x runs / s",
                    "Newton steps / update",
                    "Newton steps / select",
                    "mean cum. regret",
                    "XLA mem (MiB)",
                    "max RSS delta (MiB)",
                ],
                rows,
            ),
            "## Interactive path: bb.Agent select() + update() per round",
            md_table(
                [
                    "policy",
                    "us / round (Agent)",
                    "first call incl. compile (s)",
                    "us / round (jit scan, 1 run)",
                    "Agent / scan",
                    "rounds / s (Agent)",
                ],
                agent_rows,
            ),
            "## Ratios\n\n" + "\n".join(notes),
            "Notes: XLA mem = argument + output + temporary buffers from `compiled.memory_analysis()`. "
            "Max RSS delta is the growth of the process high-water mark during compile + runs (0 when an earlier "
            "stage already reached it). The machine is shared (see load average): absolute times are noisy, "
            "ratios measured side by side in one process are more reliable.",
        ]
    )
    print("\n" + text)
    print("\nwritten:", write_results("bench_policies", args.quick, text, args.out_dir))


if __name__ == "__main__":
    sys.exit(main())
