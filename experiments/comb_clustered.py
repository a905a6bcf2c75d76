"""Takemura and Ito, Fig. 2: cumulative reward on the clustered data, every angle, both tie rules.

``d = 11`` (10 clusters of 200 identical arms, contiguous), ``N = 2000``, ``k = 100``, ``T = 10``,
``+-1`` rewards (:class:`bayesbandit.envs.ClusteredSemiBandit`). The angle ``phi`` sets how
similar clusters are (inner product ``cos^2 phi``); the paper plots several angles without listing
them: here ``pi/16, pi/8, pi/4, 3pi/8, 7pi/16, pi/2``. Each algorithm is tuned over the grid on 20
trials and reported on 40 fresh ones (:mod:`bayesbandit.experiments.comb_tuning`). The sections
(:data:`SECTIONS`), each one cell per angle:

* ``"index"``, the paper's: one ``theta*`` (seed 0) for every trial, ties broken by the lowest index;
* ``"random"``: the same ``theta*`` with ties broken at random (spec sec. 6.1: random ties are
  themselves an arm-wise randomisation);
* ``"index-redrawn"`` and ``"random-redrawn"``: ``theta*`` redrawn per trial, with either tie rule;
* ``"draws"``: the paper's protocol for ``theta*`` of seeds ``1 .. THETA_DRAWS - 1`` (each tuned
  on its own), with the four algorithms of :data:`PAIRS`, since which ``theta*`` is drawn decides
  the sign of some differences.

The first four are a 2 x 2 design, (one ``theta*`` / ``theta*`` per trial) x (index / random
ties): :func:`tie_rule_by_theta` sets their paired differences side by side.
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
import xarray as xr
from bayesbandit.experiments.comb_tuning import ALGORITHMS, Cell, best_baseline, paired, run_cells

from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.oracles import TopK
from bayesbandit.validation import check_names

DESCRIPTION = (
    "Combinatorial semi-bandits on clustered arms, all angles, both tie rules, one theta* or one per trial "
    "(Takemura and Ito, Fig. 2)."
)

ANGLES = (math.pi / 16, math.pi / 8, math.pi / 4, 3 * math.pi / 8, 7 * math.pi / 16, math.pi / 2)
PROTOCOLS: dict[str, tuple[str, int | None]] = {
    "index": ("index", 0),
    "random": ("random", 0),
    "index-redrawn": ("index", None),
    "random-redrawn": ("random", None),
}
"""The 2 x 2 sections: name -> (the oracle's tie rule, ``theta_seed``; ``None`` redraws ``theta*`` per trial)."""
DRAWS = "draws"  # the paper's protocol for theta* of seeds 1 .. THETA_DRAWS - 1 (seed 0 is "index")
SECTIONS: dict[str, str] = {
    "index": "One theta* (seed 0), ties broken by index",
    "random": "One theta* (seed 0), ties broken at random",
    "index-redrawn": "theta* redrawn per trial, ties broken by index",
    "random-redrawn": "theta* redrawn per trial, ties broken at random",
    DRAWS: "One theta* per cell for further seeds (1, 2, ...), ties broken by index",
}
"""Every section by name (``run(sections=...)``), with its title."""
THETA_DRAWS = 10  # the paper's protocol (one theta*, index ties) for theta* of seeds 0 .. 9
PAIRS = (("PC2UCB", "C2UCB"), ("Arm-wise TS", "Round-wise TS"))  # the differences reported over draws
DRAWN_ALGORITHMS = tuple(a for a in ALGORITHMS if any(a.name in pair for pair in PAIRS))
DIFFERENCES = ("PC2UCB − C2UCB", "Arm-wise TS − Round-wise TS", "best proposed − best baseline")
"""The paired differences every cell of :data:`PROTOCOLS` reports (:func:`_differences`)."""


def cells_plan(
    angles: tuple[float, ...],
    num_arms: int,
    k: int,
    horizon: int,
    seed: int,
    draws: int = THETA_DRAWS,
    sections: Sequence[str] = tuple(SECTIONS),
) -> list[Cell]:
    """The cells of ``sections`` (names of :data:`SECTIONS`, in that order) at every angle.

    A section of :data:`PROTOCOLS` has one cell per angle, key ``(phi, section)``, with every
    algorithm; ``"draws"`` has one per angle and ``theta*`` of seed ``1 .. draws - 1``, key
    ``(phi, "draws", seed)``, with the four algorithms whose differences the draws table reports
    (:data:`PAIRS`). A cell's ``optimum`` is ``T`` times the best super arm's expected reward,
    averaged over 64 instances (one ``theta*``, or 64 draws of it).

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

    plan = []
    for section in (name for name in SECTIONS if name in sections):
        if section == DRAWS:
            plan += [
                Cell(
                    (phi, DRAWS, s),
                    f"phi{phi:.4f}_index_theta{s}.nc",
                    lambda p=phi, t=s: make(p, "index", t),
                    {"optimum": optimum(phi, s), "theta_seed": s},
                    DRAWN_ALGORITHMS,
                )
                for s in range(1, draws)
                for phi in angles
            ]
            continue
        rule, theta_seed = PROTOCOLS[section]
        suffix = "" if theta_seed is not None else "_redrawn"
        plan += [
            Cell(
                (phi, section),
                f"phi{phi:.4f}_{rule}{suffix}.nc",
                lambda p=phi, r=rule, t=theta_seed: make(p, r, t),
                {"optimum": optimum(phi, theta_seed)},
            )
            for phi in angles
        ]
    return plan


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
    sections: Sequence[str] | None = None,
) -> dict[str, pathlib.Path]:
    """Every cell of ``sections`` not stored yet in ``out_dir``, then the tables and the plot.

    ``sections`` (default: all) are names of :data:`SECTIONS` (``"draws"`` brings ``"index"``, its
    seed 0); the reports also cover every other section whose cells are all stored in ``out_dir``
    already. ``summary.md`` has every section's
    table; ``tie_rule_by_theta.md`` (:func:`tie_rule_by_theta`) needs only the four of
    :data:`PROTOCOLS`.
    """
    chosen = _check_sections(sections)
    out = pathlib.Path(out_dir)
    horizon = horizon or 10
    report_runs = runs or (4 if quick else 40)
    tuning_runs = max(2, report_runs // 2)
    num_arms, k = (200, 10) if quick else (2000, 100)
    angles = ANGLES[::2] if quick else ANGLES
    draws = 2 if quick else THETA_DRAWS

    folder = out / "cells"
    plan = cells_plan(angles, num_arms, k, horizon, seed, draws)
    stored = {name for name in SECTIONS if all((folder / c.filename).exists() for c in plan if _section(c) == name)}
    plan = [cell for cell in plan if _section(cell) in chosen or _section(cell) in stored]
    cells = run_cells(folder, plan, horizon, tuning_runs, report_runs, seed, progress, "comb-clustered")
    header = _header(cells, num_arms, k, horizon)
    paths = {"summary": out / "summary.md", "tie_rule_by_theta": out / "tie_rule_by_theta.md"}
    paths["summary"].write_text(_markdown(cells, header))
    paths["tie_rule_by_theta"].write_text(tie_rule_by_theta(cells, header))
    return {**paths, "plot": _plot(cells, out / "cumulative_reward.png")}


def _section(cell: Cell) -> str:
    """The name of the section ``cell`` belongs to (the second entry of its key)."""
    return str(cell.key[1])  # type: ignore[index]


def _check_sections(sections: Sequence[str] | None) -> tuple[str, ...]:
    """``sections`` as a tuple of names of :data:`SECTIONS` (all of them if None), with ``"index"``
    when ``"draws"`` is there (the draws table's seed 0)."""
    if sections is None:
        return tuple(SECTIONS)
    given = check_names("comb-clustered", "sections", sections, tuple(SECTIONS))
    return (*given, "index") if DRAWS in given else given


def _header(cells: dict, num_arms: int, k: int, horizon: int) -> str:
    """The setting, for the top of every report."""
    any_ds = next(iter(cells.values()))
    return (
        f"N = {num_arms:,} arms in 10 clusters, k = {k}, T = {horizon}; each algorithm tuned on "
        f"{any_ds.attrs['tuning_runs']} trials and reported on {any_ds.attrs['report_runs']} fresh ones "
        "(mean cumulative reward ± standard error)."
    )


def _markdown(cells: dict, header: str) -> str:
    lines = [
        "# Clustered semi-bandit (Takemura and Ito, Fig. 2)",
        "",
        header + " *Paper protocol*: the grid maximum of the mean on the reported trials.",
        "",
    ]
    lines += _draws_markdown(cells)
    for section in PROTOCOLS:
        group = {phi: ds for (phi, *rest), ds in cells.items() if rest == [section]}
        if not group:
            continue
        lines += [f"## {SECTIONS[section]}", ""]
        names = [str(a) for a in next(iter(group.values())).algorithm.values]
        lines += ["| φ | optimum | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
        for phi, ds in group.items():
            totals = ds.reward.sum("round")
            mean, se = totals.mean("run"), totals.std("run", ddof=1) / np.sqrt(ds.sizes["run"])
            row = [f"{float(mean.sel(algorithm=a)):.0f} ± {float(se.sel(algorithm=a)):.0f}" for a in names]
            lines.append(f"| {_angle_name(phi)} | {ds.attrs['optimum']:.0f} | " + " | ".join(row) + " |")
        lines += ["", "Paired differences on the fresh trials (mean ± se):", ""]
        lines += ["| φ | " + " | ".join(DIFFERENCES) + " |", "|---" * (len(DIFFERENCES) + 1) + "|"]
        for phi, ds in group.items():
            lines.append(f"| {_angle_name(phi)} | " + " | ".join(_difference_text(d) for d in _differences(ds)) + " |")
        lines += ["", "Chosen configurations:", ""]
        for phi, ds in group.items():
            chosen = "; ".join(f"{a}: {c}" for a, c in zip(ds.algorithm.values, ds.chosen.values, strict=True))
            lines.append(f"- {_angle_name(phi)}: {chosen}")
        lines.append("")
    return "\n".join(lines)


def _differences(ds: xr.Dataset) -> list[tuple[float, float, str]]:
    """The :data:`DIFFERENCES` of one cell: paired mean and se on its fresh trials, and which two
    algorithms the last one compares (the proposed and the baseline with the highest mean)."""
    totals = ds.reward.sum("round").mean("run")
    proposed = max(("PC2UCB", "Arm-wise TS"), key=lambda a: float(totals.sel(algorithm=a)))
    baseline = best_baseline(ds)
    return [
        (*paired(ds, "PC2UCB", "C2UCB"), ""),
        (*paired(ds, "Arm-wise TS", "Round-wise TS"), ""),
        (*paired(ds, proposed, baseline), f"{proposed} − {baseline}"),
    ]


def _difference_text(difference: tuple[float, float, str]) -> str:
    mean, se, pair = difference
    return f"{mean:+.1f} ± {se:.1f}" + (f" ({pair})" if pair else "")


def tie_rule_by_theta(cells: dict, header: str = "") -> str:
    """The 2 x 2 report: per difference of :data:`DIFFERENCES`, a table of angle x the four
    sections of :data:`PROTOCOLS` (one ``theta*`` of seed 0 / ``theta*`` redrawn per trial, index /
    random ties), each cell the paired mean ``m`` ± its standard error ``s`` over the fresh trials,
    and a verdict line: the protocols where ``|m| > 2 s`` at some angle, with the sign and the
    count of such angles, and those where ``|m| <= 2 s`` at every angle.

    ``cells`` maps keys ``(phi, section)`` to stored cells (other keys are ignored); a protocol
    without a cell at an angle shows "—" there.
    """
    angles = sorted({key[0] for key in cells if len(key) == 2 and key[1] in PROTOCOLS})
    present = [p for p in PROTOCOLS if any((phi, p) in cells for phi in angles)]
    lines = ["# The tie rule and theta*: the paired differences under the 2 x 2 protocols", ""]
    if header:
        lines += [header, ""]
    lines += [
        "Columns: one theta* (seed 0) for every trial, or theta* redrawn per trial; ties among equal "
        "scores broken by the lowest index, or at random. A difference is *beyond 2 se* when its "
        "paired mean exceeds twice its standard error in absolute value.",
        "",
    ]
    for i, name in enumerate(DIFFERENCES):
        table = {(phi, p): _differences(cells[(phi, p)])[i] for phi in angles for p in present if (phi, p) in cells}
        lines += [f"## {name}", ""]
        lines += ["| φ | " + " | ".join(SECTIONS[p] for p in PROTOCOLS) + " |", "|---" * (len(PROTOCOLS) + 1) + "|"]
        for phi in angles:
            row = [_difference_text(table[(phi, p)]) if (phi, p) in table else "—" for p in PROTOCOLS]
            lines.append(f"| {_angle_name(phi)} | " + " | ".join(row) + " |")
        lines += ["", _verdict(name, table, present, len(angles)), ""]
    return "\n".join(lines)


def _verdict(name: str, table: dict, present: list[str], num_angles: int) -> str:
    """One line: under which protocols ``name`` is beyond 2 se at some angle (how many, which sign)."""
    beyond, within = [], []
    for p in present:
        values = [table[key][:2] for key in table if key[1] == p]
        above = sum(m > 2 * s for m, s in values)
        below = sum(m < -2 * s for m, s in values)
        if above or below:
            signs = [f"above 0 at {above}" if above else "", f"below 0 at {below}" if below else ""]
            beyond.append(f"{SECTIONS[p]} ({' and '.join(x for x in signs if x)} of {len(values)} angles)")
        else:
            within.append(SECTIONS[p])
    text = f"**Verdict, {name}**: beyond 2 se under {len(beyond)} of {len(present)} protocols"
    text += (": " + "; ".join(beyond)) if beyond else ""
    text += (". Within 2 se at every angle: " + "; ".join(within)) if within else ""
    return text + "."


def _theta_draws(cells: dict, phi: float) -> list[xr.Dataset]:
    """The paper's protocol at ``phi``: index ties, one ``theta*`` per cell, seeds 0, 1, ..."""
    seeds = sorted(key[2] for key in cells if len(key) == 3 and key[0] == phi)
    return [cells[(phi, "index")], *(cells[(phi, DRAWS, s)] for s in seeds)] if (phi, "index") in cells else []


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
        f"## The paper's protocol over {draws} draws of theta* (index ties), and theta* redrawn per trial (index ties)",
        "",
        "Each draw of theta* is tuned and reported on its own (one theta* for all its trials, as in the "
        "paper); per draw, the paired difference is the mean over its fresh trials. Columns: the mean over "
        "draws ± its standard error (draw to draw), the range over draws, the draws where it is positive; "
        "then the same difference with theta* redrawn per trial and index ties (mean ± se over trials).",
        "",
        "| φ | difference | over draws of theta* | range | positive | theta* redrawn per trial, index ties |",
        "|---|---|---|---|---|---|",
    ]
    for phi in angles:
        group = _theta_draws(cells, phi)
        for first, second in PAIRS:
            per_draw = np.array([paired(ds, first, second)[0] for ds in group])
            se = per_draw.std(ddof=1) / np.sqrt(per_draw.size)
            redrawn = paired(cells[(phi, "index-redrawn")], first, second) if (phi, "index-redrawn") in cells else None
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
    """Cumulative reward by angle for each section of :data:`PROTOCOLS`; then, if there are further
    draws of theta*, the paired differences per draw beside theta* redrawn per trial (index ties)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    single = {key: ds for key, ds in cells.items() if len(key) == 2}
    sections = [name for name in PROTOCOLS if any(r == name for _, r in single)]
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
        ax.set_title(SECTIONS[rule])
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
            if (phi, "index-redrawn") in cells:
                mean, se = paired(cells[(phi, "index-redrawn")], first, second)
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
