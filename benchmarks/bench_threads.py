"""One shared Agent served by 1, 2, 4 and 8 threads: throughput and latency per decision.

Each thread serves requests in a loop: ``decide(arms)`` on a fresh contextual arm set, then
``update(decision, reward)`` with the decision's own reward (K = 100, d = 10, logistic rewards,
online-Laplace GLM-TSL). Reported per thread count: decisions per second (all threads, wall
clock) and the median and 99th-percentile latency of one decision (decide + update, as its
thread sees it).

Two ways to share the agent, side by side in one process (interleaved blocks):

* ``Agent`` as it is: updates ordered by its lock, selections computed outside it from a state
  snapshot (:mod:`bayesbandit.agent`);
* the baseline a user would write around a thread-unsafe agent: one lock held over the whole
  ``decide`` + ``update`` pair.

Each in two processes: JAX's defaults and :func:`bayesbandit.runtime.enable_low_latency` (read
when JAX starts).

Usage, from the repository root: ``python -m benchmarks.bench_threads [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not __package__:
    sys.path.insert(0, ROOT)

from benchmarks._common import machine_info, md_table, write_results  # noqa: E402

K, D = 100, 10
THREADS = (1, 2, 4, 8)


def _serve(agent, lock, threads: int, decisions: int, seed: int) -> tuple[float, np.ndarray]:
    """``decisions`` decide + update pairs over ``threads`` threads: (wall seconds, per-decision latencies)."""
    per_thread = decisions // threads
    rng = np.random.default_rng(seed)
    contexts = rng.uniform(-1, 1, (threads, per_thread, K, D))
    coins = rng.random((threads, per_thread))
    theta = rng.normal(size=D) / np.sqrt(D)
    latencies = np.zeros((threads, per_thread))
    start = threading.Barrier(threads + 1)

    def work(i: int) -> None:
        start.wait()
        for j in range(per_thread):
            arms = contexts[i, j]
            t0 = time.perf_counter()
            if lock is None:
                decision = agent.decide(arms)
                reward = float(coins[i, j] < 1 / (1 + np.exp(-arms[decision.action] @ theta)))
                agent.update(decision, reward)
            else:
                with lock:
                    decision = agent.decide(arms)
                    reward = float(coins[i, j] < 1 / (1 + np.exp(-arms[decision.action] @ theta)))
                    agent.update(decision, reward)
            latencies[i, j] = time.perf_counter() - t0

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    start.wait()
    t0 = time.perf_counter()
    for thread in pool:
        thread.join()
    return time.perf_counter() - t0, latencies.ravel()


def child(low_latency: bool, decisions: int, blocks: int) -> dict:
    from bayesbandit.models import logistic

    import bayesbandit as bb

    if low_latency:
        bb.runtime.enable_low_latency()
    bb.runtime.enable_x64()
    agents = {
        "Agent (lock on updates, selections from snapshots)": (
            bb.Agent(bb.GLMTSL(logistic(), history="online"), d=D),
            None,
        ),
        "baseline: one lock over decide + update": (
            bb.Agent(bb.GLMTSL(logistic(), history="online"), d=D),
            threading.Lock(),
        ),
    }
    for agent, lock in agents.values():  # compile and warm up
        _serve(agent, lock, 1, 200, seed=99)
    rows: dict[tuple[str, int], tuple[list[float], list[np.ndarray]]] = {
        (name, n): ([], []) for name in agents for n in THREADS
    }
    for block in range(blocks):
        for n in THREADS:
            for name, (agent, lock) in agents.items():
                wall, latency = _serve(agent, lock, n, decisions, seed=block)
                rows[(name, n)][0].append(wall)
                rows[(name, n)][1].append(latency)
    out = []
    for (name, n), (walls, latencies) in rows.items():
        lat = np.concatenate(latencies) * 1e6
        out.append(
            {
                "contender": name,
                "threads": n,
                "throughput": decisions * blocks / sum(walls),
                "median_us": float(np.median(lat)),
                "p99_us": float(np.percentile(lat, 99)),
            }
        )
    return {"rows": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", choices=["defaults", "low_latency"])
    args = parser.parse_args()
    decisions, blocks = (400, 2) if args.quick else (2000, 3)
    if args.child:
        print(json.dumps(child(args.child == "low_latency", decisions, blocks)))
        return
    table = []
    for setting in ("defaults", "low_latency"):
        cmd = [sys.executable, "-m", "benchmarks.bench_threads", "--child", setting] + (
            ["--quick"] if args.quick else []
        )
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=True)
        rows = json.loads(proc.stdout.strip().splitlines()[-1])["rows"]
        base = {r["threads"]: r["throughput"] for r in rows if r["contender"].startswith("baseline")}
        one = {r["contender"]: r["throughput"] for r in rows if r["threads"] == 1}
        label = "bb.runtime.enable_low_latency()" if setting == "low_latency" else "JAX's defaults"
        for r in rows:
            table.append(
                [
                    label,
                    r["contender"],
                    r["threads"],
                    f"{r['throughput']:,.0f}",
                    f"{r['throughput'] / one[r['contender']]:.2f}x",
                    f"{r['throughput'] / base[r['threads']]:.2f}x",
                    f"{r['median_us']:.0f}",
                    f"{r['p99_us']:.0f}",
                ]
            )
    header = [
        "process settings",
        "sharing",
        "threads",
        "decisions / s",
        "vs 1 thread",
        "vs baseline (same threads)",
        "median µs / decision",
        "p99 µs",
    ]
    text = "\n".join(
        [
            "# One Agent shared by threads: throughput and latency",
            "",
            machine_info(),
            "",
            f"K = {K}, d = {D}, online-Laplace GLM-TSL, a new contextual arm set per decision; each thread "
            "serves decide(arms) + update(decision, reward) in a loop. "
            f"{decisions:,} decisions per thread count, {blocks} interleaved blocks. Latency: one decide + "
            "update as its thread sees it (waiting included).",
            "",
            md_table(header, table),
        ]
    )
    write_results("bench_threads", args.quick, text)
    print(text)


if __name__ == "__main__":
    main()
