"""``bb.runtime.enable_fast_rng()``: what compiling JAX's Threefry hash without a loop buys on CPU.

Both lowerings compute the same bits (checked here on every output); they differ in how XLA:CPU
runs them: JAX's default is a loop of five 4-round steps that carries the key schedule and the
rotation constants and rotates them every step (28 instructions a step, 13 of them copies, each
its own kernel), ``enable_fast_rng`` registers the straight-line hash, which XLA fuses. Measured in one
process: each lowering is registered in turn, the programs compiled ahead of time under it
(``jit(...).lower(...).compile()``, timed, caches cleared in between), then the compiled
programs of both run interleaved (A B A B ...), timed by process CPU time, median of ``reps``.

Programs (logistic bandit of Kveton et al. 2020, K = 100, d = 10, N(0, I) prior):

* the Agent's GLM-TSL ``select`` (one state, one key: a key split, a posterior sample, the
  tie-breaking noise) and the Agent's online ``update`` (no random draw: a control);
* ``simulate``-style runs: GLM-TSL (a = 1) and GLM-FPL (a = 0.5), 20 runs x 2,000 rounds in one
  vmapped ``lax.scan``.

Usage, from the repository root: ``python -m benchmarks.bench_fast_rng [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import numpy as np
from bayesbandit.models import logistic
from jax._src.random.threefry2x32 import _threefry2x32_cpu_lowering_rule
from jax.extend.random import threefry2x32_p
from jax.interpreters import mlir

import bayesbandit as bb
from bayesbandit.threefry import threefry2x32

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import (  # noqa: E402
    interleaved_cpu,
    jax_runner,
    machine_info,
    make_instances,
    md_table,
    run_keys,
    warm_up_jax,
    write_results,
)

K, D = 100, 10
# JAX's own CPU rule (a private name: the baseline is JAX as installed, registered as JAX registers it)
LOWERINGS = {
    "JAX's CPU lowering (loop)": (_threefry2x32_cpu_lowering_rule, True),
    "enable_fast_rng (straight line)": (mlir.lower_fun(threefry2x32, multiple_results=True), False),
}


def use(rule, inline: bool) -> None:
    """Make ``rule`` the CPU lowering of Threefry and forget every compiled program."""
    mlir.register_lowering(threefry2x32_p, rule, platform="cpu", inline=inline)
    jax.clear_caches()


def aot(fn, *args) -> tuple[object, float, float, bool]:
    """(compiled, trace+lower s, compile s, has a while loop) of ``jit(fn)`` for ``args``."""
    t0 = time.perf_counter()
    lowered = jax.jit(fn).lower(*args)
    t1 = time.perf_counter()
    compiled = lowered.compile()
    t2 = time.perf_counter()
    return compiled, t1 - t0, t2 - t1, " while(" in compiled.as_text()


def programs(runs: int, rounds: int) -> dict[str, tuple]:
    """name -> (function, arguments, work units per call: calls or round-runs)."""
    rng = np.random.default_rng(0)
    arms = rng.uniform(-1.0, 1.0, (K, D))
    online = bb.GLMTSL(logistic(), a=1.0, history="online")
    state = online.init(arms)
    for t in range(50):  # a posterior with some data
        state, _ = online.update(state, arms, t % K, float(rng.random() < 0.5))
    key = jax.random.PRNGKey(1)
    inst = make_instances(runs, K, D, rounds)
    keys = run_keys(runs)
    return {
        "GLM-TSL select (Agent, one state)": (lambda s, k: online.select(s, arms, k), (state, key), 1),
        "GLM-TSL online update (Agent; no random draw)": (
            lambda s: online.update(s, arms, 3, 1.0),
            (state,),
            1,
        ),
        f"GLM-TSL simulate ({runs} runs vmapped)": (
            jax_runner(bb.GLMTSL(logistic(), a=1.0), True),
            (*inst, keys),
            runs * rounds,
        ),
        f"GLM-FPL simulate ({runs} runs vmapped)": (
            jax_runner(bb.GLMFPL(logistic(), a=0.5), True),
            (*inst, keys),
            runs * rounds,
        ),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repetitions")
    args = parser.parse_args(argv)
    runs, rounds, reps, calls = (4, 200, 3, 200) if args.quick else (20, 2_000, 5, 2_000)
    warm_up_jax()
    progs = programs(runs, rounds)
    built: dict[str, dict[str, tuple]] = {}
    for mode, (rule, inline) in LOWERINGS.items():
        use(rule, inline)
        built[mode] = {name: aot(fn, *fn_args) for name, (fn, fn_args, _) in progs.items()}
        print(mode, {n: (round(b[1], 2), round(b[2], 2)) for n, b in built[mode].items()}, flush=True)
    rows = []
    for name, (_, fn_args, work) in progs.items():
        outputs = [jax.block_until_ready(built[mode][name][0](*fn_args)) for mode in LOWERINGS]
        same = all(
            np.array_equal(np.asarray(a), np.asarray(b))
            for a, b in zip(jax.tree.leaves(outputs[0]), jax.tree.leaves(outputs[1]), strict=True)
        )
        repeat = calls if work == 1 else 1

        def timed(compiled, fn_args=fn_args, repeat=repeat):
            return lambda: [jax.block_until_ready(compiled(*fn_args)) for _ in range(repeat)]

        contenders = {mode: (timed(built[mode][name][0]), work * repeat) for mode in LOWERINGS}
        cpu = interleaved_cpu(contenders, reps)
        base, fast = (cpu[mode] * 1e6 for mode in LOWERINGS)
        (b_trace, b_compile, b_loop), (f_trace, f_compile, f_loop) = (built[m][name][1:] for m in LOWERINGS)
        unit = "us / call" if work == 1 else "us / round-run"
        rows.append(
            [
                name,
                f"{base:.1f} {unit}",
                f"{fast:.1f} {unit}",
                f"x{base / fast:.2f}",
                f"{b_trace:.2f} + {b_compile:.2f}",
                f"{f_trace:.2f} + {f_compile:.2f}",
                f"{'yes' if b_loop else 'no'} / {'yes' if f_loop else 'no'}",
                "yes" if same else "NO",
            ]
        )
        print(rows[-1], flush=True)
    headers = [
        "program",
        "JAX's lowering (CPU time)",
        "enable_fast_rng (CPU time)",
        "speed-up",
        "trace+lower + compile s, JAX's",
        "trace+lower + compile s, fast",
        "while loop in the program (JAX's / fast)",
        "identical outputs",
    ]
    text = "\n\n".join(
        [
            "# enable_fast_rng: Threefry without a loop on CPU",
            machine_info(),
            f"K = {K}, d = {D}, logistic, N(0, I) prior; simulate programs: {runs} runs x {rounds:,} rounds vmapped; "
            f"single-state programs: {calls:,} calls per timing; CPU time, interleaved, median of {reps}. "
            "Trace+lower and compile: the first build of each program under each lowering, JAX's caches "
            "cleared before each (JAX's lowering is built first).",
            md_table(headers, rows),
        ]
    )
    print(f"wrote {write_results('bench_fast_rng', args.quick, text)}")


if __name__ == "__main__":
    main()
