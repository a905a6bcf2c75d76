"""Plots of a :class:`Comparison` and of an :func:`along_run` table (ArviZ + matplotlib, saved as PNG)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from bayesbandit.errors import InvalidInput

from ._arviz import az
from ._compare import Comparison

__all__ = ["plot_marginals", "plot_pairs", "plot_along_run"]

COLORS = {"nuts": "k", "laplace": "C0", "fpl": "C1"}
_LABELS = {"nuts": "NUTS (exact)", "laplace": "Laplace", "fpl": "FPL ensemble"}
_ORDER = ("nuts", "laplace", "fpl")


def _ordered(comparison: Comparison) -> list[str]:
    return [m for m in _ORDER if m in comparison.idata]


def _save(fig: Figure, path: str | os.PathLike | None) -> Figure:
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")
    return fig


def _panels(n: int, *, width: float = 2.7, height: float = 2.0, max_cols: int = 4):
    """A constrained-layout figure of ``n`` panels, ``width x height`` inches each; unused ones hidden."""
    ncols = min(max_cols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows + 0.7), layout="constrained", squeeze=False
    )
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]


def _elements(
    comparison: Comparison, group: str, var_names: Sequence[str] | None, *, owner: str = "plot_marginals"
) -> list[tuple[str, tuple]]:
    """``(site, index)`` of every scalar element of the chosen sites, in the posterior's order."""
    data = comparison.idata[_ordered(comparison)[0]][group]
    sites = list(var_names) if var_names else [str(v) for v in data.data_vars]
    unknown = [v for v in sites if v not in data.data_vars]
    if unknown:
        raise InvalidInput(
            f"{owner}: 'var_names' must name latent sites among {list(data.data_vars)}. Got {unknown}. "
            "Fix: pass site names of the program (or omit var_names for all)."
        )
    return [(v, idx) for v in sites for idx in np.ndindex(*data[v].shape[2:])]


def _label(site: str, idx: tuple) -> str:
    return f"{site}[{','.join(map(str, idx))}]" if idx else site


def plot_marginals(
    comparison: Comparison,
    path: str | os.PathLike | None = None,
    *,
    var_names: Sequence[str] | None = None,
    group: str = "posterior",
    max_cols: int = 4,
) -> Figure:
    """Overlaid marginal densities of every parameter element under each method.

    One small panel per scalar element (a vector site ``beta`` of 8 elements gives the panels
    ``beta[0]`` ... ``beta[7]``), ``max_cols`` panels a row, each with the kernel density
    estimate (:func:`arviz.kde`) of the draws of NUTS (black, the exact reference), Laplace and
    FPL; one legend for the figure. A method whose draws do not move along an element shows a
    vertical line at its value.

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
    max_cols : int
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidInput
        If ``var_names`` names a site the program does not have.
    """
    methods = _ordered(comparison)
    elements = _elements(comparison, group, var_names)
    fig, axes = _panels(len(elements), max_cols=max_cols)
    for ax, (site, idx) in zip(axes, elements, strict=True):
        for m in methods:
            values = comparison.idata[m][group][site].values[(..., *idx)].ravel()
            values = values[np.isfinite(values)]
            if values.size and np.ptp(values) > 0:
                grid, density = az.kde(values)
                ax.plot(grid, density, color=COLORS[m], linewidth=1.4 if m == "nuts" else 1.2)
            elif values.size:
                ax.axvline(values[0], color=COLORS[m], linewidth=1.2)
        ax.set_title(_label(site, idx), fontsize=10)
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize=8)
    handles = [Line2D([], [], color=COLORS[m], label=_LABELS[m]) for m in methods]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(methods), frameon=False)
    space = "constrained" if group == "posterior" else "unconstrained"
    fig.suptitle(f"Marginal posteriors ({space}): NUTS (exact) vs approximations", fontsize=11)
    return _save(fig, path)


def plot_pairs(
    comparison: Comparison,
    path: str | os.PathLike | None = None,
    *,
    var_names: Sequence[str] | None = None,
    group: str = "posterior",
    max_points: int = 1000,
) -> Figure:
    """Pairwise scatter of the methods' draws, overlaid, one panel per pair of parameter elements.

    The lower triangle of a grid over the scalar elements of the chosen sites (``beta[0]``,
    ``beta[1]``, ``tau``...): panel ``(i, j)`` shows element ``j`` (x) against element ``i`` (y)
    for NUTS (black, the exact reference) and each approximation, with one legend for the figure.

    Parameters
    ----------
    comparison : Comparison
    path : str or path, optional
        Where to save the PNG.
    var_names : sequence of str, optional
        Latent sites to show (default: all; at least two scalar elements in all).
    group : {"posterior", "unconstrained_posterior"}
    max_points : int
        Draws shown per method (thinned evenly), so dense methods do not hide the others.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InvalidInput
        If ``var_names`` names a site the program does not have, or the sites hold a single
        scalar (no pair to show).
    """
    methods = _ordered(comparison)
    elements = _elements(comparison, group, var_names, owner="plot_pairs")
    if len(elements) < 2:
        raise InvalidInput(
            f"plot_pairs: the sites shown must hold at least two scalar elements. Got {[_label(*e) for e in elements]}. "
            "Fix: pass more sites in var_names (or use plot_marginals for one)."
        )
    n = len(elements) - 1
    fig, axes = plt.subplots(
        n, n, figsize=(2.2 * n + 0.4, 2.0 * n + 0.8), layout="constrained", squeeze=False, sharex="col", sharey="row"
    )
    points = {}
    for m in methods:
        data = comparison.idata[m][group]
        flat = np.stack([data[site].values[(..., *idx)].ravel() for site, idx in elements], axis=1)
        points[m] = flat[:: max(1, len(flat) // max_points)]
    for i in range(1, n + 1):
        for j in range(n):
            ax = axes[i - 1, j]
            if j >= i:
                ax.set_visible(False)
                continue
            for m in methods:
                ax.scatter(points[m][:, j], points[m][:, i], s=4, alpha=0.3, color=COLORS[m], linewidths=0)
            ax.tick_params(labelsize=8)
            if i == n:
                ax.set_xlabel(_label(*elements[j]))
            else:
                ax.tick_params(labelbottom=False)
            if j == 0:
                ax.set_ylabel(_label(*elements[i]))
            else:
                ax.tick_params(labelleft=False)
    handles = [Line2D([], [], color=COLORS[m], marker="o", linestyle="", label=_LABELS[m]) for m in methods]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(methods), frameon=False)
    fig.suptitle("Pairwise posterior draws", fontsize=11)
    return _save(fig, path)


def plot_along_run(
    table: pd.DataFrame,
    path: str | os.PathLike | None = None,
    *,
    metrics: Sequence[str] = ("kl", "w1_max", "coverage90"),
) -> Figure:
    """Distances to NUTS against the bandit round, one line per method (from :func:`along_run`).

    A value that is not finite (an infinite KL: an ensemble without spread along some
    parameter; NaN: no distance defined) cannot sit on the axis: it is drawn as a triangle at the
    top edge of its panel, labelled ``inf`` or ``nan``, and the method's legend entry names the
    rounds where it happens.

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

    Raises
    ------
    InvalidInput
        If ``table`` lacks the ``round``, ``method`` or a metric's column.
    """
    missing = [c for c in ("round", "method", *metrics) if c not in table.columns]
    if missing:
        raise InvalidInput(
            f"plot_along_run: 'table' must have the columns round, method and {list(metrics)}. Got the columns "
            f"{list(table.columns)} (missing {missing}). Fix: pass the table along_run returns, or choose metrics "
            "among its columns."
        )
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False, layout="constrained")
    for ax, metric in zip(axes[0], metrics, strict=True):
        for method, part in table.groupby("method", sort=False):
            values = part.groupby("round")[metric]
            mean = values.agg(lambda v: np.mean(v.to_numpy()))  # not pandas' mean: a NaN run must show
            finite = np.isfinite(mean.to_numpy())
            color = COLORS.get(str(method))
            label = str(method)
            if not finite.all():
                kinds = sorted({"inf" if np.isposinf(v) else "nan" for v in mean[~finite]})
                rounds = ", ".join(str(r) for r in mean.index[~finite])
                label += f" ({'/'.join(kinds)} at round {rounds}: marked at the top)"
            ax.plot(mean.index, mean.where(finite), marker="o", color=color, label=label)  # a gap where not finite
            for r, v in zip(mean.index[~finite], mean[~finite], strict=True):
                ax.plot(
                    [r],
                    [0.97],
                    marker="^",
                    markersize=9,
                    color=color,
                    transform=ax.get_xaxis_transform(),
                    clip_on=False,
                )
                ax.annotate(
                    "inf" if np.isposinf(v) else "nan",
                    (r, 0.97),
                    xycoords=ax.get_xaxis_transform(),
                    xytext=(0, -14),
                    textcoords="offset points",
                    ha="center",
                    color=color,
                    fontsize=8,
                )
            if "run" in part and part["run"].nunique() > 1:
                stats = values.agg(["min", "max"]).loc[mean.index[finite]]
                ax.fill_between(stats.index, stats["min"], stats["max"], color=color, alpha=0.15)
        finite_values = table[metric].to_numpy(dtype=float)
        if metric == "kl" and np.any(np.isfinite(finite_values) & (finite_values > 0)):
            ax.set_yscale("log")
        if metric == "coverage90":
            ax.axhline(0.9, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel("round (observations in the history)")
        ax.set_title(metric)
        ax.legend(fontsize=8)
    fig.suptitle("Approximate posterior vs NUTS along the bandit run")
    return _save(fig, path)
