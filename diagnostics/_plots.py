"""Plots of a :class:`Comparison` and of an :func:`along_run` table (ArviZ + matplotlib, saved as PNG)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ._arviz import az
from ._compare import Comparison

__all__ = ["plot_marginals", "plot_pairs", "plot_along_run"]

COLORS = {"nuts": "k", "laplace": "C0", "fpl": "C1"}
_ORDER = ("nuts", "laplace", "fpl")


def _ordered(comparison: Comparison) -> list[str]:
    return [m for m in _ORDER if m in comparison.idata]


def _save(fig: Figure, path: str | os.PathLike | None) -> Figure:
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")
    return fig


def plot_marginals(
    comparison: Comparison,
    path: str | os.PathLike | None = None,
    *,
    var_names: Sequence[str] | None = None,
    group: str = "posterior",
) -> Figure:
    """Overlaid marginal densities of every parameter under each method (``arviz.plot_density``).

    Parameters
    ----------
    comparison : Comparison
    path : str or path, optional
        Where to save the PNG; the figure is returned either way.
    var_names : sequence of str, optional
        Latent sites to show (default: all).
    group : {"posterior", "unconstrained_posterior"}
        Constrained values (what the program samples) or the unconstrained space the distances
        are measured in.

    Returns
    -------
    matplotlib.figure.Figure
    """
    methods = _ordered(comparison)
    axes = az.plot_density(
        [comparison.idata[m] for m in methods],
        group=group,
        var_names=list(var_names) if var_names else None,
        data_labels=methods,
        colors=[COLORS[m] for m in methods],
        hdi_prob=0.999,
        shade=0.1,
    )
    fig = np.atleast_1d(axes).ravel()[0].figure
    fig.suptitle("Marginal posteriors: NUTS (exact) vs approximations", y=1.02)
    return _save(fig, path)


def plot_pairs(
    comparison: Comparison,
    path: str | os.PathLike | None = None,
    *,
    var_names: Sequence[str] | None = None,
    group: str = "posterior",
    max_points: int = 1000,
) -> Figure:
    """Pair plot (``arviz.plot_pair`` scatter) of the methods' draws, overlaid on shared axes.

    Parameters
    ----------
    comparison : Comparison
    path : str or path, optional
        Where to save the PNG.
    var_names : sequence of str, optional
        Latent sites to show (default: all).
    group : {"posterior", "unconstrained_posterior"}
    max_points : int
        Draws shown per method (thinned evenly), so dense methods do not hide the others.

    Returns
    -------
    matplotlib.figure.Figure
    """
    methods = _ordered(comparison)
    ax = None
    for m in methods:
        data = comparison.idata[m]
        total = data[group].sizes["chain"] * data[group].sizes["draw"]
        step = max(1, total // max_points)
        ax = az.plot_pair(
            data[group].isel(draw=slice(None, None, step)),
            var_names=list(var_names) if var_names else None,
            kind="scatter",
            marginals=False,
            ax=ax,
            scatter_kwargs={"color": COLORS[m], "alpha": 0.25, "s": 6, "marker": "o"},
        )
    axes = np.atleast_1d(np.asarray(ax, dtype=object))
    fig = axes.ravel()[0].figure
    handles = [Line2D([], [], color=COLORS[m], marker="o", linestyle="", label=m) for m in methods]
    fig.legend(handles=handles, loc="upper right")
    fig.suptitle("Pairwise posterior draws", y=1.02)
    return _save(fig, path)


def plot_along_run(
    table: pd.DataFrame,
    path: str | os.PathLike | None = None,
    *,
    metrics: Sequence[str] = ("kl", "w1_max", "coverage90"),
) -> Figure:
    """Distances to NUTS against the bandit round, one line per method (from :func:`along_run`).

    Parameters
    ----------
    table : pandas.DataFrame
        Tidy table with columns ``round``, ``method`` and the ``metrics`` (and optionally ``run``:
        runs are averaged and their range shaded).
    path : str or path, optional
        Where to save the PNG.
    metrics : sequence of str
        Columns to plot, one panel each. ``kl`` uses a log scale; ``coverage90`` shows the
        calibrated value 0.9.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.4), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for method, part in table.groupby("method", sort=False):
            stats = part.groupby("round")[metric].agg(["mean", "min", "max"])
            color = COLORS.get(str(method))
            ax.plot(stats.index, stats["mean"], marker="o", color=color, label=str(method))
            if "run" in part and part["run"].nunique() > 1:
                ax.fill_between(stats.index, stats["min"], stats["max"], color=color, alpha=0.15)
        if metric == "kl":
            ax.set_yscale("log")
        if metric == "coverage90":
            ax.axhline(0.9, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel("round (observations in the history)")
        ax.set_title(metric)
        ax.legend()
    fig.suptitle("Approximate posterior vs NUTS along the bandit run")
    fig.tight_layout()
    return _save(fig, path)
