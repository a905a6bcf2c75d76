"""Shared machinery of the best-arm-identification experiments (``bai-*``): grids, resumable runs, report.

An experiment is a list of :class:`Cell` (a panel of a figure, an environment, a budget and the
value on the panel's x axis) and, per cell, the algorithms to run: a grid (:class:`BAIGrid`) whose
parts are a (cell, algorithm) and a block of replications, each run by
:func:`bayesbandit.bai.replicate` and stored on its own (``parts/<cell>/<algorithm>/runs-a-b.nc``).
Replications are paired by the seed and their index alone, so blocks run at different times, in
other processes or on other machines (:mod:`bayesbandit.scale`) combine into paired differences.
A stored part with the same seed, budget, environment and algorithm is not run again.

A run may be restricted to some cells (``cells``, the CLI's ``--cells``), named by their labels
as the summaries print them, ``PANEL, X`` (:attr:`Cell.label`, e.g. ``B/K = 10, 16``); the
summary then lists the cells that ran. Their parts are those of the whole grid, so a run of a few
cells into the folder of a whole-grid run reuses its stored parts, and the other way round.

Outputs: ``results.nc`` (dims cell x algorithm x replication, with accuracies, binomial standard
errors, paired differences against the reference algorithm, pulls and seconds), ``accuracy.png``
(one panel per figure panel: accuracy against the x value, with standard-error bars) and
``summary.md``.
"""

from __future__ import annotations

import functools
import pathlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayesbandit.bai import concat_replications, replicate
from bayesbandit.errors import InvalidInput
from bayesbandit.scale import Grid, Part, PartStore, plan, run_grid
from bayesbandit.validation import check_int

__all__ = ["Cell", "Experiment", "BAIGrid", "select_cells", "write_grid"]


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

    @property
    def label(self) -> str:
        """The cell as summaries name it and ``cells`` selects it: ``PANEL, X`` (e.g. ``B/K = 10, 16``)."""
        return f"{self.panel}, {self.x:g}"


def select_cells(cells: Sequence[Cell], labels: Sequence[str]) -> list[Cell]:
    """The cells whose :attr:`Cell.label` is one of ``labels`` (spaces ignored), in the grid's order.

    Raises :class:`~bayesbandit.errors.InvalidInput` naming the known labels when a label names no
    cell or none is given.
    """

    def key(label: object) -> str:
        return "".join(str(label).split())

    known = {key(cell.label): cell for cell in cells}
    listing = "; ".join(cell.label for cell in cells)
    if isinstance(labels, str) or not labels:
        raise InvalidInput(
            f"The 'cells' parameter of the bai grids must be a non-empty list of cell labels. Got {labels!r}. "
            f"Known cells: {listing}. Fix: pass e.g. cells=[{cells[0].label!r}] "
            f"(on the command line: --cells {cells[0].label!r}, several separated by ';')."
        )
    chosen = {key(label): label for label in labels}
    for normalised, label in chosen.items():
        if normalised not in known:
            raise InvalidInput(
                f"The 'cells' parameter of the bai grids must name cells of the grid by their labels, 'PANEL, X' "
                f"as the summaries print them. Got {label!r}, which names no cell. Known cells: {listing}. "
                f"Fix: pass one of these labels (on the command line: --cells {cells[0].label!r}, several "
                f"separated by ';')."
            )
    return [cell for key, cell in known.items() if key in chosen]


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
        block: int | None = None,
        client: Any = None,
        shard_of: tuple[int, int] | None = None,
        sources: Sequence[str | pathlib.Path] = (),
        compute: bool = True,
        cells: Sequence[str] | None = None,
    ) -> dict[str, pathlib.Path]:
        """Run the grid (200 replications with ``quick``, else 1,000; ``runs`` overrides) and write
        results.nc, accuracy.png and summary.md.

        ``policies`` restricts the algorithms to those with one of these names (the CLI's
        ``--policies``) and ``cells`` the cells to those with one of these labels (:func:`select_cells`;
        the CLI's ``--cells``); ``horizon`` is not used (budgets are part of the grid). The grid's parts
        (:class:`BAIGrid`: a cell, an algorithm and a block of ``block`` replications, default 250)
        are stored in ``out_dir/parts/`` as they finish and reused by a later run with the same
        settings; they run here, on a Dask cluster (``client``) or as shard ``shard_of = (K, N)``,
        and ``sources`` / ``compute`` assemble stored parts (a merge), as in
        :func:`bayesbandit.scale.run_grid`.
        """
        replications = check_int("bai", "runs", runs or (200 if quick else 1000), low=2)
        block = check_int("bai", "block", block or min(250, replications), low=2)
        if replications % block == 1:
            raise InvalidInput(
                f"The 'block' parameter of the bai grids must leave a last block of at least 2 replications (the "
                f"paired standard errors divide by R - 1). Got block={block} for {replications} replications. "
                f"Fix: pass another block, e.g. {block + 1}."
            )
        grid = BAIGrid(
            self,
            quick,
            replications,
            seed,
            block,
            None if policies is None else tuple(policies),
            None if cells is None else tuple(cells),
        )
        grid.cells()  # an unknown cell label is refused before anything runs
        done = run_grid(
            grid,
            store=PartStore(out_dir, sources=sources),
            client=client,
            shard_of=shard_of,
            compute=compute,
            progress=progress,
        )
        blocks: dict[tuple[str | int, ...], list[xr.Dataset]] = {}
        for part, ds in done.items():
            blocks.setdefault(part.point, []).append(ds)
        frames = [
            (cell, [concat_replications(blocks[(cell.slug, name)]) for name in grid.algorithms(cell)])
            for cell in grid.cells().values()
        ]
        return write_grid(
            pathlib.Path(out_dir),
            frames,
            self.title,
            x_label=self.x_label,
            reference=self.reference,
            seed=seed,
            grid_cells=None if cells is None else len(self.cells(quick)),
        )


@dataclass(frozen=True)
class BAIGrid(Grid):
    """An :class:`Experiment` as a :class:`~bayesbandit.scale.Grid`: one part per (cell, algorithm) and block of
    replications, each :func:`~bayesbandit.bai.replicate` of those replications (their keys depend on their
    indices and the seed only, so the blocks join into the evaluation of all of them)."""

    experiment: Experiment
    quick: bool
    replications: int
    seed: int
    block: int
    policies: tuple[str, ...] | None = None
    labels: tuple[str, ...] | None = None  # the cells to run (:func:`select_cells`); None: all

    @functools.cached_property
    def _cells(self) -> dict[str, Cell]:
        cells = self.experiment.cells(self.quick)
        chosen = cells if self.labels is None else select_cells(cells, self.labels)
        return {cell.slug: cell for cell in chosen}

    @functools.cached_property
    def _algorithms(self) -> dict[str, dict[str, Any]]:
        named = {slug: self.experiment.algorithms(cell, self.quick) for slug, cell in self._cells.items()}
        return {
            slug: {k: v for k, v in algs.items() if self.policies is None or k in self.policies}
            for slug, algs in named.items()
        }

    def cells(self) -> dict[str, Cell]:
        """The experiment's cells by slug (those ``labels`` names, when given), built once per grid (a cell
        may load a data set)."""
        return self._cells

    def algorithms(self, cell: Cell) -> dict[str, Any]:
        """The cell's algorithms, restricted to ``policies`` when given, built once per grid."""
        return self._algorithms[cell.slug]

    def parts(self) -> list[Part]:
        """Every (cell, algorithm)'s replications in blocks of ``block``."""
        points = [(slug, name) for slug, cell in self.cells().items() for name in self.algorithms(cell)]
        return plan(points, self.replications, self.block)

    def settings(self, part: Part) -> dict[str, int | str]:
        """The seed, the cell's budget and environment and the algorithm's ``repr`` (its parameters)."""
        cell = self.cells()[str(part.point[0])]
        algorithm = self.algorithms(cell)[str(part.point[1])]
        return {"seed": self.seed, "budget": cell.budget, "env": repr(cell.env), "algorithm": repr(algorithm)}

    def __call__(self, part: Part) -> xr.Dataset:
        """The part's replications of its algorithm on its cell."""
        cell = self.cells()[str(part.point[0])]
        name = str(part.point[1])
        algorithm = self.algorithms(cell)[name]
        return replicate(
            {name: algorithm},
            cell.env,
            cell.budget,
            replications=part.runs,
            seed=self.seed,
            first_replication=part.start,
        )


def write_grid(
    out_dir: pathlib.Path,
    frames: list[tuple[Cell, list[xr.Dataset]]],
    title: str,
    *,
    x_label: str,
    reference: str,
    seed: int,
    grid_cells: int | None = None,
) -> dict[str, pathlib.Path]:
    """Write results.nc, accuracy.png and summary.md of the cells' evaluations (one dataset per algorithm).

    ``grid_cells`` is the number of cells of the whole grid when ``frames`` hold the cells a run
    chose (``cells``): the results record it (attribute ``grid_cells``) and the summary lists the
    cells that ran (coordinate ``label``).
    """
    results = _combine(frames, reference)
    replications = results.sizes["replication"]
    results.attrs.update(title=title, x_label=x_label, reference=reference, replications=replications, seed=seed)
    if grid_cells is not None:
        results.attrs.update(grid_cells=grid_cells)
    paths = {"results": out_dir / "results.nc", "plot": out_dir / "accuracy.png", "summary": out_dir / "summary.md"}
    tmp = paths["results"].with_suffix(".tmp")
    results.to_netcdf(tmp)
    tmp.replace(paths["results"])
    plot_accuracy(results, paths["plot"])
    paths["summary"].write_text(markdown_summary(results))
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
            "label": ("cell", [c.label for c in cells]),
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


def markdown_summary(results: xr.Dataset) -> str:
    """Per panel: accuracy +- se per algorithm, pulls, and paired differences against the reference."""
    names = results.algorithm.values.tolist()
    ref = results.attrs["reference"]
    lines = [f"# {results.attrs['title']}", ""]
    lines.append(
        f"{int(results.attrs['replications'])} paired replications per cell (seed {results.attrs['seed']}); "
        f"accuracy +- binomial standard error. Paired differences are accuracy minus {ref}'s on the same "
        "replications, +- the standard error of the per-replication difference."
    )
    if "grid_cells" in results.attrs:
        chosen = results.label.values.tolist()
        lines += [
            "",
            f"Cells run ({len(chosen)} of the grid's {int(results.attrs['grid_cells'])}, chosen with `cells`): "
            + "; ".join(f"`{label}`" for label in chosen)
            + ".",
        ]
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
        row = [f"{results.label.values[c]} (B={int(results.budget.values[c])})"]
        for name in names:
            p = float(results.max_pulls.sel(algorithm=name).values[c])
            s = float(results.seconds_per_100.sel(algorithm=name).values[c])
            row.append("—" if np.isnan(p) else f"{int(p)} / {s:.2f} s")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
