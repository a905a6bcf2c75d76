"""Shared machinery of the best-arm-identification experiments (``bai-*``): grids, resumable runs, report.

An experiment is a list of :class:`Cell` (a panel of a figure, an environment, a budget and the
value on the panel's x axis) and, per cell, the algorithms to run. Each (cell, algorithm) is run
by :func:`bayesbandit.bai.evaluate` and stored on its own (``cells/<cell>/<algorithm>.nc``):
replications are paired by the seed alone, so runs made at different times, or added later,
combine into paired differences. A finished (cell, algorithm) with the same replications and seed
is not run again.

Outputs: ``results.nc`` (dims cell x algorithm x replication, with accuracies, binomial standard
errors, paired differences against the reference algorithm, pulls and seconds), ``accuracy.png``
(one panel per figure panel: accuracy against the x value, with standard-error bars) and
``summary.md``.
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr
from bayesbandit.experiments._stored import load_stored, store

from bayesbandit.bai import evaluate

__all__ = ["Cell", "Experiment", "run_grid"]


@dataclass(frozen=True)
class Cell:
    """One point of a figure."""

    panel: str  # e.g. "B/K = 10"
    x: float  # value on the x axis (K, gap, d, ...)
    env: Any
    budget: int

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", f"{self.panel}_x{self.x:g}").strip("_")


@dataclass(frozen=True)
class Experiment:
    """A ``bai-*`` experiment: its cells and, per cell, its algorithms (both depend on ``quick``)."""

    title: str
    x_label: str
    reference: str
    cells: Callable[[bool], list[Cell]]
    algorithms: Callable[[Cell, bool], dict[str, Any]]

    def run(
        self,
        out_dir: Any,
        *,
        quick: bool = False,
        runs: int | None = None,
        horizon: int | None = None,
        seed: int = 0,
        progress: bool = False,
        policies: Sequence[str] | None = None,
        stored_only: bool = False,
    ) -> dict[str, pathlib.Path]:
        """Run the grid (200 replications with ``quick``, else 1,000; ``runs`` overrides); ``policies``
        restricts the algorithms to those with one of these names (the CLI's ``--policies``);
        ``stored_only`` reports what is stored without running anything (``horizon`` is not used:
        budgets are part of the grid)."""

        def algorithms(cell: Cell) -> dict[str, Any]:
            return {k: v for k, v in self.algorithms(cell, quick).items() if policies is None or k in policies}

        return run_grid(
            pathlib.Path(out_dir),
            self.title,
            self.cells(quick),
            algorithms,
            x_label=self.x_label,
            reference=self.reference,
            replications=runs or (200 if quick else 1000),
            seed=seed,
            progress=progress,
            stored_only=stored_only,
        )


def _run_cell(
    cell: Cell,
    name: str,
    algorithm: Any,
    path: pathlib.Path,
    replications: int,
    seed: int,
    progress: bool,
    stored_only: bool,
) -> xr.Dataset | None:
    settings = {"replications": replications, "seed": seed}
    stored = load_stored(path, settings)
    if stored is not None or stored_only:
        return stored
    ds = evaluate({name: algorithm}, cell.env, cell.budget, replications, seed, progress=progress)
    store(ds, path, settings)
    return ds


def run_grid(
    out_dir: pathlib.Path,
    title: str,
    cells: Sequence[Cell],
    algorithms: Callable[[Cell], dict[str, Any]],
    *,
    x_label: str,
    reference: str,
    replications: int,
    seed: int,
    progress: bool,
    notes: str = "",
    stored_only: bool = False,
) -> dict[str, pathlib.Path]:
    """Run every (cell, algorithm) not already stored (none with ``stored_only``), then write
    results.nc, accuracy.png and summary.md (a (cell, algorithm) not run shows as a dash)."""
    out_dir = pathlib.Path(out_dir)
    frames = []
    for i, cell in enumerate(cells):
        algs = algorithms(cell)
        if progress:
            print(f"[{i + 1}/{len(cells)}] {cell.panel}, {x_label} = {cell.x:g}: {', '.join(algs)}", flush=True)
        parts = [
            _run_cell(
                cell, name, alg, out_dir / "cells" / cell.slug / f"{name}.nc", replications, seed, progress, stored_only
            )
            for name, alg in algs.items()
        ]
        frames.append((cell, [p for p in parts if p is not None]))
    results = _combine(frames, reference)
    results.attrs.update(title=title, x_label=x_label, reference=reference, replications=replications, seed=seed)
    paths = {"results": out_dir / "results.nc", "plot": out_dir / "accuracy.png", "summary": out_dir / "summary.md"}
    tmp = paths["results"].with_suffix(".tmp")
    results.to_netcdf(tmp)
    tmp.replace(paths["results"])
    plot_accuracy(results, paths["plot"])
    paths["summary"].write_text(markdown_summary(results, notes))
    return paths


def _combine(frames: list[tuple[Cell, list[xr.Dataset]]], reference: str) -> xr.Dataset:
    names = list(dict.fromkeys(n for _, parts in frames for p in parts for n in p.algorithm.values.tolist()))
    replications = next(p.sizes["replication"] for _, parts in frames for p in parts)
    shape = (len(frames), len(names), replications)
    correct = np.full(shape, np.nan)
    pulls = np.full(shape, np.nan)
    seconds = np.full(shape[:2], np.nan)
    compile_seconds = np.full(shape[:2], np.nan)
    for c, (_, parts) in enumerate(frames):
        for part in parts:
            a = names.index(str(part.algorithm.values[0]))
            correct[c, a] = part.correct.values[0]
            pulls[c, a] = part.pulls.values[0]
            seconds[c, a] = float(part.seconds.values[0])
            compile_seconds[c, a] = float(part.compile_seconds.values[0])
    accuracy = correct.mean(axis=2)
    ref = names.index(reference) if reference in names else 0
    diff = correct - correct[:, ref : ref + 1, :]
    cells = [cell for cell, _ in frames]
    return xr.Dataset(
        {
            "correct": (("cell", "algorithm", "replication"), correct),
            "pulls": (("cell", "algorithm", "replication"), pulls),
            "accuracy": (("cell", "algorithm"), accuracy),
            "accuracy_se": (("cell", "algorithm"), np.sqrt(accuracy * (1 - accuracy) / replications)),
            "difference": (("cell", "algorithm"), diff.mean(axis=2)),
            "difference_se": (("cell", "algorithm"), diff.std(axis=2, ddof=1) / np.sqrt(replications)),
            "mean_pulls": (("cell", "algorithm"), pulls.mean(axis=2)),
            "max_pulls": (("cell", "algorithm"), pulls.max(axis=2)),
            "seconds_per_100": (("cell", "algorithm"), seconds / replications * 100),
            "compile_seconds": (("cell", "algorithm"), compile_seconds),
        },
        coords={
            "cell": np.arange(len(cells)),
            "algorithm": names,
            "replication": np.arange(replications),
            "panel": ("cell", [c.panel for c in cells]),
            "x": ("cell", [c.x for c in cells]),
            "budget": ("cell", [c.budget for c in cells]),
            "env": ("cell", [repr(c.env) for c in cells]),
        },
        attrs={"difference": f"accuracy minus that of {names[ref]} on the same replications"},
    )


def plot_accuracy(results: xr.Dataset, path: pathlib.Path) -> None:
    """One panel per figure panel: accuracy against x, one line per algorithm, standard-error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(results.panel.values.tolist()))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False, sharey=True)
    for ax, panel in zip(axes[0], panels):
        sub = results.where(results.panel == panel, drop=True)
        xs = sub.x.values
        for i, name in enumerate(results.algorithm.values):
            acc = sub.accuracy.sel(algorithm=name).values
            if np.all(np.isnan(acc)):
                continue
            yerr = sub.accuracy_se.sel(algorithm=name).values
            style = {"color": plt.get_cmap("tab20")(i % 20), "marker": "o", "ms": 3, "capsize": 2}
            ax.errorbar(xs, acc, yerr=yerr, label=name, **style)
        if len(xs) > 2 and np.all(xs > 0) and xs.max() / xs.min() > 8:
            ax.set_xscale("log", base=2)
        ax.set_title(panel)
        ax.set_xlabel(results.attrs["x_label"])
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"accuracy ({int(results.attrs['replications'])} paired replications)")
    labels: dict[str, Any] = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            labels.setdefault(label, handle)
    fig.legend(list(labels.values()), list(labels), fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(results.attrs["title"], fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)


def markdown_summary(results: xr.Dataset, notes: str = "") -> str:
    """Per panel: accuracy +- se per algorithm, pulls, and paired differences against the reference."""
    names = results.algorithm.values.tolist()
    ref = results.attrs["reference"]
    lines = [f"# {results.attrs['title']}", "", notes, ""] if notes else [f"# {results.attrs['title']}", ""]
    lines.append(
        f"{int(results.attrs['replications'])} paired replications per cell (seed {results.attrs['seed']}); "
        f"accuracy +- binomial standard error. Paired differences are accuracy minus {ref}'s on the same "
        "replications, +- the standard error of the per-replication difference."
    )
    for panel in dict.fromkeys(results.panel.values.tolist()):
        sub = results.where(results.panel == panel, drop=True)
        lines += ["", f"## {panel}", "", "| " + " | ".join([results.attrs["x_label"], *names]) + " |"]
        lines.append("|" + "---|" * (len(names) + 1))
        for c in range(sub.sizes["cell"]):
            row = [f"{float(sub.x.values[c]):g}"]
            for name in names:
                acc = float(sub.accuracy.sel(algorithm=name).values[c])
                se = float(sub.accuracy_se.sel(algorithm=name).values[c])
                row.append("—" if np.isnan(acc) else f"{acc:.3f} ± {se:.3f}")
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", f"Paired difference vs {ref}:", "", "| " + " | ".join([results.attrs["x_label"], *names]) + " |"]
        lines.append("|" + "---|" * (len(names) + 1))
        for c in range(sub.sizes["cell"]):
            row = [f"{float(sub.x.values[c]):g}"]
            for name in names:
                d = float(sub.difference.sel(algorithm=name).values[c])
                se = float(sub.difference_se.sel(algorithm=name).values[c])
                row.append("—" if np.isnan(d) or name == ref else f"{d:+.3f} ± {se:.3f}")
            lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "Pulls spent (max over replications) and seconds per 100 replications (vmapped, compile excluded):",
        "",
    ]
    lines.append("| cell | " + " | ".join(names) + " |")
    lines.append("|" + "---|" * (len(names) + 1))
    for c in range(results.sizes["cell"]):
        row = [f"{results.panel.values[c]}, {float(results.x.values[c]):g} (B={int(results.budget.values[c])})"]
        for name in names:
            p = float(results.max_pulls.sel(algorithm=name).values[c])
            s = float(results.seconds_per_100.sel(algorithm=name).values[c])
            row.append("—" if np.isnan(p) else f"{int(p)} / {s:.2f} s")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
