"""Piecewise-stationary Bernoulli bandit: SMPyBandits' "Problem 1", forgetting and change-point restarts.

Setting (spec ``ope_and_drift.md`` section 2.2; SMPyBandits ``NonStationaryBandits.md``):

* ``K = 3`` Bernoulli arms, ``T = 5,000`` rounds, change points 1000, 2000, 3000, 4000, means
  ``[.3, .5, .9] -> [.3, .2, .9] -> [.3, .2, .1] -> [.7, .2, .1] -> [.7, .5, .1]``
  (:class:`bayesbandit.envs.BernoulliBandit` per segment, :class:`bayesbandit.drift.PiecewiseStationary`);
* the stationary control: the same policies on the first segment's means for all ``T`` rounds;
* Thompson sampling is GLM-TSL with a logistic program on the one-hot arm features (a Laplace
  posterior per arm, prior ``theta_i ~ N(0, 1.5^2)``, close to the logit of a uniform mean, whose
  standard deviation is 1.8), ``a = 1``;
* forgetting: discounted TS with ``gamma = 0.95`` (the ``gamma`` of SMPyBandits' DTS, whose rule differs:
  ``DiscountedBayesianIndexPolicy.getReward`` discounts the pulled arm ``K`` times a pull and the other
  arms never, ``Discounted`` every arm once a round) and ``0.99`` (both reported), sliding-window TS
  with ``tau = 200`` (SMPyBandits' SW-klUCB uses ``tau = 206``);
* restarts: GLR with ``delta = 1 / sqrt(Upsilon_T T)`` (SMPyBandits' tuning for a global restart,
  ``Upsilon_T = 5``), CUSUM with ``h = log(T / Upsilon_T)`` (Liu et al.), ``epsilon = 0.1`` (under half
  the smallest change of the problem, 0.3) and ``M = 100`` (SMPyBandits' default), and the oracle
  restart at the known change points (:class:`bayesbandit.drift.KnownChanges`).

The issue's targets: discounted TS at most 0.6x stationary TS's regret, a change-point wrapper
lower still; on the stationary control the forgetting variants lose at most 10%.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from bayesbandit.experiments._drift import ratio_table, run_problem, write
from bayesbandit.models import logistic

from bayesbandit.drift import CUSUM, GLR, ChangePoint, Discounted, KnownChanges, PiecewiseStationary, SlidingWindow
from bayesbandit.envs import BernoulliBandit, describe
from bayesbandit.policies import GLMTSL
from bayesbandit.runtime import enable_x64
from bayesbandit.validation import check_int

__all__ = ["DESCRIPTION", "run", "policies", "MEANS", "CHANGE_POINTS", "FULL", "QUICK", "SMPYBANDITS"]

DESCRIPTION = "SMPyBandits Problem 1 (K=3 Bernoulli, 4 changes): TS vs discounted, sliding-window, GLR/CUSUM restarts"

MEANS = ((0.3, 0.5, 0.9), (0.3, 0.2, 0.9), (0.3, 0.2, 0.1), (0.7, 0.2, 0.1), (0.7, 0.5, 0.1))
CHANGE_POINTS = (1000, 2000, 3000, 4000)
HORIZON = 5000
FULL: dict[str, Any] = {"runs": 200}
QUICK: dict[str, Any] = {"runs": 3}
PRIOR_SCALE = 1.5
# SMPyBandits' final regret (mean +- sd over 40 runs; logs/main_nonstationary_py3_log.txt)
SMPYBANDITS = {
    "Thompson": "444 +- 106",
    "DTS (gamma=.95)": "221 +- 46",
    "SW-klUCB": "182 +- 31",
    "CUSUM-klUCB": "149 +- 33",
    "GLR-klUCB global": "94 +- 28",
    "GLR-klUCB local": "66 +- 22",
    "Oracle-klUCB": "33 +- 26",
}


def policies(horizon: int, changes: tuple[int, ...], quick: bool = False) -> dict[str, Any]:
    """The policies by name (``changes``: the known change points of the oracle restart, or none)."""
    ts = GLMTSL(logistic(prior_scale=PRIOR_SCALE), a=1.0)
    upsilon = len(CHANGE_POINTS) + 1
    out = {
        "TS": ts,
        "D-TS (0.95)": Discounted(ts, gamma=0.95),
        "D-TS (0.99)": Discounted(ts, gamma=0.99),
        "SW-TS (200)": SlidingWindow(ts, window=200),
        "GLR-TS": ChangePoint(ts, test=GLR(delta=1.0 / math.sqrt(upsilon * horizon))),
        "CUSUM-TS": ChangePoint(ts, test=CUSUM(epsilon=0.1, h=math.log(horizon / upsilon), M=100)),
    }
    if changes:
        out["oracle-restart TS"] = ChangePoint(ts, test=KnownChanges(change_points=changes))
    if quick:
        return {k: out[k] for k in ("TS", "D-TS (0.95)", "GLR-TS")}
    return out


def _scaled(horizon: int) -> tuple[int, ...]:
    """Problem 1's change points for another horizon (five equal segments)."""
    return tuple(horizon * c // HORIZON for c in CHANGE_POINTS)


def run(
    out_dir: str | Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool | None = None,
) -> dict[str, Path]:
    """Run Problem 1 and its stationary control; write ``drift_bernoulli.png``, ``.nc`` and ``.md``.

    Parameters
    ----------
    out_dir : path
    quick : bool
        3 runs of 500 rounds and three policies (a smoke run) instead of 200 runs of 5,000.
    runs, horizon : int, optional
        Override; the change points stay at the fifths of the horizon.
    seed : int
    progress : bool, optional

    Returns
    -------
    dict with keys ``"plot"``, ``"results"``, ``"summary"`` -> paths written.
    """
    enable_x64()
    horizon = check_int("drift-bernoulli", "horizon", int(horizon or (500 if quick else HORIZON)), low=10)
    runs = check_int("drift-bernoulli", "runs", int(runs or (QUICK if quick else FULL)["runs"]), low=1)
    progress = True if progress is None else progress
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    changes = _scaled(horizon)
    piecewise = PiecewiseStationary.from_envs(tuple(BernoulliBandit(means=m) for m in MEANS), changes)
    stationary = BernoulliBandit(means=MEANS[0])
    problems = {
        "piecewise": run_problem(
            policies(horizon, changes, quick), piecewise, changes, horizon, runs, seed, quick, progress
        ),
        "stationary": run_problem(policies(horizon, (), quick), stationary, (), horizon, runs, seed, quick, progress),
    }
    titles = {
        "piecewise": f"Problem 1: {len(changes)} changes, {runs} runs",
        "stationary": f"stationary control (means {MEANS[0]}), {runs} runs",
    }
    for ds, env in zip(problems.values(), (piecewise, stationary)):
        ds.attrs.update(env=describe(env), horizon=horizon, runs=runs, seed=seed, quick=int(quick))
    return write("drift-bernoulli", problems, titles, _header(problems, horizon, runs, seed, quick), "TS", out_dir)


def _header(problems: dict, horizon: int, runs: int, seed: int, quick: bool) -> str:
    piecewise = ratio_table(problems["piecewise"], "TS")
    stationary = ratio_table(problems["stationary"], "TS")

    def ratio(df: Any, name: str) -> str:
        return f"{df.loc[name, 'ratio_to_TS']:.3f} +- {df.loc[name, 'ratio_se']:.3f}"

    lines = [
        f"# drift-bernoulli: {DESCRIPTION}",
        "",
        f"T = {horizon:,}, change points {_scaled(horizon)}, means {' -> '.join(str(list(m)) for m in MEANS)}; "
        f"{runs} runs, seed {seed}{' (quick)' if quick else ''}. TS = GLM-TSL, logistic program on one-hot arms, "
        f"prior N(0, {PRIOR_SCALE}^2) per arm, a = 1. Every policy sees the same rewards (common random numbers); "
        "`ratio_se` is the paired standard error of the ratio of mean final regrets. `alarms`: restarts per run; "
        "`false_alarms`: those not within 500 rounds after a change point.",
        "",
        "Targets of the issue (ratio of final regret to stationary TS, paired se):",
        "",
        "| check | ratio | target |",
        "|---|---:|---|",
    ]
    for name in [n for n in piecewise.index if n != "TS"]:
        lines.append(f"| Problem 1, {name} | {ratio(piecewise, name)} | <= 0.6 (D-TS), lower still (restarts) |")
    for name in [n for n in stationary.index if n != "TS"]:
        lines.append(f"| stationary, {name} | {ratio(stationary, name)} | <= 1.10 |")
    lines += ["", "SMPyBandits' final regret on Problem 1 (40 runs, mean +- sd):", ""]
    lines += ["| policy | R_T |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in SMPYBANDITS.items()]
    return "\n".join(lines) + "\n"
