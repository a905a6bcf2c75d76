"""The combinatorial experiments: held-out tuning picks the tuning trials' best, paired gains, the 2 x 2 protocols and their report, the CLI runs."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xarray as xr
from bayesbandit.experiments import comb_clustered, comb_tuning
from bayesbandit.experiments.cli import main

import bayesbandit as bb
from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.errors import InvalidInput
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


def test_each_protocol_redraws_theta_per_trial_and_breaks_ties_by_its_rule():
    """C2UCB's first round scores every arm alike (all widths equal), so its first super arm is the tie rule's
    choice: the lowest indices in every trial under index ties, a different set per trial under random ties."""
    plan = comb_clustered.cells_plan((1.2,), 30, 3, 1, 0, sections=tuple(comb_clustered.PROTOCOLS))
    assert [cell.key for cell in plan] == [(1.2, name) for name in comb_clustered.PROTOCOLS]
    first = {}
    for cell in plan:
        env, oracle, blocks = cell.make()
        policy = bb.C2UCB(oracle=oracle, blocks=blocks, lam=1.0, alpha=1.0)
        ds = bb.simulate(policy, env, 1, runs=4, record=lambda rnd: {"best": rnd.outcome.best_expected_reward})
        first[cell.key[1]] = (ds.action.values.reshape(4, 3), ds.best.values.reshape(4))
    expected = {
        "index": ("index", 1),
        "random": ("random", 1),
        "index-redrawn": ("index", 4),
        "random-redrawn": ("random", 4),
    }
    for name, (rule, thetas) in expected.items():
        actions, best = first[name]
        # theta* redrawn per trial: the best super arm's value differs between the 4 trials; one theta*: the same
        assert len(set(best.round(12))) == thetas, name
        if rule == "index":
            assert (actions == [0, 1, 2]).all(), name
        else:
            assert len({tuple(sorted(a)) for a in actions}) == 4, name
    # the two redrawn protocols draw the same theta* in the same trial: they differ only in the tie rule
    np.testing.assert_array_equal(first["index-redrawn"][1], first["random-redrawn"][1])


def _stored_cell(offsets: dict[str, float], runs: int = 6) -> xr.Dataset:
    """A cell whose paired differences are known: algorithm ``a``'s total on trial ``r`` is
    ``offsets[a] + a's index x (+-1 alternating over r)``, so a difference's mean is the offsets' and its se is not 0."""
    names = [a.name for a in comb_tuning.ALGORITHMS]
    sign = np.where(np.arange(runs) % 2, -1.0, 1.0)
    totals = np.array([offsets.get(a, 0.0) + i * sign for i, a in enumerate(names)])
    reward = np.stack([totals / 2, totals / 2], axis=-1)  # two rounds
    return xr.Dataset(
        {
            "reward": (("algorithm", "run", "round"), reward),
            "chosen": ("algorithm", np.array(["lam = 1"] * len(names))),
            "proposed": ("algorithm", np.array([a.proposed for a in comb_tuning.ALGORITHMS])),
        },
        coords={"algorithm": names, "run": np.arange(runs), "round": np.arange(2)},
        attrs={"tuning_runs": 3, "report_runs": runs, "optimum": 20.0},
    )


def test_the_two_by_two_report_needs_only_the_four_protocols_cells(tmp_path, monkeypatch):
    angles = comb_clustered.ANGLES[::2]  # the quick run's
    offsets = {
        "index": {"PC2UCB": -10.0, "Arm-wise TS": 20.0},
        "random": {},
        "index-redrawn": {"PC2UCB": 10.0, "Arm-wise TS": 8.0, "Greedy": 9.0},
        "random-redrawn": {},
    }
    (tmp_path / "cells").mkdir()
    cells = {}
    for i, phi in enumerate(angles):
        for name, file in zip(offsets, ("index", "random", "index_redrawn", "random_redrawn"), strict=True):
            extra = {"PC2UCB": 10.0} if name == "random-redrawn" and i == 0 else {}
            cells[(phi, name)] = _stored_cell({**offsets[name], **extra})
            cells[(phi, name)].to_netcdf(tmp_path / "cells" / f"phi{phi:.4f}_{file}.nc")

    def refuse(*args, **kwargs):
        raise AssertionError("a stored cell was computed again")

    monkeypatch.setattr(comb_tuning, "tune_and_report", refuse)
    for wrong in (["index", "theta"], [], "index"):
        with pytest.raises(InvalidInput, match="sections"):
            comb_clustered.run(tmp_path, quick=True, sections=wrong)
    paths = comb_clustered.run(tmp_path, quick=True, sections=list(comb_clustered.PROTOCOLS))
    assert sorted((tmp_path / "cells").iterdir()) == sorted((tmp_path / "cells").glob("*.nc"))  # no draws computed
    report = paths["tie_rule_by_theta"].read_text()
    assert "over draws of theta*" not in paths["summary"].read_text()
    titles = [comb_clustered.SECTIONS[name] for name in comb_clustered.PROTOCOLS]
    assert report.count("| φ | " + " | ".join(titles) + " |") == 3
    for phi in angles:
        row = [comb_tuning.paired(cells[(phi, name)], "PC2UCB", "C2UCB") for name in comb_clustered.PROTOCOLS]
        assert f"| {phi / np.pi:.4g}π | " + " | ".join(f"{m:+.1f} ± {s:.1f}" for m, s in row) + " |" in report
    verdicts = [line for line in report.splitlines() if line.startswith("**Verdict")]
    assert len(verdicts) == 3
    index, random, index_redrawn, random_redrawn = titles
    pc2ucb, ts, best = verdicts
    assert "beyond 2 se under 3 of 4 protocols" in pc2ucb
    assert f"{index} (below 0 at 3 of 3 angles)" in pc2ucb and f"{index_redrawn} (above 0 at 3 of 3 angles)" in pc2ucb
    assert f"{random_redrawn} (above 0 at 1 of 3 angles)" in pc2ucb and pc2ucb.endswith(f"every angle: {random}.")
    assert "under 2 of 4 protocols" in ts and ts.endswith(f"every angle: {random}; {random_redrawn}.")
    # best proposed − best baseline: Arm-wise TS − Greedy (+20) under index ties; PC2UCB − Greedy (+1 ± 1.8) redrawn
    assert f"{index} (above 0 at 3 of 3 angles)" in best and f"{random_redrawn} (above 0 at 1 of 3 angles)" in best
    assert best.endswith(f"every angle: {random}; {index_redrawn}.")
    assert "+1.0 ± 1.8 (PC2UCB − Greedy)" in report


@pytest.mark.slow
def test_comb_experiments_run_quick_from_the_cli(tmp_path):
    assert main(["run", "comb-clustered", "--quick", "--out", str(tmp_path / "c"), "--no-progress"]) == 0
    summary = (tmp_path / "c" / "summary.md").read_text()
    cells = sorted((tmp_path / "c" / "cells").glob("*.nc"))
    assert (
        len(cells) == 15
    )  # three angles, each with both tie rules for one theta* and for theta* per trial, one more draw
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
