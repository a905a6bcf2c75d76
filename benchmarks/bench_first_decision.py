"""Time to a user's first decision with their own reward program, per likelihood, fresh process; also after a restart.

For every program of :mod:`bayesbandit.models.likelihoods` that GLM-TSL accepts: ``Agent(...)`` +
the first ``select`` + ``update`` in a new Python process (the instance drawn before the clock
starts; imports timed apart), once with an empty persistent compilation cache (cold) and once
more with the cache the first run filled (warm), and where the cold run's time went: tracing,
lowering to MLIR and XLA's compilation (JAX's monitoring events;
:func:`bayesbandit.experiments.likelihoods.first_decision_seconds`); both with
:func:`bayesbandit.runtime.enable_fast_rng`, and once more cold without it. Beside it, ``simulate``'s
compile time for the same program (one policy, 4 runs x 100 rounds, in this process) over the zoo
logistic model's, measured side by side.

Then the restart (:func:`bayesbandit.experiments.likelihoods.restart_seconds`): an agent on the
same arm set with a decision log plays 100 rewarded decisions in a fresh process, saves a
checkpoint, plays 100 more whose rewards arrive 10 decisions late (10 still pending) and stops;
in a new process, ``Agent.load(checkpoint, policy, log=...)``, which replays the rows logged after
the checkpoint, + the first ``decide()``, with an empty persistent compilation cache (cold) and
with the cache the cold restart filled (warm), against the targets: the first decision within
2 s warm and 5 s cold.

With ``--structured``: the new agent's first decision alone (cold and warm, where the cold run's time
went) for every program of :mod:`bayesbandit.models.structured` as ``bayesbandit run programs`` runs
it (:data:`bayesbandit.experiments.programs.PROGRAMS`, on the first instance of its own arms), under
GLM-TSL and GLM-FPL, against the targets of ``STRUCTURED_COLD_TARGET`` and ``STRUCTURED_WARM_TARGET``.

Usage, from the repository root: ``python -m benchmarks.bench_first_decision [--quick] [--structured]``
(quick: five programs; with ``--structured``, GLM-TSL alone).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile

import jax
from bayesbandit.experiments.likelihoods import (
    RESTART_PENDING,
    RESTART_ROUNDS,
    first_decision_seconds,
    restart_seconds,
)
from bayesbandit.experiments.programs import PROGRAMS, prior_bandit
from bayesbandit.models import likelihoods, logistic

import bayesbandit as bb

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import machine_info, md_table, write_results  # noqa: E402

QUICK = ("bernoulli_logit", "gamma", "student_t", "ordered_logistic", "zero_inflated")

# The targets for a restarted agent's first decision (load with its replay + decide), seconds.
RESTART_WARM_TARGET = 2.0
RESTART_COLD_TARGET = 5.0

# The targets for a new agent's first decision with a structured program (Agent + select + update), seconds.
STRUCTURED_COLD_TARGET = 5.0
STRUCTURED_WARM_TARGET = 1.0


def simulate_compile_seconds(model) -> float:
    """``simulate``'s compile time for GLM-TSL on a 20-arm bandit of the program's own family."""
    env = bb.envs.ProgramBandit(model=model, K=20, d=3)
    ds = bb.simulate(bb.GLMTSL(model), env, horizon=100, runs=4, seed=0)
    return float(ds.compile_time.values[0])


def restart(name: str) -> list[str]:
    """The restart table's row for program ``name``: cold and warm restarts (:func:`restart_seconds`), each
    split into load with its replay / first decision, and whether they meet the targets."""
    with tempfile.TemporaryDirectory() as cache:
        cold = restart_seconds(name, "GLM-TSL", cache)
        warm = restart_seconds(name, "GLM-TSL", cache)
    expected = {
        "updates": sum(RESTART_ROUNDS) - RESTART_PENDING,
        "pending": RESTART_PENDING,
        "decisions": sum(RESTART_ROUNDS),
    }
    for timed in (cold, warm):
        held = {field: timed[field] for field in expected}
        if held != expected:
            raise RuntimeError(f"{name}: the restarted agent holds {held}, not {expected}.")
    meets = (warm["restart_s"] <= RESTART_WARM_TARGET, cold["restart_s"] <= RESTART_COLD_TARGET)
    return [
        name,
        f"{cold['restart_s']:.2f}",
        f"{cold['load_s']:.2f} / {cold['decide_s']:.3f}",
        f"{cold['trace_s']:.2f} / {cold['lower_s']:.2f} / {cold['xla_s']:.2f} ({cold['compilations']:.0f})",
        f"{warm['restart_s']:.2f}",
        f"{warm['load_s']:.2f} / {warm['decide_s']:.3f}",
        " / ".join("yes" if ok else "no" for ok in meets),
    ]


def structured(name: str, policy_name: str) -> list[str]:
    """The structured table's row for program ``name`` under ``policy_name``: cold and warm first decisions
    (:func:`first_decision_seconds` on the program's own arms), where the cold one's time went, the targets met."""
    timed = functools.partial(
        first_decision_seconds, programs="bayesbandit.experiments.programs:PROGRAMS", env=prior_bandit(name)
    )
    with tempfile.TemporaryDirectory() as cache:
        cold = timed(name, policy_name, cache)
        warm = timed(name, policy_name, cache)
    meets = (cold["first_decision_s"] <= STRUCTURED_COLD_TARGET, warm["first_decision_s"] <= STRUCTURED_WARM_TARGET)
    return [
        name,
        policy_name,
        f"{cold['first_decision_s']:.2f}",
        f"{cold['agent_s']:.2f} / {cold['select_s']:.2f} / {cold['update_s']:.2f}",
        f"{cold['trace_s']:.2f} / {cold['lower_s']:.2f} / {cold['xla_s']:.2f} ({cold['compilations']:.0f})",
        f"{warm['first_decision_s']:.2f}",
        f"{warm['agent_s']:.2f} / {warm['select_s']:.2f} / {warm['update_s']:.2f}",
        f"{warm['trace_s']:.2f} / {warm['lower_s']:.2f} / {warm['xla_s']:.2f} ({warm['compilations']:.0f})",
        " / ".join("yes" if ok else "no" for ok in meets),
    ]


def main_structured(quick: bool, out_dir: str | None) -> None:
    """``--structured``: the first decision of every structured program (module docstring)."""
    machine = machine_info()  # the load average before the run loads the machine itself
    rows = []
    for name in PROGRAMS:
        for policy_name in ("GLM-TSL",) if quick else ("GLM-TSL", "GLM-FPL"):
            rows.append(structured(name, policy_name))
            print(" | ".join(rows[-1]), flush=True)
    met = sum(row[-1] == "yes / yes" for row in rows)
    text = "\n\n".join(
        [
            "# bench_first_decision --structured: a new agent's first decision with a structured program, fresh process",
            machine,
            "`Agent(...)` + first `select` + `update` in a new Python process, on the first instance of the "
            "program's own arms in `bayesbandit run programs` (its group, exposure or arm-id column included); the "
            "program bound inside the clock, imports apart, `bb.runtime.enable_fast_rng()` on. Cold: empty "
            "persistent compilation cache; warm: the cache the cold run filled. trace / lower / XLA: where the time "
            "went (JAX's monitoring events, summed over the threads that compile at once). Targets: "
            f"{STRUCTURED_COLD_TARGET:.0f} s cold and {STRUCTURED_WARM_TARGET:.0f} s warm; {met} of {len(rows)} meet both.",
            md_table(
                [
                    "program",
                    "policy",
                    "cold (s)",
                    "Agent / select / update, cold (s)",
                    "trace / lower / XLA, cold (s, programs)",
                    "warm (s)",
                    "Agent / select / update, warm (s)",
                    "trace / lower / XLA, warm (s, programs)",
                    f"meets {STRUCTURED_COLD_TARGET:.0f} s cold / {STRUCTURED_WARM_TARGET:.0f} s warm",
                ],
                rows,
            ),
        ]
    )
    print(write_results("bench_first_decision_structured", quick, text, *([out_dir] if out_dir else [])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--structured", action="store_true", help="the structured programs' first decision")
    parser.add_argument("--out-dir", default=None)
    args = parser.parse_args()
    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()
    if args.structured:
        main_structured(args.quick, args.out_dir)
        return
    names = QUICK if args.quick else tuple(likelihoods.LIKELIHOODS)
    zoo = simulate_compile_seconds(logistic())
    rows, restarts = [], []
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
        restarts.append(restart(name))
        print(" | ".join(restarts[-1]), flush=True)
    met = sum(row[-1] == "yes / yes" for row in restarts)
    text = "\n\n".join(
        [
            "# bench_first_decision: a new agent's and a restarted agent's first decision, fresh process, GLM-TSL",
            machine_info(),
            "## A new agent: Agent(...) + first select + update",
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
            "## A restarted agent: Agent.load(checkpoint, policy, log=...) + first decide",
            f"In a first fresh process, an agent on the same arm set (K = 20, d = 3) with a decision log plays "
            f"{RESTART_ROUNDS[0]} decisions, each rewarded at once, saves a checkpoint, plays {RESTART_ROUNDS[1]} more "
            f"whose rewards arrive {RESTART_PENDING} decisions late, and closes; every reward drawn from the program "
            "beforehand. In a new process, timed: `Agent.load` with the log, which replays the rows logged after the "
            f"checkpoint ({RESTART_ROUNDS[1]} decisions, {RESTART_ROUNDS[1] - RESTART_PENDING} rewards: every restarted "
            f"agent came back with {sum(RESTART_ROUNDS) - RESTART_PENDING} updates and {RESTART_PENDING} pending "
            "decisions), then its first `decide()`; the load compiles `select` in the background while the replay "
            "runs, so the first decision's column is what is left to wait for; trace / lower / XLA: summed over the "
            "threads that compile at once, so it can exceed the wall time. Cold: empty persistent compilation "
            "cache; warm: the cache the cold restart filled (the first process uses none). Both with "
            "`bb.runtime.enable_fast_rng()`; imports apart. Targets: the first decision within "
            f"{RESTART_WARM_TARGET:.0f} s warm and {RESTART_COLD_TARGET:.0f} s cold (load with its replay + decide); "
            f"{met} of {len(restarts)} programs meet both.",
            md_table(
                [
                    "program",
                    "restart cold (s)",
                    "load+replay / first decision, cold (s)",
                    "trace / lower / XLA, cold (s, programs)",
                    "restart warm (s)",
                    "load+replay / first decision, warm (s)",
                    f"meets {RESTART_WARM_TARGET:.0f} s warm / {RESTART_COLD_TARGET:.0f} s cold",
                ],
                restarts,
            ),
        ]
    )
    print(write_results("bench_first_decision", args.quick, text, *([args.out_dir] if args.out_dir else [])))


if __name__ == "__main__":
    main()
