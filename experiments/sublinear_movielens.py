"""Yang et al., sec. 7, Table 3: movie recommendation on MovieLens with Sub-Elim and Sub-TS.

Reads MovieLens from ``$BAYESBANDIT_DATA/ml-100k``, else ``../shared/data/ml-100k``; nothing is
bundled. The paper used MovieLens 1M (300 test users,
3,952 movies, 20,000 rounds); with MovieLens 100K the catalogue holds 1,443 factorised movies, so
it starts with half of them and is complete after about 7,200 rounds (see
:mod:`bayesbandit.envs.movielens`). Each test user is one run; every policy sees the same users,
movies and arrival order.
"""

from __future__ import annotations

import math
import os
import pathlib
from typing import Any

import xarray as xr
from bayesbandit.experiments.sublinear_report import (
    describe_runs,
    elimination_table,
    markdown_table,
    plot_regret_and_time,
    table_rows,
)

from bayesbandit.datasets import movielens_bandit_data
from bayesbandit.envs.movielens import MovieLensCatalogue
from bayesbandit.errors import InvalidInput
from bayesbandit.policies.sublinear import SubElim, SubTS
from bayesbandit.sim.catalogue import simulate_catalogue

DESCRIPTION = "Sub-Elim and Sub-TS recommending movies on MovieLens (Yang et al., Table 3); needs the data."

TS_BETA, ELIM_BETA = 0.5, 0.3


def data_path() -> pathlib.Path:
    """``$BAYESBANDIT_DATA/ml-100k`` or ``../shared/data/ml-100k``, whichever exists."""
    candidates = [pathlib.Path("../shared/data/ml-100k")]
    if os.environ.get("BAYESBANDIT_DATA"):
        candidates.insert(0, pathlib.Path(os.environ["BAYESBANDIT_DATA"]) / "ml-100k")
    for path in candidates:
        if path.is_dir():
            return path
    raise InvalidInput(
        "sublinear-movielens needs MovieLens: set BAYESBANDIT_DATA to a folder holding ml-100k/u.data "
        "(MovieLens cannot be redistributed, so it is not bundled)."
    )


def policies(horizon: int) -> dict[str, Any]:
    eta = 1.0 / math.sqrt(horizon)
    return {
        "Linear Elim": SubElim(beta=ELIM_BETA, eta=eta, index="exact"),
        "Sub-Elim, p = 30": SubElim(beta=ELIM_BETA, eta=eta, shortlist=30),
        "Sub-Elim, p = 100": SubElim(beta=ELIM_BETA, eta=eta, shortlist=100),
        "Linear TS": SubTS(beta=TS_BETA, index="exact"),
        "Sub-TS, p = 30": SubTS(beta=TS_BETA, shortlist=30),
        "Sub-TS, p = 100": SubTS(beta=TS_BETA, shortlist=100),
    }


def run(
    out_dir: Any,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, pathlib.Path]:
    """One run per test user (``runs``: the first users; default all, 10 with ``quick``)."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    horizon = horizon or (2_000 if quick else 20_000)
    data = movielens_bandit_data(data_path(), seed=seed)
    runs = runs or (10 if quick else data.test_users.size)
    env = MovieLensCatalogue(data=data, horizon=horizon)
    path = out / "results.nc"
    ds = simulate_catalogue(policies(horizon), env, horizon=horizon, runs=runs, seed=seed, progress=progress)
    ds.attrs["data"] = data.source
    ds.to_netcdf(path)
    ds = xr.load_dataset(path)
    summary = out / "summary.md"
    summary.write_text(
        "\n".join(
            [
                "# Movie recommendation on MovieLens (Yang et al., Table 3)",
                "",
                f"{describe_runs(ds)}: one run per test user ({data.test_users.size} users with more than 100 "
                f"ratings, {data.item_ids.size} movies with features, from {data.source}). Regret: rounds whose "
                "recommended movie the user rated below 4 or did not rate.",
                "",
                markdown_table(rows := table_rows(ds)),
                "",
                elimination_table(rows),
                "",
            ]
        )
    )
    return {
        "summary": summary,
        "results": path,
        "plot": plot_regret_and_time({"MovieLens": ds}, out / "regret_and_time.png"),
    }
