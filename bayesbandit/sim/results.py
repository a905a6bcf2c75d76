"""Working with :func:`bayesbandit.simulate` results: cumulative regret, plots, summary tables.

Also registers the ``ds.bandit`` accessor on ``xarray.Dataset`` (``ds.bandit.plot()``,
``ds.bandit.summary()``, ``ds.bandit.cumulative_regret()``); xarray's own ``ds.plot`` namespace
is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["cumulative_regret", "plot_regret", "summarize", "summary_markdown", "thin"]


def cumulative_regret(results: xr.Dataset) -> xr.DataArray:
    """Cumulative expected regret ``R(t) = sum_{s <= t} regret_s``, dims (policy, run, round).

    Works on a full result (per-round ``regret``) or a thinned one (``cumulative_regret``
    already stored, see :func:`thin`).
    """
    if "cumulative_regret" in results:
        return results["cumulative_regret"]
    return results["regret"].cumsum("round")


def thin(results: xr.Dataset, *, num_points: int = 500) -> xr.Dataset:
    """A small copy for storage: cumulative regret at ``num_points`` evenly spaced rounds.

    Per-round ``regret``, ``reward`` and ``action`` (``policies x runs x horizon`` values each) are
    replaced by ``cumulative_regret`` at the kept rounds (always including the last one) and the
    per-run totals ``total_reward``; per-policy variables and attributes are kept.
    """
    horizon = results.sizes["round"]
    keep = np.unique(np.linspace(0, horizon - 1, min(num_points, horizon)).round().astype(int))
    cum = cumulative_regret(results).isel(round=keep).astype(np.float32)
    out = results.drop_vars([v for v in results.data_vars if "round" in results[v].dims]).drop_dims("round")
    out["cumulative_regret"] = cum
    if "reward" in results:
        out["total_reward"] = results["reward"].sum("round")
    out.attrs = dict(results.attrs)
    return out


def plot_regret(
    results: xr.Dataset,
    path: str | Path | None = None,
    *,
    ax: Any = None,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    title: str | None = None,
):
    """Cumulative regret per policy: the mean over runs with a band of one standard error.

    Parameters
    ----------
    results : xarray.Dataset
        From :func:`bayesbandit.simulate` (or :func:`thin`).
    path : str or Path, optional
        Save the figure there (PNG by extension).
    ax : matplotlib Axes, optional
        Draw on it; a new figure otherwise.
    styles : dict of policy name to dict, optional
        Extra ``ax.plot`` keyword arguments per policy (``linestyle``, ``color``, ...).
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    import matplotlib

    if ax is None and path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    cum = cumulative_regret(results)
    runs = cum.sizes["run"]
    rounds = cum["round"].values + 1
    for name in cum["policy"].values:
        c = cum.sel(policy=name)
        mean = c.mean("run").values
        se = c.std("run", ddof=1).values / np.sqrt(runs) if runs > 1 else np.zeros_like(mean)
        kw = dict((styles or {}).get(str(name), {}))
        (line,) = ax.plot(rounds, mean, label=str(name), **kw)
        ax.fill_between(rounds, mean - se, mean + se, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("round n")
    ax.set_ylabel("cumulative regret")
    ax.set_title(title if title is not None else f"{runs} runs, mean ± 1 s.e.")
    ax.legend(fontsize="small")
    if path is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(path, dpi=120)
    return ax


def summarize(results: xr.Dataset) -> pd.DataFrame:
    """One row per policy: final cumulative regret (mean and standard error over runs), times.

    Columns: ``regret`` (mean ``R(n)``), ``regret_se``, ``compile_s``, ``run_s`` (steady
    execution), ``wall_s``, ``rounds_per_s`` (``runs * horizon / run_s``), ``not_converged``
    (rounds per run whose select or update did not converge) when present.
    """
    final = cumulative_regret(results).isel(round=-1)
    runs = final.sizes["run"]
    horizon = int(results.attrs.get("horizon", results.sizes.get("round", 0)))
    df = pd.DataFrame(index=pd.Index([str(p) for p in final["policy"].values], name="policy"))
    df["regret"] = final.mean("run").values
    df["regret_se"] = final.std("run", ddof=1).values / np.sqrt(runs) if runs > 1 else np.nan
    for src, col in (("compile_time", "compile_s"), ("run_time", "run_s"), ("wall_time", "wall_s")):
        if src in results:
            df[col] = results[src].values
    if "run_time" in results:
        df["rounds_per_s"] = runs * horizon / np.maximum(results["run_time"].values, 1e-12)
    if "not_converged" in results:
        df["not_converged"] = results["not_converged"].mean("run").values
    return df


def summary_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A pandas frame as a GitHub markdown table (no extra dependency)."""
    cols = [df.index.name or ""] + [str(c) for c in df.columns]

    def fmt(v: Any) -> str:
        if isinstance(v, float | np.floating):
            x = float(v)
            if not np.isfinite(x):
                return "-"
            return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.{digits}f}"
        return str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(["---"] + ["---:"] * (len(cols) - 1)) + "|"]
    for idx, row in df.iterrows():
        lines.append("| " + " | ".join([str(idx)] + [fmt(v) for v in row.values]) + " |")
    return "\n".join(lines)


@xr.register_dataset_accessor("bandit")
class BanditAccessor:
    """``ds.bandit.plot()``, ``ds.bandit.summary()``, ``ds.bandit.cumulative_regret()``."""

    def __init__(self, ds: xr.Dataset) -> None:
        self._ds = ds

    def plot(self, path: str | Path | None = None, **kwargs: Any):
        """See :func:`bayesbandit.sim.plot_regret`."""
        return plot_regret(self._ds, path, **kwargs)

    def summary(self) -> pd.DataFrame:
        """See :func:`bayesbandit.sim.summarize`."""
        return summarize(self._ds)

    def cumulative_regret(self) -> xr.DataArray:
        """See :func:`bayesbandit.sim.cumulative_regret`."""
        return cumulative_regret(self._ds)
