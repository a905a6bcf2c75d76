"""The combinatorial experiments: held-out tuning picks the tuning trials' best, paired gains, the CLI runs."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xarray as xr
from bayesbandit.experiments import comb_clustered, comb_tuning
from bayesbandit.experiments.cli import main

from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.oracles import TopK


def test_tuning_chooses_on_tuning_trials_and_reports_fresh_ones(monkeypatch):
    monkeypatch.setattr(comb_tuning, "GRID", (0.01, 10.0))
    oracle = TopK(k=3)
    env = ClusteredSemiBandit(phi=1.3, oracle=oracle, num_arms=30)
    algorithms = tuple(a for a in comb_tuning.ALGORITHMS if a.name in ("C2UCB", "PC2UCB"))
    ds = comb_tuning.tune_and_report(env, oracle, 1, 6, tuning_runs=3, report_runs=4, seed=5, algorithms=algorithms)
    assert dict(ds.sizes) == {"algorithm": 2, "run": 4, "round": 6}
    for algorithm in algorithms:
        configs = comb_tuning.grid(algorithm)
        assert len(configs) == 4
        policies = [algorithm.make(oracle, 1, **c) for c in configs]
        tuning = comb_tuning.sweep(policies, env, 6, 3, seed=5).reward.sum("round").mean("run").values
        fresh = comb_tuning.sweep(policies, env, 6, 4, seed=6)
        best = int(np.argmax(tuning))
        assert str(ds.chosen.sel(algorithm=algorithm.name).values) == comb_tuning.label(configs[best])
        np.testing.assert_allclose(ds.reward.sel(algorithm=algorithm.name), fresh.reward.isel(config=best))
        optimistic = fresh.reward.sum("round").mean("run").max()
        assert float(ds.paper_protocol.sel(algorithm=algorithm.name)) == pytest.approx(float(optimistic))
    mean, se = comb_tuning.paired(ds, "PC2UCB", "C2UCB")
    totals = ds.reward.sum("round")
    diff = (totals.sel(algorithm="PC2UCB") - totals.sel(algorithm="C2UCB")).values
    assert mean == pytest.approx(diff.mean()) and se == pytest.approx(diff.std(ddof=1) / 2)
    assert comb_tuning.best_baseline(ds) == "C2UCB"


@pytest.mark.slow
def test_comb_experiments_run_quick_from_the_cli(tmp_path):
    assert main(["run", "comb-clustered", "--quick", "--out", str(tmp_path / "c"), "--no-progress"]) == 0
    summary = (tmp_path / "c" / "summary.md").read_text()
    cells = sorted((tmp_path / "c" / "cells").glob("*.nc"))
    assert len(cells) == 12  # three angles, each with both tie rules, with theta* redrawn, and another theta* draw
    for path in cells:
        ds = xr.load_dataset(path)
        if "theta_seed" in ds.attrs:  # another draw of theta*: the four algorithms of the draws table
            assert dict(ds.sizes) == {"algorithm": 4, "run": 4, "round": 10}
            assert set(ds.algorithm.values) == {name for pair in comb_clustered.PAIRS for name in pair}
            continue
        assert dict(ds.sizes) == {"algorithm": 7, "run": 4, "round": 10}
        # a round's reward: k = 10 arms of +-1 each, so an even number in [-10, 10]; regret is never negative
        assert np.all(np.abs(ds.reward) <= 10) and np.all(ds.reward % 2 == 0) and np.all(ds.regret >= 0)
        totals = ds.reward.sum("round")
        mean, se = totals.mean("run"), totals.std("run", ddof=1) / 2
        # the grid's best on the fresh trials is at least the configuration chosen on the tuning trials
        assert np.all(ds.paper_protocol >= mean - 1e-12)
        row = " | ".join(f"{float(m):.0f} ± {float(s):.0f}" for m, s in zip(mean.values, se.values, strict=True))
        assert f" | {ds.attrs['optimum']:.0f} | {row} |\n" in summary, path.name
        paired_mean, paired_se = comb_tuning.paired(ds, "PC2UCB", "C2UCB")
        assert f" | {paired_mean:+.1f} ± {paired_se:.1f} | " in summary, path.name
    if not os.path.exists(os.path.join(os.environ.get("BAYESBANDIT_DATA", ""), "ml-100k", "u.data")):
        pytest.skip("MovieLens 100K not found: set BAYESBANDIT_DATA to a folder holding ml-100k/u.data")
    assert main(["run", "comb-movielens", "--quick", "--out", str(tmp_path / "m"), "--no-progress"]) == 0
    assert "Table I" in (tmp_path / "m" / "summary.md").read_text()
