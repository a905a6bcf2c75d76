"""Fixed-budget best-arm identification: seconds per 100 replications of every ``bayesbandit.bai`` algorithm.

Two problems (Gaussian noise of variance 10, as in Azizi et al. 2022):

(a) ``AdaptiveInstance(K=16)``, budget ``B = 320`` (the paper's run-time setting, sec. 8.1);
(b) ``SphereInstance(K=64, d=10)``, ``B = 1280`` (an instance redrawn per replication).

Every algorithm runs as one program, ``jax.jit(jax.vmap(identify))`` over the replications, on the
keys of ``bayesbandit.bai.evaluation.replication_keys`` (the same instances and reward stacks for every
algorithm). Compilation (``lower().compile()``) is timed and reported apart from the run (the compiled
call with ``block_until_ready``; median of 3 calls when one takes under 5 s). Against it, in the same
process: the plain NumPy GSE (``benchmarks/baselines/numpy_gse.py``), a Python loop over
replications, on the same instances.

The issue's target: 1,000 vmapped replications of ``GSE(allocation="g-optimal")`` at K = 64 take no longer
than 100 replications of the NumPy loop (a 10x speed-up per replication or more).

Optional algorithms (LinGapE, BayesGap, OD-LinBAI, Peace) are included when their modules import
and reported as "not available" otherwise; an algorithm that fails to compile or run is reported as
"failed" with its error. Accuracies (fraction of the timed replications that return a best arm, with
the binomial standard error) are reported next to the times, so a fast wrong algorithm shows.

Sizes (full / ``--quick``): 100 / 10 vmapped replications per algorithm; 10 / 5 for Peace and, at
K = 64, for any algorithm slower than 20 s per 100 at K = 16; the NumPy loop 100 / 20 replications
at K = 16 and 50 / 10 at K = 64 (scaled to 100); the target 1,000 vmapped replications, not scaled.
``--quick`` runs problem (b) for ``GSE(allocation="g-optimal")`` only, on the target's replications.

Usage, from the repository root: ``python -m benchmarks.bench_bai [--quick]`` or
``python benchmarks/bench_bai.py [--quick]``; ``--reps``, ``--slow-reps``, ``--numpy-reps`` and
``--target-reps`` override the sizes, ``--only SUBSTRING`` keeps the algorithms whose name contains it
(repeatable; ``GSE(allocation="g-optimal")`` always runs), and ``--out-dir DIR`` writes the report elsewhere.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np

import bayesbandit as bb

bb.runtime.enable_x64()  # right after importing bayesbandit, before any array

from bayesbandit.bai import GSE, AdaptiveInstance, MostPulled, SequentialHalving, SphereInstance, is_correct  # noqa: E402
from bayesbandit.bai.evaluation import replication_keys  # noqa: E402

if not __package__:  # run as a file: make the package `benchmarks` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import RESULTS, machine_info, md_table, warm_up_jax, write_results  # noqa: E402
from benchmarks.baselines import numpy_gse  # noqa: E402

NOISE_VAR = 10.0
PROBLEMS = {
    "a": ("AdaptiveInstance(K=16)", AdaptiveInstance(K=16, noise_var=NOISE_VAR), 320),
    "b": ("SphereInstance(K=64, d=10)", SphereInstance(K=64, d=10, noise_var=NOISE_VAR), 1280),
}
ALLOCATIONS = ("g-optimal", "wynn", "greedy", "uniform", "fw-literal")
REFERENCE = 'GSE(allocation="g-optimal")'
SLOW = ("Peace",)  # timed on fewer replications everywhere
SLOW_S = 20.0  # seconds per 100 replications at K = 16 above which an algorithm is timed on fewer at K = 64
OPTIONAL: tuple[tuple[str, str, tuple[tuple[str, dict[str, Any]], ...]], ...] = (
    ("bayesbandit.bai.lingape", "LinGapE", (("LinGapE", {}), ("LinGapE-Greedy", {"greedy": True}))),
    ("bayesbandit.bai.bayesgap", "BayesGap", (("BayesGap", {}),)),
    ("bayesbandit.bai.od_linbai", "ODLinBAI", (("OD-LinBAI", {}),)),
    ("bayesbandit.bai.peace", "Peace", (("Peace", {}),)),
)


def algorithms() -> dict[str, Any]:
    """Name -> algorithm, or name -> "not available (...)" for an optional module that does not import."""
    out: dict[str, Any] = {f'GSE(allocation="{a}")': GSE(allocation=a) for a in ALLOCATIONS}
    out["SequentialHalving"] = SequentialHalving()
    out["MostPulled(LinUCB)"] = MostPulled(bb.LinUCB())
    for module, cls, variants in OPTIONAL:
        try:
            factory = getattr(importlib.import_module(module), cls)
        except Exception as exc:  # noqa: BLE001 -- a module being written may fail in any way
            for name, _ in variants:
                out[name] = f"not available ({_first_line(exc)})"
            continue
        for name, kwargs in variants:
            out[name] = factory(**kwargs)
    return out


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


class Measured(NamedTuple):
    """One algorithm on one problem."""

    compile_s: float
    run_s: float  # one compiled call on ``reps`` replications
    reps: int
    correct: np.ndarray
    pulls: np.ndarray

    @property
    def per100(self) -> float:
        return self.run_s * 100 / self.reps


def runner(algorithm: Any, env: Any, budget: int) -> Callable:
    """``vmap`` of one replication: (arm, correct, pulls)."""

    def one(instance, key):
        arm, info = algorithm.identify(env, instance, budget, key)
        return arm, is_correct(instance, arm), info.pulls

    return jax.vmap(one)


def measure(algorithm: Any, env: Any, budget: int, args: tuple, reps: int) -> Measured:
    """Compile on the first ``reps`` replications of ``args``, then time the compiled call (median of 3
    calls when one takes under 5 s)."""
    args = jax.tree.map(lambda a: a[:reps], args)
    t0 = time.perf_counter()
    compiled = jax.jit(runner(algorithm, env, budget)).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    times: list[float] = []
    out: tuple = ()
    while not times or (len(times) < 3 and times[0] < 5.0):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    _, correct, pulls = out
    return Measured(compile_s, statistics.median(times), reps, np.asarray(correct), np.asarray(pulls))


def instances(env: Any, reps: int, seed: int) -> tuple[Any, Any]:
    """The instances and run keys of replications ``0..reps-1`` (``evaluate``'s pairing)."""
    instance_keys, run_keys = replication_keys(seed, reps)
    return jax.jit(jax.vmap(env.reset))(instance_keys), run_keys


def accuracy(correct: np.ndarray) -> str:
    p, n = float(np.mean(correct)), len(correct)
    return f"{p:.3f} ± {np.sqrt(p * (1 - p) / n):.3f}"


def run_numpy(instance: Any, budget: int, noise_var: float, reps: int, seed: int) -> tuple[float, np.ndarray]:
    """Seconds of the NumPy GSE loop over the first ``reps`` instances, and whether each chose a best arm.

    One replication runs untimed first (NumPy's and LAPACK's first-call costs)."""
    arms, means = np.asarray(instance.arms)[:reps], np.asarray(instance.means)[:reps]
    numpy_gse.run(arms[:1], means[:1], budget, noise_var, seed=seed + 1)
    t0 = time.perf_counter()
    chosen = numpy_gse.run(arms, means, budget, noise_var, seed=seed)
    seconds = time.perf_counter() - t0
    best = means.max(axis=1)
    return seconds, means[np.arange(reps), chosen] >= best - 1e-12 * np.maximum(np.abs(best), 1.0)


def _ratio(x: float) -> str:
    return f"{x:.3g}x"


def bench_problem(
    key: str, algos: dict[str, Any], reps: dict[str, int], numpy_reps: int, args: tuple, seed: int
) -> tuple[str, dict]:
    """The table of one problem (``reps[name]`` replications for each algorithm), and its numbers."""
    label, env, budget = PROBLEMS[key]
    np_s, np_correct = run_numpy(args[0], budget, env.noise_var, numpy_reps, seed)
    np_per100 = np_s * 100 / numpy_reps
    print(f"[{key}] NumPy GSE: {np_per100:.3f} s / 100 reps ({numpy_reps} timed)", flush=True)
    results: dict[str, Measured | str] = {}
    for name, algorithm in algos.items():
        if isinstance(algorithm, str):
            results[name] = algorithm
            continue
        try:
            results[name] = measure(algorithm, env, budget, args, reps[name])
        except Exception as exc:  # noqa: BLE001 -- one failing algorithm must not hide the others
            results[name] = f"failed ({_first_line(exc)})"
        res = results[name]
        print(
            f"[{key}] {name}: "
            + (
                res
                if isinstance(res, str)
                else f"compile {res.compile_s:.1f} s, {res.per100:.3f} s / 100 reps ({res.reps} timed)"
            ),
            flush=True,
        )
    ref = results.get(REFERENCE)
    ref_per100 = ref.per100 if isinstance(ref, Measured) else float("nan")
    rows = [
        [
            "NumPy GSE loop (baseline)",
            str(numpy_reps),
            "-",
            f"{np_per100:.3f}",
            "1x",
            _ratio(np_per100 / ref_per100),
            accuracy(np_correct),
            f"{budget}",
        ]
    ]
    for name, res in results.items():
        if isinstance(res, str):
            rows.append([name, "-", "-", res, "-", "-", "-", "-"])
            continue
        rows.append(
            [
                name,
                str(res.reps),
                f"{res.compile_s:.1f}",
                f"{res.per100:.3f}",
                _ratio(np_per100 / res.per100),
                _ratio(res.per100 / ref_per100),
                accuracy(res.correct),
                f"{np.mean(res.pulls):.1f}",
            ]
        )
    headers = [
        "algorithm",
        "reps",
        "compile (s)",
        "s / 100 reps",
        "speed-up vs NumPy GSE",
        f"cost / {REFERENCE}",
        "accuracy",
        "mean pulls",
    ]
    text = "\n\n".join([f"## ({key}) {label}, B = {budget}, noise variance {NOISE_VAR:g}", md_table(headers, rows)])
    return text, {"numpy_per100": np_per100, "numpy_reps": numpy_reps, "numpy_correct": np_correct, "results": results}


def compare_line(key: str, summary: dict) -> str:
    """NumPy GSE vs bayesbandit GSE(allocation="g-optimal") accuracy: difference and its z (independent binomials)."""
    ref = summary["results"].get(REFERENCE)
    if not isinstance(ref, Measured):
        return f"- ({key}) {REFERENCE} did not run: no comparison."
    a, b = float(np.mean(summary["numpy_correct"])), float(np.mean(ref.correct))
    se = np.sqrt(a * (1 - a) / len(summary["numpy_correct"]) + b * (1 - b) / ref.reps)
    z = (a - b) / se if se > 0 else 0.0
    return (
        f"- ({key}) NumPy GSE accuracy {a:.3f} ({summary['numpy_reps']} reps) vs bayesbandit {REFERENCE} {b:.3f} "
        f"({ref.reps} reps): difference {a - b:+.3f} ± {se:.3f} (z = {z:+.1f}; different random numbers, so only "
        "the accuracies should agree)"
    )


def target_section(gse: Measured, summary: dict) -> str:
    """1,000 vmapped GSE replications at K = 64 against 100 of the NumPy loop."""
    label, _, budget = PROBLEMS["b"]
    numpy_per100, numpy_reps = summary["numpy_per100"], summary["numpy_reps"]
    per1000 = gse.run_s * 1000 / gse.reps
    ratio = numpy_per100 / per1000
    scaled = f" (timed on {gse.reps}, scaled to 1,000)" if gse.reps != 1000 else ""
    np_scaled = f" (timed on {numpy_reps}, scaled to 100)" if numpy_reps != 100 else ""
    return "\n".join(
        [
            '## Target: 1,000 vmapped replications of GSE(allocation="g-optimal") at K = 64 vs 100 of the NumPy loop',
            "",
            f"- {label}, B = {budget}: 1,000 vmapped replications take {per1000:.2f} s{scaled}; compile "
            f"{gse.compile_s:.1f} s apart; accuracy {accuracy(gse.correct)}",
            f"- NumPy GSE loop, 100 replications: {numpy_per100:.2f} s{np_scaled}",
            f"- ratio (NumPy 100 / JAX 1,000): {ratio:.2f}, i.e. {10 * ratio:.1f}x per replication; target "
            f"(ratio >= 1, 10x per replication) {'met' if ratio >= 1 else 'NOT met'}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer replications; problem (b) runs GSE only")
    parser.add_argument("--reps", type=int, default=None, help="vmapped replications per algorithm (100; quick 10)")
    parser.add_argument("--slow-reps", type=int, default=None, help="replications of the slow algorithms (10; quick 5)")
    parser.add_argument(
        "--numpy-reps", type=int, default=None, help="NumPy loop replications (100 / 50; quick 20 / 10)"
    )
    parser.add_argument("--target-reps", type=int, default=1000, help="vmapped GSE replications for the target")
    parser.add_argument("--only", action="append", default=None, help="keep algorithms whose name contains this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default=RESULTS, help="where to write the report (default: benchmarks/results)")
    args = parser.parse_args(argv)
    reps = args.reps or (10 if args.quick else 100)
    slow_reps = min(args.slow_reps or (5 if args.quick else 10), reps)
    numpy_reps = {
        "a": args.numpy_reps or (20 if args.quick else 100),
        "b": args.numpy_reps or (10 if args.quick else 50),
    }

    header = machine_info()
    warm = warm_up_jax()
    algos = algorithms()
    if args.only:
        algos = {k: v for k, v in algos.items() if k == REFERENCE or any(s in k for s in args.only)}
    sections, summaries = [], {}
    slow = {name for name in algos if name in SLOW}
    for key, (_, env, _) in PROBLEMS.items():
        chosen = {REFERENCE: algos[REFERENCE]} if args.quick and key == "b" else algos
        count = {name: slow_reps if name in slow else reps for name in chosen}
        if args.quick and key == "b":
            count[REFERENCE] = args.target_reps  # one compile serves the table and the target
        problem_args = instances(env, max([numpy_reps[key], args.target_reps, *count.values()]), args.seed)
        text, summaries[key] = bench_problem(key, chosen, count, numpy_reps[key], problem_args, args.seed)
        sections.append(text)
        slow |= {n for n, r in summaries[key]["results"].items() if isinstance(r, Measured) and r.per100 > SLOW_S}

    gse = summaries["b"]["results"][REFERENCE]
    if isinstance(gse, Measured) and gse.reps != args.target_reps:
        _, env, budget = PROBLEMS["b"]
        gse = measure(
            GSE(allocation="g-optimal"), env, budget, instances(env, args.target_reps, args.seed), args.target_reps
        )
    target = target_section(gse, summaries["b"]) if isinstance(gse, Measured) else f"## Target\n\n{gse}"
    print(target, flush=True)

    notes = [compare_line(key, summaries[key]) for key in PROBLEMS]
    peace, ref = summaries["a"]["results"].get("Peace"), summaries["a"]["results"].get(REFERENCE)
    if isinstance(peace, Measured) and isinstance(ref, Measured):
        notes.append(
            f"- Peace / {REFERENCE} cost at K = 16: {peace.per100 / ref.per100:.3g}x (Azizi et al. 2022, sec. 8.1: "
            "530 s vs 7-18 s per 100 runs, 29-76x)"
        )
    else:
        notes.append(f"- Peace / {REFERENCE} cost at K = 16: not measured (Peace: {peace or 'not selected'})")
    quick_note = (
        f' Quick mode: problem (b) runs GSE(allocation="g-optimal") only, on the target\'s {args.target_reps} replications '
        "(the other algorithms' compiles would take minutes)."
        if args.quick
        else ""
    )
    text = "\n\n".join(
        [
            f"# bench_bai{' (quick)' if args.quick else ''}",
            header,
            "Settings: each algorithm runs as one program, `jax.jit(jax.vmap(identify))` over the replications "
            f"(keys of `bayesbandit.bai.evaluation.replication_keys(seed={args.seed})`: every algorithm sees the same "
            "instances and reward stacks); compile = `lower().compile()`, reported apart; run = the compiled call "
            '(median of 3 calls when one takes under 5 s), scaled to 100 replications from the "reps" timed '
            f"({reps}; {slow_reps} for {', '.join(sorted(SLOW))} and for any algorithm slower than {SLOW_S:g} s per 100 "
            "at K = 16, whose cost grows with K). Accuracy: fraction of the timed replications that return a best "
            f"arm ± binomial s.e. JAX warm-up {warm:.2f} s, not charged. Baseline: the NumPy GSE loop "
            "(`benchmarks/baselines/numpy_gse.py`), one replication at a time in Python, on the same instances (its "
            f'own NumPy random numbers), after one untimed replication. "cost / {REFERENCE}" is an algorithm\'s '
            'time over that of GSE(allocation="g-optimal") on the same problem; "mean pulls" shows the budget spent '
            "(OD-LinBAI's ceilings may leave some unspent)." + quick_note,
            *sections,
            target,
            "## Checks and ratios\n\n" + "\n".join(notes),
            "Notes: wall-clock times on CPU; on a shared machine (see the load average) absolute times move, the "
            "ratios measured side by side in one process are the meaningful output. A vmapped `while_loop` (the "
            "G-optimal designs, the rounding) runs until its slowest replication stops, so the vmapped time per "
            "replication depends on the batch size: the target is timed on 1,000 replications, not scaled.",
        ]
    )
    print("\n" + text)
    print("\nwritten:", write_results("bench_bai", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
