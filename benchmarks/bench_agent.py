"""Latency of one interactive round, ``Agent.select`` + ``Agent.update``, against bayesianbandits.

A production user calls the agent once per decision and once per reward. Measured per round
(the wall time of select + update, 10,000 rounds after a warm-up that compiles), median and
99th percentile, on the logistic bandit of Kveton et al. (2020) with K = 100, d = 10:

* fixed arms: one arm set for the whole run;
* contextual: a new arm set each round (``select(arms)``), K x d features from U[-1, 1].

Contenders, each a Laplace Thompson sampler on a logistic model with an N(0, I) prior:

* ``bb.Agent(bb.GLMTSL(logistic()))``, the posterior refitted on the whole history each round
  (per-arm statistics for fixed arms, a row buffer for contextual arms);
* the same with ``history="online"``, the recursive Laplace posterior (the previous Gaussian
  times the new likelihood), which is what bayesianbandits computes;
* bayesianbandits 1.5 ``LipschitzContextualAgent`` with a shared ``BayesianGLM(link="logit")``
  (``pull`` + ``update``);
* ``select(n=100)`` + ``update_many`` of the online agent, per decision (batched feedback).

Each in two processes: with JAX's defaults, and with :func:`bayesbandit.runtime.enable_low_latency`
(read when JAX starts, so it cannot be switched within one process).

The contenders play in interleaved blocks (A B C A B C ...), so a change in the machine's load
hits all of them.

Usage, from the repository root: ``python -m benchmarks.bench_agent [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb

bb.runtime.enable_x64()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not __package__:
    sys.path.insert(0, ROOT)

from benchmarks._common import RESULTS, machine_info, md_table, warm_up_jax, write_results  # noqa: E402
from benchmarks.baselines import bayesianbandits_glm  # noqa: E402

K, D, BATCH = 100, 10, 100


class Problem:
    """Arms (fixed or one set per round), the true parameter and the reward coins of one run."""

    def __init__(self, contextual: bool, rounds: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.contextual = contextual
        self.theta = rng.normal(0.0, np.sqrt(3.0 / D), D)
        count = rounds if contextual else 1
        self.arms = rng.uniform(-1.0, 1.0, (count, K, D))
        self.coins = rng.random(rounds)

    def arms_at(self, t: int) -> np.ndarray:
        return self.arms[t % len(self.arms)]

    def reward(self, t: int, arm: int) -> float:
        return float(self.coins[t % len(self.coins)] < 1.0 / (1.0 + np.exp(-self.arms_at(t)[arm] @ self.theta)))


class BayesbanditPlayer:
    def __init__(self, problem: Problem, history: str, capacity: int) -> None:
        policy = bb.GLMTSL(logistic(), a=1.0, history=history)
        if problem.contextual:
            self.agent = bb.Agent(policy, d=D, seed=0, capacity=capacity)
        else:
            self.agent = bb.Agent(policy, arms=problem.arms[0], seed=0)
            self.agent.warm_up()
        self.problem = problem

    def round(self, t: int) -> None:
        arm = self.agent.select(self.problem.arms_at(t)) if self.problem.contextual else self.agent.select()
        self.agent.update(arm, self.problem.reward(t, arm))


class BatchPlayer(BayesbanditPlayer):
    """``select(n=BATCH)`` then ``update_many``: one 'round' is BATCH decisions."""

    def round(self, t: int) -> None:
        arms = self.problem.arms_at(t)
        actions = self.agent.select(arms, n=BATCH) if self.problem.contextual else self.agent.select(n=BATCH)
        rewards = [self.problem.reward(t, int(a)) for a in actions]
        self.agent.update_many(actions, rewards)


class BayesianBanditsPlayer:
    def __init__(self, problem: Problem) -> None:
        from bayesianbandits import Arm, BayesianGLM, FunctionArmFeaturizer, LipschitzContextualAgent, ThompsonSampling

        def featurize(x, tokens):  # the context row holds this round's K x d arm matrix
            feats = np.asarray(x).reshape(len(x), K, D)[:, np.asarray(tokens)]
            return np.ascontiguousarray(feats.transpose(0, 2, 1))

        self.agent = LipschitzContextualAgent(
            arms=[Arm(i, learner=None) for i in range(K)],
            policy=ThompsonSampling(),
            arm_featurizer=FunctionArmFeaturizer(featurize),
            learner=BayesianGLM(alpha=1.0, link="logit", random_state=0),
            random_seed=0,
        )
        self.problem = problem

    def round(self, t: int) -> None:
        context = self.problem.arms_at(t).reshape(1, K * D)
        arm = int(self.agent.pull(context)[0])
        self.agent.update(context, np.array([self.problem.reward(t, arm)]))


def play_interleaved(players: dict, rounds: int, block: int, warm_up: int) -> dict[str, tuple[np.ndarray, float]]:
    """Per-round latencies (seconds) of each player, blocks interleaved; and each one's warm-up time."""
    latencies: dict[str, list[float]] = {name: [] for name in players}
    first = {}
    for name, (player, _) in players.items():
        t0 = time.perf_counter()
        for t in range(warm_up):
            player.round(t)
        first[name] = time.perf_counter() - t0
    t = {name: warm_up for name in players}
    while any(len(v) < rounds for v in latencies.values()):
        for name, (player, per_round) in players.items():
            for _ in range(min(block, rounds - len(latencies[name]))):
                t0 = time.perf_counter()
                player.round(t[name])
                latencies[name].append((time.perf_counter() - t0) / per_round)
                t[name] += 1
    return {name: (np.asarray(v), first[name]) for name, v in latencies.items()}


SETTINGS = {
    "default": "JAX's defaults",
    "low-latency": "bb.runtime.enable_low_latency()",
}


def measure(rounds: int) -> list[list[str]]:
    """Every contender, interleaved, in this process: one table row each."""
    warm_up = 20
    have_bbs, why = bayesianbandits_glm.available()
    warm_up_jax()
    rows = []
    for contextual in (False, True):
        problem = Problem(contextual, rounds + warm_up + 1)
        capacity = rounds + warm_up + 1
        players = {
            "bayesbandit GLM-TSL, full history": (BayesbanditPlayer(problem, "full", capacity), 1),
            "bayesbandit GLM-TSL, online Laplace": (BayesbanditPlayer(problem, "online", capacity), 1),
        }
        if have_bbs:
            players["bayesianbandits 1.5, Laplace TS"] = (BayesianBanditsPlayer(problem), 1)
        batch = {"online Laplace, select(n=100) + update_many": (BatchPlayer(problem, "online", capacity), BATCH)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = play_interleaved(players, rounds, block=500, warm_up=warm_up)
            results |= play_interleaved(batch, max(rounds // BATCH, 10), block=10, warm_up=2)
        reference = results.get("bayesianbandits 1.5, Laplace TS")
        for name, (lat, first) in results.items():
            ratio = "" if reference is None else f"{np.median(reference[0]) / np.median(lat):.1f}x"
            rows.append(
                [
                    "contextual" if contextual else "fixed arms",
                    name,
                    f"{np.median(lat) * 1e6:.0f}",
                    f"{np.percentile(lat, 99) * 1e6:.0f}",
                    ratio,
                    f"{first:.1f}",
                ]
            )
            print(rows[-1], flush=True)
    if not have_bbs:
        rows.append(["", f"bayesianbandits not available: {why}", "", "", "", ""])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 rounds")
    parser.add_argument("--out-dir", default=RESULTS)
    parser.add_argument(
        "--settings", choices=sorted(SETTINGS), help="measure in this process only, with these settings (internal)"
    )
    parser.add_argument("--rows-to", help="with --settings: write the rows to this JSON file")
    args = parser.parse_args(argv)
    rounds = 1_000 if args.quick else 10_000
    if args.settings is not None:
        if args.settings == "low-latency":
            bb.runtime.enable_low_latency()
        rows = measure(rounds)
        if args.rows_to:
            with open(args.rows_to, "w") as f:
                json.dump(rows, f)
        return 0
    # The process settings are read when JAX starts: each set is measured in its own process.
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for settings, label in SETTINGS.items():
            path = os.path.join(tmp, f"{settings}.json")
            command = [sys.executable, "-m", "benchmarks.bench_agent", "--settings", settings, "--rows-to", path]
            subprocess.run(command + (["--quick"] if args.quick else []), check=True, cwd=ROOT)
            with open(path) as f:
                rows += [[label, *row] for row in json.load(f)]
    table = md_table(
        [
            "process settings",
            "arms",
            "contender",
            "median µs / decision",
            "p99 µs",
            "speed-up vs bayesianbandits (median, same process)",
            "warm-up s",
        ],
        rows,
    )
    text = "\n\n".join(
        [
            "# Agent latency: select + update per decision",
            machine_info(),
            f"K = {K}, d = {D}, logistic rewards, {rounds:,} rounds per contender after a warm-up (its time, which "
            "includes compiling, in the last column), blocks of 500 interleaved. Batched rows: per decision, "
            f"{BATCH} decisions per call. Each process setting is measured in its own process (they are read when "
            "JAX starts), with every contender interleaved in it: `bb.runtime.enable_low_latency()` runs each compiled call "
            "in the calling thread with XLA:CPU's depth-first schedule (`bayesbandit.runtime`).",
            table,
        ]
    )
    print(write_results("bench_agent", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
