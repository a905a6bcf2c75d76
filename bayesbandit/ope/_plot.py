"""The plot a practitioner reads: each estimator's estimate and interval against the truth, per target policy."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

__all__ = ["plot_estimates"]


def plot_estimates(ds: xr.Dataset, *, interval: str = "bootstrap", path: Any = None, title: str | None = None) -> Any:
    """One panel per target: each estimator's ``value`` with its ``interval`` (``"bootstrap"``, ``"betting"``
    or ``"clt"``: value +- 1.96 se) as a horizontal bar, the truth (``truth``, when present) as a line.

    ``ds`` is :func:`bayesbandit.ope.evaluate`'s Dataset (or one with the same variables, e.g. means over
    replicate logs). Returns the matplotlib Figure; saved to ``path`` when given.
    """
    import matplotlib

    if path is not None:  # a file only: no display needed (in a notebook the figure still shows inline)
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    targets = [str(t) for t in ds.target.values]
    estimators = [str(e) for e in ds.estimator.values]
    fig, axes = plt.subplots(
        1, len(targets), figsize=(3.4 * len(targets) + 1.2, 0.42 * len(estimators) + 1.6), squeeze=False, sharey=True
    )
    ypos = np.arange(len(estimators))[::-1]
    for ax, target in zip(axes[0], targets, strict=True):
        row = ds.sel(target=target)
        value = row["value"].values
        if interval == "clt":
            lo, hi = value - 1.96 * row["se"].values, value + 1.96 * row["se"].values
        else:
            lo, hi = row[f"{interval}_lo"].values, row[f"{interval}_hi"].values
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.errorbar(value, ypos, xerr=None, fmt="o", color="tab:blue", zorder=3)
        ax.hlines(ypos[ok], lo[ok], hi[ok], color="tab:blue", linewidth=2.2)
        if "truth" in ds:
            ax.axvline(float(row["truth"]), color="black", linestyle="--", linewidth=1.2, label="true value")
        ax.set_title(target, fontsize=10)
        ax.set_xlabel("policy value")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(ypos, estimators)
    if "truth" in ds:
        axes[0][-1].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or f"Off-policy estimates with {interval} intervals", fontsize=11)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=130)
    return fig
