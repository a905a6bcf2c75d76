"""Takemura and Ito, Table I and Figs. 3-4: the promotion problem on the MovieLens data available.

``M = 10`` promotions (test movies), ``k`` users per promotion, ``N = 100 k`` users drawn each
round, ``T = 20``, reward = the user's rating of the promotion's movie (0 when missing), a user
gets at most one promotion (:class:`bayesbandit.oracles.ExclusiveAssignment`); user features from
a rank-50 SVD of the training ratings plus a bias (``d = 51``;
:mod:`bayesbandit.datasets.promotion`). Each algorithm is tuned over the grid on 10 trials and
reported on 20 fresh ones (:mod:`bayesbandit.experiments.comb_tuning`), with ties broken by index
and at random.

The paper uses MovieLens 20M (138,493 users) and ``k = 50, 100, 150, 200``. Here the pool is
whatever ``BAYESBANDIT_DATA`` holds; when it has fewer than 20,000 users (MovieLens 100K: 943)
``k`` is scaled by ``users / 20,000`` so that the largest round, ``N = 100 k``, still fits the
pool (100K: ``k = 2, 5, 7, 9``, ``N = 200 .. 900``), and the test movies are those rated by the
paper's fraction of users (10 to 19 raters on 100K).
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import xarray as xr
from bayesbandit.experiments.comb_tuning import Cell, best_baseline, paired, run_cells

from bayesbandit.datasets.promotion import PromotionData, promotion_data
from bayesbandit.envs.promotion import PromotionEnv
from bayesbandit.errors import InvalidInput

DESCRIPTION = "The MovieLens promotion problem, Table I (Takemura and Ito), on the MovieLens data available."

PAPER_K = (50, 100, 150, 200)
PAPER_POOL = 20_000  # users needed for N = 100 k at the paper's largest k
TIE_RULES = ("index", "random")
PAPER_TABLE = {  # Table I: cumulative reward over T = 20, best configuration per algorithm, 5 trials
    50: {"Greedy": 1588.6, "CombLinUCB": 2090.5, "CombLinTS": 1749.2, "C2UCB": 2183.0, "PC2UCB": 2304.5,
         "Round-wise TS": 2121.9, "Arm-wise TS": 2304.3},
    100: {"Greedy": 3765.1, "CombLinUCB": 5032.0, "CombLinTS": 3850.3, "C2UCB": 4879.5, "PC2UCB": 5359.8,
          "Round-wise TS": 4744.4, "Arm-wise TS": 5298.0},
    150: {"Greedy": 5471.6, "CombLinUCB": 7653.0, "CombLinTS": 6212.0, "C2UCB": 7276.0, "PC2UCB": 8210.6,
          "Round-wise TS": 7243.8, "Arm-wise TS": 7945.0},
    200: {"Greedy": 7939.6, "CombLinUCB": 10092.5, "CombLinTS": 8918.4, "C2UCB": 9708.5, "PC2UCB": 11147.2,
          "Round-wise TS": 9724.1, "Arm-wise TS": 10928.2},
}  # fmt: skip


def k_values(num_users: int) -> tuple[int, ...]:
    """The paper's ``k``, scaled by ``num_users / 20,000`` when the pool is smaller (at least 1)."""
    if num_users >= PAPER_POOL:
        return PAPER_K
    return tuple(max(1, round(k * num_users / PAPER_POOL)) for k in PAPER_K)


def _load(path: Any = None) -> PromotionData:
    try:
        return promotion_data(path)
    except (InvalidInput, FileNotFoundError) as exc:
        raise InvalidInput(
            f"comb-movielens needs MovieLens: set BAYESBANDIT_DATA to a folder holding ml-100k/u.data or "
            f"ml-20m/ratings.csv (MovieLens cannot be redistributed, so it is not bundled). {exc}"
        ) from exc


def report(out_dir: Any) -> dict[str, pathlib.Path]:
    """The summary and plot from the cells stored in ``out_dir/cells`` (whatever has finished)."""
    out = pathlib.Path(out_dir)
    cells = {}
    for path in sorted((out / "cells").glob("k*_*.nc")):
        k, rule = path.stem[1:].split("_", 1)
        cells[(int(k), rule)] = xr.load_dataset(path)
    data = _load()
    summary = out / "summary.md"
    summary.write_text(_markdown(cells, data))
    return {"summary": summary, "plot": _plot(cells, data, out / "table1_fig3_fig4.png")}


def run(
    out_dir: Any,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, pathlib.Path]:
    """Every (k, tie rule) cell not stored yet in ``out_dir``, then Table I, the plot and the summary."""
    out = pathlib.Path(out_dir)
    data = _load()
    horizon = horizon or 20
    report_runs = runs or (3 if quick else 20)
    tuning_runs = max(2, report_runs // 2)
    ks = k_values(data.num_users)[:1] if quick else k_values(data.num_users)  # quick: the smallest k, both tie rules

    def make(k: int, rule: str) -> tuple[Any, Any, int]:
        env = PromotionEnv.from_data(data, k=k, tie_break=rule, horizon=horizon)
        return env, env.oracle, env.blocks

    plan = [
        Cell(
            (k, rule),
            f"k{k}_{rule}.nc",
            lambda k=k, r=rule: make(k, r),
            {"k": k, "paper_k": paper_k, "users_per_round": min(100 * k, data.num_users)},
        )
        for rule in TIE_RULES  # every k with index ties (the paper's rule) first, then with random ties
        for paper_k, k in zip(PAPER_K, ks, strict=False)
    ]
    cells = run_cells(out / "cells", plan, horizon, tuning_runs, report_runs, seed, progress, "comb-movielens")
    summary = out / "summary.md"
    summary.write_text(_markdown(cells, data))
    return {"summary": summary, "plot": _plot(cells, data, out / "table1_fig3_fig4.png")}


def _markdown(cells: dict[tuple[int, str], xr.Dataset], data: PromotionData) -> str:
    any_ds = next(iter(cells.values()))
    names = [str(a) for a in any_ds.algorithm.values]
    lines = [
        "# The promotion problem (Takemura and Ito, Table I)",
        "",
        f"{data.describe()}",
        "",
        f"M = 10 promotions, T = {any_ds.sizes['round']}, exclusive assignment; each algorithm tuned on "
        f"{any_ds.attrs['tuning_runs']} trials, reported on {any_ds.attrs['report_runs']} fresh ones: mean "
        "cumulative reward ± standard error (in brackets: the paper's protocol, the grid maximum of the mean "
        "on the reported trials).",
        "",
    ]
    for rule in TIE_RULES:
        if not any(r == rule for _, r in cells):
            lines += [f"## Ties broken by {rule}", "", "Not run yet.", ""]
            continue
        lines += [f"## Ties broken by {rule}", ""]
        lines += ["| k (paper's k) | N | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
        for (k, r), ds in cells.items():
            if r != rule:
                continue
            totals = ds.reward.sum("round")
            mean, se = totals.mean("run"), totals.std("run", ddof=1) / np.sqrt(ds.sizes["run"])
            row = [
                f"{float(mean.sel(algorithm=a)):.0f} ± {float(se.sel(algorithm=a)):.0f} "
                f"({float(ds.paper_protocol.sel(algorithm=a)):.0f})"
                for a in names
            ]
            lines.append(f"| {k} ({ds.attrs['paper_k']}) | {ds.attrs['users_per_round']} | " + " | ".join(row) + " |")
        lines += [
            "",
            "Gains on the fresh trials, paired by trial (mean ± se, and as % of the second), beside the paper's:",
            "",
            "| k | best proposed − best baseline | paper | PC2UCB − C2UCB | paper | Arm-wise TS − Round-wise TS | paper |",
            "|---|---|---|---|---|---|---|",
        ]
        for (k, r), ds in cells.items():
            if r != rule:
                continue
            totals = ds.reward.sum("round").mean("run")
            paper = PAPER_TABLE[ds.attrs["paper_k"]]
            proposed = max(("PC2UCB", "Arm-wise TS"), key=lambda a: float(totals.sel(algorithm=a)))
            baseline = best_baseline(ds)
            paper_baseline = max((a for a in paper if a not in ("PC2UCB", "Arm-wise TS")), key=lambda a: paper[a])
            cols = []
            for (first, second), (p_first, p_second) in (
                ((proposed, baseline), ("PC2UCB", paper_baseline)),
                (("PC2UCB", "C2UCB"), ("PC2UCB", "C2UCB")),
                (("Arm-wise TS", "Round-wise TS"), ("Arm-wise TS", "Round-wise TS")),
            ):
                m, s = paired(ds, first, second)
                pct = 100 * m / float(totals.sel(algorithm=second))
                label = f" ({first} − {second})" if first == proposed and second == baseline else ""
                cols += [
                    f"{m:+.0f} ± {s:.0f} ({pct:+.1f}%){label}",
                    f"{100 * (paper[p_first] / paper[p_second] - 1):+.1f}%",
                ]
            lines.append(f"| {k} | " + " | ".join(cols) + " |")
        lines += ["", "Chosen configurations:", ""]
        for (k, r), ds in cells.items():
            if r == rule:
                chosen = "; ".join(f"{a}: {c}" for a, c in zip(ds.algorithm.values, ds.chosen.values, strict=True))
                lines.append(f"- k = {k}: {chosen}")
        lines.append("")
    return "\n".join(lines)


def _plot(cells: dict[tuple[int, str], xr.Dataset], data: PromotionData, path: pathlib.Path) -> pathlib.Path:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for rule, style in zip(TIE_RULES, ("-", "--"), strict=True):
        ks = sorted(k for k, r in cells if r == rule)
        if not ks:
            continue
        for i, name in enumerate(cells[(ks[0], rule)].algorithm.values):
            per_pick = [
                float(cells[(k, rule)].reward.sel(algorithm=name).sum("round").mean())
                / (10 * k * cells[(k, rule)].sizes["round"])
                for k in ks
            ]
            axes[0].plot(ks, per_pick, style, marker="o", color=f"C{i}", label=str(name) if rule == "index" else None)
    axes[0].set_xlabel("k (users per promotion)")
    axes[0].set_ylabel("reward per pick, fresh trials")
    axes[0].set_title("Table I (solid: index ties, dashed: random)")
    axes[0].legend(fontsize=7)
    features = data.features[:, :-1]  # without the bias element
    norms = np.linalg.norm(features, axis=1)
    unit = features[norms > 0] / norms[norms > 0, None]
    cosine = (unit @ unit.T)[np.triu_indices(unit.shape[0], 1)]
    axes[1].hist(cosine, bins=60, color="0.4")
    axes[1].set_xlabel("cosine similarity of two users (bias excluded)")
    axes[1].set_title(f"Fig. 3: {unit.shape[0]} users, all pairs")
    k_max = max(k for k, r in cells if r == "index")
    ds = cells[(k_max, "index")]
    t = np.arange(1, ds.sizes["round"] + 1)
    for i, name in enumerate(ds.algorithm.values):
        running = ds.reward.sel(algorithm=name).cumsum("round").mean("run").values / t
        axes[2].plot(t, running, color=f"C{i}", label=str(name))
    axes[2].set_xlabel("round t")
    axes[2].set_ylabel("average reward per round")
    axes[2].set_title(f"Fig. 4: k = {k_max}, index ties")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path
