"""GLM-UCB and UCB-GLM: widths from the rank-one-updated design inverse vs refactoring each round.

Both policies widen their scores by ``||x_i||_{G_t^{-1}}``. The library carries ``G_t^{-1}`` in
the state and updates it by Sherman-Morrison (``O(d^2)`` per update, one ``(K, d) x (d, d)``
product per select); the baseline (``benchmarks/_variants.py``) rebuilds ``G_t`` from the per-arm
counts, factors it and solves against all ``K`` arms every round, as the policies did before.

Problem: the logistic bandit of Kveton et al. (2020), K = 100, d in {5, 10, 15, 20}, practical
widths (rho = alpha = 0.5), ``R`` runs of ``n`` rounds vmapped into one compiled program, on the
same instances and random numbers for both. Reported: CPU time per round-run (interleaved,
median of 3), compile time, and the paired regret difference (the widths agree to 1e-8, so the
actions should agree except where two scores tie to rounding).

Usage, from the repository root: ``python -m benchmarks.bench_ucb_widths [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys

# One XLA:CPU pool thread: 100 vmapped Cholesky factorisations at d = 20 on a 2-thread pool can wait on
# each other forever (the same setting as the CLI and the test suite).
os.environ.setdefault("PJRT_NPROC", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from bayesbandit.models import logistic  # noqa: E402

import bayesbandit as bb  # noqa: E402

bb.runtime.enable_x64()

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import (  # noqa: E402
    RESULTS,
    compile_and_time,
    interleaved_cpu,
    jax_runner,
    machine_info,
    make_instances,
    md_table,
    run_keys,
    warm_up_jax,
    write_results,
)
from benchmarks._variants import FactorisedWidthsGLMUCB, FactorisedWidthsUCBGLM  # noqa: E402

K = 100


def contenders() -> dict[str, tuple[object, object]]:
    """policy name -> (library policy, refactoring baseline)."""
    model = logistic()
    return {
        "GLM-UCB": (bb.GLMUCB(model, rho=0.5), FactorisedWidthsGLMUCB(model, rho=0.5)),
        "UCB-GLM": (bb.UCBGLM(model, alpha=0.5), FactorisedWidthsUCBGLM(model, alpha=0.5)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d in {5, 10}, 20 runs of 300 rounds")
    parser.add_argument("--dims", type=int, nargs="+", default=None, help="feature dimensions (default 5 10 15 20)")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args(argv)
    dims, runs, rounds = ((5, 10), 20, 300) if args.quick else ((5, 10, 15, 20), 100, 2_000)
    dims = tuple(args.dims or dims)
    warm_up_jax()
    rows = []
    for d in dims:
        arms, theta, u = make_instances(runs, K, d, rounds)
        call_args = (arms, theta, u, run_keys(runs))
        for name, (library, baseline) in contenders().items():
            timed = {}
            for label, policy in (("rank-one", library), ("refactor", baseline)):
                compile_s, _, _, out, compiled = compile_and_time(jax_runner(policy, vmapped=True), call_args, reps=1)
                timed[label] = (compile_s, np.asarray(out[0]).sum(axis=1), compiled)
            cpu = interleaved_cpu(
                {
                    label: (lambda c=compiled, a=call_args: jax.block_until_ready(c(*a)), runs * rounds)
                    for label, (_, _, compiled) in timed.items()
                },
                reps=3,
            )
            diff = timed["rank-one"][1] - timed["refactor"][1]
            rows.append(
                [
                    d,
                    name,
                    f"{cpu['rank-one'] * 1e6:.1f}",
                    f"{cpu['refactor'] * 1e6:.1f}",
                    f"{cpu['refactor'] / cpu['rank-one']:.2f}x",
                    f"{timed['rank-one'][0]:.1f} / {timed['refactor'][0]:.1f}",
                    f"{timed['refactor'][1].mean():.1f}",
                    f"{diff.mean():+.2f} ± {diff.std(ddof=1) / np.sqrt(runs):.2f}",
                    f"{int(np.sum(np.abs(diff) > 1e-9))} / {runs}",
                ]
            )
            print(rows[-1], flush=True)
    table = md_table(
        [
            "d",
            "policy",
            "rank-one µs CPU / round-run",
            "refactor µs",
            "speed-up",
            "compile s (rank-one / refactor)",
            "regret R(n)",
            "paired regret diff",
            "runs that differ",
        ],
        rows,
    )
    text = "\n\n".join(
        [
            "# GLM-UCB / UCB-GLM widths: rank-one design inverse vs refactoring each round",
            machine_info(),
            f"K = {K}, logistic bandit, {runs} runs x {rounds} rounds vmapped in one program, practical widths "
            "(0.5). CPU time per round-run, interleaved, median of 3.",
            table,
        ]
    )
    print(write_results("bench_ucb_widths", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
