"""Time to a user's first decision with their own reward program, per likelihood, in a fresh process.

For every program of :mod:`bayesbandit.models.likelihoods` that GLM-TSL accepts: ``Agent(...)`` +
the first ``select`` + ``update`` in a new Python process (the instance drawn before the clock
starts; imports timed apart), once with an empty persistent compilation cache (cold) and once
more with the cache the first run filled (warm), and where the cold run's time went: tracing,
lowering to MLIR and XLA's compilation (JAX's monitoring events;
:func:`bayesbandit.experiments.likelihoods.first_decision_seconds`); both with
:func:`bayesbandit.runtime.enable_fast_rng`, and once more cold without it. Beside it, ``simulate``'s
compile time for the same program (one policy, 4 runs x 100 rounds, in this process) over the zoo
logistic model's, measured side by side.

Usage, from the repository root: ``python -m benchmarks.bench_first_decision [--quick]`` (quick:
five programs).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import jax
from bayesbandit.experiments.likelihoods import first_decision_seconds
from bayesbandit.models import likelihoods, logistic

import bayesbandit as bb

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import machine_info, md_table, write_results  # noqa: E402

QUICK = ("bernoulli_logit", "gamma", "student_t", "ordered_logistic", "zero_inflated")


def simulate_compile_seconds(model) -> float:
    """``simulate``'s compile time for GLM-TSL on a 20-arm bandit of the program's own family."""
    env = bb.envs.ProgramBandit(model=model, K=20, d=3)
    ds = bb.simulate(bb.GLMTSL(model), env, horizon=100, runs=4, seed=0)
    return float(ds.compile_time.values[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out-dir", default=None)
    args = parser.parse_args()
    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()
    names = QUICK if args.quick else tuple(likelihoods.LIKELIHOODS)
    zoo = simulate_compile_seconds(logistic())
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            cold = first_decision_seconds(name, "GLM-TSL", cache)
            warm = first_decision_seconds(name, "GLM-TSL", cache)
        plain = first_decision_seconds(name, "GLM-TSL", "", fast_rng=False)
        jax.clear_caches()
        ratio = simulate_compile_seconds(likelihoods.LIKELIHOODS[name]) / zoo
        rows.append(
            [
                name,
                f"{cold['first_decision_s']:.2f}",
                f"{cold['agent_s']:.2f} / {cold['select_s']:.2f} / {cold['update_s']:.2f}",
                f"{cold['trace_s']:.2f} / {cold['lower_s']:.2f} / {cold['xla_s']:.2f} ({cold['compilations']:.0f})",
                f"{warm['first_decision_s']:.2f}",
                f"{plain['first_decision_s']:.2f} ({plain['select_s']:.2f})",
                f"{ratio:.2f}",
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
    text = "\n\n".join(
        [
            "# bench_first_decision: Agent(...) + first select + update, fresh process, GLM-TSL",
            machine_info(),
            "Cold: empty persistent compilation cache; warm: the cache the cold run filled "
            "(`bb.runtime.enable_compilation_cache`); both with `bb.runtime.enable_fast_rng()`, as the "
            "`bayesbandit` command runs. The column after them: cold, in a process that does not call it "
            "(JAX's own Threefry lowering), and its first `select` apart. Import time apart. `simulate` compile: the program's "
            f"over the zoo logistic model's ({zoo:.2f} s), 4 runs x 100 rounds, K = 20, d = 3.",
            md_table(
                [
                    "program",
                    "cold (s)",
                    "Agent / select / update (s)",
                    "trace / lower / XLA (s, programs)",
                    "warm (s)",
                    "cold, JAX's Threefry lowering (s; select)",
                    "simulate compile / logistic's",
                ],
                rows,
            ),
        ]
    )
    print(write_results("bench_first_decision", args.quick, text, *([args.out_dir] if args.out_dir else [])))


if __name__ == "__main__":
    main()
