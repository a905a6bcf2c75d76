"""Soak test of serving: 8 threads, delayed rewards, checkpoints, and SIGKILLs at random moments.

A server process serves one contextual ``Agent`` (online-Laplace GLM-TSL, K = 10, d = 5) from
8 request threads; each decision's reward arrives after a random delay (0-50 ms, so out of
order), credited through its decision id; a saver thread checkpoints the agent every
``--save-every`` decisions; every decision and reward goes to the SQLite decision log. The
driver kills the server with SIGKILL at a random moment (1-8 s after it starts serving), then:

1. loads the checkpoint with the log (``Agent.load(..., log=...)``) and checks that its state
   equals, bit for bit, a fresh agent fed every reward of the log in the log's order;
2. counts the rewards *lost*: rewards the log committed that the reloaded agent lacks (target 0),
   and the checkpoint's rewards missing from the log (target 0);
3. restarts the server from that checkpoint and log, and repeats until ``--minutes`` pass.

Rewards the server had handed to the log but not yet committed when it was killed are gone
with the process, by design (the log commits in small batches); they are not "lost" in the
sense above, since the agent never reports them as learnt after the restart.

Usage, from the repository root: ``python -m benchmarks.soak_serving [--minutes 60]``.
Writes ``benchmarks/results/soak_serving.md``.
"""

from __future__ import annotations

import argparse
import heapq
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not __package__:
    sys.path.insert(0, ROOT)

K, D, THREADS = 10, 5, 8
THETA = np.linspace(-1.0, 1.0, D)


def _policy():
    from bayesbandit.models import logistic

    import bayesbandit as bb

    return bb.GLMTSL(logistic(), history="online")


def serve(folder: str, save_every: int, seed: int) -> None:
    """The server: 8 request threads, delayed rewards by decision id, periodic checkpoints; runs until killed."""
    import bayesbandit as bb

    bb.runtime.enable_x64()
    checkpoint, log = os.path.join(folder, "agent.bbckpt"), os.path.join(folder, "log.sqlite")
    if os.path.exists(checkpoint):
        agent = bb.Agent.load(checkpoint, _policy(), log=log)
    else:
        agent = bb.Agent(_policy(), d=D, seed=0, log=log)
        agent.save(checkpoint)
    due: list[tuple[float, int, str, float]] = []
    lock = threading.Condition()
    served = [0]

    def requests(i: int) -> None:
        rng = np.random.default_rng([seed, i])
        for n in range(10**9):
            arms = rng.uniform(-1, 1, (K, D))
            decision = agent.decide(arms)
            reward = float(rng.random() < 1 / (1 + np.exp(-arms[decision.action] @ THETA)))
            with lock:
                heapq.heappush(due, (time.monotonic() + rng.uniform(0, 0.05), n * THREADS + i, decision.id, reward))
                served[0] += 1
                lock.notify()

    def rewards() -> None:
        while True:
            with lock:
                while not due or due[0][0] > time.monotonic():
                    lock.wait(timeout=0.005)
                _, _, decision_id, reward = heapq.heappop(due)
            agent.update(decision_id, reward)

    def saver() -> None:
        last = 0
        while True:
            time.sleep(0.01)
            if served[0] - last >= save_every:
                last = served[0]
                agent.save(checkpoint)

    for target, args in [(requests, (i,)) for i in range(THREADS)] + [(rewards, ()), (rewards, ()), (saver, ())]:
        threading.Thread(target=target, args=args, daemon=True).start()
    print("serving", flush=True)
    while True:
        time.sleep(1)


class Replay:
    """A fresh agent fed every reward of the log in the log's order, kept across kills (fed only the new rows)."""

    def __init__(self) -> None:
        import bayesbandit as bb

        bb.runtime.enable_x64()
        self.agent = bb.Agent(_policy(), d=D, seed=0)
        self.seq = 0
        self.rewards = 0

    def catch_up(self, log: str) -> None:
        with sqlite3.connect(log) as reader:
            rows = reader.execute(
                "SELECT r.seq, d.action, d.arms, r.reward FROM rewards r JOIN decisions d ON d.id = r.decision_id "
                "WHERE r.seq > ? ORDER BY r.seq",
                (self.seq,),
            ).fetchall()
        for seq, action, blob, reward in rows:
            arms = np.frombuffer(blob, np.float64).reshape(K, D)
            self.agent.update(int(action), float(reward), arms=arms)
            self.seq, self.rewards = seq, self.rewards + 1


def check(folder: str, replay: Replay) -> dict:
    """Reload after a kill and compare with the replay of the log."""
    import jax

    import bayesbandit as bb

    checkpoint, log = os.path.join(folder, "agent.bbckpt"), os.path.join(folder, "log.sqlite")
    meta = bb.checkpoint.read_checkpoint(checkpoint)[0]
    replay.catch_up(log)
    with sqlite3.connect(log) as reader:
        logged_decisions = reader.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    loaded = bb.Agent.load(checkpoint, _policy(), log=log)
    equal = all(
        np.array_equal(np.asarray(a), np.asarray(b))
        for a, b in zip(jax.tree.leaves(loaded.state), jax.tree.leaves(replay.agent.state), strict=True)
    )
    loaded.close()
    return {
        "decisions_logged": logged_decisions,
        "rewards_logged": replay.rewards,
        "agent_rewards": loaded.num_updates,
        "lost": replay.rewards - loaded.num_updates,
        "checkpoint_not_in_log": max(0, int(meta["num_updates"]) - replay.rewards),
        "state_equals_replay": equal,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--save-every", type=int, default=200)
    parser.add_argument("--folder", default=None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.serve:
        serve(args.folder, args.save_every, args.seed)
        return
    import tempfile

    from benchmarks._common import machine_info, md_table, write_results

    folder = args.folder or tempfile.mkdtemp(prefix="bayesbandit-soak-")
    machine = machine_info()  # the date and load average at the start
    rng = np.random.default_rng(0)
    end = time.monotonic() + 60 * args.minutes
    rows, kills, replay = [], 0, Replay()
    while time.monotonic() < end:
        cmd = [sys.executable, "-m", "benchmarks.soak_serving", "--serve", "--folder", folder]
        cmd += ["--save-every", str(args.save_every), "--seed", str(kills)]
        server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE)
        try:
            if server.stdout.readline().strip() != b"serving":
                raise RuntimeError("the server did not start")
            time.sleep(rng.uniform(1.0, 8.0))
        finally:
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=120)
        kills += 1
        result = check(folder, replay)
        rows.append(result)
        print(f"kill {kills}: {result}", flush=True)
    last = rows[-1]
    table = md_table(
        [
            "kills survived",
            "decisions served (logged)",
            "rewards learnt",
            "rewards lost",
            "checkpoint rewards not in the log",
            "restarts whose state equals the log's replay",
        ],
        [
            [
                kills,
                f"{last['decisions_logged']:,}",
                f"{last['rewards_logged']:,}",
                sum(r["lost"] for r in rows),
                sum(r["checkpoint_not_in_log"] for r in rows),
                f"{sum(r['state_equals_replay'] for r in rows)} of {kills}",
            ]
        ],
    )
    text = "\n".join(
        [
            "# Soak test: serving under threads, delayed rewards and SIGKILLs",
            "",
            machine,
            "",
            f"{args.minutes:g} minutes; {THREADS} request threads, 2 reward threads (delays 0-50 ms), a checkpoint "
            f"every {args.save_every} decisions, SIGKILL 1-8 s after each start (`benchmarks/soak_serving.py`).",
            "",
            table,
        ]
    )
    write_results("soak_serving", False, text)
    print(text)


if __name__ == "__main__":
    main()
