"""Contextual GLM-TSL: full-history vs online Laplace, per-round cost and posterior distance.

A contextual logistic bandit (``K = 10`` fresh arms per round, ``d = 10``) is played by GLM-TSL
with ``history="online"`` for ``T`` rounds (``bayesbandit.sim.play_round`` in a compiled
``lax.scan``), keeping the pulled features and rewards. At ``t`` in ``T_POINTS``:

* **cost per round**: a ``bb.Agent`` holding the history of ``t`` rounds, full history (a row
  buffer of ``t`` rows, refitted by Newton each update) and online (the recursive Laplace state),
  times ``select`` + ``update`` (median over rounds, already compiled);
* **distance**: ``KL(N_full || N_online)`` between the full-history Laplace posterior of the first
  ``t`` rows (``bb.laplace``) and the online posterior after the same ``t`` rows, with the
  largest mean shift in full-posterior standard deviations.

Usage, from the repository root: ``python -m benchmarks.bench_online [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb

bb.runtime.enable_x64()  # the Newton solves need float64

if not __package__:  # run as a file: make the package `benchmarks` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import RESULTS, machine_info, md_table, write_results  # noqa: E402

K, D = 10, 10
MODEL = logistic()


def play_online(
    horizon: int, checkpoints: list[int], seed: int = 0
) -> tuple[dict[int, object], np.ndarray, np.ndarray]:
    """Online GLM-TSL for ``horizon`` rounds; its states at ``checkpoints`` and the pulled (x, y)."""
    env = bb.envs.ContextualLogisticBandit(K=K, d=D)
    policy = bb.GLMTSL(MODEL, a=1.0, history="online")
    keys = bb.sim.key_streams(seed, 1)
    env_state, state = bb.sim.init_run(keys.env[0], keys.policy[0], policy, env, 1)

    @jax.jit
    def chunk(state, ts):
        def body(state, t):
            state, rnd = bb.sim.play_round(keys.pull[0], keys.policy[0], policy, env, env_state, state, t)
            return state, (rnd.arms[rnd.action], rnd.feedback)

        return jax.lax.scan(body, state, ts)

    states, xs, ys, start = {}, [], [], 0
    for stop in sorted(checkpoints):
        state, (x, y) = chunk(state, jnp.arange(start, stop, dtype=jnp.int32))
        xs.append(np.asarray(x))
        ys.append(np.asarray(y))
        states[stop] = state
        start = stop
    return states, np.concatenate(xs), np.concatenate(ys)


def gaussian_kl(m0, chol0, m1, chol1) -> float:
    """KL(N(m0, P0^-1) || N(m1, P1^-1)) for precisions P = L L^T."""
    p = m0.shape[0]
    cov0 = np.linalg.inv(chol0 @ chol0.T)
    prec1 = chol1 @ chol1.T
    diff = m1 - m0
    logdet = 2 * (np.log(np.diag(chol0)).sum() - np.log(np.diag(chol1)).sum())  # log det cov1 - log det cov0
    return float(0.5 * (np.trace(prec1 @ cov0) + diff @ prec1 @ diff - p + logdet))


def per_round_us(agent: bb.Agent, rounds: int, rng: np.random.Generator) -> float:
    """Median microseconds of select + update on fresh contexts (after one warm-up round)."""
    times = []
    for i in range(rounds + 1):
        arms = rng.uniform(-1, 1, (K, D))
        t0 = time.perf_counter()
        action = agent.select(arms)
        agent.update(action, float(rng.random() < 0.5))
        if i:
            times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def full_history_agent(x: np.ndarray, y: np.ndarray, rounds: int) -> bb.Agent:
    """A contextual full-history GLM-TSL agent holding the rows (x, y), with room for ``rounds`` more."""
    agent = bb.Agent(bb.GLMTSL(MODEL, a=1.0), d=D, seed=0, capacity=len(y) + rounds + 1)
    history = agent.state.history
    n = len(y)
    history = history._replace(
        x=history.x.at[:n].set(x),
        y=history.y.at[:n].set(y),
        w=history.w.at[:n].set(1.0),
        size=jnp.asarray(n, jnp.int32),
    )
    fit = bb.laplace(MODEL, x, y)
    agent.state = agent.state._replace(history=history, fit=bb.inference.NewtonFit(fit.mean, fit.chol))
    return agent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="t up to 10,000 instead of 100,000")
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds per agent (default 30)")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args(argv)
    points = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    start = time.perf_counter()
    states, x, y = play_online(points[-1], points)
    print(f"played {points[-1]:,} online rounds in {time.perf_counter() - start:.1f} s", flush=True)
    rows = []
    for t in points:
        online = states[t]
        full = bb.laplace(MODEL, x[:t], y[:t])
        m_full, l_full = np.asarray(full.mean), np.asarray(full.chol)
        m_on, l_on = np.asarray(online.fit.theta), np.asarray(online.fit.chol)
        kl = gaussian_kl(m_full, l_full, m_on, l_on)
        sd_full = np.sqrt(np.diag(np.linalg.inv(l_full @ l_full.T)))
        shift = float(np.max(np.abs(m_on - m_full) / sd_full))
        rng = np.random.default_rng(t)
        full_agent = full_history_agent(x[:t], y[:t], args.rounds)
        full_us = per_round_us(full_agent, args.rounds, rng)
        online_agent = bb.Agent(bb.GLMTSL(MODEL, a=1.0, history="online"), d=D, seed=0)
        online_agent.state = online
        online_us = per_round_us(online_agent, args.rounds, rng)
        rows.append(
            [
                f"{t:,}",
                f"{full_us:,.0f}",
                f"{online_us:,.0f}",
                f"{full_us / online_us:.1f}x",
                f"{kl:.4f}",
                f"{shift:.2f}",
            ]
        )
        print(rows[-1], flush=True)
    text = "\n\n".join(
        [
            "# Contextual GLM-TSL: full history vs online Laplace (`benchmarks/bench_online.py`)",
            f"Logistic model (prior N(0, I)), K = {K} fresh arms per round, d = {D}; the history is what online "
            "GLM-TSL collected. Per-round time: `bb.Agent.select` + `update` on a new context (median of "
            f"{args.rounds} rounds, compiled, Python and validation included). KL(N_full || N_online) between "
            "the full-history Laplace posterior of the first t rows and the online posterior after them; "
            "shift: largest |mean difference| in full-posterior standard deviations.",
            md_table(
                [
                    "t",
                    "full history, us/round",
                    "online, us/round",
                    "online is",
                    "KL(full || online)",
                    "max shift (sd)",
                ],
                rows,
            ),
            machine_info(),
        ]
    )
    print("written:", write_results("bench_online", args.quick, text, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
