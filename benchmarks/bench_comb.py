"""Per-round cost of the combinatorial policies against a plain NumPy implementation, in one process.

Two sizes (issue: "N = 2,000, k = 100" and "N = 20,000, k = 200, promotion, 10 blocks"):

* ``N = 2,000`` arms, ``d = 11``, one block, ``k = 100`` (the clustered experiment's size);
* ``N = 20,000`` arms, ``d = 51``, ``M = 10`` blocks, ``k = 200`` per block (the promotion problem's).

For each of C2UCB, PC2UCB, arm-wise TS and round-wise TS: ``R`` runs of ``T`` rounds, each round a
select (scores, the per-block top-k oracle) and a rank-``Mk`` update on Gaussian rewards; bayesbandit as one
compiled ``vmap`` over runs of ``lax.scan`` over rounds (compile time apart), the baseline
(``benchmarks/baselines/numpy_comb.py``) as a loop over runs and rounds. The two are timed in turn
(``_common.interleaved_cpu``: process CPU time, medians), so a change of the machine's load hits both.

At the larger size two pieces are also timed alone, vmapped over the ``R`` runs: the per-block top-k
(:class:`~bayesbandit.oracles.TopK`, its float32 candidate pool, against its selection on all arms,
``TopK._full``, which is what it ran before the pool, and NumPy's ``argpartition``) and the widths
``||x||_{V_j^{-1}}`` (``block_widths`` in tiles, against the same product untiled and against SciPy's
triangular solve). The exclusive assignment oracle of the promotion problem runs on the host in both
and is timed on its own.

Usage, from the repository root: ``python -m benchmarks.bench_comb [--quick] [--out-dir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bayesbandit as bb  # noqa: E402
from bayesbandit._gaussian_linear import block_widths, inverse_factors  # noqa: E402
from bayesbandit.oracles import ExclusiveAssignment, TopK  # noqa: E402
from benchmarks._common import (  # noqa: E402
    RESULTS,
    compile_and_time,
    interleaved_cpu,
    machine_info,
    md_table,
    write_results,
)
from benchmarks.baselines import numpy_comb  # noqa: E402

PARAM = 0.5
KINDS = {"C2UCB": "c2ucb", "PC2UCB": "pc2ucb", "Arm-wise TS": "arm_ts", "Round-wise TS": "round_ts"}


def make(name: str, oracle, blocks: int):
    factory = {"C2UCB": bb.C2UCB, "PC2UCB": bb.PC2UCB, "Arm-wise TS": bb.ArmTS, "Round-wise TS": bb.RoundTS}[name]
    key = "v" if "TS" in name else "alpha"
    return factory(oracle=oracle, blocks=blocks, lam=1.0, **{key: PARAM})


def instance(n: int, d: int, blocks: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    arms = rng.standard_normal((n, d))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)
    theta = rng.standard_normal((blocks, d)) / np.sqrt(d)
    return arms, theta


def jax_experiment(policy, arms, theta, rounds: int):
    """``vmap`` over runs (keys) of ``lax.scan`` over rounds; returns the total reward per run."""
    arms_j, theta_j = jnp.asarray(arms), jnp.asarray(theta)
    n = arms.shape[0]

    def one_run(key):
        state = policy.init(arms_j)

        def step(state, k):
            k_select, k_noise = jax.random.split(k)
            action, _ = policy.select(state, arms_j, k_select)
            block, arm = jnp.divmod(action, n)
            reward = jnp.einsum("ad,ad->a", arms_j[arm], theta_j[block]) + 0.1 * jax.random.normal(
                k_noise, action.shape
            )
            state, _ = policy.update(state, arms_j, action, reward)
            return state, jnp.sum(reward)

        _, rewards = jax.lax.scan(step, state, jax.random.split(key, rounds))
        return rewards.sum()

    return jax.vmap(one_run)


def run_compiled(compiled, keys) -> None:
    compiled(keys).block_until_ready()


def numpy_experiment(kind: str, arms, theta, runs: int, rounds: int, k: int) -> None:
    blocks, d = theta.shape
    for run in range(runs):
        rng = np.random.default_rng(run)
        precision = np.broadcast_to(np.eye(d), (blocks, d, d)).copy()
        b = np.zeros((blocks, d))
        for _ in range(rounds):
            numpy_comb.play_round(kind, precision, b, arms, theta, rng, PARAM, k)


def pieces(arms, theta, runs: int, k: int, reps: int) -> tuple[list, list]:
    """The oracle and the widths alone, CPU ms per run (vmapped over ``runs``), old and new side by side."""
    rng = np.random.default_rng(2)
    blocks, d = theta.shape
    arms_j = jnp.asarray(arms)
    scores = jnp.asarray(theta @ arms.T + 0.5 * rng.uniform(1, 2, (runs, blocks, arms.shape[0])))  # UCB-like
    keys = jax.random.split(jax.random.PRNGKey(0), runs)
    oracle = TopK(k=k)
    new, old = jax.jit(jax.vmap(oracle)), jax.jit(jax.vmap(oracle._full))
    assert bool(jnp.all(new(scores, keys) == old(scores, keys)))
    fallbacks = int(jnp.sum(jax.vmap(oracle._pooled)(scores)[1]))
    scores_np = np.asarray(scores)
    oracle_ms = interleaved_cpu(
        {
            "TopK (float32 pool)": (lambda: new(scores, keys).block_until_ready(), runs),
            "TopK._full (before)": (lambda: old(scores, keys).block_until_ready(), runs),
            "NumPy argpartition": (lambda: [numpy_comb.top_k(s, k) for s in scores_np], runs),
        },
        reps,
    )
    gram = rng.standard_normal((runs, blocks, d, 4 * k))
    chol_np = np.linalg.cholesky(np.eye(d) + np.einsum("rmdn,rmen->rmde", gram, gram))
    chol = jnp.asarray(chol_np)
    tiled = jax.jit(jax.vmap(lambda c: block_widths(c, arms_j)))
    untiled = jax.jit(
        jax.vmap(lambda c: jnp.sqrt(jnp.sum(jnp.einsum("mij,nj->mni", inverse_factors(c), arms_j) ** 2, 2)))
    )
    error = float(jnp.max(jnp.abs(tiled(chol) / untiled(chol) - 1.0)))
    width_ms = interleaved_cpu(
        {
            "block_widths (tiles)": (lambda: tiled(chol).block_until_ready(), runs),
            "untiled product (before)": (lambda: untiled(chol).block_until_ready(), runs),
            "SciPy solve_triangular": (
                lambda: [numpy_comb.scores("c2ucb", c, np.zeros((blocks, d)), arms, rng, 0.0) for c in chol_np],
                runs,
            ),
        },
        reps,
    )
    oracle_rows = [[name, f"{1e3 * s:.2f} ms"] for name, s in oracle_ms.items()]
    oracle_rows.append(["calls that needed the full selection", f"{fallbacks} of {runs}"])
    width_rows = [[name, f"{1e3 * s:.2f} ms"] for name, s in width_ms.items()]
    width_rows.append(["largest relative difference, tiles vs untiled", f"{error:.1e}"])
    return oracle_rows, width_rows


def exclusive_seconds(arms, theta, k: int, reps: int) -> tuple[float, float]:
    """Seconds per call of the exclusive oracle and of NumPy's per-block top-k, on UCB-like scores."""
    rng = np.random.default_rng(1)
    width = 0.5 * rng.uniform(1, 2, (theta.shape[0], arms.shape[0]))
    scores = theta @ arms.T + width
    oracle = ExclusiveAssignment(k=k)
    start = time.perf_counter()
    for r in range(reps):
        oracle.solve(scores, r)
    exclusive = (time.perf_counter() - start) / reps
    start = time.perf_counter()
    for _ in range(reps):
        numpy_comb.top_k(scores, k)
    return exclusive, (time.perf_counter() - start) / reps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and rounds")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args(argv)
    bb.runtime.enable_x64()
    sizes = [(2_000, 11, 1, 100, 10, 10), (20_000, 51, 10, 200, 4, 5)]  # N, d, M, k, runs, rounds
    if args.quick:
        sizes = [(n, d, m, k, 2, 3) for n, d, m, k, _, _ in sizes]
    reps = 2 if args.quick else 5
    rows, oracle_rows, piece_rows = [], [], ([], [])
    for n, d, blocks, k, runs, rounds in sizes:
        arms, theta = instance(n, d, blocks)
        keys = jax.random.split(jax.random.PRNGKey(0), runs)
        for name, kind in KINDS.items():
            fn = jax_experiment(make(name, TopK(k=k), blocks), arms, theta, rounds)
            compile_s, _, _, _, compiled = compile_and_time(fn, (keys,), reps=1)
            times = interleaved_cpu(
                {
                    "jax": (partial(run_compiled, compiled, keys), runs * rounds),
                    "numpy": (partial(numpy_experiment, kind, arms, theta, runs, rounds, k), runs * rounds),
                },
                reps,
            )
            per_jax, per_numpy = times["jax"], times["numpy"]
            rows.append(
                [f"N = {n:,}, d = {d}, M = {blocks}, k = {k}", name, runs, f"{1e3 * per_jax:.2f} ms",
                 f"{1e3 * per_numpy:.2f} ms", f"×{per_numpy / per_jax:.1f}", f"{compile_s:.1f} s"]
            )  # fmt: skip
            print(rows[-1], flush=True)
        if blocks > 1:
            piece_rows = pieces(arms, theta, runs, k, reps)
            exclusive, top = exclusive_seconds(arms, theta, k, reps=3 if args.quick else 10)
            oracle_rows.append(
                [f"N = {n:,}, M = {blocks}, k = {k}", f"{1e3 * exclusive:.1f} ms", f"{1e3 * top:.2f} ms"]
            )
    text = "\n".join(
        [
            "# Combinatorial policies: per-round cost against plain NumPy",
            "",
            machine_info(),
            "",
            "Per round and run, process CPU time (all threads), median of the repetitions: bayesbandit compiled "
            "(vmap over runs, scan over rounds; compile time apart) against the NumPy loop of "
            "`benchmarks/baselines/numpy_comb.py`, timed in turn in one process, per-block top-k oracle.",
            "",
            md_table(["size", "policy", "runs", "bayesbandit", "NumPy", "speed-up", "compile"], rows),
            "",
            "The per-block top-k alone at the larger size, CPU time per run (vmapped over the runs; UCB-like "
            "scores), the same picks bit for bit:",
            "",
            md_table(["oracle", "per run"], piece_rows[0]),
            "",
            "The widths `||x_i||_{V_j^{-1}}` alone at the larger size, CPU time per run (vmapped over the runs):",
            "",
            md_table(["widths", "per run"], piece_rows[1]),
            "",
            "The exclusive assignment oracle (each user in one promotion at most; host NumPy in both), per call, "
            "beside NumPy's per-block top-k on the same scores:",
            "",
            md_table(["size", "ExclusiveAssignment", "per-block top-k"], oracle_rows),
        ]
    )
    print(write_results("bench_comb", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
