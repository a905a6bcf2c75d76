"""Off-policy evaluation on GLM-TSL's own adaptive logs: bias, RMSE and interval coverage against known values.

Setting:

* one logistic bandit instance: ``K = 5`` arms on the unit sphere in ``d = 3`` (every arm an
  extreme point of the arm set, so every arm has positive probability under Thompson sampling)
  and ``theta*`` of norm 0.5 (seed 0: means 0.378 to 0.578); Thompson sampling concentrates on
  the best arm, so the other arms' propensities fall towards 0 as the log grows;
* logging policy GLM-TSL (``logistic()`` prior, ``a = 1``) for ``horizon`` rounds, each round's
  propensity logged by the serve-time rule of :func:`bayesbandit.propensities.select_logged`
  (``M`` selections, the action the first, its frequency logged: exact given the draws);
  ``runs`` replicate logs, one ``jax.vmap`` over a ``lax.scan``;
* four target policies with known values ``v = sum_a pi(a) mu_a``: uniform, the best arm,
  epsilon-greedy (``epsilon = 0.2``) on the true ``theta*``, and GLM-TSL frozen at the state
  of a separate 200-round run (its law from 200,000 selections, then taken as the target);
* per log: every default estimator with the cross-fitted (2 folds) Laplace reward model of the
  same program, CLT standard errors, the percentile bootstrap (``B`` resamples, model held
  fixed) and the betting interval (IPS terms, valid on adaptive logs); the control IPS with
  every propensity replaced by ``1/K``; and the *drawn-support value*
  ``mean_t sum_a pi(a) mu_a 1{p_hat_t(a) > 0}``, for which IPS with the logged ``p_hat`` is
  exactly unbiased (the gap to ``v`` is the positivity bias of finite ``M``).

Reported per target and estimator: bias +- its standard error over the replicate logs, RMSE,
coverage of the bootstrap and betting 95% intervals (+- binomial se), mean widths.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from bayesbandit.models import logistic

from bayesbandit import ope
from bayesbandit.policies import GLMTSL
from bayesbandit.propensities import action_distribution, select_logged
from bayesbandit.runtime import enable_x64
from bayesbandit.validation import check_int

__all__ = [
    "DESCRIPTION",
    "run",
    "FULL",
    "QUICK",
    "instance",
    "targets",
    "adaptive_log",
    "simulate_and_analyse",
    "summarize",
]

DESCRIPTION = "OPE on GLM-TSL's adaptive logistic-bandit logs: bias, RMSE, bootstrap and betting coverage (K=5, d=3)"

K, D = 5, 3
THETA_NORM = 0.5
EPSILON = 0.2
FROZEN_ROUNDS = 200
FROZEN_SAMPLES = 200_000
FULL: dict[str, Any] = {"horizon": 20_000, "runs": 1_000, "samples": 100, "bootstrap": 200, "chunk": 50}
QUICK: dict[str, Any] = {"horizon": 400, "runs": 8, "samples": 16, "bootstrap": 50, "chunk": 8}


def instance(seed: int = 0) -> tuple[jax.Array, jax.Array]:
    """The arm set (K, d) on the unit sphere and ``theta*`` of norm ``THETA_NORM``."""
    key_arms, key_theta = jax.random.split(jax.random.PRNGKey(seed))
    arms = jax.random.normal(key_arms, (K, D))
    theta = jax.random.normal(key_theta, (D,))
    return arms / jnp.linalg.norm(arms, axis=1, keepdims=True), THETA_NORM * theta / jnp.linalg.norm(theta)


def adaptive_log(
    policy: GLMTSL, arms: jax.Array, means: jax.Array, pi: jax.Array, horizon: int, samples: int, key: jax.Array
):
    """One replicate log: actions, logged propensities, rewards, and the mean drawn-support value per target."""
    weights = pi * means[None]  # (targets, K): pi(a) mu_a

    def step(carry, k):
        state, support = carry
        k_select, k_reward = jax.random.split(k)
        action, freq = select_logged(k_select, policy, state, arms, samples)
        reward = (jax.random.uniform(k_reward) < means[action]).astype(arms.dtype)
        state, _ = policy.update(state, arms, action, reward)
        return (state, support + weights @ (freq > 0).astype(arms.dtype)), (action, freq[action], reward)

    init = (policy.init(arms), jnp.zeros(pi.shape[0], arms.dtype))
    (_, support), (action, pscore, reward) = jax.lax.scan(step, init, jax.random.split(key, horizon))
    return action, pscore, reward, support / horizon


def _analyse_one(arms, pi, action, pscore, reward, key, estimators, model, num_boot):
    """Estimates, CLT se, bootstrap and betting intervals, and the 1/K control of one log."""
    n = action.shape[0]
    logs = ope.Logs(arms, action, reward, pscore, jnp.arange(n, dtype=arms.dtype))
    pi_rows = jnp.broadcast_to(pi[:, None, :], (pi.shape[0], n, K))
    q_hat = model.fit_predict(logs)
    value, se = ope.point_estimates(logs, pi_rows, q_hat, estimators)
    boot = ope.bootstrap_values(key, logs, pi_rows, q_hat, estimators, num_boot)
    lo, hi = ope.percentile_interval(boot, 0.95)
    w = pi[:, action] / pscore[None]
    bet_lo, bet_hi = jax.vmap(lambda wt: ope.betting_interval(wt, reward, level=0.95))(w)
    control = ope.point_estimates(logs._replace(pscore=jnp.full(n, 1.0 / K)), pi_rows, None, (ope.IPS(),))[0][:, 0]
    return value, se, lo, hi, bet_lo, bet_hi, control


def targets(arms: jax.Array, theta: jax.Array, policy: GLMTSL, seed: int) -> dict[str, jax.Array]:
    """The target policies' laws on the fixed arm set, each (K,)."""
    means = jax.nn.sigmoid(arms @ theta)
    best = jax.nn.one_hot(jnp.argmax(means), K)
    key_run, key_law = jax.random.split(jax.random.PRNGKey(seed + 1))
    state = policy.init(arms)

    def step(state, k):
        k_select, k_reward = jax.random.split(k)
        action, _ = policy.select(state, arms, k_select)
        reward = (jax.random.uniform(k_reward) < means[action]).astype(arms.dtype)
        return policy.update(state, arms, action, reward)[0], None

    frozen, _ = jax.lax.scan(step, state, jax.random.split(key_run, FROZEN_ROUNDS))
    law, _ = action_distribution(key_law, policy, frozen, arms, samples=FROZEN_SAMPLES)
    return {
        "uniform": jnp.full(K, 1.0 / K),
        "best arm": best,
        f"eps-greedy ({EPSILON:g})": EPSILON / K + (1 - EPSILON) * best,
        f"GLM-TSL @ t={FROZEN_ROUNDS}": jnp.asarray(law),
    }


def simulate_and_analyse(
    horizon: int, runs: int, samples: int, num_boot: int, chunk: int, seed: int, progress: bool
) -> xr.Dataset:
    """Every replicate log, generated and analysed ``chunk`` at a time (module docstring)."""
    enable_x64()
    arms, theta = instance(seed)
    means = jax.nn.sigmoid(arms @ theta)
    policy = GLMTSL(logistic(), a=1.0)
    laws = targets(arms, theta, policy, seed)
    names = list(laws)
    pi = jnp.stack([laws[n] for n in names])
    estimators = ope.DEFAULT_ESTIMATORS
    model = ope.RewardModel(logistic(), n_folds=2)

    @jax.jit
    def batch(keys):
        logs = jax.vmap(lambda k: adaptive_log(policy, arms, means, pi, horizon, samples, k))(
            jax.vmap(lambda k: jax.random.fold_in(k, 0))(keys)
        )
        action, pscore, reward, support = logs
        analysed = jax.lax.map(
            lambda row: _analyse_one(arms, pi, *row, estimators, model, num_boot),
            (action, pscore, reward, jax.vmap(lambda k: jax.random.fold_in(k, 1))(keys)),
        )
        min_pscore = jnp.min(pscore, axis=1)
        return (*analysed, support, min_pscore)

    outputs = []
    start = time.perf_counter()
    for first in range(0, runs, chunk):
        count = min(chunk, runs - first)
        keys = jax.vmap(lambda r: jax.random.fold_in(jax.random.PRNGKey(seed), r))(jnp.arange(first, first + count))
        outputs.append(jax.device_get(batch(keys)))
        if progress:
            print(f"ope-logistic: {first + count}/{runs} logs, {time.perf_counter() - start:.0f} s", flush=True)
    value, se, lo, hi, bet_lo, bet_hi, control, support, min_pscore = (
        np.concatenate(parts) for parts in zip(*outputs, strict=True)
    )
    labels = [e.label for e in estimators]
    dims3 = ("run", "target", "estimator")
    return xr.Dataset(
        {
            "value": (dims3, value),
            "se": (dims3, se),
            "bootstrap_lo": (dims3, lo),
            "bootstrap_hi": (dims3, hi),
            "betting_lo": (("run", "target"), bet_lo),
            "betting_hi": (("run", "target"), bet_hi),
            "control_ips": (("run", "target"), control),
            "support_value": (("run", "target"), support),
            "min_pscore": (("run",), min_pscore),
            "truth": (("target",), np.asarray(pi @ means)),
            "pi": (("target", "arm"), np.asarray(pi)),
            "means": (("arm",), np.asarray(means)),
        },
        coords={"run": np.arange(runs), "target": names, "estimator": labels, "arm": np.arange(K)},
        attrs={
            "horizon": horizon,
            "runs": runs,
            "samples": samples,
            "bootstrap": num_boot,
            "seed": seed,
            "K": K,
            "d": D,
        },
    )


def summarize(ds: xr.Dataset) -> xr.Dataset:
    """Per target and estimator: bias, its se, RMSE, coverage (bootstrap, betting, CLT) with binomial se, widths."""
    runs = ds.sizes["run"]
    error = ds["value"] - ds["truth"]
    covered = (ds["bootstrap_lo"] <= ds["truth"]) & (ds["truth"] <= ds["bootstrap_hi"])
    clt = abs(error) <= 1.96 * ds["se"]
    bet = (ds["betting_lo"] <= ds["truth"]) & (ds["truth"] <= ds["betting_hi"])

    def binom_se(p: xr.DataArray) -> xr.DataArray:
        return (p * (1 - p) / runs) ** 0.5

    out = xr.Dataset(
        {
            "bias": error.mean("run"),
            "bias_se": error.std("run", ddof=1) / np.sqrt(runs),
            "rmse": ((error**2).mean("run")) ** 0.5,
            "coverage_bootstrap": covered.mean("run"),
            "coverage_clt": clt.mean("run"),
            "width_bootstrap": (ds["bootstrap_hi"] - ds["bootstrap_lo"]).mean("run"),
            "coverage_betting": bet.mean("run"),
            "width_betting": (ds["betting_hi"] - ds["betting_lo"]).mean("run"),
            "control_bias": (ds["control_ips"] - ds["truth"]).mean("run"),
            "control_bias_se": ds["control_ips"].std("run", ddof=1) / np.sqrt(runs),
            "support_gap": (ds["support_value"] - ds["truth"]).mean("run"),
            "ips_minus_support": (ds["value"].sel(estimator="IPS") - ds["support_value"]).mean("run"),
            "ips_minus_support_se": (ds["value"].sel(estimator="IPS") - ds["support_value"]).std("run", ddof=1)
            / np.sqrt(runs),
        }
    )
    for name in ("coverage_bootstrap", "coverage_clt", "coverage_betting"):
        out[name + "_se"] = binom_se(out[name])
    return out


def _markdown(ds: xr.Dataset, summary: xr.Dataset, seconds: float) -> str:
    a = ds.attrs
    lines = [
        "# ope-logistic: off-policy evaluation on GLM-TSL's adaptive logs",
        "",
        f"Logistic bandit, K = {a['K']} arms on the unit sphere in d = {a['d']}, ||theta*|| = {THETA_NORM}; "
        f"logging policy GLM-TSL (a = 1) for {a['horizon']:,} rounds, propensities logged by the serve-time rule "
        f"with M = {a['samples']} draws; {a['runs']:,} replicate logs (seed {a['seed']}); reward model: the logistic "
        f"program, Laplace, 2-fold cross-fitted; bootstrap B = {a['bootstrap']} (model held fixed); betting "
        f"interval on the IPS terms. Wall time {seconds / 60:.1f} min.",
        "",
        "Arm means: " + ", ".join(f"{m:.3f}" for m in ds["means"].values) + ". "
        f"Smallest logged propensity over all logs: {float(ds['min_pscore'].min()):.3g}.",
        "",
    ]
    for target in summary.target.values:
        s = summary.sel(target=target)
        truth = float(ds["truth"].sel(target=target))
        lines += [
            f"## Target: {target} (true value {truth:.4f})",
            "",
            "| estimator | bias +- se | RMSE | bootstrap coverage | bootstrap width | CLT coverage |",
            "|---|---|---|---|---|---|",
        ]
        for est in summary.estimator.values:
            e = s.sel(estimator=est)
            lines.append(
                f"| {est} | {float(e.bias):+.5f} +- {float(e.bias_se):.5f} | {float(e.rmse):.5f} | "
                f"{float(e.coverage_bootstrap):.3f} +- {float(e.coverage_bootstrap_se):.3f} | "
                f"{float(e.width_bootstrap):.4f} | {float(e.coverage_clt):.3f} +- {float(e.coverage_clt_se):.3f} |"
            )
        lines += [
            "",
            f"* Betting interval (IPS terms): coverage {float(s.coverage_betting):.3f} +- {float(s.coverage_betting_se):.3f}, "
            f"mean width {float(s.width_betting):.4f}.",
            f"* Control, IPS with every propensity set to 1/K: bias {float(s.control_bias):+.5f} +- "
            f"{float(s.control_bias_se):.5f}.",
            f"* Drawn-support value minus true value (positivity gap of M = {a['samples']}): {float(s.support_gap):+.5f}; "
            f"IPS minus the drawn-support value: {float(s.ips_minus_support):+.5f} +- {float(s.ips_minus_support_se):.5f}.",
            "",
        ]
    return "\n".join(lines)


def _plot(ds: xr.Dataset, summary: xr.Dataset, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    names = [str(t) for t in ds.target.values]
    labels = [str(e) for e in ds.estimator.values]
    fig, axes = plt.subplots(2, len(names), figsize=(3.6 * len(names) + 1.0, 7.2), squeeze=False, sharey="row")
    ypos = np.arange(len(labels))[::-1]
    first = ds.isel(run=0)
    for j, target in enumerate(names):
        ax = axes[0][j]
        row = first.sel(target=target)
        ax.hlines(
            ypos, row["bootstrap_lo"], row["bootstrap_hi"], color="tab:blue", linewidth=2.2, label="bootstrap 95%"
        )
        ax.plot(row["value"], ypos, "o", color="tab:blue")
        ips = labels.index("IPS")
        ax.hlines(
            ypos[ips] - 0.3,
            row["betting_lo"],
            row["betting_hi"],
            color="tab:orange",
            linewidth=2.2,
            label="betting 95% (IPS)",
        )
        ax.axvline(float(row["truth"]), color="black", linestyle="--", linewidth=1.2, label="true value")
        ax.set_title(f"{target}\none log of {ds.attrs['horizon']:,} rounds", fontsize=9)
        ax.set_xlabel("policy value")
        ax.grid(axis="x", alpha=0.3)
        ax = axes[1][j]
        s = summary.sel(target=target)
        cov, cov_se = s["coverage_bootstrap"].values, s["coverage_bootstrap_se"].values
        ax.errorbar(cov, ypos, xerr=2 * cov_se, fmt="o", color="tab:blue", label="bootstrap")
        ax.errorbar(
            [float(s["coverage_betting"])],
            [ypos[ips] - 0.3],
            xerr=[2 * float(s["coverage_betting_se"])],
            fmt="s",
            color="tab:orange",
            label="betting (IPS)",
        )
        ax.axvline(0.95, color="black", linestyle=":", linewidth=1.2)
        ax.axvspan(0.93, 0.97, color="0.85", zorder=0)
        ax.set_xlim(min(0.5, float(np.nanmin(cov)) - 0.05), 1.04)
        ax.set_title(f"coverage over {ds.sizes['run']:,} logs (+-2 se)", fontsize=9)
        ax.set_xlabel("fraction of intervals covering the truth")
        ax.grid(axis="x", alpha=0.3)
    for r in range(2):
        axes[r][0].set_yticks(ypos, labels)
    axes[0][-1].legend(loc="lower right", fontsize=7)
    axes[1][-1].legend(loc="lower left", fontsize=7)
    fig.suptitle("Off-policy evaluation on GLM-TSL's adaptive logs (logistic bandit, K = 5, d = 3)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(
    out_dir: str | Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool | None = None,
) -> dict[str, Path]:
    """Run the experiment; write ``ope_logistic.png``, ``ope_logistic.nc`` (every log's estimates) and ``ope_logistic.md``.

    Parameters
    ----------
    out_dir : path
    quick : bool
        400 rounds, 8 logs, M = 16, B = 50 (a smoke run) instead of 20,000 rounds, 1,000 logs,
        M = 100, B = 200.
    runs, horizon : int, optional
        Override the number of replicate logs / rounds per log.
    seed : int
    progress : bool, optional
        Print progress per chunk of logs (default: on).
    """
    settings = dict(QUICK if quick else FULL)
    if runs is not None:
        settings["runs"] = check_int("ope-logistic", "runs", runs, low=2)
    if horizon is not None:
        settings["horizon"] = check_int("ope-logistic", "horizon", horizon, low=2 * D)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    ds = simulate_and_analyse(
        settings["horizon"],
        settings["runs"],
        settings["samples"],
        settings["bootstrap"],
        min(settings["chunk"], settings["runs"]),
        seed,
        progress is not False,
    )
    seconds = time.perf_counter() - start
    summary = summarize(ds)
    paths = {"plot": out / "ope_logistic.png", "results": out / "ope_logistic.nc", "summary": out / "ope_logistic.md"}
    ds.to_netcdf(paths["results"])
    paths["summary"].write_text(_markdown(ds, summary, seconds))
    _plot(ds, summary, paths["plot"])
    return paths
