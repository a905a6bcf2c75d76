"""The fixed-effort Newton start leaves GLM-TSL's regret and convergence as they were (paired, 100 instances)."""

from __future__ import annotations

import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.envs import LogisticBandit
from bayesbandit.inference import DenseNewton


def test_fixed_steps_keep_regret_and_the_not_converged_count():
    bb.runtime.enable_x64()
    policies = {
        "loop": bb.GLMTSL(logistic(), a=1.0, solver=DenseNewton(fixed_steps=0)),
        "fixed": bb.GLMTSL(logistic(), a=1.0, solver=DenseNewton(fixed_steps=2)),
    }
    ds = bb.simulate(policies, LogisticBandit(K=20, d=5), horizon=300, runs=100, seed=0)
    final = ds["regret"].sum("round")
    diff = final.sel(policy="fixed").values - final.sel(policy="loop").values
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    # Common random numbers: the same instances and noise; only the solver differs.
    assert abs(diff.mean()) <= 2 * se + 1e-12, (diff.mean(), se)
    not_converged = ds["not_converged"].sum("run")
    assert int(not_converged.sel(policy="fixed")) == int(not_converged.sel(policy="loop"))
    assert float(final.sel(policy="loop").mean()) > 1.0  # a bandit that learns, not a degenerate run
