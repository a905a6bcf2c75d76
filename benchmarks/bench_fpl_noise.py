"""GLM-FPL's default perturbations (scaled to the posterior) against the paper's on Figure 1's problem.

``GLMFPL(noise="paper", a=0.5)`` is Kveton et al.'s practical GLM-FPL (rewards plus ``N(0, 0.25)``,
the prior as written); ``GLMFPL()`` anchors the prior at a prior draw and adds reward noise of the
reward's variance at the current fit (``a = 1``). Both run in one ``simulate`` call on Figure 1's
logistic bandit (K = 100, ``theta* ~ N(0, 3/d^2 I)``, prior ``N(0, 100^2 I)``): the same
instances, reward noise and keys (common random numbers). Reported: mean final cumulative regret
± standard error, and the paired difference with its standard error.

Usage, from the repository root: ``python -m benchmarks.bench_fpl_noise [--quick] [--runs R --horizon n]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import jax
import numpy as np
from bayesbandit.experiments.cli import _use_host_devices
from bayesbandit.models import logistic

import bayesbandit as bb
from benchmarks._common import fmt_paired, fmt_pm, machine_info, md_table, write_results

K = 100
PRIOR_SCALE = 100.0


def study(dims: tuple[int, ...], runs: int, horizon: int, seed: int = 0) -> str:
    """The paired comparison per dimension, as a markdown table."""
    model = logistic(prior_scale=PRIOR_SCALE)
    rows = []
    for d in dims:
        policies = {"paper": bb.GLMFPL(model, a=0.5, noise="paper"), "posterior": bb.GLMFPL(model)}
        env = bb.envs.LogisticBandit(K=K, d=d, theta_cov="paper")
        ds = bb.simulate(policies, env, horizon, runs=runs, seed=seed, progress=True)
        final = np.asarray(bb.sim.cumulative_regret(ds).isel(round=-1).values)  # (policy, run)
        rows.append(
            [
                d,
                fmt_pm(final[0]),
                fmt_pm(final[1]),
                fmt_paired(final[1] - final[0]),
                f"{int(ds['not_converged'][0].sum())} / {int(ds['not_converged'][1].sum())}",
            ]
        )
        print(rows[-1], flush=True)
    headers = [
        "d",
        "regret, paper (a = 0.5)",
        "regret, posterior (a = 1)",
        "paired difference (posterior - paper)",
        "rounds not converged (paper / posterior)",
    ]
    return md_table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small setting")
    parser.add_argument("--runs", type=int, default=20, help="instances per dimension (default 20)")
    parser.add_argument("--horizon", type=int, default=5_000, help="rounds (default 5,000)")
    args = parser.parse_args(argv)
    os.environ.setdefault("PJRT_NPROC", "1")
    _use_host_devices(os.cpu_count() or 1)
    bb.runtime.enable_x64()
    dims, runs, horizon = ((5,), 4, 300) if args.quick else ((5, 10), args.runs, args.horizon)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout.strip()
    text = "\n\n".join(
        [
            "# GLM-FPL: perturbations scaled to the posterior against the paper's, on Figure 1's problem",
            f"- command: `python -m benchmarks.bench_fpl_noise {' '.join(sys.argv[1:])}`\n- commit: {commit}\n"
            + machine_info(),
            f"{runs} instances x {horizon:,} rounds per dimension, K = {K}, prior N(0, {PRIOR_SCALE:g}^2 I), "
            f"{jax.device_count()} host devices; regret: mean final cumulative regret ± standard error.",
            study(dims, runs, horizon),
        ]
    )
    print(f"wrote {write_results('bench_fpl_noise', args.quick, text)}")


if __name__ == "__main__":
    main()
