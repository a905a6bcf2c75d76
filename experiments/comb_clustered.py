"""Takemura and Ito, Fig. 2: cumulative reward on the clustered data, every angle, both tie rules.

``d = 11`` (10 clusters of 200 identical arms, contiguous), ``N = 2000``, ``k = 100``, ``T = 10``,
``+-1`` rewards (:class:`bayesbandit.envs.ClusteredSemiBandit`). The angle ``phi`` sets how
similar clusters are (inner product ``cos^2 phi``); the paper plots several angles without listing
them: here ``pi/16, pi/8, pi/4, 3pi/8, 7pi/16, pi/2``. Each algorithm is tuned over the grid on 20
trials and reported on 40 fresh ones (:mod:`bayesbandit.experiments.comb_tuning`). Three protocols:

* the paper's: one ``theta*`` for every trial, ties broken by the lowest index, repeated for
  ``THETA_DRAWS`` draws of ``theta*`` (seeds ``0 .. 9``, each tuned on its own), since which
  ``theta*`` is drawn decides the sign of some differences;
* the same for ``theta*`` of seed 0 with ties broken at random (spec sec. 6.1: random ties are
  themselves an arm-wise randomisation);
* index ties with ``theta*`` redrawn per trial.
"""

from __future__ import annotations

import math
import pathlib
from typing import Any

import jax
import numpy as np
import xarray as xr
from bayesbandit.experiments.comb_tuning import ALGORITHMS, Cell, best_baseline, paired, run_cells

from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.oracles import TopK

DESCRIPTION = "Combinatorial semi-bandits on clustered arms, all angles and both tie rules (Takemura and Ito, Fig. 2)."

ANGLES = (math.pi / 16, math.pi / 8, math.pi / 4, 3 * math.pi / 8, 7 * math.pi / 16, math.pi / 2)
TIE_RULES = ("index", "random")
REDRAWN = "index, theta* per trial"
SECTIONS = (*TIE_RULES, REDRAWN)
THETA_DRAWS = 10  # the paper's protocol (one theta*, index ties) for theta* of seeds 0 .. 9
DRAWN = "index, theta* of seed"  # the section of seeds 1 .. THETA_DRAWS - 1 (seed 0 is "index")
PAIRS = (("PC2UCB", "C2UCB"), ("Arm-wise TS", "Round-wise TS"))  # the differences reported over draws
DRAWN_ALGORITHMS = tuple(a for a in ALGORITHMS if any(a.name in pair for pair in PAIRS))


def cells_plan(
    angles: tuple[float, ...], num_arms: int, k: int, horizon: int, seed: int, draws: int = THETA_DRAWS
) -> list[Cell]:
    """Every angle with both tie rules and ``theta*`` of seed 0 (the spec's default), every angle
    with index ties and ``theta*`` redrawn per trial (``"index, theta* per trial"``), then every
    angle with index ties and ``theta*`` of seed 1 .. ``draws - 1`` (keys ``(phi, DRAWN, seed)``),
    these with the four algorithms whose differences the draws table reports (:data:`PAIRS`).

    With one ``theta*`` for all trials and index ties, C2UCB's first super arm (all widths equal:
    the lowest indices, cluster 0) is the same in every trial, so how good cluster 0 is under the
    one ``theta*`` drawn weighs on C2UCB's result; the draws show how much.
    """

    def make(phi: float, rule: str, theta_seed: int | None) -> tuple[Any, Any, int]:
        oracle = TopK(k=k, tie_break=rule)
        return ClusteredSemiBandit(phi=phi, oracle=oracle, num_arms=num_arms, theta_seed=theta_seed), oracle, 1

    def optimum(phi: float, theta_seed: int | None, trials: int = 64) -> float:
        env, _, _ = make(phi, "index", theta_seed)
        keys = jax.random.split(jax.random.PRNGKey(seed + 1), trials)
        return float(jax.vmap(lambda key: env.reset(key).best)(keys).mean()) * horizon

    plan = [
        Cell((phi, rule), f"phi{phi:.4f}_{rule}.nc", lambda p=phi, r=rule: make(p, r, 0), {"optimum": optimum(phi, 0)})
        for phi in angles
        for rule in TIE_RULES
    ]
    plan += [
        Cell(
            (phi, REDRAWN),
            f"phi{phi:.4f}_index_redrawn.nc",
            lambda p=phi: make(p, "index", None),
            {"optimum": optimum(phi, None)},
        )
        for phi in angles
    ]
    return plan + [
        Cell(
            (phi, DRAWN, s),
            f"phi{phi:.4f}_index_theta{s}.nc",
            lambda p=phi, t=s: make(p, "index", t),
            {"optimum": optimum(phi, s), "theta_seed": s},
            DRAWN_ALGORITHMS,
        )
        for s in range(1, draws)
        for phi in angles
    ]


def _angle_name(phi: float) -> str:
    return f"{phi / math.pi:.4g}π"


def run(
    out_dir: Any,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, pathlib.Path]:
    """Every (angle, tie rule) cell not stored yet in ``out_dir``, then the table and the plot."""
    out = pathlib.Path(out_dir)
    horizon = horizon or 10
    report_runs = runs or (4 if quick else 40)
    tuning_runs = max(2, report_runs // 2)
    num_arms, k = (200, 10) if quick else (2000, 100)
    angles = ANGLES[::2] if quick else ANGLES

    plan = cells_plan(angles, num_arms, k, horizon, seed, 2 if quick else THETA_DRAWS)
    cells = run_cells(out / "cells", plan, horizon, tuning_runs, report_runs, seed, progress, "comb-clustered")
    summary = out / "summary.md"
    summary.write_text(_markdown(cells, num_arms, k, horizon))
    return {"summary": summary, "plot": _plot(cells, out / "cumulative_reward.png")}


def _markdown(cells: dict[tuple[float, str], xr.Dataset], num_arms: int, k: int, horizon: int) -> str:
    any_ds = next(iter(cells.values()))
    lines = [
        "# Clustered semi-bandit (Takemura and Ito, Fig. 2)",
        "",
        f"N = {num_arms:,} arms in 10 clusters, k = {k}, T = {horizon}; each algorithm tuned on "
        f"{any_ds.attrs['tuning_runs']} trials and reported on {any_ds.attrs['report_runs']} fresh ones "
        "(mean cumulative reward ± standard error). *Paper protocol*: the grid maximum of the mean on the "
        "reported trials.",
        "",
    ]
    lines += _draws_markdown(cells)
    single = {key: ds for key, ds in cells.items() if len(key) == 2}
    for rule in SECTIONS:
        if not any(r == rule for _, r in single):
            continue
        title = "Ties broken by index, theta* redrawn per trial" if rule == REDRAWN else f"Ties broken by {rule}"
        lines += [f"## {title}", ""]
        names = [str(a) for a in any_ds.algorithm.values]
        lines += ["| φ | optimum | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
        for (phi, r), ds in single.items():
            if r != rule:
                continue
            totals = ds.reward.sum("round")
            mean, se = totals.mean("run"), totals.std("run", ddof=1) / np.sqrt(ds.sizes["run"])
            row = [f"{float(mean.sel(algorithm=a)):.0f} ± {float(se.sel(algorithm=a)):.0f}" for a in names]
            lines.append(f"| {_angle_name(phi)} | {ds.attrs['optimum']:.0f} | " + " | ".join(row) + " |")
        lines += ["", "Paired differences on the fresh trials (mean ± se):", ""]
        lines += [
            "| φ | PC2UCB − C2UCB | Arm-wise TS − Round-wise TS | best proposed − best baseline |",
            "|---|---|---|---|",
        ]
        for (phi, r), ds in single.items():
            if r != rule:
                continue
            totals = ds.reward.sum("round").mean("run")
            proposed = max(("PC2UCB", "Arm-wise TS"), key=lambda a: float(totals.sel(algorithm=a)))
            baseline = best_baseline(ds)
            cols = [
                paired(ds, "PC2UCB", "C2UCB"),
                paired(ds, "Arm-wise TS", "Round-wise TS"),
                paired(ds, proposed, baseline),
            ]
            text = [f"{m:+.1f} ± {s:.1f}" for m, s in cols]
            text[2] += f" ({proposed} − {baseline})"
            lines.append(f"| {_angle_name(phi)} | " + " | ".join(text) + " |")
        lines += ["", "Chosen configurations:", ""]
        for (phi, r), ds in single.items():
            if r == rule:
                chosen = "; ".join(f"{a}: {c}" for a, c in zip(ds.algorithm.values, ds.chosen.values, strict=True))
                lines.append(f"- {_angle_name(phi)}: {chosen}")
        lines.append("")
    return "\n".join(lines)


def _theta_draws(cells: dict, phi: float) -> list[xr.Dataset]:
    """The paper's protocol at ``phi``: index ties, one ``theta*`` per cell, seeds 0, 1, ..."""
    seeds = sorted(key[2] for key in cells if len(key) == 3 and key[0] == phi)
    return [cells[(phi, "index")], *(cells[(phi, DRAWN, s)] for s in seeds)] if (phi, "index") in cells else []


def cluster_zero_rank(phi: float, seed: int, d: int = 11) -> int:
    """Where cluster 0 (C2UCB's first super arm under index ties) ranks among the clusters under
    ``theta*`` of ``seed``: 1 is the best cluster."""
    env = ClusteredSemiBandit(phi=phi, oracle=TopK(k=1), d=d, num_arms=d - 1, theta_seed=seed)
    means = env.cluster_means(env.reset(jax.random.PRNGKey(0)))
    return int(np.sum(means > means[0])) + 1


def _draws_markdown(cells: dict) -> list[str]:
    """Per angle, the paired differences over the draws of ``theta*`` beside the redrawn-per-trial protocol."""
    angles = sorted({key[0] for key in cells if _theta_draws(cells, key[0])[1:]})
    if not angles:
        return []
    draws = len(_theta_draws(cells, angles[0]))
    lines = [
        f"## The paper's protocol over {draws} draws of theta* (index ties), and theta* redrawn per trial",
        "",
        "Each draw of theta* is tuned and reported on its own (one theta* for all its trials, as in the "
        "paper); per draw, the paired difference is the mean over its fresh trials. Columns: the mean over "
        "draws ± its standard error (draw to draw), the range over draws, the draws where it is positive; "
        "then the same difference with theta* redrawn per trial (mean ± se over trials).",
        "",
        "| φ | difference | over draws of theta* | range | positive | theta* redrawn per trial |",
        "|---|---|---|---|---|---|",
    ]
    for phi in angles:
        group = _theta_draws(cells, phi)
        for first, second in PAIRS:
            per_draw = np.array([paired(ds, first, second)[0] for ds in group])
            se = per_draw.std(ddof=1) / np.sqrt(per_draw.size)
            redrawn = paired(cells[(phi, REDRAWN)], first, second) if (phi, REDRAWN) in cells else None
            lines.append(
                f"| {_angle_name(phi)} | {first} − {second} | {per_draw.mean():+.1f} ± {se:.1f} | "
                f"{per_draw.min():+.0f} to {per_draw.max():+.0f} | {int(np.sum(per_draw > 0))} of {per_draw.size} | "
                + (f"{redrawn[0]:+.1f} ± {redrawn[1]:.1f} |" if redrawn else "— |")
            )
    phi = min(angles, key=lambda a: abs(a - math.pi / 4))
    lines += [
        "",
        f"Per draw at φ = {_angle_name(phi)}: where cluster 0 (C2UCB's first super arm under index ties) "
        "ranks among the 10 clusters, and the paired differences.",
        "",
        "| theta* seed | cluster 0's rank | PC2UCB − C2UCB | Arm-wise TS − Round-wise TS |",
        "|---|---|---|---|",
    ]
    for seed, ds in enumerate(_theta_draws(cells, phi)):
        a, b = (paired(ds, first, second) for first, second in PAIRS)
        lines.append(
            f"| {seed} | {cluster_zero_rank(phi, seed)} | {a[0]:+.1f} ± {a[1]:.1f} | {b[0]:+.1f} ± {b[1]:.1f} |"
        )
    return [*lines, ""]


def _plot(cells: dict, path: pathlib.Path) -> pathlib.Path:
    """Cumulative reward by angle for each single-theta* section; then, if there are further draws
    of theta*, the paired differences per draw beside theta* redrawn per trial."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    single = {key: ds for key, ds in cells.items() if len(key) == 2}
    sections = [rule for rule in SECTIONS if any(r == rule for _, r in single)]
    drawn = sorted({key[0] for key in cells if _theta_draws(cells, key[0])[1:]})
    rows = 2 if drawn else 1
    fig, grid = plt.subplots(rows, len(sections), figsize=(6 * len(sections), 4.5 * rows), squeeze=False)
    axes = grid[0]
    for ax, rule in zip(axes, sections, strict=True):
        phis = sorted(phi for phi, r in single if r == rule)
        optimum = [single[(phi, rule)].attrs["optimum"] for phi in phis]
        ax.plot(phis, optimum, "k--", label="optimum")
        for name in single[(phis[0], rule)].algorithm.values:
            totals = [single[(phi, rule)].reward.sel(algorithm=name).sum("round") for phi in phis]
            mean = [float(t.mean()) for t in totals]
            se = [float(t.std(ddof=1) / np.sqrt(t.size)) for t in totals]
            style = "-" if name in ("PC2UCB", "Arm-wise TS") else ":"
            ax.errorbar(phis, mean, yerr=se, fmt=style, marker="o", markersize=3, capsize=2, label=str(name))
        ax.set_xlabel("cluster angle φ (rad)")
        ax.set_title("ties by index, theta* per trial" if rule == REDRAWN else f"ties broken by {rule}")
        ax.grid(alpha=0.3)
        ax.sharey(axes[0])
    axes[0].set_ylabel("cumulative reward over T rounds (fresh trials)")
    axes[len(sections) - 1].legend(fontsize=8, loc="upper left")
    for ax in grid[1, len(PAIRS) :] if drawn else []:
        ax.set_visible(False)
    for ax, (first, second) in zip(grid[1] if drawn else [], PAIRS, strict=False):
        for i, phi in enumerate(drawn):
            per_draw = [paired(ds, first, second)[0] for ds in _theta_draws(cells, phi)]
            ax.scatter(
                np.full(len(per_draw), phi - 0.03),
                per_draw,
                s=12,
                color="tab:blue",
                alpha=0.6,
                label="one theta* (each draw)" if i == 0 else None,
            )
            ax.errorbar(
                phi - 0.03,
                np.mean(per_draw),
                yerr=np.std(per_draw, ddof=1) / np.sqrt(len(per_draw)),
                fmt="s",
                color="navy",
                capsize=3,
                label="mean over draws ± se" if i == 0 else None,
            )
            if (phi, REDRAWN) in cells:
                mean, se = paired(cells[(phi, REDRAWN)], first, second)
                ax.errorbar(
                    phi + 0.03,
                    mean,
                    yerr=se,
                    fmt="D",
                    color="tab:red",
                    capsize=3,
                    label="theta* redrawn per trial ± se" if i == 0 else None,
                )
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel("cluster angle φ (rad)")
        ax.set_title(f"{first} − {second}, index ties")
        ax.set_ylabel("paired difference in cumulative reward")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path
