"""The prior-and-design matrix: structured reward programs practitioners write, through the GLM policies.

Each program of :mod:`bayesbandit.models.structured` runs on bandits of its own family
(:class:`bayesbandit.envs.ProgramBandit`) whose arm features suit it (``arms=``): a group column
cycling over the groups, exposures spread 5x across the arms (``log E`` from ``log 1`` to
``log 5``), an arm id per arm, the other features uniform on ``[-1, 1]``. Under GLM-TSL (full
history and ``history="online"``), GLM-FPL and GLM-UCB, either the policy is refused when the
simulation starts (a :mod:`bayesbandit.errors` exception, whose message is kept) or it plays

* **prior draws**: ``runs`` instances, arms and parameters drawn from the program's prior;
* **hard fixed worlds**: one fixed arm set and true parameter per world (``theta=``), chosen among
  prior draws so that the runner-up's mean is within a band of the best one's
  (``(best - second) / best`` in ``WORLD_GAPS``), each played by ``seeds`` agent seeds.

Per run: the regret per round over the last quarter of the rounds over uniform play's
(:func:`~experiments.likelihoods.late_ratios`); a run is **locked in** when that ratio is at least
``LOCKED_AT`` (half of uniform play's). The target per (program, policy): at most one locked-in run
in ``TARGET_LOCKED_PER`` (20). Every policy sees the same instances for a seed (common random
numbers).

Each (program, policy) cell is stored in ``cells/`` under the output folder as soon as it ends; a
later run with the same settings reuses it, so a run interrupted or split (``policies=``, the
command's ``--policies``) is resumed. Writes ``programs.md`` (the table), ``programs.nc`` (an
``xarray.Dataset`` of every run's ratio), ``programs.png`` (the ratios, run by run) and
``run.json`` (the options; ``bayesbandit run`` adds the command, the commit, the machine and the wall time:
:mod:`~experiments._provenance`).
"""

from __future__ import annotations

import functools
import json
import pathlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from bayesbandit.experiments._provenance import update_manifest  # noqa: E402
from bayesbandit.experiments.likelihoods import (  # noqa: E402
    LEARNS_BELOW,
    POLICIES,
    late_ratios,
    posterior_quality,
    posterior_table,
    uniform_regret,
)
from bayesbandit.models import structured  # noqa: E402

import bayesbandit as bb  # noqa: E402
from bayesbandit.errors import BayesBanditError, InvalidInput  # noqa: E402

DESCRIPTION = (
    "Structured programs (hierarchies, horseshoes, exposures, correlated priors, random effects) through the GLM "
    "policies: lock-in on prior draws and hard fixed worlds."
)

LOCKED_AT = LEARNS_BELOW  # a run is locked in when its late regret is at least this share of uniform play's
TARGET_LOCKED_PER = 20  # the target: at most one locked-in run in this many
WORLD_GAPS = ((0.10, 0.20), (0.20, 0.40))  # (best - runner-up) / best of the hard worlds
WORLD_CANDIDATES = 512  # prior draws searched for a world's parameter
POLICIES_HERE: dict[str, Callable[[Any], Any]] = {
    **POLICIES,
    "GLM-TSL (resampled)": lambda model: bb.GLMTSL(model, proposals=RESAMPLED_FROM),
    "GLM-FPL (paper noise)": lambda model: bb.GLMFPL(model, noise="paper", a=0.5),
}
"""The likelihood matrix's policies, GLM-TSL with importance-resampled draws, and GLM-FPL as Kveton et al. perturb
(eq. 6: constant reward noise of scale 0.5, the prior as written), the default before the prior was perturbed."""
RESAMPLED_FROM = 64  # Laplace draws each round's draw is resampled from
POLICY_NAMES = ("GLM-TSL", "GLM-TSL (online)", "GLM-TSL (resampled)", "GLM-FPL", "GLM-FPL (paper noise)", "GLM-UCB")
POSTERIOR_ROWS = 100  # rows of the posterior-quality data set
QUICK_POLICIES = ("GLM-TSL", "GLM-FPL")
CORRELATION = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, 0.6], [0.3, 0.6, 1.0]])


def uniform_features(key: jax.Array, *, K: int, d: int) -> jax.Array:
    """``K`` arms of ``d`` features uniform on ``[-1, 1]``."""
    return jax.random.uniform(key, (K, d), minval=-1.0, maxval=1.0)


def indexed_features(key: jax.Array, *, K: int, d: int, levels: int) -> jax.Array:
    """``K`` arms whose first column is an index cycling over ``levels`` (a group, an arm id) and ``d - 1`` features."""
    index = (jnp.arange(K) % levels).astype(float)
    return jnp.column_stack([index, uniform_features(key, K=K, d=d - 1)])


def exposed_features(key: jax.Array, *, K: int, d: int) -> jax.Array:
    """``K`` arms whose first column is a log exposure, exposures evenly from 1 to 5 (5x), and ``d - 1`` features."""
    return jnp.column_stack([jnp.log(jnp.linspace(1.0, 5.0, K)), uniform_features(key, K=K, d=d - 1)])


PROGRAMS: dict[str, Callable[..., None]] = {
    "hierarchical_logistic": structured.hierarchical_logistic(num_groups=5),
    "horseshoe_logistic": structured.horseshoe_logistic(),
    "regularised_horseshoe_logistic": structured.regularised_horseshoe_logistic(),
    "poisson_exposure": structured.poisson_exposure(),
    "negative_binomial_exposure": structured.negative_binomial_exposure(),
    "correlated_gaussian": structured.correlated_gaussian(cov=CORRELATION),
    "arm_random_effect_logistic": structured.arm_random_effect_logistic(num_arms=12),
}
"""Each program by name."""

ARMS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "hierarchical_logistic": functools.partial(indexed_features, K=15, d=4, levels=5),
    "horseshoe_logistic": functools.partial(uniform_features, K=15, d=8),
    "regularised_horseshoe_logistic": functools.partial(uniform_features, K=15, d=8),
    "poisson_exposure": functools.partial(exposed_features, K=15, d=3),
    "negative_binomial_exposure": functools.partial(exposed_features, K=15, d=3),
    "correlated_gaussian": functools.partial(uniform_features, K=15, d=3),
    "arm_random_effect_logistic": functools.partial(indexed_features, K=12, d=4, levels=12),
}
"""The function of a key that draws an instance's arms for each program: 15 arms (12 with an id each)."""


def prior_bandit(name: str) -> bb.envs.ProgramBandit:
    """Program ``name``'s bandit: its arms drawn for it, its parameters from its prior, per instance."""
    return bb.envs.ProgramBandit(model=PROGRAMS[name], arms=ARMS[name])


@functools.cache
def hard_world(name: str, gap: tuple[float, float], index: int) -> bb.envs.ProgramBandit:
    """Program ``name``'s hard world ``index``: one arm set, and the first of ``WORLD_CANDIDATES`` prior draws whose
    runner-up is within ``gap`` of the best arm, ``(best - second) / best`` in ``[gap[0], gap[1]]`` (best > 0)."""
    env = prior_bandit(name)
    arms = ARMS[name](jax.random.PRNGKey(1_000 + index))
    keys = jax.random.split(jax.random.PRNGKey(2_000 + index), WORLD_CANDIDATES)
    thetas = jax.vmap(lambda key: env.bound.sample_prior(key))(keys)
    means = np.asarray(jax.vmap(lambda theta: env.bound.mean_reward(theta, arms))(thetas))
    top = np.sort(means, axis=1)[:, ::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = (top[:, 0] - top[:, 1]) / top[:, 0]
    fits = np.flatnonzero((top[:, 0] > 0) & (relative >= gap[0]) & (relative <= gap[1]))
    if not fits.size:
        raise RuntimeError(f"{name}: none of {WORLD_CANDIDATES} prior draws has a runner-up within {gap} of the best.")
    return bb.envs.ProgramBandit(model=env.model, arms=np.asarray(arms), theta=np.asarray(thetas[fits[0]]))


def posterior_rows(name: str, *, n: int = POSTERIOR_ROWS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows ``(x, y)`` of program ``name`` at a prior draw, pulled uniformly from three fifths of its arms
    (the arms ``k`` with ``k mod 5 < 3``): the hierarchy's groups 3 and 4 and a third of the random effects
    are never observed."""
    env = prior_bandit(name)
    instance = env.reset(jax.random.PRNGKey(seed))
    arms = np.asarray(instance.arms)
    seen = np.flatnonzero(np.arange(len(arms)) % 5 < 3)
    x = arms[np.random.default_rng(seed).choice(seen, size=n)]
    y = np.asarray(env.bound.sample_rewards(instance.theta, x, jax.random.PRNGKey(seed + 1)), dtype=float)
    return x, y


def posterior_cell(name: str, *, seed: int, quick: bool) -> dict[str, Any]:
    """:func:`~experiments.likelihoods.posterior_quality` of program ``name`` on :func:`posterior_rows`, or ``refused``."""
    try:
        return posterior_quality(PROGRAMS[name], *posterior_rows(name, seed=seed), seed=seed, quick=quick)
    except BayesBanditError as exc:
        return {"refused": f"{type(exc).__name__}: {exc}"}


def _play(policy: Any, env: bb.envs.ProgramBandit, *, horizon: int, runs: int, seed: int) -> dict[str, Any]:
    """One ``simulate`` of ``runs`` runs: each run's late ratio, rounds not converged, seconds."""
    ds = bb.simulate(policy, env, horizon=horizon, runs=runs, seed=seed)
    return {
        "late_ratio": late_ratios(ds.regret.isel(policy=0).values, uniform_regret(env, runs, seed)).tolist(),
        "not_converged": int(ds.not_converged.sum()),
        "compile_s": float(ds.compile_time.sum()),
        "run_s": float(ds.run_time.sum()),
    }


def cell(
    name: str,
    policy_name: str,
    *,
    horizon: int,
    runs: int,
    world_gaps: Sequence[Sequence[float]],
    seeds: int,
    seed: int,
) -> dict[str, Any]:
    """Program ``name`` under ``policy_name`` (module docstring): ``refused`` (the message, or ``""``) and, when it
    ran, ``prior`` (``runs`` late ratios), ``hard`` (``seeds`` late ratios per world, one per ``(low, high)`` gap of
    ``world_gaps``), the share of rounds ``converged`` and the seconds spent compiling and running."""
    try:
        policy = POLICIES_HERE[policy_name](PROGRAMS[name])
        played = [_play(policy, prior_bandit(name), horizon=horizon, runs=runs, seed=seed)]
    except BayesBanditError as exc:
        return {"refused": f"{type(exc).__name__}: {exc}"}
    for index, (low, high) in enumerate(world_gaps):
        played.append(_play(policy, hard_world(name, (low, high), index), horizon=horizon, runs=seeds, seed=seed))
    rounds = horizon * (runs + seeds * len(world_gaps))
    return {
        "refused": "",
        "prior": played[0]["late_ratio"],
        "hard": [p["late_ratio"] for p in played[1:]],
        "converged": 1.0 - sum(p["not_converged"] for p in played) / rounds,
        "compile_s": sum(p["compile_s"] for p in played),
        "run_s": sum(p["run_s"] for p in played),
    }


def _cell_path(folder: pathlib.Path, name: str, policy_name: str) -> pathlib.Path:
    slug = policy_name.replace(" ", "_").replace("(", "").replace(")", "")
    return folder / "cells" / f"{name}__{slug}.json"


def stored_cell(
    folder: pathlib.Path,
    name: str,
    policy_name: str,
    settings: dict[str, Any],
    compute: Callable[..., dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The cell from its file under ``folder/cells`` when it was made with ``settings`` (the keywords of ``compute``,
    by default :func:`cell` of ``policy_name``); else computed with them and stored."""
    path = _cell_path(folder, name, policy_name)
    if path.exists():
        stored = json.loads(path.read_text())
        if stored.get("settings") == settings:
            return stored["cell"]
    result = compute(name, **settings) if compute else cell(name, policy_name, **settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"settings": settings, "cell": result}))
    return result


def _choose(policies: Sequence[str] | None) -> list[str]:
    """The policies of ``POLICY_NAMES`` named in ``policies``, or starting with one of its entries that names none
    (``"GLM-TSL"``: GLM-TSL alone; ``"GLM-T"``: both GLM-TSL); all if None."""
    if policies is None:
        return list(POLICY_NAMES)
    chosen = [
        name
        for name in POLICY_NAMES
        if any(name == wanted or (wanted not in POLICY_NAMES and name.startswith(wanted)) for wanted in policies)
    ]
    if not chosen:
        raise InvalidInput(
            f"The 'policies' parameter of programs must name or prefix one of {list(POLICY_NAMES)}. Got "
            f"{list(policies)} instead. Fix: pass e.g. --policies GLM-FPL."
        )
    return chosen


def locked(cell: dict[str, Any]) -> tuple[int, int]:
    """``(locked-in runs, runs)`` of a cell that ran: runs whose late ratio is at least ``LOCKED_AT``."""
    ratios = np.concatenate([cell["prior"], *cell["hard"]])
    return int(np.sum(ratios >= LOCKED_AT)), int(ratios.size)


def matrix(cells: dict[tuple[str, str], dict[str, Any]], attrs: dict[str, Any]) -> xr.Dataset:
    """The cells as a Dataset over ``(program, policy)``: every run's late ratio (prior draws and hard worlds),
    converged share, seconds, refusal messages."""
    names = list(dict.fromkeys(n for n, _ in cells))
    policies = list(dict.fromkeys(p for _, p in cells))
    runs, seeds, worlds = attrs["runs"], attrs["seeds"], len(attrs["world_gaps"])

    def grid(field: str, shape: tuple[int, ...]) -> np.ndarray:
        return np.array(
            [[np.asarray(cells[n, p].get(field, np.full(shape, np.nan)), float) for p in policies] for n in names]
        )

    def scalar(field: str, fill: Any, dtype: Any) -> np.ndarray:
        return np.array([[cells[n, p].get(field, fill) for p in policies] for n in names], dtype=dtype)

    dims = ("program", "policy")
    return xr.Dataset(
        {
            "prior_late_ratio": ((*dims, "instance"), grid("prior", (runs,))),
            "hard_late_ratio": ((*dims, "world", "seed"), grid("hard", (worlds, seeds))),
            "converged": (dims, scalar("converged", np.nan, float)),
            "compile_s": (dims, scalar("compile_s", np.nan, float)),
            "run_s": (dims, scalar("run_s", np.nan, float)),
            "refused": (dims, scalar("refused", "", object).astype(str)),
        },
        coords={
            "program": names,
            "policy": policies,
            "world": [f"gap {lo:.0%}-{hi:.0%}" for lo, hi in attrs["world_gaps"]],
        },
        attrs={**attrs, "world_gaps": json.dumps(attrs["world_gaps"]), "locked_at": LOCKED_AT},
    )


def _markdown(
    cells: dict[tuple[str, str], dict[str, Any]], attrs: dict[str, Any], posteriors: dict[str, dict[str, Any]]
) -> str:
    runs, seeds, gaps = attrs["runs"], attrs["seeds"], attrs["world_gaps"]
    lines = [
        f"Prior-and-design matrix: {runs} prior-drawn instances and {len(gaps)} hard fixed world(s) (runner-up within "
        f"{', '.join(f'{lo:.0%}-{hi:.0%}' for lo, hi in gaps)} of the best mean) x {seeds} agent seeds, "
        f"{attrs['horizon']} rounds, seed {attrs['seed']}. late / uniform: regret per round over the last quarter "
        f"over uniform play's (mean over runs); locked in: runs with late / uniform >= {LOCKED_AT} (target: at most "
        f"1 in {TARGET_LOCKED_PER}).",
        "",
        "| program | policy | runs | late / uniform, prior | late / uniform, hard worlds | locked in | converged "
        "| seconds (compile + run) | refused |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, policy), result in cells.items():
        if result["refused"]:
            reason = result["refused"].replace("|", "/").replace("\n", " ")
            lines.append(f"| {name} | {policy} | 0 | | | | | | {reason} |")
            continue
        count, total = locked(result)
        flag = "" if count * TARGET_LOCKED_PER <= total else " (over target)"
        lines.append(
            f"| {name} | {policy} | {total} | {np.mean(result['prior']):.3f} | {np.mean(result['hard']):.3f} | "
            f"{count} / {total}{flag} | {result['converged']:.1%} | "
            f"{result['compile_s']:.0f} + {result['run_s']:.0f} | |"
        )
    lines += [
        "",
        f"GLM-FPL's ensemble and the Laplace fit against NUTS on {POSTERIOR_ROWS} rows of each program at a prior draw, "
        "pulled from three fifths of the arms (the hierarchy's groups 3 and 4 and a third of the arms' random "
        "effects never observed): range over parameters of the standard-deviation ratio method / NUTS; the Laplace "
        "fit's KL from NUTS, the NUTS mass its 90% intervals hold, and its Pareto k-hat (no NUTS needed: above 0.7 "
        "poor).",
        "",
        *posterior_table(posteriors, "program"),
    ]
    return "\n".join(lines) + "\n"


def _plot(ds: xr.Dataset, path: pathlib.Path) -> None:
    rows = [(str(n), str(p)) for n in ds.program.values for p in ds.policy.values]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.5))
    jitter = np.random.default_rng(0)
    for y, (name, policy) in enumerate(rows):
        cell = ds.sel(program=name, policy=policy)
        if str(cell.refused.values):
            ax.plot([0.0], [y], "xk", ms=6)
            continue
        for values, marker, color in (
            (cell.prior_late_ratio.values.ravel(), "o", "C0"),
            (cell.hard_late_ratio.values.ravel(), "^", "C3"),
        ):
            ax.plot(values, y + jitter.uniform(-0.25, 0.25, values.size), marker, color=color, ms=3, alpha=0.6)
    ax.plot([], [], "o", color="C0", ms=3, label="prior draw")
    ax.plot([], [], "^", color="C3", ms=3, label="hard world (one agent seed)")
    ax.plot([], [], "xk", ms=6, label="refused")
    ax.axvline(LOCKED_AT, color="k", ls="--", lw=1, label=f"locked in at {LOCKED_AT}")
    ax.set_yticks(range(len(rows)), [f"{n} / {p}" for n, p in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("regret per round over the last quarter / uniform play's (one point per run)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(
    out_dir: str | pathlib.Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool = False,
    policies: Sequence[str] | None = None,
) -> dict[str, pathlib.Path]:
    """Run the matrix (module docstring) into ``out_dir``, reusing the cells stored there with the same settings.

    Parameters
    ----------
    out_dir : path
    quick : bool
        4 prior draws and one hard world x 4 seeds of 100 rounds under ``QUICK_POLICIES``, instead of 20 prior
        draws and two hard worlds x 10 seeds of 500 rounds under every policy of ``POLICY_NAMES``.
    runs, horizon : int, optional
        Override the number of prior-drawn instances / the rounds per run.
    seed : int
    progress : bool
        Print each cell as it ends.
    policies : sequence of str, optional
        Names or name prefixes of ``POLICY_NAMES`` to run (the others are left out of the outputs).
    """
    bb.runtime.enable_x64()
    bb.runtime.enable_fast_rng()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    chosen = _choose(QUICK_POLICIES if quick and policies is None else policies)
    attrs: dict[str, Any] = {
        "horizon": int(horizon or (100 if quick else 500)),
        "runs": int(runs or (4 if quick else 20)),
        "seeds": 4 if quick else 10,
        "world_gaps": [list(gap) for gap in (WORLD_GAPS[:1] if quick else WORLD_GAPS)],
        "seed": seed,
    }
    cells = {}
    for name in PROGRAMS:
        for policy_name in chosen:
            began = time.perf_counter()
            cells[name, policy_name] = result = stored_cell(out, name, policy_name, attrs)
            if progress:
                verdict = "refused" if result["refused"] else "locked in {} / {}".format(*locked(result))
                print(f"{name:>30} {policy_name:<16} {verdict} ({time.perf_counter() - began:.0f} s)", flush=True)
    posteriors = {}
    for name in PROGRAMS:
        posteriors[name] = stored_cell(out, name, "posterior", {"seed": seed, "quick": quick}, posterior_cell)
        if progress:
            print(f"{name:>30} posterior quality: {posteriors[name]}", flush=True)
    paths = {
        "summary": out / "programs.md",
        "results": out / "programs.nc",
        "plot": out / "programs.png",
        "run": out / "run.json",
    }
    ds = matrix(cells, attrs)
    ds.to_netcdf(paths["results"])
    _plot(ds, paths["plot"])
    paths["summary"].write_text(_markdown(cells, attrs, posteriors))
    update_manifest(out, experiment="programs", options={"quick": quick, "policies": chosen, **attrs})
    return paths
