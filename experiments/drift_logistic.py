"""Logistic bandit whose theta* is redrawn every 2,000 rounds: discounted and restarted GLM-TSL.

Setting:

* :class:`bayesbandit.envs.LogisticBandit` with ``K = 20`` fixed arms uniform on ``[-1, 1]^5`` and
  ``theta* ~ N(0, (3/d) I)`` (``theta_cov="unit"``: ``var(x^T theta*) = 1``), ``T = 10,000`` rounds;
* piecewise: ``theta*`` redrawn at rounds 2000, 4000, 6000, 8000
  (:class:`bayesbandit.drift.PiecewiseStationary`: the arms stay, the parameter of each segment is
  an independent draw);
* drifting: ``theta*`` follows a Gaussian random walk, ``0.01`` per coordinate and round
  (:class:`bayesbandit.drift.Drifting`), so it moves by about one prior standard deviation over the run;
* the stationary control: one ``theta*`` for all ``T`` rounds;
* GLM-TSL with ``logistic()`` (prior ``N(0, I)``), ``a = 1``; discounted with ``gamma = 0.99`` and
  ``0.995`` (effective windows 100 and 200 rounds); restarted by GLR with
  ``delta = 1 / sqrt(Upsilon_T T)`` (``Upsilon_T = 5``) watching each arm's rewards; the oracle restart at
  the known change points.

The issue's targets: discounted GLM-TSL at most 0.7x the stationary one's regret on the piecewise
problem; on the stationary control the forgetting variants lose at most 10%.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from bayesbandit.experiments._drift import ratio_table, run_problem, write
from bayesbandit.models import logistic

from bayesbandit.drift import GLR, ChangePoint, Discounted, Drifting, KnownChanges, PiecewiseStationary
from bayesbandit.envs import LogisticBandit, describe
from bayesbandit.policies import GLMTSL
from bayesbandit.runtime import enable_x64
from bayesbandit.validation import check_int

__all__ = ["DESCRIPTION", "run", "policies", "K", "D", "SEGMENT", "WALK_SCALE", "FULL", "QUICK"]

DESCRIPTION = "Logistic bandit (K=20, d=5), theta* redrawn every 2,000 rounds or drifting: discounted / GLR GLM-TSL"

K, D = 20, 5
SEGMENT = 2000
HORIZON = 10_000
WALK_SCALE = 0.01
FULL: dict[str, Any] = {"runs": 100}
QUICK: dict[str, Any] = {"runs": 3}


def policies(horizon: int, changes: tuple[int, ...], quick: bool = False) -> dict[str, Any]:
    """The policies by name (``changes``: the known change points of the oracle restart, or none)."""
    tsl = GLMTSL(logistic(), a=1.0)
    out = {
        "GLM-TSL": tsl,
        "D-GLM-TSL (0.99)": Discounted(tsl, gamma=0.99),
        "D-GLM-TSL (0.995)": Discounted(tsl, gamma=0.995),
        "GLR-GLM-TSL": ChangePoint(tsl, test=GLR(delta=1.0 / math.sqrt(5 * horizon))),
    }
    if changes:
        out["oracle-restart GLM-TSL"] = ChangePoint(tsl, test=KnownChanges(change_points=changes))
    if quick:
        return {k: out[k] for k in ("GLM-TSL", "D-GLM-TSL (0.99)", "GLR-GLM-TSL")}
    return out


def run(
    out_dir: str | Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    progress: bool | None = None,
) -> dict[str, Path]:
    """Run the piecewise, drifting and stationary problems; write ``drift_logistic.png``, ``.nc`` and ``.md``.

    Parameters
    ----------
    out_dir : path
    quick : bool
        3 runs of 600 rounds (a change every 120), three policies and no drifting problem, instead of
        100 runs of 10,000.
    runs, horizon : int, optional
        Override; the change points stay at the fifths of the horizon.
    seed : int
    progress : bool, optional

    Returns
    -------
    dict with keys ``"plot"``, ``"results"``, ``"summary"`` -> paths written.
    """
    enable_x64()
    horizon = check_int("drift-logistic", "horizon", int(horizon or (600 if quick else HORIZON)), low=10)
    runs = check_int("drift-logistic", "runs", int(runs or (QUICK if quick else FULL)["runs"]), low=1)
    progress = True if progress is None else progress
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    changes = tuple(horizon * i // 5 for i in range(1, 5))
    base = LogisticBandit(K=K, d=D, theta_cov="unit")
    envs = {
        "piecewise": (PiecewiseStationary(base, changes), changes),
        "drifting": (Drifting(base, kind="random_walk", scale=WALK_SCALE, horizon=horizon), ()),
        "stationary": (base, ()),
    }
    if quick:
        del envs["drifting"]
    problems = {
        name: run_problem(policies(horizon, cps, quick), env, cps, horizon, runs, seed, quick, progress)
        for name, (env, cps) in envs.items()
    }
    for name, ds in problems.items():
        ds.attrs.update(env=describe(envs[name][0]), horizon=horizon, runs=runs, seed=seed, quick=int(quick))
    titles = {
        "piecewise": f"theta* redrawn every {horizon // 5:,} rounds, {runs} runs",
        "drifting": f"theta* random walk ({WALK_SCALE} per round), {runs} runs",
        "stationary": f"stationary control, {runs} runs",
    }
    titles = {name: titles[name] for name in problems}
    return write("drift-logistic", problems, titles, _header(problems, horizon, runs, seed, quick), "GLM-TSL", out_dir)


def _header(problems: dict, horizon: int, runs: int, seed: int, quick: bool) -> str:
    tables = {name: ratio_table(ds, "GLM-TSL") for name, ds in problems.items()}
    targets = {"piecewise": "<= 0.7 (discounted)", "drifting": "-", "stationary": "<= 1.10"}
    lines = [
        f"# drift-logistic: {DESCRIPTION}",
        "",
        f"K = {K}, d = {D}, theta* ~ N(0, 3/d I), T = {horizon:,}, {runs} runs, seed {seed}"
        f"{' (quick)' if quick else ''}. GLM-TSL: logistic program, prior N(0, I), a = 1. Every policy sees the same "
        "instances and rewards (common random numbers); `ratio_se` is the paired standard error of the ratio of mean "
        "final regrets. `alarms`: restarts per run; `false_alarms`: those not within 500 rounds after a change point "
        "(every alarm, on the drifting and stationary problems).",
        "",
        "Targets of the issue (ratio of final regret to GLM-TSL's, paired se):",
        "",
        "| problem | policy | ratio | target |",
        "|---|---|---:|---|",
    ]
    for problem, df in tables.items():
        for name in [n for n in df.index if n != "GLM-TSL"]:
            ratio = f"{df.loc[name, 'ratio_to_GLM-TSL']:.3f} +- {df.loc[name, 'ratio_se']:.3f}"
            lines.append(f"| {problem} | {name} | {ratio} | {targets[problem]} |")
    return "\n".join(lines) + "\n"
