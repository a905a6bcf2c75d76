"""Sub-Elim's search counters (``SubElimState.index_use``), the kept-arms and search table of the sublinear
reports, and the Elim beta study of ``sublinear-synthetic`` (``elim_beta.md``)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from bayesbandit.experiments import sublinear_synthetic
from bayesbandit.experiments.sublinear_report import elimination_table, markdown_table, table_rows

from bayesbandit.envs.catalogue import SyntheticCatalogue
from bayesbandit.errors import InvalidInput
from bayesbandit.index import AnnoyIndex, ExactIndex
from bayesbandit.policies.sublinear import SubElim, SubTS
from bayesbandit.sim.catalogue import INDEX_USE, simulate_catalogue

TINY = SyntheticCatalogue(initial_arms=60, d=3, horizon=120, add_every=20, add_count=2)


def _use(ds: xr.Dataset, policy: str) -> dict[str, np.ndarray]:
    return {name: ds[name].sel(policy=policy).values for name in INDEX_USE}


def test_a_wide_beta_queries_once_a_round_and_a_narrow_one_never():
    """beta = 1e6: every arm has u > 1 and stays in stage 0, where a query always finds an arm of
    u >= 1/2: one query a round, no null. beta = 1e-6: every arm starts in the last stage, drawn
    uniformly: no query at all. The index answers only stages larger than exact_below."""
    policies = {
        "wide, index": SubElim(beta=1e6, eta=0.01, index="exact", exact_below=0),
        "wide, scan": SubElim(beta=1e6, eta=0.01, index="exact", exact_below=10**6),
        "narrow": SubElim(beta=1e-6, eta=0.01, index="exact"),
        "TS": SubTS(index="exact"),
    }
    ds = simulate_catalogue(policies, TINY, runs=2, seed=0)
    horizon = np.full(2, TINY.horizon)
    wide = _use(ds, "wide, index")
    np.testing.assert_array_equal(wide["queries"], horizon)
    np.testing.assert_array_equal(wide["index_queries"], horizon)
    np.testing.assert_array_equal(wide["null_queries"], 0)
    np.testing.assert_array_equal(wide["unqueried_rounds"], 0)
    scan = _use(ds, "wide, scan")
    np.testing.assert_array_equal(scan["queries"], horizon)
    np.testing.assert_array_equal(scan["index_queries"], 0)
    narrow = _use(ds, "narrow")
    np.testing.assert_array_equal(narrow["queries"], 0)
    np.testing.assert_array_equal(narrow["unqueried_rounds"], horizon)
    assert all(np.isnan(v).all() for v in _use(ds, "TS").values())  # Sub-TS reports no stage searches


class _Watch:
    """Counts, independently of the policy's own counters, what its searches did: per run, the calls of
    ``SubElim._query``, those that returned None, the calls of an index's ``query``, and the rounds whose
    ``select`` made no ``_query`` call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[dict[str, int]] = []
        self.in_select = 0
        query = SubElim._query

        def counted_query(policy, state, stage, v_inv):
            out = query(policy, state, stage, v_inv)
            self.in_select += 1
            self.runs[-1]["queries"] += 1
            self.runs[-1]["null_queries"] += out is None
            return out

        monkeypatch.setattr(SubElim, "_query", counted_query)
        for cls in (ExactIndex, AnnoyIndex):
            monkeypatch.setattr(cls, "query", self._index_query(cls.query))

    def _index_query(self, query):
        def counted(index, *args, **kwargs):
            if self.runs:
                self.runs[-1]["index_queries"] += 1
            return query(index, *args, **kwargs)

        return counted

    def wrap(self, policy: SubElim) -> _Watched:
        return _Watched(self, policy)


class _Watched:
    kind = "host"

    def __init__(self, watch: _Watch, policy: SubElim) -> None:
        self.watch, self.policy = watch, policy

    def __getattr__(self, name):
        return getattr(self.policy, name)

    def init(self, *args, **kwargs):
        self.watch.runs.append(dict.fromkeys(INDEX_USE, 0))
        return self.policy.init(*args, **kwargs)

    def select(self, state, arms, key):
        self.watch.in_select = 0
        out = self.policy.select(state, arms, key)
        self.watch.runs[-1]["unqueried_rounds"] += self.watch.in_select == 0
        return out

    def __repr__(self):
        return repr(self.policy)


@pytest.mark.parametrize("index", ["exact", "annoy"])
def test_the_search_counters_count_what_the_searches_did(index, monkeypatch):
    """On a catalogue where every kind of round happens (index queries, scans of small stages, nulls,
    uniform draws), the dataset's counters are what a watch on the searches counted, run by run."""
    env = SyntheticCatalogue(initial_arms=400, d=4, horizon=1500, add_every=20, add_count=2)
    watch = _Watch(monkeypatch)
    policy = SubElim(beta=0.6, eta=0.01, index=index, shortlist=10, exact_below=20, n_trees=4)
    ds = simulate_catalogue({"Sub-Elim": watch.wrap(policy)}, env, runs=2, seed=1)
    use = _use(ds, "Sub-Elim")
    for name in INDEX_USE:
        np.testing.assert_array_equal(use[name], [run[name] for run in watch.runs], err_msg=name)
    for name in INDEX_USE:
        assert use[name].min() > 0, (name, use)  # the catalogue exercises every counter
    assert (use["index_queries"] < use["queries"]).all()  # some stages were small enough to scan
    # every round ends on a query's answer, a uniform draw or the most uncertain arm left after a false
    # null; the rounds that make no query at all are uniform draws
    assert (use["queries"] - use["null_queries"] + use["unqueried_rounds"] <= env.horizon).all()


def test_a_saved_state_keeps_its_counters():
    policy = SubElim(beta=0.6, eta=0.01, index="exact", exact_below=20)
    env = SyntheticCatalogue(initial_arms=200, d=3, horizon=300, add_every=1000, add_count=0)
    run = env.reset(0, 0)
    state = policy.init(run.initial)
    rng = np.random.default_rng(0)
    for t in range(env.horizon):
        item, _ = policy.select(state, None, rng)
        policy.update(state, None, item, run.reward(item, t))
    assert state.index_use["queries"] > 0
    restored = policy.state_from_parts(*policy.state_parts(state))
    assert restored.index_use == state.index_use


def _dataset(kept: list[list[int]], gap: list[list[float]], use: dict[str, list[list[float]]]) -> xr.Dataset:
    names = ["Linear Elim, beta = 2", "Sub-Elim, p = 30, beta = 2", "Linear TS"]
    runs = len(kept[0])
    per_run = (("policy", "run"), np.ones((3, runs)))
    return xr.Dataset(
        {
            "regret": (("policy", "run", "round"), np.ones((3, runs, 5))),
            "total_seconds": (("policy", "run"), np.array([[4.0] * runs, [1.0] * runs, [1.0] * runs])),
            "step_seconds": (("policy", "run"), np.array([[4.0] * runs, [0.5] * runs, [1.0] * runs])),
            "init_seconds": per_run,
            "rebuild_seconds": per_run,
            "kept_arms": (("policy", "run"), np.array(kept)),
            "kept_gap": (("policy", "run"), np.array(gap)),
            **{name: (("policy", "run"), np.array(use[name], dtype=float)) for name in INDEX_USE},
        },
        coords={"policy": names, "run": np.arange(runs), "round": np.arange(5)},
    )


def test_the_elimination_table_reports_kept_arms_gaps_and_searches_per_run():
    nan = [np.nan] * 4
    ds = _dataset(
        kept=[[1, 1, 3, 1], [2, 5, 9, 4], [100] * 4],
        gap=[[0.25, 0.0, 1.11, 0.5], [0.0] * 4, [0.0] * 4],
        use={
            "queries": [[10, 20, 30, 40], [20_004, 20_000, 19_990, 20_010], nan],
            "index_queries": [[0, 1, 2, 3], [14_442, 14_000, 15_000, 14_500], nan],
            "null_queries": [[5, 5, 5, 6], [1, 2, 3, 4], nan],
            "unqueried_rounds": [[19_850, 19_000, 19_900, 19_870], [0] * 4, nan],
        },
    )
    rows = table_rows(ds)
    lines = elimination_table(rows).splitlines()
    assert len(lines) == 4  # header, rule, the two Elim rows: Linear TS reports no stage searches
    assert lines[2] == (
        "| Linear Elim, beta = 2 | 3 of 4 | 1 / 1 / 3 | 0.00-1.11 | 1 of 4 | 10 / 25 / 40 | 0 / 1.5 / 3 | "
        "5 / 5 / 6 | 19,000 / 19,860 / 19,900 |"
    )
    assert lines[3] == (
        "| Sub-Elim, p = 30, beta = 2 | 0 of 4 | 2 / 4.5 / 9 | 0.00-0.00 | 4 of 4 | 19,990 / 20,002 / 20,010 | "
        "14,000 / 14,471 / 15,000 | 1 / 2.5 / 4 | 0 / 0 / 0 |"
    )
    # the speed-up of "Sub-Elim, p = 30, beta = 2" is against "Linear Elim, beta = 2" (4 s total)
    assert (rows[1]["speedup_paper"], rows[1]["speedup_fair"]) == (8.0, 4.0)
    assert "| Sub-Elim, p = 30, beta = 2 | 5 ± 0 |" in markdown_table(rows)


def test_the_elim_beta_study_writes_its_own_file_from_what_it_ran(tmp_path):
    out = sublinear_synthetic.run(
        tmp_path, quick=True, runs=1, horizon=300, sections=sublinear_synthetic.ELIM_BETA_STUDY
    )
    text = out["elim_beta"].read_text()
    ds = xr.load_dataset(tmp_path / "tables" / "elim_beta_small.nc")
    assert list(ds.policy.values) == [
        "Linear Elim, beta = 0.3",
        "Sub-Elim, p = 30, beta = 0.3",
        "Linear Elim, beta = 2",
        "Sub-Elim, p = 30, beta = 2",
    ]
    assert "## K = 250" in text and "## K = 5,000" in text
    assert elimination_table(table_rows(ds)) in text
    assert "## Table" not in text and "## " not in out["summary"].read_text()  # the paper's tables were not run


@pytest.mark.parametrize("sections", [("elim_beta_tiny",), "elim_beta_small", []])
def test_an_unknown_table_key_a_bare_string_or_no_key_is_refused(tmp_path, sections):
    with pytest.raises(InvalidInput, match="'sections' parameter of sublinear_synthetic.run"):
        sublinear_synthetic.run(tmp_path, quick=True, sections=sections)
    assert not (tmp_path / "tables").exists()  # nothing was run or created
