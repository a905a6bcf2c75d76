"""along_run(): expected rounds and methods, finite distances, one compiled sampler; the plots render."""

import numpy as np
from bayesbandit.diagnostics import _fit, along_run, plot_along_run
from bayesbandit.models import logistic

import bayesbandit as bb


def test_along_run_and_plots(tmp_path):
    rng = np.random.default_rng(0)
    arms = rng.uniform(-1, 1, size=(8, 2))
    rounds = [15, 60]
    settings = dict(num_draws=150, num_warmup=150, num_chains=2)
    # "vectorized" (vmapped chains) here; the compare tests use the default, "sequential".
    df = along_run(
        bb.GLMTSL(logistic()),
        arms,
        theta_true=np.array([1.0, -1.0]),
        rounds=rounds,
        chain_method="vectorized",
        **settings,
    )
    assert sorted(df["round"].unique()) == rounds
    assert set(df["method"]) == {"laplace", "fpl"}
    assert len(df) == 4
    assert np.all(np.isfinite(df[["kl", "w1_max", "coverage90"]].to_numpy()))
    assert list(df["num_obs"].unique()) == [15.0, 60.0]
    # The per-arm history always has K rows: both snapshots reuse one compiled NUTS program.
    nuts = _fit._nuts_fn(bb.bind(logistic(), arms), 150, 150, "vectorized", True, 0.8, 10)
    assert nuts._cache_size() == 1
    plot_along_run(df, tmp_path / "along.png")
    assert (tmp_path / "along.png").stat().st_size > 0
