"""bayesbandit's GLM-TSL against a hand-written C loop of the same algorithm, and its cost against runs.

The C reference (``baselines/glm_tsl.c``, C99, doubles, xoshiro256** random numbers) is compiled
when the benchmark starts with the system compiler (``$CC``, else ``cc``: ``-O3 -march=native``)
into a temporary folder and called through ``ctypes``; without a compiler the C rows are skipped
with a message. It transcribes ``bb.GLMTSL(logistic(), a=1.0)`` with the default
``DenseNewton`` (its docstring lists the steps), reading the tolerance, step cap, ``quadratic_stop``
and prior scale from the policy objects the benchmark times, for

* ``history="full"``: per round a Laplace sample ``theta_hat + a L^{-T} xi``, the arm of largest
  ``x^T theta`` (exact ties uniform, one random integer), a Bernoulli reward, then the MAP refitted
  to every pull (per-arm counts and reward sums, as the library keeps them on a fixed arm set) by
  warm-started damped Newton with a chord start, the library's stopping rule (Newton decrement
  ``g^T H^-1 g / 2 <= tol``, ``quadratic_stop``) and Armijo backtracking, keeping the factor;
* ``history="online"``: the one-row online Laplace update of
  :mod:`bayesbandit.inference.online_laplace` (a bracketed Newton root in one dimension, then
  ``chol(L L^T + c x x^T)``).

Sections of the report:

1. **Same algorithm**: on the same instances (``LogisticBandit(K=100, d=10, theta_cov="unit")``,
   the instances ``simulate`` draws for each run index), final regret of ``bb.simulate`` and of
   the C loop (mean ± s.e. over runs, and the paired difference, which must lie within 3 s.e.),
   and Newton steps per update (bayesbandit's through a ``record`` hook).
2. **Ratio to C**: microseconds per round-run of ``bb.simulate`` (its ``run_time``, compile
   excluded; runs vmapped) and of the C loop (runs one after another on one core), interleaved
   repetitions, medians; wall time and process CPU time, and the ratios bayesbandit / C.
The cost against the number of runs, at one horizon for every run count, is
``benchmarks/bench_runs.py``'s.

Usage, from the repository root: ``python -m benchmarks.bench_c_reference [--quick] [--out-dir DIR]``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import jax
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.envs import LogisticBandit
from bayesbandit.inference import DenseNewton
from bayesbandit.sim import key_streams

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import RESULTS, machine_info, md_table, mean_se, warm_up_jax, write_results  # noqa: E402

K, D = 100, 10
SEED = 0
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "baselines", "glm_tsl.c")
FLAGS = ["-O3", "-march=native", "-std=c99", "-shared", "-fPIC"]
ENV = LogisticBandit(K=K, d=D, theta_cov="unit")  # theta* ~ N(0, 3/d I): the benchmarks' problem
POLICIES = {
    "GLM-TSL full": bb.GLMTSL(logistic(), a=1.0),
    "GLM-TSL online": bb.GLMTSL(logistic(), a=1.0, history="online"),
}
TARGET_RATIO = 2.0  # the project's target: bayesbandit within 2x of the C loop (CPU time per round-run)


def newton_steps(rnd: Any) -> dict[str, Any]:
    """``simulate``'s record hook: the update's Newton steps (its solver info's ``num_steps``)."""
    return {"newton_steps": rnd.update_info.solver.num_steps}


# ----------------------------------------------------------------------------- the C loop
def build_library(out_dir: str, d: int = D) -> tuple[ctypes.CDLL | None, str]:
    """Compile ``glm_tsl.c`` for dimension ``d`` (``-DGLM_DIM=d``: its loops unrolled) into ``out_dir``.

    First with glibc's vector math library (``-DGLM_LIBMVEC -lmvec``: ``exp`` over the arms 4 or 8 at a
    time), then, if that fails (no glibc), without it. Returns (the library, or None when there is no
    compiler or both fail; the command used, or why not).
    """
    name = os.environ.get("CC", "cc")
    compiler = shutil.which(name)
    if compiler is None:
        return None, f"no C compiler found (`{name}` is not on PATH): the C rows are skipped"
    target = os.path.join(out_dir, "glm_tsl.so")
    errors = []
    for extra in (["-fno-math-errno", "-DGLM_LIBMVEC", "-lmvec"], []):
        flags = [*FLAGS, f"-DGLM_DIM={d}", *extra, "-lm"]
        done = subprocess.run([compiler, SOURCE, "-o", target, *flags], capture_output=True, text=True)
        if done.returncode == 0:
            break
        errors.append(done.stderr.strip()[:300])
    else:
        return None, f"`{name} {' '.join(flags)}` failed ({' / '.join(errors)}): the C rows are skipped"
    lib = ctypes.CDLL(target)
    pointer = np.ctypeslib.ndpointer
    lib.glm_tsl_runs.restype = ctypes.c_int
    lib.glm_tsl_runs.argtypes = [
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        pointer(np.float64, flags="C_CONTIGUOUS"),
        pointer(np.float64, flags="C_CONTIGUOUS"),
        ctypes.c_double,
        ctypes.c_double,
        ctypes.c_double,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_uint64,
        pointer(np.float64, flags="C_CONTIGUOUS"),
        pointer(np.int32, flags="C_CONTIGUOUS"),
        pointer(np.int32, flags="C_CONTIGUOUS"),
    ]
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()
    return lib, f"`{name} {' '.join(flags)}` ({version[0] if version else compiler})"


def instances(runs: int) -> tuple[np.ndarray, np.ndarray]:
    """Arms (R, K, d) and theta* (R, d) of runs ``0..R-1``: the instances ``simulate(..., seed=SEED)`` plays."""
    state = jax.vmap(ENV.reset)(key_streams(SEED, runs).env)
    return np.ascontiguousarray(state.arms, np.float64), np.ascontiguousarray(state.theta, np.float64)


def c_settings(policy: bb.GLMTSL) -> dict[str, Any]:
    """What the C loop reads from the policy: ``a``, the prior scale and the solver's stopping rule."""
    solver = policy.solver
    if not isinstance(solver, DenseNewton):
        raise TypeError(f"the C loop transcribes DenseNewton; the policy's solver is {type(solver).__name__}")
    return {
        "a": float(policy.a),
        "prior_scale": float(policy.model.prior_scale),
        "tol": float(solver.tol),
        "max_steps": int(solver.max_steps),
        "quadratic_stop": bool(solver.quadratic_stop),
        "online": policy.history == "online",
    }


def c_run(lib: ctypes.CDLL, policy: bb.GLMTSL, arms: np.ndarray, theta: np.ndarray, horizon: int) -> dict[str, Any]:
    """The C loop on every instance, one run after another: per-round regret and steps, wall and CPU seconds."""
    s = c_settings(policy)
    runs = arms.shape[0]
    regret = np.empty((runs, horizon), np.float64)
    steps = np.empty((runs, horizon), np.int32)
    failures = np.empty(runs, np.int32)
    wall, cpu = time.perf_counter(), time.process_time()
    status = lib.glm_tsl_runs(
        runs, horizon, arms.shape[1], arms.shape[2], arms, theta, s["a"], s["prior_scale"], s["tol"],
        s["max_steps"], int(s["quadratic_stop"]), int(s["online"]), SEED, regret, steps, failures,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if status == -2:
        raise ValueError(f"the C loop was compiled for another dimension than d = {arms.shape[2]}")
    if status != 0:
        raise MemoryError("the C loop could not allocate its work space")
    return {"regret": regret, "steps": steps, "not_converged": failures, "wall": wall, "cpu": cpu}


def bb_run(policy: Any, runs: int, horizon: int, record: Any = None) -> dict[str, Any]:
    """``bb.simulate`` once (compiled on first use): its ``run_time``, the process CPU time of the call, outputs."""
    cpu = time.process_time()
    ds = bb.simulate(policy, ENV, horizon, runs=runs, seed=SEED, progress=False, record=record)
    cpu = time.process_time() - cpu
    out = {"wall": float(ds.run_time[0]), "cpu": cpu, "compile": float(ds.compile_time[0])}
    out["regret"] = ds.regret.values[0]
    out["not_converged"] = ds.not_converged.values[0]
    if record is not None:
        out["steps"] = ds.newton_steps.values[0]
    return out


# ----------------------------------------------------------------------------- sections
def agreement(lib: ctypes.CDLL, runs: int, horizon: int) -> list[list[str]]:
    """Final regret and Newton steps of bb.simulate and of the C loop on the same instances."""
    arms, theta = instances(runs)
    rows = []
    for name, policy in POLICIES.items():
        ours = bb_run(policy, runs, horizon, record=newton_steps)
        ref = c_run(lib, policy, arms, theta, horizon)
        total_bb, total_c = ours["regret"].sum(axis=1), ref["regret"].sum(axis=1)
        (m_bb, se_bb), (m_c, se_c) = mean_se(total_bb), mean_se(total_c)
        diff, diff_se = mean_se(total_bb - total_c)
        z = diff / diff_se if diff_se > 0 else 0.0
        steps_bb, steps_c = ours["steps"][:, D:], ref["steps"][:, D:]  # after the initial exploration
        rows.append(
            [
                name,
                f"{m_bb:.2f} ± {se_bb:.2f}",
                f"{m_c:.2f} ± {se_c:.2f}",
                f"{diff:+.2f} ± {diff_se:.2f} (z = {z:+.2f}{'' if abs(z) <= 3 else ', OUTSIDE 3 s.e.'})",
                f"{steps_bb.mean():.3f} / {steps_bb.max(axis=0).mean():.2f}",
                f"{steps_c.mean():.3f} / {steps_c.max(axis=0).mean():.2f}",
                f"{ours['not_converged'].sum()} / {ref['not_converged'].sum()}",
            ]
        )
        print(rows[-1], flush=True)
    return rows


def ratios(lib: ctypes.CDLL | None, runs: int, horizon: int, reps: int) -> tuple[list[list[str]], str]:
    """Interleaved repetitions (bb full, C full, bb online, C online, ...): medians per round-run and ratios."""
    arms, theta = instances(runs)
    work = runs * horizon
    for policy in POLICIES.values():  # compile outside the timed repetitions
        bb_run(policy, runs, horizon)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    load_before = os.getloadavg()
    for _ in range(reps):
        for name, policy in POLICIES.items():
            out = bb_run(policy, runs, horizon)
            times.setdefault((name, "bb"), []).append((out["wall"] / work, out["cpu"] / work))
            if lib is not None:
                ref = c_run(lib, policy, arms, theta, horizon)
                times.setdefault((name, "C"), []).append((ref["wall"] / work, ref["cpu"] / work))
    load_after = os.getloadavg()

    def median(name: str, side: str, i: int) -> float:
        return statistics.median(t[i] for t in times[(name, side)])

    rows = []
    for name in POLICIES:
        wall_bb, cpu_bb = median(name, "bb", 0), median(name, "bb", 1)
        row = [name, f"{wall_bb * 1e6:.2f}", f"{cpu_bb * 1e6:.2f}"]
        if lib is None:
            row += ["skipped"] * 5
        else:
            wall_c, cpu_c = median(name, "C", 0), median(name, "C", 1)
            ratio = cpu_bb / cpu_c
            row += [
                f"{wall_c * 1e6:.2f}",
                f"{cpu_c * 1e6:.2f}",
                f"x{wall_bb / wall_c:.2f}",
                f"x{ratio:.2f}",
                "met" if ratio <= TARGET_RATIO else "not met",
            ]
        rows.append(row)
        print(rows[-1], flush=True)
    load = f"load average (1, 5, 15 min) before the timed repetitions {_load(load_before)}, after {_load(load_after)}"
    return rows, load


def _load(values: tuple[float, ...]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def _settings_text(lib_text: str) -> str:
    policy = POLICIES["GLM-TSL full"]
    s = c_settings(policy)
    return (
        f"Logistic bandit `LogisticBandit(K={K}, d={D}, theta_cov='unit')` (theta* ~ N(0, 3/d I)), seed {SEED}; "
        f"`bb.GLMTSL(logistic(), a=1.0)` and `history='online'`, solver `{policy.solver!r}`. The C loop reads "
        f"a = {s['a']}, prior scale {s['prior_scale']}, tol = {s['tol']:g}, max_steps = {s['max_steps']}, "
        f"quadratic_stop = {s['quadratic_stop']} from these objects. C compiler: {lib_text}."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, rounds and repetitions (under 3 minutes)")
    parser.add_argument("--out-dir", default=RESULTS, help="where the markdown report is written")
    args = parser.parse_args(argv)
    if args.quick:
        check_runs, check_horizon, time_runs, time_horizon, reps = 20, 500, 100, 500, 3
    else:
        check_runs, check_horizon, time_runs, time_horizon, reps = 200, 2_000, 100, 2_000, 5
    header = machine_info()
    warm_up_jax()
    with tempfile.TemporaryDirectory() as build_dir:
        lib, lib_text = build_library(build_dir)
        print(lib_text, flush=True)
        agree = agreement(lib, check_runs, check_horizon) if lib is not None else []
        speed, load = ratios(lib, time_runs, time_horizon, reps)
    lines = [
        "# GLM-TSL: bayesbandit against a hand-written C loop",
        "",
        header,
        "",
        _settings_text(lib_text),
        "",
        "## Same algorithm",
        "",
    ]
    if lib is None:
        lines.append(f"Skipped: {lib_text}.")
    else:
        lines += [
            f"{check_runs} runs x {check_horizon:,} rounds on the same instances (the C loop's random numbers are its "
            "own). Final regret: mean ± s.e. over runs; paired difference over the instances. Newton steps per "
            f"update after the {D} exploration rounds (bayesbandit: the update info's `solver.num_steps` through a "
            "`record` hook; the online solve counts evaluations of its one-dimensional F): mean over round-runs / "
            "mean over rounds of the maximum over runs (the pace of a vmapped round). Not converged: rounds in all.",
            "",
            md_table(
                [
                    "policy",
                    "bayesbandit regret",
                    "C regret",
                    "bayesbandit - C",
                    "bb Newton steps",
                    "C Newton steps",
                    "not converged bb / C",
                ],
                agree,
            ),
        ]
    lines += [
        "",
        "## Time per round-run: bayesbandit / C",
        "",
        f"{time_runs} runs x {time_horizon:,} rounds. bayesbandit: `bb.simulate` (runs vmapped, one compiled "
        "program, compile excluded: its `run_time`); C: the same runs one after another on one core. Interleaved "
        f"(bb full, C full, bb online, C online) x {reps}, medians. Wall: simulate's `run_time` / the C call; CPU: "
        "process CPU time of the call (XLA:CPU runs a device's program on about one core). Microseconds per "
        f"round-run. Timed under load: {load}.",
        "",
        md_table(
            [
                "policy",
                "bb wall us",
                "bb CPU us",
                "C wall us",
                "C CPU us",
                "bb / C wall",
                "bb / C CPU",
                f"target: CPU ratio <= {TARGET_RATIO:g}",
            ],
            speed,
        ),
    ]
    print(write_results("bench_c_reference", args.quick, "\n".join(lines), args.out_dir))


if __name__ == "__main__":
    main()
