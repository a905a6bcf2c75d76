"""The random tie-break argmax: one random integer per call against ``K`` uniforms, side by side.

Two rules for ``bayesbandit._numerics.random_argmax`` (same ties: NaN as ``-inf``, the ``rtol`` rule):

* ``K uniforms``: ``K`` iid uniforms drawn every call, the tied entry of largest noise wins (a
  variant defined here, not in the library);
* ``one integer (library)``: the library's rule, the ``J``-th tie in index order with ``J`` on
  ``{0, ..., n - 1}`` made from one draw of two 32-bit words.

Measured in one process (``bb.runtime.enable_x64()``, ``enable_fast_rng()``):

* **the argmax alone**, vmapped over 100 runs, at ``K = 100`` and ``K = 10,000`` (float64 scores,
  one compiled call per repetition, ``calls`` calls timed together); a plain ``argmax`` with no
  tie-break is the floor (call overhead included in all three);
* **whole rounds**: GLM-TSL (a = 1) on the logistic bandit (K = 100, d = 10; ``_common``'s
  instances and ``scan_run``, vmapped), full history and ``history="online"``, 100 runs x 2,000
  rounds. The variant is put in place of ``random_argmax`` in every module that imported it before
  the program is traced and compiled (caches cleared; the two compiled programs are checked to
  differ), and restored after. With continuous scores there are no ties, so both programs must
  choose the same arms: checked on every output.

CPU time of the process, the contenders interleaved (A B A B ...), ``reps`` repetitions; reported:
median us per round-run (per call and run for the argmax alone) and the ratio, with the mean
± standard error over repetitions of the per-repetition ratio (each repetition's pair ran back to back).

Usage, from the repository root: ``python -m benchmarks.bench_tie_break [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
import bayesbandit._numerics as numerics

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
LIBRARY = numerics.random_argmax


def k_uniforms_argmax(key, scores, *, rtol=0.0):
    """The ``K``-uniform rule: ``K`` uniforms, the tied entry (the library's ties) of largest noise."""
    noise = jax.random.uniform(key, scores.shape)
    return jnp.argmax(jnp.where(numerics._tied(scores, rtol), noise, -1.0))


RULES: dict[str, Callable] = {"K uniforms": k_uniforms_argmax, "one integer (library)": LIBRARY}
OLD, NEW = RULES


@contextlib.contextmanager
def tie_break(rule: Callable) -> Iterator[None]:
    """``rule`` as ``random_argmax`` in every loaded module that holds the library's, restored after."""
    holders = [m for m in list(sys.modules.values()) if getattr(m, "random_argmax", None) is LIBRARY]
    for module in holders:
        module.random_argmax = rule
    try:
        yield
    finally:
        for module in holders:
            module.random_argmax = LIBRARY


def build(fn: Callable, args: tuple) -> tuple[object, float]:
    """``jit(fn)`` compiled ahead of time for ``args`` after clearing JAX's caches; (compiled, seconds)."""
    jax.clear_caches()
    start = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - start


def paired(contenders: dict, reps: int) -> dict[str, list[float]]:
    """Per-repetition CPU seconds per unit of work of each contender (``interleaved_cpu``, one rep at a time)."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(reps):
        for name, seconds in interleaved_cpu(contenders, 1).items():
            times[name].append(seconds)
    return times


def row(workload: str, times: dict[str, list[float]], compile_s: dict[str, float]) -> list[str]:
    old, new = np.asarray(times[OLD]), np.asarray(times[NEW])
    ratio, ratio_se = mean_se(old / new)
    cells = [workload, f"{statistics.median(old) * 1e6:.3f}", f"{statistics.median(new) * 1e6:.3f}"]
    cells += [f"x{statistics.median(old) / statistics.median(new):.2f}", f"{ratio:.2f} ± {ratio_se:.2f}"]
    cells += [" / ".join(f"{compile_s[name]:.2f}" for name in RULES)]
    print(cells, flush=True)
    return cells


def argmax_rows(runs: int, calls: int, reps: int) -> tuple[list, list]:
    keys = run_keys(runs)
    rows, floors = [], []
    for k in (100, 10_000):
        scores = jax.random.normal(jax.random.key(k), (runs, k))
        built = {
            name: build(jax.vmap(lambda key, s, rule=rule: rule(key, s)), (keys, scores))
            for name, rule in RULES.items()
        }
        built["plain argmax"] = build(jax.vmap(jnp.argmax), (scores,))
        picks = {name: np.asarray(fn(keys, scores)) for name, (fn, _) in built.items() if name in RULES}
        np.testing.assert_array_equal(picks[OLD], picks[NEW])  # no ties: both are the argmax

        def timed(fn, args):
            return lambda: [jax.block_until_ready(fn(*args)) for _ in range(calls)]

        contenders = {name: (timed(built[name][0], (keys, scores)), calls * runs) for name in RULES}
        contenders["plain argmax"] = (timed(built["plain argmax"][0], (scores,)), calls * runs)
        times = paired(contenders, reps)
        rows.append(row(f"argmax alone, K = {k:,}", times, {n: built[n][1] for n in RULES}))
        floors.append([f"K = {k:,}", f"{statistics.median(times['plain argmax']) * 1e6:.3f}"])
    return rows, floors


def round_rows(runs: int, rounds: int, reps: int) -> tuple[list, list]:
    inst = make_instances(runs, K, D, rounds)
    keys = run_keys(runs)
    rows, regret = [], []
    for label, history in (("full history", "full"), ("online", "online")):
        policy = bb.GLMTSL(logistic(), a=1.0, history=history)
        built = {}
        for name, rule in RULES.items():
            with tie_break(rule):
                built[name] = build(jax_runner(policy, True), (*inst, keys))
        assert built[OLD][0].as_text() != built[NEW][0].as_text(), "the variant did not reach the program"
        outputs = {name: jax.block_until_ready(fn(*inst, keys)) for name, (fn, _) in built.items()}
        for a, b in zip(outputs[OLD], outputs[NEW], strict=True):
            np.testing.assert_array_equal(a, b)  # no ties: the same arms, steps and regret
        contenders = {
            name: ((lambda fn=fn: jax.block_until_ready(fn(*inst, keys))), runs * rounds)
            for name, (fn, _) in built.items()
        }
        times = paired(contenders, reps)
        rows.append(row(f"GLM-TSL round, {label}", times, {n: built[n][1] for n in RULES}))
        total_mean, total_se = mean_se(np.asarray(outputs[NEW][0]).sum(axis=1))
        regret.append([f"GLM-TSL, {label}", f"{total_mean:.2f} ± {total_se:.2f}"])
    return rows, regret


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, rounds, calls and repetitions")
    parser.add_argument("--out-dir", default=None, help="write the report here instead of benchmarks/results")
    args = parser.parse_args(argv)
    runs, rounds, calls, reps = (20, 200, 20, 3) if args.quick else (100, 2_000, 200, 7)
    warm_up_jax()
    header = machine_info()
    alone, floors = argmax_rows(100, calls, reps)
    whole, regret = round_rows(runs, rounds, reps)
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    headers = [
        "workload",
        f"{OLD}: us",
        f"{NEW}: us",
        "ratio of medians",
        "ratio per rep, mean ± se",
        "compile s (old / new)",
    ]
    text = "\n".join(
        [
            "# Random tie-break: one random integer per call against K uniforms",
            "",
            header,
            f"- load average at the end (1, 5, 15 min): {load}",
            "",
            f"Argmax alone: vmapped over 100 runs, float64 scores ~ N(0, 1), {calls} compiled calls per "
            f"timing, us per call and run. Rounds: GLM-TSL (a = 1), logistic bandit K = {K}, d = {D}, "
            f"{runs} runs x {rounds:,} rounds vmapped, us per round-run. CPU time of the process, interleaved, "
            f"{reps} repetitions; the ratio is old / new (above 1: the library's rule is faster). Both rules "
            "chose the same arms in every program (no ties among continuous scores). Timed on a shared "
            "machine under load (load averages above): ratios, measured back to back, are the numbers to read.",
            "",
            md_table(headers, alone + whole),
            "",
            "Floor: a plain `argmax` with no tie-break, vmapped over the same 100 runs, us per call and run "
            "(call overhead included, as above):",
            "",
            md_table(["size", "plain argmax: us"], floors),
            "",
            "Final regret of the library's programs (identical under both rules), mean ± se over runs:",
            "",
            md_table(["policy", f"regret after {rounds:,} rounds"], regret),
        ]
    )
    print(write_results("bench_tie_break", args.quick, text, **({"out_dir": args.out_dir} if args.out_dir else {})))


if __name__ == "__main__":
    main()
