"""``simulate_catalogue``: index-backed policies on catalogue environments, timed, into an xarray Dataset.

Every policy of a comparison plays run ``r`` on ``env.reset(seed, r)`` (the same arms, changes and
reward noise) with a policy generator seeded by ``(seed, r)`` (the same exploration draws), so a
policy and its exact twin differ only where their searches differ. The rounds are
:func:`~bayesbandit.sim.round.play_round`'s, with the generator as the policy stream (consumed in
order, :func:`~bayesbandit.sim.round.round_key`) and no feedback stream (the noise comes with the
problem).

Timing follows Yang et al. (sec. 7): ``init_seconds`` is the preprocessing (the index build over
the initial catalogue); ``step_seconds`` is everything the policy does in the rounds (arrivals and
departures, ``select``, ``update``), which includes the index rebuilds it triggers, reported
apart as ``rebuild_seconds``. The environment's bookkeeping (rewards, the best live arm) is not
timed: the policy plays the rounds behind a clock (``_Clock``) that times its own calls only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import xarray as xr

from bayesbandit.contract import policy_kind
from bayesbandit.errors import InvalidInput
from bayesbandit.sim.round import play_round
from bayesbandit.validation import check_int

__all__ = ["simulate_catalogue", "build_seconds"]

INDEX_USE = ("queries", "index_queries", "null_queries", "unqueried_rounds")
"""The search counters a policy state may report as ``state.index_use`` (Sub-Elim's; NaN for the others)."""


def build_seconds(state: Any) -> float:
    """Seconds the state's indexes have spent building forests so far (0 for exact scans)."""
    indexes = [getattr(state, "index", None)] + [stage.index for stage in getattr(state, "stages", [])]
    return float(sum(getattr(index, "build_seconds", 0.0) for index in indexes if index is not None))


class _Clock:
    """A host policy whose calls are timed: ``seconds`` adds up the time spent inside them."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.seconds = 0.0

    def _timed(self, method: Callable[..., Any], *args: Any) -> Any:
        t0 = time.perf_counter()
        out = method(*args)
        self.seconds += time.perf_counter() - t0
        return out

    def init(self, catalogue: Any) -> Any:
        return self._timed(self.policy.init, catalogue)

    def remove_arms(self, state: Any, ids: np.ndarray) -> Any:
        return self._timed(self.policy.remove_arms, state, ids)

    def add_arms(self, state: Any, ids: np.ndarray, features: np.ndarray) -> Any:
        return self._timed(self.policy.add_arms, state, ids, features)

    def select(self, state: Any, arms: None, key: np.random.Generator) -> Any:
        return self._timed(self.policy.select, state, arms, key)

    def update(self, state: Any, arms: None, action: Any, feedback: Any) -> Any:
        return self._timed(self.policy.update, state, arms, action, feedback)


def _play(policy: Any, env: Any, run: Any, horizon: int, rng: np.random.Generator) -> dict[str, Any]:
    clock = _Clock(policy)
    state = clock.init(env.initial(run))
    init_seconds = clock.seconds
    built = build_seconds(state)
    regret = np.empty(horizon)
    reward = np.empty(horizon)
    action = np.empty(horizon, dtype=np.int64)
    seconds = np.empty(horizon)
    for t in range(horizon):
        clock.seconds = 0.0
        state, rnd = play_round(None, rng, clock, env, run, state, t)
        seconds[t] = clock.seconds
        regret[t], reward[t], action[t] = rnd.outcome.regret, rnd.feedback, rnd.action
    live = np.flatnonzero(run.live)
    kept = live[np.asarray(policy.held(state, live), dtype=bool)]
    use = getattr(state, "index_use", None)
    return {
        **{name: np.nan if use is None else use[name] for name in INDEX_USE},
        "regret": regret,
        "reward": reward,
        "action": action,
        "seconds": seconds,
        "init_seconds": init_seconds,
        "rebuild_seconds": build_seconds(state) - built,
        "kept_arms": kept.size,
        "kept_gap": run.best_mean - run.means[kept].max() if kept.size else np.nan,
    }


def _check_env(env: Any) -> None:
    missing = [m for m in ("reset", "initial", "changes", "pull") if not callable(getattr(env, m, None))]
    if missing or not hasattr(env, "horizon"):
        raise InvalidInput(
            f"simulate_catalogue: the 'env' argument must be a catalogue environment (reset(seed, run), initial, "
            f"changes, pull, horizon); got {type(env).__name__} (missing {missing or ['horizon']}). "
            "Fix: pass one from bayesbandit.envs, e.g. SyntheticCatalogue."
        )


def simulate_catalogue(
    policies: Mapping[str, Any],
    env: Any,
    *,
    horizon: int | None = None,
    runs: int = 1,
    seed: int = 0,
    progress: bool = False,
) -> xr.Dataset:
    """Run host policies on a catalogue environment with common random numbers.

    Parameters
    ----------
    policies : mapping of name -> policy
        ``kind = "host"`` policies with ``add_arms`` / ``remove_arms`` (e.g. ``SubTS``, ``SubElim``).
    env : catalogue environment
        A :class:`bayesbandit.contract.CatalogueEnv` (:mod:`bayesbandit.envs.catalogue`).
    horizon : int, optional
        Rounds per run (default: ``env.horizon``).
    runs, seed : int
    progress : bool
        A progress bar over runs and policies.

    Returns
    -------
    xarray.Dataset
        dims ``(policy, run, round)``: ``regret`` (expected, against the best live arm),
        ``reward``, ``action`` (arm id), ``seconds`` (the policy's time in the round); dims
        ``(policy, run)``: ``init_seconds``, ``step_seconds`` (sum over rounds),
        ``rebuild_seconds``, ``total_seconds``, ``kept_arms`` (the live arms the policy still
        considers at the end: all of them for Sub-TS, the survivors of elimination for Sub-Elim)
        and ``kept_gap`` (the best live arm's mean minus the best kept arm's: 0 when elimination
        kept the best arm); and, for a policy whose state reports them (Sub-Elim's
        ``SubElimState.index_use``; NaN for the others), its searches over the run: ``queries``
        (Alg. 2 ``Query`` calls), ``index_queries`` (those its indexes answered; the rest scanned a
        small stage exactly), ``null_queries`` (queries that found no uncertain arm, each followed by a
        scan of the stage) and ``unqueried_rounds`` (rounds drawn uniformly from the last stage
        without a query).
    """
    if not isinstance(policies, Mapping) or not policies:
        raise InvalidInput("simulate_catalogue: 'policies' must be a non-empty mapping of names to host policies.")
    for name, policy in policies.items():
        if policy_kind(policy) != "host" or not callable(getattr(policy, "add_arms", None)):
            raise InvalidInput(
                f"simulate_catalogue: policy {name!r} is not an index-backed host policy (kind='host' with add_arms). "
                "Fix: pass bayesbandit.SubTS(...) or bayesbandit.SubElim(...)."
            )
    _check_env(env)
    horizon = check_int("simulate_catalogue", "horizon", env.horizon if horizon is None else horizon, low=1)
    runs = check_int("simulate_catalogue", "runs", runs, low=1)
    seed = check_int("simulate_catalogue", "seed", seed, low=0)
    from tqdm.auto import tqdm

    bar = tqdm(total=runs * len(policies), disable=not progress, unit="run", desc="simulate_catalogue")
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in policies}
    loads = []  # the machine's 1-minute load average after each run: timings on a busy machine say so
    for r in range(runs):
        for name, policy in policies.items():
            bar.set_postfix_str(f"{name}, run {r}")
            out[name].append(_play(policy, env, env.reset(seed, r), horizon, np.random.default_rng([seed, r, 1])))
            bar.update(1)
        loads.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
    bar.close()
    names = list(policies)

    def stack(key: str) -> np.ndarray:
        return np.stack([np.stack([np.asarray(o[key]) for o in out[n]]) for n in names])

    step = stack("seconds").sum(axis=2)
    ds = xr.Dataset(
        {
            "regret": (("policy", "run", "round"), stack("regret")),
            "reward": (("policy", "run", "round"), stack("reward")),
            "action": (("policy", "run", "round"), stack("action")),
            "seconds": (("policy", "run", "round"), stack("seconds").astype(np.float32), {"units": "s"}),
            "init_seconds": (("policy", "run"), stack("init_seconds"), {"units": "s"}),
            "step_seconds": (("policy", "run"), step, {"units": "s"}),
            "rebuild_seconds": (("policy", "run"), stack("rebuild_seconds"), {"units": "s"}),
            "total_seconds": (("policy", "run"), stack("init_seconds") + step, {"units": "s"}),
            "kept_arms": (("policy", "run"), stack("kept_arms")),
            "kept_gap": (("policy", "run"), stack("kept_gap")),
            **{name: (("policy", "run"), stack(name).astype(np.float64)) for name in INDEX_USE},
            "policy_description": ("policy", np.array([repr(policies[n]) for n in names], dtype=str)),
        },
        coords={"policy": names, "run": np.arange(runs), "round": np.arange(horizon)},
        attrs={
            "env": repr(env),
            "seed": seed,
            "horizon": horizon,
            "runs": runs,
            "load_average": f"{np.mean(loads):.1f} mean, {np.max(loads):.1f} max over runs ({os.cpu_count()} cores)",
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        },
    )
    return ds
