"""Yang et al., sec. 7 and App. C, Tables 1, 2, 4 and 5: Sub-Elim and Sub-TS on the synthetic catalogue.

d = 16, arms and theta* normalised N(0, I) draws, unit Gaussian noise, T = 20,000 rounds:

* Table 1: K = 5,000 and 100,000 final arms (2 arrive every 20 rounds), shortlist p = 30;
* Table 2: K = 100,000, p = 10 and 100;
* Table 4: K = 10,000 arms, 2 arrive and 2 leave every 20 rounds (Sub-TS only: Sub-Elim cannot
  remove arms);
* Table 5: 10,000 initial arms, C_change = 2, 10, 50 arrivals every 20 rounds, p = 30.

Each Sub-X runs beside its exact twin (Linear X: the same class over an exact scan) on the same
catalogues, noise and exploration draws. The exploration scales are not the theoretical radii
(about 12-13 here, which explore for the whole horizon) but ``beta = 0.5`` (TS) and ``0.3`` (Elim),
``eta = 1 / sqrt(T)``; the paper does not report its own.

A study of the Elim exploration scale, written to ``elim_beta.md`` (table keys ``elim_beta_small``
and ``elim_beta_large``, :data:`ELIM_BETA_STUDY`): Linear Elim and Sub-Elim (p = 30) on Table 1's
two catalogues at each ``beta`` of :data:`STUDY_BETAS`, all on the same runs. ``summary.md`` holds the
paper's tables.
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import xarray as xr
from bayesbandit.experiments.sublinear_report import (
    describe_runs,
    elimination_table,
    markdown_table,
    plot_regret_and_time,
    table_rows,
)

from bayesbandit.envs.catalogue import SyntheticCatalogue
from bayesbandit.policies.sublinear import SubElim, SubTS, confidence_radius
from bayesbandit.scale import load_stored, store
from bayesbandit.sim.catalogue import simulate_catalogue
from bayesbandit.validation import check_names

DESCRIPTION = "Sub-Elim and Sub-TS vs their exact twins on the synthetic catalogue (Yang et al., Tables 1, 2, 4, 5)."

TS_BETA, ELIM_BETA = 0.5, 0.3

STUDY_BETAS = (0.3, 2.0)
"""The Elim exploration scales of the study: the tables' 0.3, and 2."""

ELIM_BETA_STUDY = ("elim_beta_small", "elim_beta_large")
"""The study's table keys (``run(..., sections=ELIM_BETA_STUDY)``, ``--sections elim_beta_small,elim_beta_large``, runs it alone)."""


@dataclass(frozen=True)
class Table:
    """One of the paper's settings: a catalogue and the policies compared on it."""

    key: str
    title: str
    env: SyntheticCatalogue
    policies: Callable[[int], dict[str, Any]]  # horizon -> name -> policy
    report: str = "summary"  # the markdown file it is written to: summary.md or elim_beta.md


def _policies(shortlists: tuple[int, ...], *, elim: bool = True, ts: bool = True) -> Callable[[int], dict[str, Any]]:
    def make(horizon: int) -> dict[str, Any]:
        eta = 1.0 / math.sqrt(horizon)
        out: dict[str, Any] = {}
        if elim:
            out["Linear Elim"] = SubElim(beta=ELIM_BETA, eta=eta, index="exact")
            out |= {f"Sub-Elim, p = {p}": SubElim(beta=ELIM_BETA, eta=eta, shortlist=p) for p in shortlists}
        if ts:
            out["Linear TS"] = SubTS(beta=TS_BETA, index="exact")
            out |= {f"Sub-TS, p = {p}": SubTS(beta=TS_BETA, shortlist=p) for p in shortlists}
        return out

    return make


def _elim_betas(horizon: int) -> dict[str, Any]:
    """Linear Elim and Sub-Elim (p = 30) at each of :data:`STUDY_BETAS`."""
    eta = 1.0 / math.sqrt(horizon)
    out: dict[str, Any] = {}
    for beta in STUDY_BETAS:
        out[f"Linear Elim, beta = {beta:g}"] = SubElim(beta=beta, eta=eta, index="exact")
        out[f"Sub-Elim, p = 30, beta = {beta:g}"] = SubElim(beta=beta, eta=eta, shortlist=30)
    return out


def _growing(final: int, horizon: int, add_count: int = 2) -> SyntheticCatalogue:
    batches = len(range(20, horizon, 20))
    return SyntheticCatalogue(initial_arms=final - add_count * batches, horizon=horizon, add_count=add_count)


def tables(quick: bool, horizon: int) -> list[Table]:
    """The paper's settings (``quick``: 20x fewer arms, 10x fewer rounds)."""
    scale = 20 if quick else 1
    small, large, mid = 5_000 // scale, 100_000 // scale, 10_000 // scale
    return [
        Table("table1_small", f"Table 1: K = {small:,}", _growing(small, horizon), _policies((30,))),
        Table("table1_large", f"Table 1: K = {large:,}", _growing(large, horizon), _policies((30,))),
        Table("table2", f"Table 2: K = {large:,}, p = 10, 100", _growing(large, horizon), _policies((10, 100))),
        Table(
            "table4",
            f"Table 4: K = {mid:,}, 2 in and 2 out every 20 rounds",
            SyntheticCatalogue(initial_arms=mid, horizon=horizon, add_count=2, remove_count=2),
            _policies((10, 30, 100), elim=False),
        ),
        *(
            Table(
                f"table5_c{c}",
                f"Table 5: {mid:,} initial arms, C_change = {c}",
                SyntheticCatalogue(initial_arms=mid, horizon=horizon, add_count=c),
                _policies((30,)),
            )
            for c in (2, 10, 50)
        ),
        *(
            Table(key, f"K = {k:,}", _growing(k, horizon), _elim_betas, report="elim_beta")
            for key, k in zip(ELIM_BETA_STUDY, (small, large), strict=True)
        ),
    ]


def run(
    out_dir: Any,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
    sections: Sequence[str] | None = None,
) -> dict[str, pathlib.Path]:
    """Run every table not stored in ``out_dir`` with these settings (``sections``: these table keys), then
    write the report of the stored ones: ``summary.md`` (the paper's tables, and a plot) and
    ``elim_beta.md`` (the Elim beta study, when stored)."""
    out = pathlib.Path(out_dir)
    horizon = horizon or (2_000 if quick else 20_000)
    runs = runs or (2 if quick else 10)
    settings = {"horizon": horizon, "runs": runs, "seed": seed}
    all_tables = tables(quick, horizon)
    keys = [table.key for table in all_tables]
    chosen = keys if sections is None else check_names("sublinear_synthetic.run", "sections", sections, keys)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, xr.Dataset]] = {"summary": {}, "elim_beta": {}}
    for table in all_tables:
        path = out / "tables" / f"{table.key}.nc"
        ds = load_stored(path, settings)
        if ds is None and table.key in chosen:
            ds = simulate_catalogue(
                table.policies(horizon), table.env, horizon=horizon, runs=runs, seed=seed, progress=progress
            )
            ds.attrs["title"], ds.attrs["d"] = table.title, table.env.d
            store(ds, path, settings)
        if ds is not None:
            results[table.report][table.title] = ds
    return _report(out, results["summary"], results["elim_beta"])


_LEGEND = (
    "Regret: cumulative expected regret against the best live arm, mean ± sd over runs. Times: mean seconds "
    "per run. Speed-ups against the exact twin's total time: the paper's (twin total / method excl. "
    "preprocessing) and, in brackets, the fair one (twin total / method total). Under each table with "
    "elimination policies: what elimination kept at the horizon and how the stages were searched, per run "
    "(`bayesbandit.experiments.sublinear_report.elimination_table`)."
)


def _sections(results: dict[str, xr.Dataset]) -> list[str]:
    lines: list[str] = []
    for title, ds in results.items():
        rows = table_rows(ds)
        lines += [f"## {title}", "", describe_runs(ds), "", markdown_table(rows), ""]
        kept = elimination_table(rows)
        lines += [kept, ""] if kept else []
    return lines


def _report(out: pathlib.Path, results: dict[str, xr.Dataset], study: dict[str, xr.Dataset]) -> dict[str, pathlib.Path]:
    lines = ["# Sub-Elim and Sub-TS on the synthetic catalogue (Yang et al., Tables 1, 2, 4, 5)", "", _LEGEND, ""]
    summary = out / "summary.md"
    summary.write_text("\n".join(lines + _sections(results)))
    paths = {"summary": summary}
    if results:
        paths["plot"] = plot_regret_and_time(results, out / "regret_and_time.png")
    if study:
        first = next(iter(study.values()))
        d, horizon = int(first.attrs["d"]), first.sizes["round"]
        radius = confidence_radius(d, horizon, 0.05)
        lines = [
            "# Linear Elim and Sub-Elim at beta = " + " and ".join(f"{b:g}" for b in STUDY_BETAS),
            "",
            f"Table 1's catalogues (d = {d}, unit-norm N(0, I) arms and theta*, unit Gaussian noise, K final arms of "
            "which 2 arrive every 20 rounds), shortlist p = 30, eta = 1/sqrt(T); every policy of a table plays the "
            "same runs (catalogue, noise and draws). The paper reports neither beta nor eta; Algorithm 3's radius "
            f"beta(delta/2) = 1 + sqrt(2 log(2/delta) + d log(1 + T/d)) is {radius:.2f} at delta = 0.1 and "
            f"T = {horizon:,}. beta = {ELIM_BETA:g} is the setting of summary.md's tables.",
            "",
            _LEGEND,
            "",
        ]
        paths["elim_beta"] = out / "elim_beta.md"
        paths["elim_beta"].write_text("\n".join(lines + _sections(study)))
    return paths
