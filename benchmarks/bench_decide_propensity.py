"""What a logged propensity costs: ``Agent.decide()`` against ``Agent.decide(propensity=True)``, one process.

For each policy and arm-set size, a fixed-arm agent (``warm_up(propensity=True)`` first, so nothing
compiles while timed) makes decisions without and with their propensity, interleaved in blocks of
100, and the table gives the median per decision of the best of the blocks' medians, the ratio, and
what the ``M - 1 = 999`` extra selections cost alone: ``jax.vmap`` of the policy's ``select`` over
999 keys, compiled and timed the same way. Exact-law policies (LinUCB) compute the propensity in
closed form. With :func:`bayesbandit.runtime.enable_low_latency` (read when JAX starts).

Usage, from the repository root: ``python -m benchmarks.bench_decide_propensity [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import bayesbandit as bb

bb.runtime.enable_low_latency()

import jax  # noqa: E402
import numpy as np  # noqa: E402
from bayesbandit.models import logistic  # noqa: E402

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import machine_info, md_table, write_results  # noqa: E402

POLICIES = {
    "GLM-TSL, online": lambda: bb.GLMTSL(logistic(), history="online"),
    "GLM-TSL, full history": lambda: bb.GLMTSL(logistic()),
    "LinTS": lambda: bb.LinTS(),
    "LinUCB (exact law)": lambda: bb.LinUCB(),
}
SIZES = ((20, 5), (100, 10))


def _per_call_us(fn, blocks: int, per_block: int = 100) -> float:
    """The best of ``blocks`` block medians of ``fn``'s wall time, in microseconds."""
    medians = []
    for _ in range(blocks):
        times = []
        for _ in range(per_block):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return 1e6 * min(medians)


def measure(name: str, k: int, d: int, blocks: int) -> list[str]:
    arms = np.random.default_rng(0).uniform(-1.0, 1.0, (k, d))
    policy = POLICIES[name]()
    agent = bb.Agent(policy, arms=arms, seed=0)
    agent.warm_up(propensity=True)
    for _ in range(2 * d):  # past the initial exploration, with a few rewards
        agent.update(agent.decide(), 1.0)
    plain, logged = [], []
    for _ in range(blocks):
        plain.append(_per_call_us(agent.decide, 1))
        logged.append(_per_call_us(lambda: agent.decide(propensity=True), 1))
    state, key = agent.state, jax.random.PRNGKey(1)
    draws = jax.jit(lambda s, x, k: jax.vmap(lambda kk: policy.select(s, x, kk)[0])(jax.random.split(k, 999)))
    jax.block_until_ready(draws(state, arms, key))
    alone = _per_call_us(lambda: jax.block_until_ready(draws(state, arms, key)), blocks)
    a, b = min(plain), min(logged)
    return [name, f"{k} x {d}", f"{a:.0f}", f"{b:.0f}", f"{b / a:.1f}x", f"{alone:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 blocks instead of 10")
    args = parser.parse_args()
    blocks = 3 if args.quick else 10
    rows = []
    for name in POLICIES:
        for k, d in SIZES:
            rows.append(measure(name, k, d, blocks))
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    text = "\n\n".join(
        [
            "# bench_decide_propensity: a decision with and without its logged propensity",
            machine_info(),
            f"Fixed-arm agents after `warm_up(propensity=True)`; median microseconds per call, best of {blocks} "
            "blocks of 100, plain and logged decisions in alternating blocks; `bb.runtime.enable_low_latency()`. "
            "The propensity is the action's frequency among itself and 999 more selections in the decision's "
            "own compiled call (LinUCB: its exact law). Last column: those 999 selections alone, `vmap`-ed.",
            md_table(
                ["policy", "K x d", "decide (us)", "decide, propensity (us)", "ratio", "999 selections alone (us)"],
                rows,
            ),
        ]
    )
    print(write_results("bench_decide_propensity", args.quick, text))


if __name__ == "__main__":
    main()
