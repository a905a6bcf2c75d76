"""What the drift experiments share: one problem's run, the paired ratio table, the figure.

Every policy of a problem sees the same instances and reward noise (common random numbers), so
the ratio of two policies' mean final regret has a *paired* standard error (delta method on the
per-run pairs): with ``r = mean(A) / mean(B)``, ``se(r) = sd(A_i - r B_i) / (mean(B) sqrt(n))``.

A restart of a :class:`bayesbandit.drift.ChangePoint` policy is recorded every round; an alarm
from the end of round ``c - 1`` (the oracle restart's) to ``DETECTION_WINDOW`` rounds after a change
point ``c`` counts as a detection, any other as a false alarm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np
import pandas as pd
import xarray as xr

from bayesbandit.sim import plot_regret, simulate, summary_markdown, thin

__all__ = ["DETECTION_WINDOW", "QUICK_COMPILER_OPTIONS", "run_problem", "ratio_table", "plot_problems", "write"]

DETECTION_WINDOW = 500
# Quick runs are dominated by compilation: a lower XLA optimisation level compiles ~3x faster.
QUICK_COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}


def _record(rnd: Any) -> dict[str, Any]:
    return {"restarted": jnp.asarray(getattr(rnd.update_info, "restarted", False))}


def run_problem(
    policies: dict[str, Any],
    env: Any,
    change_points: tuple[int, ...],
    horizon: int,
    runs: int,
    seed: int,
    quick: bool,
    progress: bool,
) -> xr.Dataset:
    """Every policy on ``env``, thinned for storage, with ``alarms`` and ``false_alarms`` per run."""
    options = QUICK_COMPILER_OPTIONS if quick else None
    ds = simulate(
        policies, env, horizon, runs=runs, seed=seed, progress=progress, record=_record, compiler_options=options
    )
    restarted = ds["restarted"].values  # (policy, run, round)
    near = np.zeros(horizon, bool)
    for c in change_points:
        near[max(c - 1, 0) : c + DETECTION_WINDOW] = True  # a restart at the end of round c - 1 is on time
    out = thin(ds.drop_vars("restarted"), num_points=100)
    out["alarms"] = (("policy", "run"), restarted.sum(-1))
    out["false_alarms"] = (("policy", "run"), restarted[..., ~near].sum(-1))
    out.attrs["change_points"] = np.asarray(change_points, dtype=np.int64)
    return out


def ratio_table(ds: xr.Dataset, baseline: str) -> pd.DataFrame:
    """Final regret per policy (mean, se), its ratio to ``baseline``'s with the paired se, alarms per run."""
    final = ds["cumulative_regret"].isel(round=-1)
    base = final.sel(policy=baseline).values
    n = base.size
    rows = {}
    for name in ds["policy"].values:
        r = final.sel(policy=name).values
        ratio = r.mean() / base.mean()
        ratio_se = np.std(r - ratio * base, ddof=1) / (base.mean() * np.sqrt(n)) if n > 1 else np.nan
        rows[str(name)] = {
            "regret": r.mean(),
            "regret_se": r.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan,
            f"ratio_to_{baseline}": ratio,
            "ratio_se": ratio_se,
            "alarms": float(ds["alarms"].sel(policy=name).mean()),
            "false_alarms": float(ds["false_alarms"].sel(policy=name).mean()),
        }
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "policy"
    return df


def plot_problems(problems: dict[str, xr.Dataset], titles: dict[str, str], path: Path, suptitle: str) -> None:
    """Cumulative regret (mean +- 1 se) per problem, one panel each, change points dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(problems), figsize=(5.6 * len(problems), 4.6), squeeze=False)
    for ax, (name, ds) in zip(axes[0], problems.items()):
        ds = ds.dropna("policy", how="all", subset=["cumulative_regret"])
        plot_regret(ds, ax=ax, title=titles[name])
        for c in np.atleast_1d(ds.attrs.get("change_points", [])):
            ax.axvline(int(c), color="0.5", linestyle="--", linewidth=0.8)
    fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(
    name: str, problems: dict[str, xr.Dataset], titles: dict[str, str], header: str, baseline: str, out_dir: Path
) -> dict[str, Path]:
    """The figure, the netCDF results (one group-free file, dim ``problem``) and the markdown summary."""
    stem = name.replace("-", "_")
    paths = {"plot": out_dir / f"{stem}.png", "results": out_dir / f"{stem}.nc", "summary": out_dir / f"{stem}.md"}
    plot_problems(problems, titles, paths["plot"], header.splitlines()[0].lstrip("# "))
    sections = []
    for key, ds in problems.items():
        sections.append(f"## {titles[key]}\n\n{summary_markdown(ratio_table(ds, baseline), digits=3)}\n")
    paths["summary"].write_text(header + "\n" + "\n".join(sections))
    merged = xr.concat(
        [ds.drop_attrs() for ds in problems.values()],
        dim=xr.DataArray(list(problems), dims="problem", name="problem"),
        join="outer",
        data_vars="all",
        coords="minimal",
        compat="override",
    )
    merged.attrs = {k: v for k, v in next(iter(problems.values())).attrs.items() if k != "change_points"}
    merged.attrs["experiment"] = name
    merged.drop_encoding().to_netcdf(paths["results"])
    return paths
