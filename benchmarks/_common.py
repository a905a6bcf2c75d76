"""Shared pieces of the benchmark scripts: the logistic bandit, the scanned JAX runner, timing
helpers, machine information and markdown output."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as pkg_version

import jax
import jax.numpy as jnp
import numpy as np

import bayesbandit as bb

bb.runtime.enable_x64()  # before any array is created: the GLM policies' Newton solves need float64
bb.runtime.enable_fast_rng()  # as the README recommends and the CLI does (bench_fast_rng.py measures both lowerings)

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


# ----------------------------------------------------------------------------- problem
def make_instance(run: int, k: int, d: int, n: int, seed: int = 0):
    """Instance ``run`` of the logistic bandit: arms ~ U[-1,1]^d, theta* ~ N(0, 3/d I), and the
    uniforms ``u`` that decide the Bernoulli rewards (``r = u[t] < mu[arm]``).

    Depends only on ``(seed, run)`` (and the sizes), so every contender and every number of runs
    sees the same instances per run index (common random numbers for the rewards too).
    """
    rng = np.random.default_rng([seed, run])
    arms = rng.uniform(-1.0, 1.0, size=(k, d))
    theta = rng.normal(0.0, np.sqrt(3.0 / d), size=d)
    u = rng.random(n)
    return arms, theta, u


def make_instances(runs: int, k: int, d: int, n: int, seed: int = 0):
    """Stacked instances for runs ``0..runs-1``: arms (R, K, d), theta (R, d), u (R, n)."""
    parts = [make_instance(i, k, d, n, seed) for i in range(runs)]
    return tuple(np.stack(p) for p in zip(*parts, strict=True))


def run_keys(runs: int, seed: int = 0):
    """One PRNG key per run index (``fold_in``, so independent of the number of runs)."""
    base = jax.random.PRNGKey(seed)
    return jnp.stack([jax.random.fold_in(base, i) for i in range(runs)])


def select_steps(info):
    """Newton steps of the solve done in ``select``: ``info.solver.num_steps`` when the select info has a
    ``solver`` field (GLM-FPL's perturbed solve), else 0 (GLM-TSL's select only samples, no solve)."""
    solver = getattr(info, "solver", None)
    return jnp.asarray(0 if solver is None else solver.num_steps, jnp.int32)


def scan_run(policy, arms, theta, u, key):
    """One bandit run as a ``lax.scan`` over rounds: returns per-round regret and Newton steps.

    Two Newton step counts per round, both from the infos the policy returns:

    * select steps: the solve done in this round's ``select`` (:func:`select_steps`): GLM-FPL's
      perturbed solve behind this round's choice; 0 for GLM-TSL, whose select does no solve;
    * update steps: the solve done in this round's ``update`` (the update info's ``solver.num_steps``),
      i.e. the MAP refit that GLM-TSL's next choice samples around.
    """
    mu = jax.nn.sigmoid(arms @ theta)
    best = jnp.max(mu)
    state = policy.init(arms)

    def step(state, inputs):
        k, ut = inputs
        action, info = policy.select(state, arms, k)
        reward = (ut < mu[action]).astype(arms.dtype)
        state, update_info = policy.update(state, arms, action, reward)
        return state, (best - mu[action], select_steps(info), update_info.solver.num_steps)

    keys = jax.random.split(key, u.shape[0])
    _, (regret, sel_steps, upd_steps) = jax.lax.scan(step, state, (keys, u))
    return regret, sel_steps, upd_steps


def jax_runner(policy, vmapped: bool) -> Callable:
    fn = lambda arms, theta, u, key: scan_run(policy, arms, theta, u, key)  # noqa: E731
    return jax.vmap(fn) if vmapped else fn


# ----------------------------------------------------------------------------- timing
def warm_up_jax() -> float:
    """Compile and run a trivial program: XLA's one-time start-up cost is not charged to the first benchmark."""
    t0 = time.perf_counter()
    jax.block_until_ready(jax.jit(lambda x: jnp.linalg.cholesky(x @ x.T + jnp.eye(3)))(jnp.ones((3, 3))))
    return time.perf_counter() - t0


def compile_and_time(fn: Callable, args: Sequence, reps: int = 3):
    """``jax.jit(fn).lower(*args).compile()`` timed, then the compiled call timed ``reps`` times.

    Returns (compile seconds, median seconds, all seconds, output of the last call, compiled).
    """
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    times = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    return compile_s, statistics.median(times), times, out, compiled


def interleaved_cpu(contenders: dict, reps: int) -> dict[str, float]:
    """Median process CPU seconds per round-run of each contender, timed in turn (A B C A B C ...).

    ``contenders``: name -> (callable running the workload, rounds x runs it plays). Alternating
    the contenders makes a change of the machine's load hit all of them; CPU time (all the
    process's threads) rather than wall time makes the ratio independent of waiting for a core.
    """
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(reps):
        for name, (fn, work) in contenders.items():
            start = time.process_time()
            fn()
            times[name].append((time.process_time() - start) / work)
    return {name: statistics.median(t) for name, t in times.items()}


def max_rss_mib() -> float:
    """Process peak resident set size so far (Linux ru_maxrss is in KiB). Monotone: a high-water mark."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def xla_memory_mib(compiled) -> str:
    """Arguments + outputs + temporaries of a compiled program, from XLA's memory analysis."""
    try:
        m = compiled.memory_analysis()
        total = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
        return f"{total / 2**20:.1f}"
    except Exception:  # noqa: BLE001
        return "n/a"


def mean_se(x) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    se = float(np.std(x, ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")
    return float(np.mean(x)), se


def fmt_pm(x) -> str:
    m, s = mean_se(x)
    return f"{m:.1f} ± {s:.1f}"


def fmt_paired(diff) -> str:
    """A paired difference: ``mean ± standard error (z = mean / se)``."""
    m, s = mean_se(diff)
    return f"{m:+.1f} ± {s:.1f} (z = {m / s if s > 0 else 0.0:+.2f})"


# ----------------------------------------------------------------------------- output
def _version(name: str) -> str:
    try:
        return pkg_version(name)
    except PackageNotFoundError:
        return "not installed"


def machine_info() -> str:
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    lines = [
        f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- platform: {platform.platform()}; processor: {platform.processor() or platform.machine()}",
        f"- CPU count: {os.cpu_count()}; JAX backend: {jax.default_backend()} ({jax.devices()[0].device_kind})",
        f"- load average at start (1, 5, 15 min): {load}",
        f"- python {sys.version.split()[0]}; jax {jax.__version__}; jaxlib {_version('jaxlib')}; "
        f"numpyro {_version('numpyro')}; numpy {np.__version__}; scipy {_version('scipy')}; "
        f"bayesbandit {_version('bayesbandit')}; bayesianbandits {_version('bayesianbandits')}",
    ]
    return "\n".join(lines)


def md_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def write_results(name: str, quick: bool, text: str, out_dir: str = RESULTS) -> str:
    """Write ``<out_dir>/<name>.md`` (``<name>_quick.md`` in quick mode; default ``results/``); returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}{'_quick' if quick else ''}.md")
    with open(path, "w") as f:
        f.write(text.rstrip() + "\n")
    return path
