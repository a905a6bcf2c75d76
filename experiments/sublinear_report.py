"""Tables and plots of the sublinear-bandit experiments (Yang et al., sec. 7): shared by the CLI experiments.

A table compares each index-backed policy with its exact twin on common random numbers. Times
follow the paper: *total* is preprocessing (the initial index build) plus the rounds; *excl.
preprocessing* the rounds only (arrivals, departures, rebuilds, selects, updates). Two speed-ups
are reported, both against the exact twin's total time:

* the paper's: twin total / method excl. preprocessing (its 72x for Sub-Elim);
* the fair one: twin total / method total.

For the elimination policies a second table says what elimination kept and how the searches were
used (:func:`elimination_table`).
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from bayesbandit.sim.catalogue import INDEX_USE

__all__ = ["table_rows", "markdown_table", "elimination_table", "plot_regret_and_time"]


def _twin(name: str, names: list[str]) -> str | None:
    """The exact twin of a policy named ``Sub-X, p = 30[, more]`` is ``Linear X[, more]``.

    >>> _twin("Sub-Elim, p = 30, beta = 2", ["Linear Elim, beta = 2", "Linear Elim, beta = 0.3"])
    'Linear Elim, beta = 2'
    """
    if not name.startswith("Sub-"):
        return None
    head, *rest = name.split(", ")
    base = ", ".join(["Linear " + head.removeprefix("Sub-"), *(part for part in rest if not part.startswith("p = "))])
    return base if base in names else None


def table_rows(ds: xr.Dataset) -> list[dict[str, Any]]:
    """Per policy: regret mean and sd over runs, mean total and excl.-preprocessing seconds, speed-ups."""
    names = [str(p) for p in ds.policy.values]
    regret = ds.regret.sum("round")
    total = ds.total_seconds.mean("run")
    steps = ds.step_seconds.mean("run")
    rows = []
    for name in names:
        twin = _twin(name, names)
        row: dict[str, Any] = {
            "policy": name,
            "regret": float(regret.sel(policy=name).mean()),
            "regret_sd": float(regret.sel(policy=name).std(ddof=1)) if ds.sizes["run"] > 1 else float("nan"),
            "total": float(total.sel(policy=name)),
            "steps": float(steps.sel(policy=name)),
            "init": float(ds.init_seconds.sel(policy=name).mean()),
            "rebuild": float(ds.rebuild_seconds.sel(policy=name).mean()),
            "per_step_us": 1e6 * float(steps.sel(policy=name)) / ds.sizes["round"],
        }
        # what elimination left at the horizon and how its searches went, for the policies that report it
        if all(var in ds for var in INDEX_USE) and not np.isnan(ds.queries.sel(policy=name).values).any():
            for var in ("kept_arms", "kept_gap", *INDEX_USE):
                row[var] = ds[var].sel(policy=name).values
        if twin is not None:
            base = float(total.sel(policy=twin))
            row["speedup_paper"] = base / row["steps"]
            row["speedup_fair"] = base / row["total"]
        rows.append(row)
    return rows


def markdown_table(rows: list[Mapping[str, Any]]) -> str:
    """The rows as a markdown table: regret, times and speed-ups."""
    lines = [
        "| policy | regret (mean ± sd) | total s | excl. preprocessing s | build s | rebuild s | per step | "
        "speed-up, paper's (fair) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        speed = f"×{r['speedup_paper']:.2f} (×{r['speedup_fair']:.2f})" if "speedup_paper" in r else "×1"
        lines.append(
            f"| {r['policy']} | {r['regret']:.0f} ± {r['regret_sd']:.0f} | {r['total']:.2f} | {r['steps']:.2f} | "
            f"{r['init']:.2f} | {r['rebuild']:.2f} | {r['per_step_us']:.0f} µs | {speed} |"
        )
    return "\n".join(lines)


def _count(x: float) -> str:
    """A count, or a median of counts (a half when the runs are even in number)."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def _spread(values: np.ndarray) -> str:
    """``min / median / max`` over runs."""
    return " / ".join(_count(f(values)) for f in (np.min, np.median, np.max))


def elimination_table(rows: list[Mapping[str, Any]]) -> str:
    """What elimination kept, and how the searches went, per run, for the rows that report it (Sub-Elim's).

    *Live arms at the end*: the live arms the policy had not eliminated at the horizon; the runs that
    end with exactly one of them, of all runs; and ``min / median / max`` over runs. *Kept arm's
    gap*: the best live arm's mean minus the best kept arm's (0: the best arm survived), its range
    over runs, and the runs that kept the best arm. *Searches* (``min / median / max`` per run):
    ``Query`` calls (Alg. 2), those the stage's index answered (the rest scanned a stage of at most
    ``exact_below`` arms), nulls (a query that found no arm of uncertainty ``>= 2^{-s-1}``, after which
    the stage is scanned and re-bucketed) and rounds served by a uniform draw from the last stage
    without any query. An empty string when no row reports them.
    """
    rows = [r for r in rows if "queries" in r]
    if not rows:
        return ""
    lines = [
        "| policy | runs ending with one live arm | live arms at the end (min / median / max) | "
        "kept arm's gap (range) | runs keeping the best arm | queries per run | answered by the index | "
        "nulls (stage scanned) | rounds without a query |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        kept, gap, runs = r["kept_arms"], r["kept_gap"], len(r["kept_arms"])
        lines.append(
            f"| {r['policy']} | {int(np.sum(kept == 1))} of {runs} | {_spread(kept)} | "
            f"{np.min(gap):.2f}-{np.max(gap):.2f} | {int(np.sum(gap == 0))} of {runs} | {_spread(r['queries'])} | "
            f"{_spread(r['index_queries'])} | {_spread(r['null_queries'])} | {_spread(r['unqueried_rounds'])} |"
        )
    return "\n".join(lines)


def plot_regret_and_time(results: Mapping[str, xr.Dataset], path: pathlib.Path) -> pathlib.Path:
    """One column per table: cumulative regret (median and quartiles over runs), and time per round."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(results), figsize=(4.2 * len(results), 7), squeeze=False)
    for col, (title, ds) in enumerate(results.items()):
        top, bottom = axes[0, col], axes[1, col]
        names = [str(n) for n in ds.policy.values]
        lows = []
        for i, name in enumerate(names):
            cum = ds.regret.sel(policy=name).cumsum("round")
            low, mid, high = (cum.quantile(q, "run").values for q in (0.25, 0.5, 0.75))
            rounds = ds["round"].values + 1
            (line,) = top.plot(rounds, mid, label=name, lw=1.2)
            top.fill_between(rounds, low, high, color=line.get_color(), alpha=0.15)
            steps = 1e3 * float(ds.step_seconds.sel(policy=name).mean()) / ds.sizes["round"]
            total = 1e3 * float(ds.total_seconds.sel(policy=name).mean()) / ds.sizes["round"]
            bottom.bar(i - 0.2, steps, width=0.4, color=line.get_color(), label="rounds only" if i == 0 else None)
            bottom.bar(
                i + 0.2,
                total,
                width=0.4,
                color=line.get_color(),
                alpha=0.4,
                hatch="//",
                label="with the initial build" if i == 0 else None,
            )
            lows.append(min(steps, total))
        top.set_title(title, fontsize=9)
        top.set_xlabel("round")
        top.set_ylabel("cumulative regret (median, IQR)")
        top.legend(fontsize=7)
        bottom.set_yscale("log")
        bottom.set_ylim(bottom=0.5 * min(lows))
        bottom.set_xticks(range(len(names)), names, rotation=60, fontsize=7, ha="right")
        bottom.set_ylabel("ms per round")
        bottom.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def describe_runs(ds: xr.Dataset) -> str:
    """One line: runs, rounds, seed, and the machine's load while they ran (when recorded)."""
    line = f"{ds.sizes['run']} runs of {ds.sizes['round']:,} rounds (seed {ds.attrs.get('seed', 0)})"
    load = ds.attrs.get("load_average")
    threads = ds.attrs.get("blas_threads")
    return line + (f"; load average {load}" if load else "") + (f"; BLAS threads: {threads}" if threads else "")
