"""Takemura and Ito's tuning protocol, held out: grids, the best configuration per algorithm, paired gains.

Every tuned parameter ranges over ``{0.01, 0.1, 1, 10, 100}`` (sec. VII-B): 5 configurations for
Greedy, 25 for C2UCB, PC2UCB (``c = 1``), round-wise and arm-wise TS and CombLinTS, 125 for
CombLinUCB. Each algorithm's whole grid is one compiled :func:`bayesbandit.sim.sweep` (``vmap``
over configurations and runs), played twice:

* on *tuning* trials (seed ``seed``): the configuration with the highest mean cumulative reward
  is chosen;
* on *fresh* trials (seed ``seed + 1``: other instances, feedback and exploration draws): the
  chosen configuration's rewards are what the tables report.

The paper's own number, the grid maximum of the mean over the same trials it reports (optimistic
selection), is kept beside it (``paper_protocol``). Every algorithm and configuration plays the
same fresh trials (common random numbers), so differences between algorithms are paired by trial.
"""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
import xarray as xr

import bayesbandit as bb
from bayesbandit.sim import sweep

GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


@dataclass(frozen=True)
class Algorithm:
    """A policy family with the parameters tuned over :data:`GRID`."""

    name: str
    make: Callable[..., Any]  # (oracle, blocks, **params) -> policy
    params: tuple[str, ...]
    proposed: bool = False


ALGORITHMS = (
    Algorithm("Greedy", lambda o, m, **p: bb.CombGreedy(oracle=o, blocks=m, **p), ("lam",)),
    Algorithm("CombLinUCB", lambda o, m, **p: bb.CombLinUCB(oracle=o, blocks=m, **p), ("prior_var", "noise_var", "c")),
    Algorithm("CombLinTS", lambda o, m, **p: bb.CombLinTS(oracle=o, blocks=m, **p), ("prior_var", "noise_var")),
    Algorithm("C2UCB", lambda o, m, **p: bb.C2UCB(oracle=o, blocks=m, **p), ("lam", "alpha")),
    Algorithm("PC2UCB", lambda o, m, **p: bb.PC2UCB(oracle=o, blocks=m, c=1.0, **p), ("lam", "alpha"), True),
    Algorithm("Round-wise TS", lambda o, m, **p: bb.RoundTS(oracle=o, blocks=m, **p), ("lam", "v")),
    Algorithm("Arm-wise TS", lambda o, m, **p: bb.ArmTS(oracle=o, blocks=m, **p), ("lam", "v"), True),
)


def grid(algorithm: Algorithm) -> list[dict[str, float]]:
    """Every configuration of ``algorithm`` over :data:`GRID`."""
    return [
        dict(zip(algorithm.params, values, strict=True))
        for values in itertools.product(GRID, repeat=len(algorithm.params))
    ]


def label(config: dict[str, float]) -> str:
    return ", ".join(f"{k} = {v:g}" for k, v in config.items())


def tune_and_report(
    env: Any,
    oracle: Any,
    blocks: int,
    horizon: int,
    tuning_runs: int,
    report_runs: int,
    seed: int,
    algorithms: tuple[Algorithm, ...] = ALGORITHMS,
    progress: Any = None,
) -> xr.Dataset:
    """Tune each algorithm on ``tuning_runs`` trials, report its choice on ``report_runs`` fresh ones.

    Returns a Dataset with dims ``(algorithm, run, round)``: ``reward`` (per-round total reward of
    the chosen configuration on the fresh trials) and ``regret``; per algorithm ``chosen`` (its
    configuration), ``tuning_reward`` (the chosen configuration's mean cumulative reward on the
    tuning trials) and ``paper_protocol`` (the grid maximum of the mean cumulative reward on the
    fresh trials).
    """
    rewards, regrets, chosen, tuned, optimistic = [], [], [], [], []
    for algorithm in algorithms:
        configs = grid(algorithm)
        policies = [algorithm.make(oracle, blocks, **config) for config in configs]
        tuning = sweep(policies, env, horizon, tuning_runs, seed=seed)
        fresh = sweep(policies, env, horizon, report_runs, seed=seed + 1)
        tuning_means = tuning.reward.sum("round").mean("run").values
        best = int(np.argmax(tuning_means))
        rewards.append(fresh.reward.isel(config=best).values)
        regrets.append(fresh.regret.isel(config=best).values)
        chosen.append(label(configs[best]))
        tuned.append(float(tuning_means[best]))
        optimistic.append(float(fresh.reward.sum("round").mean("run").max()))
        if progress is not None:
            progress.update(1)
    names = [a.name for a in algorithms]
    return xr.Dataset(
        {
            "reward": (("algorithm", "run", "round"), np.stack(rewards)),
            "regret": (("algorithm", "run", "round"), np.stack(regrets)),
            "chosen": ("algorithm", np.array(chosen, dtype=str)),
            "tuning_reward": ("algorithm", np.array(tuned)),
            "paper_protocol": ("algorithm", np.array(optimistic)),
            "proposed": ("algorithm", np.array([a.proposed for a in algorithms])),
        },
        coords={"algorithm": names, "run": np.arange(report_runs), "round": np.arange(horizon)},
        attrs={"tuning_runs": tuning_runs, "report_runs": report_runs, "tuning_seed": seed, "report_seed": seed + 1},
    )


def paired(ds: xr.Dataset, first: str, second: str) -> tuple[float, float]:
    """Mean and standard error over fresh trials of ``first``'s cumulative reward minus ``second``'s."""
    totals = ds.reward.sum("round")
    diff = (totals.sel(algorithm=first) - totals.sel(algorithm=second)).values
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")


def best_baseline(ds: xr.Dataset) -> str:
    """The baseline with the highest mean cumulative reward on the fresh trials."""
    totals = ds.reward.sum("round").mean("run")
    baselines = [str(a) for a, p in zip(ds.algorithm.values, ds.proposed.values, strict=True) if not p]
    return max(baselines, key=lambda a: float(totals.sel(algorithm=a)))


@dataclass(frozen=True)
class Cell:
    """One tuned-and-reported comparison: a name for its file, its environment and oracle, and the
    algorithms it compares (default: all of :data:`ALGORITHMS`)."""

    key: Hashable
    filename: str
    make: Callable[[], tuple[Any, Any, int]]  # () -> (env, oracle, blocks)
    attrs: dict[str, Any]
    algorithms: tuple[Algorithm, ...] = ALGORITHMS


def run_cells(
    folder: pathlib.Path,
    cells: list[Cell],
    horizon: int,
    tuning_runs: int,
    report_runs: int,
    seed: int,
    progress: bool,
    desc: str,
) -> dict[Hashable, xr.Dataset]:
    """:func:`tune_and_report` for every cell not stored yet in ``folder`` (netCDF), then load them all."""
    folder.mkdir(parents=True, exist_ok=True)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(len(cell.algorithms) for cell in cells), unit="algorithm", desc=desc)
    results: dict[Hashable, xr.Dataset] = {}
    for cell in cells:
        path = folder / cell.filename
        if not path.exists():
            env, oracle, blocks = cell.make()
            ds = tune_and_report(
                env, oracle, blocks, horizon, tuning_runs, report_runs, seed, cell.algorithms, progress=bar
            )
            ds.attrs.update(cell.attrs)
            tmp = path.with_name(path.name + ".tmp")  # a stopped run never leaves half a cell to resume from
            ds.to_netcdf(tmp)
            tmp.replace(path)
            # No later cell reuses this one's programs (its environment differs); kept, their machine
            # code exhausts the process's memory maps after a few dozen cells.
            jax.clear_caches()
        elif bar is not None:
            bar.update(len(cell.algorithms))
        results[cell.key] = xr.load_dataset(path)
    if bar is not None:
        bar.close()
    return results
