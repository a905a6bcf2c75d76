"""The host runner: a Python loop over runs and rounds, for ``kind = "host"`` policies.

It plays the same :func:`~bayesbandit.sim.round.play_round` as the compiled runner, with the
same keys, so a host policy and its jittable twin give the same results. The policy's own
functions are called from Python (an index-backed policy jits its pure parts itself); the
environment's functions are jitted here, once per runner call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from bayesbandit.sim.round import RunKeys, init_run, play_round
from bayesbandit.sim.scan import Record, round_outputs

__all__ = ["run_host"]


@dataclass(frozen=True)
class _JittedEnv:
    """An environment whose pure functions are compiled (the loop calls them every round)."""

    env: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "reset", jax.jit(self.env.reset))
        object.__setattr__(self, "arms", jax.jit(self.env.arms))
        object.__setattr__(self, "pull", jax.jit(self.env.pull))

    @property
    def fixed_arms(self) -> bool:
        return self.env.fixed_arms

    @property
    def d(self) -> int:
        return self.env.d


def run_host(
    policy: Any, env: Any, record: Record, horizon: int, keys: RunKeys, bar: Any
) -> tuple[dict[str, np.ndarray], np.ndarray, float, float]:
    """All runs of one host policy. Returns (outputs (runs, horizon, ...), failures (runs,), compile s, run s)."""
    jenv = _JittedEnv(env)
    runs = keys.env.shape[0]
    outs: list[dict[str, list]] = []
    failures = np.zeros(runs, np.int32)
    round_times: list[float] = []
    start = time.perf_counter()
    for r in range(runs):
        env_state, pstate = init_run(keys.env[r], keys.policy[r], policy, jenv, horizon)
        rows: dict[str, list] = {}
        for t in range(horizon):
            t0 = time.perf_counter()
            pstate, rnd = play_round(keys.pull[r], keys.policy[r], policy, jenv, env_state, pstate, np.int32(t))
            failures[r] += not bool(rnd.converged)
            for k, v in round_outputs(rnd, record).items():
                rows.setdefault(k, []).append(np.asarray(v))
            round_times.append(time.perf_counter() - t0)
        outs.append(rows)
        if bar is not None:
            bar.update(horizon)
    total = time.perf_counter() - start
    # Compile time estimate: the first round's excess over a typical round.
    compile_s = max(0.0, round_times[0] - float(np.median(round_times))) if round_times else 0.0
    out = {k: np.stack([np.stack(o[k]) for o in outs]) for k in outs[0]}
    return out, failures, compile_s, total - compile_s
