"""along_run(): expected rounds and methods, finite distances; the plots render."""

import numpy as np
from bayesbandit.diagnostics import along_run, plot_along_run
from bayesbandit.models import logistic

import bayesbandit as bb


def test_along_run_and_plots(tmp_path):
    rng = np.random.default_rng(0)
    arms = rng.uniform(-1, 1, size=(8, 2))
    rounds = [15, 60]
    df = along_run(
        bb.GLMTSL(logistic()), arms, np.array([1.0, -1.0]), rounds, num_draws=150, num_warmup=150, num_chains=2
    )
    assert sorted(df["round"].unique()) == rounds
    assert set(df["method"]) == {"laplace", "fpl"}
    assert len(df) == 4
    assert np.all(np.isfinite(df[["kl", "w1_max", "coverage90"]].to_numpy()))
    assert list(df["num_obs"].unique()) == [15.0, 60.0]
    plot_along_run(df, tmp_path / "along.png")
    assert (tmp_path / "along.png").stat().st_size > 0
