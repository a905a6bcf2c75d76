"""Kveton et al. (2020), Section 5.2 and Fig. 2: the deep contextual bandit on MNIST.

Each round ``K = 10`` images drawn uniformly; reward ``Ber(0.75)`` for the instance's target
class, ``Ber(0.25)`` otherwise (:class:`bayesbandit.envs.ImageClassBandit`); the target class is
drawn uniformly per instance. Policies on the paper's network, ``784 -> 50 (ReLU or tanh) -> 1``
(:func:`bayesbandit.models.mlp`), one Adam step (lr 1e-3) a round on the 32 most recent
examples: DeepFPL (``a = 1``, both activations), DeepFL (``a = 0``), repGLM-FPL with ``m`` in
{1, 5, 10, 20}% of ``n`` (GLM-FPL, ``a = 0.5``, on the frozen embedding), and last-layer Laplace
TS (``m = 5%``, GLM-TSL with ``a = 1`` on the embedding). Every policy sees the same instances,
arm sets and reward draws (common random numbers). The experiment is a grid of parts
(:class:`Figure2`: a policy and a block of instances), each stored in ``parts/`` as soon as it
finishes, so an interrupted run resumes, and the parts can be computed on a Dask cluster or as
shards of several jobs with the same numbers (:mod:`bayesbandit.scale`).

The paper: MNIST's 60,000 training images, 500 instances (50 per class), ``n = 10,000``. Here:
the images ``BAYESBANDIT_DATA/mnist`` holds (the 10,000-image test set in this project's data),
and ``--runs`` / ``--horizon`` say how many instances and rounds (the defaults are the paper's;
the neural-linear policies refit their head on the whole history each round, which is what
limits the scale on a CPU). ``--quick``: scikit-learn's 8x8 digits, no download.
"""

from __future__ import annotations

import functools
import hashlib
import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr
from bayesbandit.models import mlp

import bayesbandit as bb
from bayesbandit.datasets.images import ImageData, load_digits, load_mnist
from bayesbandit.errors import InvalidInput
from bayesbandit.policies.neural import uniform_fraction
from bayesbandit.scale import Part, PartStore, SimulateGrid, per_point, run_grid
from bayesbandit.validation import check_int

DESCRIPTION = (
    "The deep contextual bandit (Kveton et al. 2020, Fig. 2): DeepFPL, DeepFL, repGLM-FPL, last-layer TS on MNIST."
)

REP_FRACTIONS = (0.01, 0.05, 0.10, 0.20)
REFERENCE = "DeepFPL (relu)"


def compared(horizon: int, hidden: int = 50) -> dict[str, Any]:
    """The compared policies, by name, for a horizon of ``horizon`` rounds."""
    relu, tanh = mlp(hidden=hidden, activation="relu"), mlp(hidden=hidden, activation="tanh")
    named: dict[str, Any] = {
        "DeepFPL (relu)": bb.DeepFPL(relu, a=1.0),
        "DeepFPL (tanh)": bb.DeepFPL(tanh, a=1.0),
        "DeepFL (relu)": bb.DeepFL(relu),
    }
    for fraction in REP_FRACTIONS:
        named[f"repGLM-FPL m={fraction:.0%}"] = bb.RepGLMFPL(
            relu, explore_rounds=max(1, uniform_fraction(fraction, horizon)), a=0.5
        )
    named["Last-layer Laplace TS m=5%"] = bb.LastLayerLaplaceTS(
        relu, explore_rounds=max(1, uniform_fraction(0.05, horizon)), a=1.0
    )
    return named


def _choose(named: dict[str, Any], wanted: Sequence[str] | None) -> list[str]:
    """The names in ``named`` that equal or start with one of ``wanted`` (all if None)."""
    if wanted is None:
        return list(named)
    chosen = [name for name in named if any(name.startswith(w) for w in wanted)]
    if not chosen:
        raise InvalidInput(
            f"deep-mnist: no policy matches {list(wanted)}. Fix: pass names or prefixes of {list(named)}."
        )
    return chosen


def _data(quick: bool) -> ImageData:
    if quick:
        return load_digits()
    try:
        return load_mnist()
    except InvalidInput as exc:
        raise InvalidInput(
            f"deep-mnist needs the MNIST IDX files: set BAYESBANDIT_DATA to a folder with an mnist/ subfolder "
            f"(or run --quick on scikit-learn's digits). {exc}"
        ) from exc


class Figure2(SimulateGrid):
    """The figure as a :class:`~bayesbandit.scale.Grid`: one part per policy and block of instances.

    The parts of :class:`~bayesbandit.scale.SimulateGrid` (a part's instances are those of one
    whole ``simulate`` with the same seed, bit for bit), whose settings also name the images by
    their content: a stored part is reused only for the same images, wherever they were loaded from.
    """

    @functools.cached_property
    def _images(self) -> str:
        data = self.env.data
        digest = hashlib.sha256(data.images.tobytes() + data.labels.tobytes()).hexdigest()[:16]
        return f"{data.images.shape[0]} images of {data.images.shape[1]} pixels, sha256 {digest}"

    def settings(self, part: Part) -> dict[str, Any]:
        """:class:`~bayesbandit.scale.SimulateGrid`'s settings and the images' fingerprint."""
        return {**super().settings(part), "images": self._images}


def run(
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
    sources: tuple[str | pathlib.Path, ...] = (),
    compute: bool = True,
) -> dict[str, pathlib.Path]:
    """The parts not stored yet in ``out_dir/parts``, then the curves, the table and the summary.

    Parameters
    ----------
    out_dir : path
    quick : bool
        scikit-learn's 8x8 digits, 8 instances of 600 rounds and a 16-unit network, instead of the
        paper's 500 instances of 10,000 rounds and 50 units on MNIST.
    runs, horizon : int, optional
        Override the number of instances / the horizon.
    seed : int
    progress : bool
        A progress bar over the parts.
    policies : sequence of str, optional
        Names or name prefixes to run (e.g. ``["DeepFPL", "DeepFL"]`` for the networks alone at the
        paper's horizon, where the neural-linear heads' full-history fits are costly).
    block : int, optional
        Instances per part (default 50; 4 in quick mode).
    client, shard_of, sources, compute
        Where the parts are computed and which stored parts are used, as in
        :func:`experiments.glm_logistic.run` (:func:`bayesbandit.scale.run_grid`).
    """
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = _data(quick)
    env = bb.envs.ImageClassBandit(data=data)
    runs = check_int("deep-mnist", "runs", int(runs or (8 if quick else 500)), low=1)
    horizon = check_int("deep-mnist", "horizon", int(horizon or (600 if quick else 10_000)), low=1)
    block = check_int("deep-mnist", "block", int(block or (4 if quick else 50)), low=1)
    named = compared(horizon, hidden=16 if quick else 50)
    chosen = _choose(named, policies)
    grid = Figure2(tuple((name, named[name]) for name in chosen), env, horizon, runs, seed, block)
    done = run_grid(
        grid,
        store=PartStore(out, sources=sources),
        client=client,
        shard_of=shard_of,
        compute=compute,
        progress=progress,
    )
    results = xr.concat(
        list(per_point(done).values()), dim="policy", data_vars="all", coords="minimal", compat="override"
    )
    results.attrs.update(data=data.describe(), optimum=env.optimum())
    results.to_netcdf(out / "results.nc")
    summary = out / "summary.md"
    summary.write_text(_markdown(results))
    return {"summary": summary, "plot": _plot(results, out / "average_reward.png"), "results": out / "results.nc"}


def _paired(results: xr.Dataset, first: str, second: str) -> tuple[float, float]:
    diff = results.reward.sel(policy=first).mean("round") - results.reward.sel(policy=second).mean("round")
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.sizes["run"]))


def _markdown(results: xr.Dataset) -> str:
    n, runs = results.sizes["round"], results.sizes["run"]
    average = results.reward.mean("round")
    lines = [
        "# The deep contextual bandit (Kveton et al. 2020, Fig. 2)",
        "",
        f"{results.attrs.get('data', '')}; K = 10 images a round, n = {n}, {runs} instances (target class drawn "
        f"uniformly), common random numbers. Oracle: {results.attrs['optimum']:.4f} per round (the paper's "
        "0.576 with its typo corrected).",
        "",
        "| policy | average reward over n | last 10% of rounds | paired vs DeepFPL (relu) | per round per instance | compile |",
        "|---|---|---|---|---|---|",
    ]
    last = results.reward.isel(round=slice(-max(1, n // 10), None)).mean("round")
    names = [str(p) for p in results.policy.values]
    for name in names:
        mean, se = float(average.sel(policy=name).mean()), float(average.sel(policy=name).std(ddof=1) / np.sqrt(runs))
        paired = name != REFERENCE and REFERENCE in names
        diff = "{:+.4f} ± {:.4f}".format(*_paired(results, name, REFERENCE)) if paired else ""
        per_round = float(results.run_time.sel(policy=name)) / (n * runs) * 1e6
        lines.append(
            f"| {name} | {mean:.4f} ± {se:.4f} | {float(last.sel(policy=name).mean()):.4f} | {diff} | "
            f"{per_round:.0f} µs | {float(results.compile_time.sel(policy=name)):.1f} s |"
        )
    if REFERENCE not in names:
        return "\n".join([*lines, ""])
    lines += ["", "Claims (paired differences over instances, mean ± standard error):", ""]
    lines += ["| claim (paper) | measured | verdict |", "|---|---|---|"]
    fpl = float(average.sel(policy=REFERENCE).mean())
    lines.append(f"| DeepFPL averages at least 0.5 | {fpl:.4f} | {'reproduced' if fpl >= 0.5 else 'not reproduced'} |")
    if "DeepFL (relu)" in names:
        m, s = _paired(results, REFERENCE, "DeepFL (relu)")
        lines.append(f"| DeepFPL > DeepFL | {m:+.4f} ± {s:.4f} | {_verdict(m, s)} |")
    for name in (p for p in names if p.startswith("repGLM")):
        m, s = _paired(results, REFERENCE, name)
        lines.append(f"| DeepFPL > {name} | {m:+.4f} ± {s:.4f} | {_verdict(m, s)} |")
    rep = [str(p) for p in results.policy.values if str(p).startswith("repGLM")]
    if rep:
        best = max(rep, key=lambda p: float(average.sel(policy=p).mean()))
        lines.append(
            f"| the best m depends on the problem (1% and 5% comparable, or 5% best) | best here: {best} | - |"
        )
    lines.append("")
    return "\n".join(lines)


def _verdict(mean: float, se: float) -> str:
    if mean > 2 * se:
        return "reproduced"
    if mean < -2 * se:
        return "not reproduced (reversed)"
    return "not reproduced (no significant difference)"


def _plot(results: xr.Dataset, path: pathlib.Path) -> pathlib.Path:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    n = results.sizes["round"]
    rounds = np.arange(1, n + 1)
    fig, ax = plt.subplots(figsize=(8, 5))
    for name in results.policy.values:
        running = results.reward.sel(policy=name).cumsum("round") / rounds
        mean = running.mean("run")
        se = running.std("run", ddof=1) / np.sqrt(results.sizes["run"])
        style = "-" if str(name).startswith("Deep") else ("--" if str(name).startswith("rep") else ":")
        ax.plot(rounds, mean, style, label=str(name))
        ax.fill_between(rounds, mean - se, mean + se, alpha=0.15)
    ax.axhline(results.attrs["optimum"], color="k", lw=0.8, label=f"oracle {results.attrs['optimum']:.3f}")
    ax.axhline(0.5, color="grey", lw=0.5, ls=":")
    ax.set(xlabel="round n", ylabel="average reward up to n", ylim=(0.2, 0.62))
    ax.set_title(f"{results.attrs.get('data', '')[:60]}\n{results.sizes['run']} instances, mean ± se")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
