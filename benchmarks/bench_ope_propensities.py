"""Target-policy action distributions for off-policy evaluation: one vmapped call vs a Python loop of ``select``.

Open Bandit Pipeline estimates a Thompson-sampling policy's action distribution by calling
``select_action()`` ``n_sim`` times in a Python loop (``BernoulliTS.compute_batch_action_dist``).
Here, for GLM-TSL (logistic program) and LinTS frozen at a trained state, the law on each of ``n``
logged contexts (each its own ``K x d`` arm set) is computed both ways at the same accuracy
(``M`` selections per context, the same Monte Carlo standard error):

* vmapped: :func:`bayesbandit.ope.target_distribution`, one compiled call (``vmap`` over rows of a
  ``vmap`` over keys);
* loop: ``M`` calls per context of the jitted ``policy.select`` (compiled once), counted on the
  host, as OBP's loop does.

Both are compiled and warmed before timing; then they run interleaved (A B A B ...), timed by
process CPU time, median of ``reps``. The two estimates are checked to agree within 5 Monte Carlo
standard errors on every (context, arm).

Usage, from the repository root: ``python -m benchmarks.bench_ope_propensities [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import jax
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit import ope

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import interleaved_cpu, machine_info, md_table, write_results  # noqa: E402

K, D = 10, 5


def trained(policy, rounds: int = 60, seed: int = 0):
    """A state after ``rounds`` rewarded selections on random contexts."""
    agent = bb.Agent(policy, d=D, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        arms = rng.uniform(-1, 1, (K, D))
        agent.update(agent.select(arms), float(rng.random() < 0.5), arms=arms)
    return agent.policy, agent.state


def loop_distribution(policy, state, arms: np.ndarray, key, samples: int) -> np.ndarray:
    """``samples`` jitted ``select`` calls per context in a Python loop, counted on the host."""
    select = jax.jit(policy.select)
    out = np.zeros((arms.shape[0], K))
    for i, row_key in enumerate(jax.random.split(key, arms.shape[0])):
        for k in jax.random.split(row_key, samples):
            out[i, int(select(state, arms[i], k)[0])] += 1
    return out / samples


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    bb.runtime.enable_x64()
    n, samples, reps = (8, 200, 2) if args.quick else (40, 1000, 3)
    rng = np.random.default_rng(1)
    arms = rng.uniform(-1, 1, (n, K, D))
    logs = ope.Logs.create(arms, np.zeros(n, int), np.zeros(n), np.ones(n))
    rows = []
    for name, policy in (
        ("GLM-TSL (logistic, a = 1)", bb.GLMTSL(logistic(), a=1.0)),
        ("LinTS (v = 0.5)", bb.LinTS(v=0.5)),
    ):
        policy, state = trained(policy)
        key = jax.random.PRNGKey(2)
        vmapped = ope.target_distribution(key, policy, state, logs, samples=samples)  # compiles
        looped = loop_distribution(policy, state, arms[:1], key, 2)  # compiles select
        looped = loop_distribution(policy, state, arms, jax.random.PRNGKey(3), samples)
        p, se = np.asarray(vmapped.probabilities), np.asarray(vmapped.se)
        agree = np.abs(p - looped) <= 5 * np.maximum(np.sqrt((se**2) * 2), 1.0 / samples)
        times = interleaved_cpu(
            {
                "vmapped": (
                    lambda policy=policy, state=state, key=key: jax.block_until_ready(
                        ope.target_distribution(key, policy, state, logs, samples=samples)
                    ),
                    n,
                ),
                "loop": (
                    lambda policy=policy, state=state, key=key: loop_distribution(policy, state, arms, key, samples),
                    n,
                ),
            },
            reps,
        )
        rows.append(
            [
                name,
                n,
                samples,
                f"{times['vmapped'] * 1e3:.3f}",
                f"{times['loop'] * 1e3:.1f}",
                f"{times['loop'] / times['vmapped']:.0f}x",
                f"{float(np.max(np.abs(p - looped))):.3f} ({'all' if agree.all() else 'NOT all'} within 5 se)",
            ]
        )
        print(rows[-1], flush=True)
    text = "\n\n".join(
        [
            "# bench_ope_propensities: target action distributions, vmapped vs a Python loop of select",
            __doc__.split("\n\n")[1],
            f"K = {K} arms of dimension d = {D} per context; CPU ms per context (median of {reps} interleaved repetitions).",
            md_table(
                [
                    "policy",
                    "contexts n",
                    "draws M per context",
                    "vmapped ms/context",
                    "loop ms/context",
                    "speed-up",
                    "max abs difference, vmapped vs loop",
                ],
                rows,
            ),
            "## Machine\n\n" + machine_info(),
        ]
    )
    print("wrote", write_results("bench_ope_propensities", args.quick, text))


if __name__ == "__main__":
    main()
