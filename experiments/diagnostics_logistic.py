"""Laplace and FPL posteriors of a logistic reward model against NUTS, on data and along a GLM-TSL run.

Writes into ``out_dir``: ``marginals.png`` and ``pairs.png`` (one logistic posterior, three
methods), ``along_run.png`` (distances to NUTS against the round), ``summary.md`` (tables and
flags), ``posterior_nuts.nc`` (the NUTS ``InferenceData``) and ``along_run.nc`` (the along-run
table as an ``xarray.Dataset``).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import xarray as xr
from bayesbandit.diagnostics import along_run, compare, plot_along_run, plot_marginals, plot_pairs
from bayesbandit.models import logistic

import bayesbandit as bb

DESCRIPTION = (
    "Laplace / FPL posteriors of a logistic model vs NUTS (KL, W1, coverage), on data and along a GLM-TSL run."
)


def _markdown(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join([df.index.name or "", *cols]) + " |", "|" + "---|" * (len(cols) + 1)]
    for idx, row in df.iterrows():
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join([str(idx), *cells]) + " |")
    return "\n".join(lines)


def run(
    out_dir,
    *,
    quick: bool = False,
    runs: int = 1,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, pathlib.Path]:
    """Run the experiment (see the module docstring).

    Parameters
    ----------
    out_dir : path
    quick : bool
        Small setting (n = 300 observations, 4 NUTS chains x 500 draws, 2 along-run rounds).
    runs : int
        Independent bandit runs for the along-run table (each snapshot needs its own NUTS run,
        so quick mode uses 1 whatever is asked).
    horizon : int, optional
        Last along-run round (default 200 quick, 1000 full).
    seed : int
    progress : bool
        Print a line per stage.
    """
    bb.runtime.enable_x64()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = (
        dict(num_draws=500, num_warmup=500, num_chains=4)
        if quick
        else dict(num_draws=1000, num_warmup=1000, num_chains=4)
    )
    n, d = (300, 3) if quick else (2000, 4)
    horizon = horizon or (200 if quick else 1000)
    runs = 1 if quick else max(1, runs)
    rng = np.random.default_rng(seed)
    theta_true = rng.normal(size=d)
    x = rng.normal(size=(n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ theta_true))).astype(float)

    log = print if progress else (lambda *a, **k: None)
    log(f"compare: logistic, n={n}, d={d}")
    comp = compare(logistic(), x, y, seed=seed, **settings)
    paths = {
        "marginals": out / "marginals.png",
        "pairs": out / "pairs.png",
        "along_run_plot": out / "along_run.png",
        "summary": out / "summary.md",
        "posterior": out / "posterior_nuts.nc",
        "along_run": out / "along_run.nc",
    }
    plot_marginals(comp, paths["marginals"])
    plot_pairs(comp, paths["pairs"])
    comp.idata["nuts"].to_netcdf(str(paths["posterior"]))

    rounds = [max(d + 2, horizon // 10), horizon] if quick else sorted({20, 50, horizon // 4, horizon})
    arms = rng.uniform(-1, 1, size=(20, d))
    tables = []
    for r in range(runs):
        log(f"along_run: run {r + 1}/{runs}, rounds {rounds}")
        df = along_run(bb.GLMTSL(logistic()), arms, theta_true=theta_true, rounds=rounds, seed=seed + r, **settings)
        tables.append(df.assign(run=r))
    table = pd.concat(tables, ignore_index=True)
    plot_along_run(table, paths["along_run_plot"])
    numeric = table.drop(columns=["flags"]).set_index(["run", "round", "method"])
    xr.Dataset.from_dataframe(numeric.astype(float)).to_netcdf(paths["along_run"])

    mean_table = table.groupby(["round", "method"])[["kl", "w1_max", "coverage90"]].mean().reset_index()
    mean_table.index.name = "row"
    flags = "\n".join(f"- {f}" for f in comp.flags) or "- none"
    paths["summary"].write_text(
        f"# {DESCRIPTION}\n\n"
        f"Logistic posterior, n = {n}, d = {d}; NUTS {settings['num_chains']} chains x {settings['num_draws']} "
        f"draws (max R-hat {comp.rhat_max:.3f}, min bulk ESS {comp.ess_bulk_min:.0f}, "
        f"{comp.divergences} divergences). KL is KL(N_nuts || N_method) in unconstrained space.\n\n"
        f"{_markdown(comp.table[['kl', 'w1_max', 'coverage90', 'mean_shift_max', 'sd_ratio_min', 'sd_ratio_max']])}\n\n"
        f"Flags:\n{flags}\n\n"
        f"## Along a GLM-TSL run ({runs} run(s), 20 arms, mean over runs)\n\n{_markdown(mean_table)}\n"
    )
    return paths
