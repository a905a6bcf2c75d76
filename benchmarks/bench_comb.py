"""Per-round cost of the combinatorial policies against a plain NumPy implementation, in one process.

Two sizes (issue: "N = 2,000, k = 100" and "N = 20,000, k = 200, promotion, 10 blocks"):

* ``N = 2,000`` arms, ``d = 11``, one block, ``k = 100`` (the clustered experiment's size);
* ``N = 20,000`` arms, ``d = 51``, ``M = 10`` blocks, ``k = 200`` per block (the promotion problem's).

For each of C2UCB, PC2UCB, arm-wise TS and round-wise TS: ``R`` runs of ``T`` rounds, each round a
select (scores, the per-block top-k oracle) and a rank-``Mk`` update on Gaussian rewards; bayesbandit as one
compiled ``vmap`` over runs of ``lax.scan`` over rounds (compile time apart), the baseline
(``benchmarks/baselines/numpy_comb.py``) as a loop over runs and rounds. The exclusive assignment oracle
of the promotion problem runs on the host in both and is timed on its own.

Usage, from the repository root: ``python -m benchmarks.bench_comb [--quick] [--out-dir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bayesbandit as bb  # noqa: E402
from bayesbandit.oracles import ExclusiveAssignment, TopK  # noqa: E402
from benchmarks._common import RESULTS, compile_and_time, machine_info, md_table, write_results  # noqa: E402
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


def numpy_seconds(kind: str, arms, theta, runs: int, rounds: int, k: int) -> float:
    blocks, d = theta.shape
    start = time.perf_counter()
    for run in range(runs):
        rng = np.random.default_rng(run)
        precision = np.broadcast_to(np.eye(d), (blocks, d, d)).copy()
        b = np.zeros((blocks, d))
        for _ in range(rounds):
            numpy_comb.play_round(kind, precision, b, arms, theta, rng, PARAM, k)
    return time.perf_counter() - start


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
    rows, oracle_rows = [], []
    for n, d, blocks, k, runs, rounds in sizes:
        arms, theta = instance(n, d, blocks)
        keys = jax.random.split(jax.random.PRNGKey(0), runs)
        for name, kind in KINDS.items():
            fn = jax_experiment(make(name, TopK(k=k), blocks), arms, theta, rounds)
            compile_s, run_s, *_ = compile_and_time(fn, (keys,), reps=3)
            numpy_s = numpy_seconds(kind, arms, theta, runs, rounds, k)
            per_jax, per_numpy = run_s / (runs * rounds), numpy_s / (runs * rounds)
            rows.append(
                [f"N = {n:,}, d = {d}, M = {blocks}, k = {k}", name, runs, f"{1e3 * per_jax:.2f} ms",
                 f"{1e3 * per_numpy:.2f} ms", f"×{per_numpy / per_jax:.1f}", f"{compile_s:.1f} s"]
            )  # fmt: skip
            print(rows[-1], flush=True)
        if blocks > 1:
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
            "Per round and run: bayesbandit compiled (vmap over runs, scan over rounds; compile time apart) against "
            "the NumPy loop of `benchmarks/baselines/numpy_comb.py`, same process, per-block top-k oracle.",
            "",
            md_table(["size", "policy", "runs", "bayesbandit", "NumPy", "speed-up", "compile"], rows),
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
