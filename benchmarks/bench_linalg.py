"""What cutting batched LAPACK calls costs: ``bayesbandit._linalg`` vs JAX's functions, vmapped.

On one device with XLA's default pool (one thread per core), jaxlib splits a batch whose work
reaches 200,000 flops over the pool's threads; ``_linalg`` runs it as consecutive pieces in the
calling thread instead (so no thread ever waits on the pool). This measures, side by side in one
process, the wall time of one vmapped call of each at batch sizes below and above the threshold.
Below it the two programs are the same; above it ``_linalg`` gives up the pool's parallelism for
that call. Wall time is the right clock here: the pool's threads are what is compared.

    python -m benchmarks.bench_linalg            # writes benchmarks/results/bench_linalg.md
"""

from __future__ import annotations

import os
import pathlib
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

from bayesbandit import _linalg  # noqa: E402

RESULTS = pathlib.Path(__file__).parent / "results" / "bench_linalg.md"


def _spd(n: int, d: int) -> jax.Array:
    x = jax.random.normal(jax.random.PRNGKey(0), (n, d, d))
    return x @ jnp.swapaxes(x, 1, 2) + d * jnp.eye(d)


def _timed(fn, *args, repeats: int = 30) -> float:
    """Median wall seconds of one call (compiled and warmed first)."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def cases():
    for n, d in ((100, 10), (1000, 10), (100, 20), (1000, 20)):
        a = _spd(n, d)
        b = jax.random.normal(jax.random.PRNGKey(1), (n, d, 50))
        yield f"cholesky {n} x ({d}, {d})", jnp.linalg.cholesky, _linalg.cholesky, (a,), d**3 // 3 * n
        chol = jnp.linalg.cholesky(a)
        yield (
            f"triangular solve {n} x ({d}, {d}), 50 columns",
            lambda c, r: jax.scipy.linalg.solve_triangular(c, r, lower=True),
            lambda c, r: _linalg.solve_triangular(c, r, lower=True),
            (chol, b),
            d * 50 * d * n,
        )
    for n, k, d in ((100, 8, 7), (1000, 8, 7), (1000, 32, 31)):
        x = jax.random.normal(jax.random.PRNGKey(2), (n, k, d))
        yield (
            f"svd {n} x ({k}, {d})",
            lambda x: jnp.linalg.svd(x, full_matrices=False),
            _linalg.svd,
            (x,),
            10 * k * d * min(k, d) * n,
        )


def main() -> None:
    rows = []
    for name, plain, safe, args, work in cases():
        t_plain = _timed(jax.jit(jax.vmap(plain)), *args)
        t_safe = _timed(jax.jit(jax.vmap(safe)), *args)
        cut = "no" if work < _linalg.FAN_OUT_WORK else "yes"
        rows.append(
            f"| {name} | {work:,} | {cut} | {1e6 * t_plain:,.0f} | {1e6 * t_safe:,.0f} | {t_safe / t_plain:.2f} |"
        )
        print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    text = "\n".join(
        [
            "# Batch-safe LAPACK calls vs JAX's (one vmapped call, one device)",
            "",
            f"`python -m benchmarks.bench_linalg`; {jax.device_count()} device, XLA's default pool on "
            f"{os.cpu_count()} cores, float64; median wall time of 30 calls, both in one process; load average "
            f"{load:.2f} at the end. Work: jaxlib's estimate for the whole batch (cut when >= 200,000).",
            "",
            "| call | work (flops) | cut | JAX (us) | _linalg (us) | ratio |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    RESULTS.write_text(text)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
