"""Sub-TS and Sub-Elim (Yang et al.): exact twins, learning, catalogue changes, bad input."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pytest

from bayesbandit.envs.catalogue import SyntheticCatalogue
from bayesbandit.errors import InvalidInput, UnknownArm
from bayesbandit.index import AnnoyIndex, Catalogue
from bayesbandit.policies.sublinear import SubElim, SubTS
from bayesbandit.policies.sublinear._stage import Stage, pack_matrix, pack_outer
from bayesbandit.sim.catalogue import simulate_catalogue

SMALL = SyntheticCatalogue(initial_arms=400, d=6, horizon=600, add_every=20, add_count=2, remove_count=1)


def linear_ts_reference(run, horizon, beta, rng):
    """Textbook linear TS over every live arm (numpy), the baseline Sub-TS must reproduce."""
    live = dict(zip(run.initial.ids.tolist(), run.initial.features, strict=True))
    d = run.initial.features.shape[1]
    v_inv, b = np.eye(d), np.zeros(d)
    actions = []
    for t in range(horizon):
        change = run.changes(t)
        if change is not None:
            for item in change.remove_ids.tolist():
                del live[item]
            live.update(zip(change.add_ids.tolist(), change.add_features, strict=True))
        theta = v_inv @ b + beta * np.linalg.cholesky(v_inv) @ rng.standard_normal(d)
        ids = np.fromiter(live, dtype=np.int64)
        item = int(ids[np.argmax(np.stack([live[i] for i in ids.tolist()]) @ theta)])
        x = live[item]
        vx = v_inv @ x
        v_inv = v_inv - np.outer(vx, vx) / (1 + x @ vx)
        b = b + run.reward(item, t) * x
        actions.append(item)
    return np.array(actions)


def test_sub_ts_with_the_exact_index_is_linear_ts():
    ds = simulate_catalogue({"exact": SubTS(index="exact", beta=0.5)}, SMALL, runs=1, seed=3)
    reference = linear_ts_reference(SMALL.reset(3, 0), SMALL.horizon, 0.5, np.random.default_rng([3, 0, 1]))
    np.testing.assert_array_equal(ds.action.sel(policy="exact", run=0).values, reference)


def test_sub_elim_lifted_exact_index_equals_the_exhaustive_scan():
    """Queries through an ExactIndex over vec(x x^T) (shortlist, then rescoring) choose as scanning every arm.

    Raw Gaussian arms: with unit-norm arms every uncertainty ties at V = I, and a shortlist cannot
    reproduce how a full scan breaks a 500-way tie."""
    env = SyntheticCatalogue(initial_arms=500, d=5, horizon=800, add_every=20, add_count=2, normalise=False)
    ds = simulate_catalogue(
        {
            "lifted": SubElim(index="exact", exact_below=0, beta=0.3, eta=0.01),
            "scan": SubElim(index="exact", exact_below=10**9, beta=0.3, eta=0.01),
        },
        env,
        runs=1,
        seed=1,
    )
    np.testing.assert_array_equal(ds.action.sel(policy="lifted").values, ds.action.sel(policy="scan").values)


def test_packing_gives_the_quadratic_form(rng):
    x = rng.standard_normal((7, 5))
    a = rng.standard_normal((5, 5))
    a = a @ a.T
    np.testing.assert_allclose(pack_outer(x) @ pack_matrix(a), np.einsum("ij,jk,ik->i", x, a, x), rtol=1e-12)
    assert pack_outer(x).shape == (7, 15)


class _CountNulls:
    """A host policy that plays as ``policy`` and counts, per run, the nulls its ``select`` reports (Sub-Elim's
    re-bucketings: a full scan of a stage when the index finds no uncertain arm; 0 for Sub-TS)."""

    kind: ClassVar[str] = "host"

    def __init__(self, policy):
        self.policy, self.nulls = policy, []

    def __getattr__(self, name):
        return getattr(self.policy, name)

    def init(self, *args, **kwargs):
        self.nulls.append(0)  # a run starts
        return self.policy.init(*args, **kwargs)

    def select(self, state, arms, key):
        item, info = self.policy.select(state, arms, key)
        self.nulls[-1] += getattr(info, "rebuckets", 0)
        return item, info

    def __repr__(self):
        return repr(self.policy)


def play_counted(policy, env, runs, seed):
    """``(regret (run, round), nulls per run)`` of ``policy`` on runs ``0 .. runs - 1`` of ``seed``."""
    counted = _CountNulls(policy)
    ds = simulate_catalogue({"policy": counted}, env, runs=runs, seed=seed)
    return ds.regret.sel(policy="policy"), np.array(counted.nulls)


@functools.cache
def exact_twin_runs(policy, env, seed):
    """:func:`play_counted` of an ``index="exact"`` policy over TWIN_RUNS runs, computed once per module.

    Run ``r`` of a comparison depends on ``(seed, r)`` only (its catalogue, its policy generator, a
    fresh state), so the first ``n`` of these runs are the runs of a comparison of ``n`` runs; an
    exact index has no seed, so the twins of the Annoy policies of every forest seed are one policy."""
    return play_counted(policy, env, TWIN_RUNS, seed)


class TwinComparison(NamedTuple):
    """Annoy policy vs its exact twin over paired runs (common random numbers)."""

    runs: int
    diff: float  # mean over runs of total regret, Annoy minus exact
    se: float  # its standard error (paired: sd of the per-run differences / sqrt(runs))
    bound: float  # TWIN_Z * se + TWIN_TOLERANCE * mean exact total regret
    exact_total: float  # mean total regret of the exact twin
    late: tuple[float, float]  # mean regret per round over the last quarter: Annoy, exact
    uniform: float  # uniform play's regret per round
    nulls: tuple[float, float]  # nulls (re-bucketings) per run: Annoy, exact

    def failures(self) -> list[str]:
        """The violated claims (empty: the Annoy policy learns and matches its twin)."""
        out = []
        if self.late[0] >= 0.5 * self.uniform or self.late[1] >= 0.5 * self.uniform:
            out.append("learns")
        if abs(self.diff) > self.bound:
            out.append("regret")
        if self.nulls[0] > self.nulls[1] + TWIN_EXTRA_NULLS:
            out.append("nulls")
        return out


# The verdict rests on the mean paired difference of TWIN_RUNS runs, not on single runs: a run of
# the Annoy policy and the same run of its exact twin share every random number, but the first
# round in which the index answers with another (equally admissible) arm sends the two runs apart,
# and from there on they differ as much as two unpaired runs. Under "no difference" the bound
# |diff| <= 3 se is a two-sided z-test at level 0.3% (t with 29 degrees of freedom: 0.5%); the
# tolerance, 10% of the exact twin's regret, is the practical margin granted to approximate search.
TWIN_RUNS = 30
TWIN_Z = 3.0
TWIN_TOLERANCE = 0.1
# Sub-Elim's nulls per run over the exact twin's (a false null costs a full scan of the stage): measured
# +0.00 to +0.07 over 8 forest seeds, +1.8 to +2.6 for an index answering random queries.
TWIN_EXTRA_NULLS = 0.5
TWIN_CASES = {  # the policy and the catalogue it plays
    "SubTS": (SubTS(beta=0.5, shortlist=20), SyntheticCatalogue(initial_arms=1000, d=6, horizon=3000, add_count=2)),
    "SubElim": (
        SubElim(beta=1.0, eta=0.01, shortlist=20),
        SyntheticCatalogue(initial_arms=1000, d=6, horizon=3000, add_count=0),
    ),
}


def compare_with_exact_twin(policy, env, runs=TWIN_RUNS, seed=0) -> TwinComparison:
    """Play ``policy`` (an Annoy policy) and its ``index="exact"`` twin on ``runs`` paired runs."""
    assert runs <= TWIN_RUNS, "the exact twin's runs are computed for TWIN_RUNS runs"
    annoy, annoy_nulls = play_counted(policy, env, runs, seed)
    exact, exact_nulls = exact_twin_runs(dataclasses.replace(policy, index="exact", seed=0), env, seed)
    exact, exact_nulls = exact.isel(run=slice(runs)), exact_nulls[:runs]
    total = {"annoy": annoy.sum("round"), "exact": exact.sum("round")}
    diffs = (total["annoy"] - total["exact"]).values
    se = float(diffs.std(ddof=1) / np.sqrt(runs))
    exact_total = float(total["exact"].mean())
    late = [regret.isel(round=slice(-(env.horizon // 4), None)).mean(("run", "round")) for regret in (annoy, exact)]
    uniform = np.mean([run.means.max() - run.means.mean() for run in (env.reset(seed, r) for r in range(runs))])
    return TwinComparison(
        runs=runs,
        diff=float(diffs.mean()),
        se=se,
        bound=TWIN_Z * se + TWIN_TOLERANCE * exact_total,
        exact_total=exact_total,
        late=(float(late[0]), float(late[1])),
        uniform=float(uniform),
        nulls=(float(annoy_nulls.sum()) / runs, float(exact_nulls.sum()) / runs),
    )


@pytest.mark.parametrize("forest_seed", [0, 100])
@pytest.mark.parametrize("case", list(TWIN_CASES))
def test_annoy_policies_learn_and_match_their_exact_twins(case, forest_seed):
    """In the last quarter, regret per round far below uniform play's; over TWIN_RUNS paired runs the mean
    difference of total regret within TWIN_Z standard errors plus TWIN_TOLERANCE of the exact twin's
    (see TWIN_RUNS); Sub-Elim at most TWIN_EXTRA_NULLS more nulls per run than its twin.

    Annoy's forest depends on its seed and on the processor Annoy was compiled for, and single runs
    depend on the forest: in some rounds the approximate search answers with another arm than the
    exact search (for Sub-Elim any arm of uncertainty at least ``2^{-s-1}`` is admissible), and the
    run then goes its own way. Single runs of the Annoy policy can have half or twice the twin's
    regret, in both directions and as often as two forests differ from each other: an inherent cost
    of approximate search, not a defect, so no single run is compared. Two forest seeds stand in for
    two processors.

    Sub-Elim at ``beta=1`` (the reward noise's scale) on a fixed catalogue. At ``beta=0.2`` it
    eliminates all but two or three arms (the best one too, in 29 of 30 runs) at its first null,
    round ~12, after a dozen noisy rewards, and plays them uniformly to the end: its regret is a
    draw of which arms survive (run-to-run sd 65% of the mean), and the index, queried only in
    those first rounds, hardly matters (an index answering random ids does as well). At ``beta=1``
    the stage indexes answer ~300 queries per run, and a broken index shows in the nulls, which the
    exact twin has only where a stage truly holds no uncertain arm (Sub-Elim's false-null rescue
    keeps the regret close even then). Arrivals would keep Sub-Elim exploring far longer than
    these 3,000 rounds."""
    policy, env = TWIN_CASES[case]
    result = compare_with_exact_twin(dataclasses.replace(policy, seed=forest_seed), env)
    print(f"{case} forest_seed={forest_seed}: {result}")
    assert not result.failures(), result


@pytest.mark.parametrize("case", list(TWIN_CASES))
def test_the_twin_comparison_fails_for_an_index_that_ignores_the_query(case, monkeypatch):
    """The comparison above can fail: with an Annoy index answering a random query instead, Sub-TS's regret
    leaves the bound and Sub-Elim's nulls do."""
    draws, query = np.random.default_rng(0), AnnoyIndex.query

    def ignore_query(self, q, k):
        return query(self, draws.standard_normal(q.shape), k)  # an honest answer to another query

    monkeypatch.setattr(AnnoyIndex, "query", ignore_query)
    policy, env = TWIN_CASES[case]
    result = compare_with_exact_twin(policy, env, runs=10)
    print(f"{case} with an index answering random queries: {result}")
    assert ("regret" if case == "SubTS" else "nulls") in result.failures(), result


def _play_sub_elim(policy: SubElim, env: SyntheticCatalogue) -> tuple[Any, Any]:
    """Run 0 of ``env`` played by ``policy`` to the horizon, arrivals included: (the run, the final state)."""
    run = env.reset(0, 0)
    state = policy.init(run.initial)
    rng = np.random.default_rng(0)
    for t in range(env.horizon):
        change = run.changes(t)
        if change is not None:
            policy.add_arms(state, change.add_ids, change.add_features)
        item, _ = policy.select(state, None, rng)
        policy.update(state, None, item, run.reward(item, t))
    return run, state


def test_sub_elim_eliminates_and_never_empties():
    env = SyntheticCatalogue(initial_arms=1000, d=4, horizon=3000, add_every=20, add_count=2)
    run, state = _play_sub_elim(SubElim(beta=0.1, eta=0.01, index="exact"), env)
    assert state.eliminated > 500
    assert len(state) >= 1
    live = np.fromiter(state.stage_of, dtype=np.int64)
    assert run.means.argmax() in live or run.means[live].max() > run.means.max() - 0.05


def test_an_arm_placed_again_is_judged_by_its_new_key_not_its_old_one():
    stage = Stage(1, 2, None)
    ids, features = np.array([7, 8]), np.eye(2)
    stage.add(ids, features, np.array([0.1, 0.2]))
    stage.remove(ids[:1])
    stage.add(ids[:1], features[:1], np.array([0.9]))  # arm 7 again, with a larger key
    assert stage.eliminate(0.5, lambda a: False) == [8]  # its old key 0.1 < 0.5 does not count
    assert stage.current_heap() == [(0.9, 7)]


def test_re_bucketing_gives_the_arms_that_stay_keys_from_the_current_theta():
    env = SyntheticCatalogue(initial_arms=300, d=3, horizon=50, add_every=1000, add_count=0)
    policy = SubElim(beta=1.0, eta=0.01, index="exact")
    _, state = _play_sub_elim(policy, env)  # theta moves away from where the keys were computed
    stage = next(st for st in state.stages if len(st) > 1 and st.s < policy.s_max)
    policy._rebucket(state, stage)
    assert len(stage) > 0
    u = policy.beta * state.stats.uncertainty(stage.store.matrix)
    fresh = stage.store.matrix @ state.stats.theta + np.maximum(2.0**-stage.s, u)
    np.testing.assert_allclose([stage.keys[i] for i in stage.store.ids.tolist()], fresh, rtol=1e-12)


def test_a_narrow_beta_eliminates_the_best_arm_and_a_wide_one_keeps_it():
    """What the sublinear results rest on: with beta = 0.3 (the synthetic tables' Elim setting) the
    confidence bounds do not hold and elimination ends on a few arms, most often without the best
    (``kept_gap > 0``); with beta = 3 the best arm survives every run."""
    env = SyntheticCatalogue(initial_arms=300, horizon=2000, add_count=0, add_every=10**6)

    def ends(beta: float) -> tuple[np.ndarray, np.ndarray]:
        policy = SubElim(beta=beta, eta=1 / np.sqrt(env.horizon), index="exact")
        ds = simulate_catalogue({"Linear Elim": policy}, env, runs=10, seed=0)
        return ds.kept_arms.values[0], ds.kept_gap.values[0]

    kept, gap = ends(0.3)
    assert kept.max() <= 5 and int(np.sum(gap > 0.01)) >= 6, (kept, gap)
    kept, gap = ends(3.0)
    assert kept.min() > 100 and np.all(gap == 0.0), (kept, gap)


def test_environment_best_arm_is_the_brute_force_best_after_every_change():
    run = SMALL.reset(0, 0)
    for t in range(SMALL.horizon):
        run.changes(t)
        assert run.best_mean == run.means[run.live].max()
    assert run.num_live == SMALL.final_arms


def test_same_seed_same_run():
    policies = {"ts": SubTS(beta=0.5, shortlist=10)}
    a = simulate_catalogue(policies, SMALL, horizon=200, runs=2, seed=5)
    b = simulate_catalogue(policies, SMALL, horizon=200, runs=2, seed=5)
    np.testing.assert_array_equal(a.action.values, b.action.values)


def _state_snapshot(policy, state):
    rng = np.random.default_rng(9)
    return policy.select(state, None, rng)[0], state.stats.t


@pytest.mark.parametrize("policy", [SubTS(index="exact"), SubElim(index="exact")], ids=repr)
def test_bad_catalogue_changes_raise_and_leave_the_state_unchanged(policy):
    rng = np.random.default_rng(0)
    state = policy.init(Catalogue(np.arange(50), rng.standard_normal((50, 3))))
    before = _state_snapshot(policy, state)
    with pytest.raises(InvalidInput, match="already"):
        policy.add_arms(state, np.array([3]), rng.standard_normal((1, 3)))
    with pytest.raises(InvalidInput, match="repeats"):
        policy.add_arms(state, np.array([100, 100]), rng.standard_normal((2, 3)))
    with pytest.raises(InvalidInput, match="shape"):
        policy.add_arms(state, np.array([100]), rng.standard_normal((1, 4)))
    with pytest.raises(InvalidInput, match="NaN"):
        policy.add_arms(state, np.array([100]), np.full((1, 3), np.nan))
    with pytest.raises(UnknownArm):
        policy.update(state, None, 999, 1.0)
    if isinstance(policy, SubTS):
        with pytest.raises(UnknownArm, match="999"):
            policy.remove_arms(state, np.array([1, 999]))
    else:
        with pytest.raises(InvalidInput, match="additions only"):
            policy.remove_arms(state, np.array([1]))
    assert len(state.index if isinstance(policy, SubTS) else state) == 50
    assert _state_snapshot(policy, state) == before


def test_bad_hyper_parameters_raise():
    with pytest.raises(InvalidInput, match="index"):
        SubTS(index="faiss")
    with pytest.raises(InvalidInput, match="shortlist"):
        SubElim(shortlist=0)
    with pytest.raises(InvalidInput, match="eta"):
        SubElim(eta=0.5)
