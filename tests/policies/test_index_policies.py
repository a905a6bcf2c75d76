"""Sub-TS and Sub-Elim (Yang et al.): exact twins, learning, catalogue changes, bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayesbandit.envs.catalogue import SyntheticCatalogue
from bayesbandit.errors import InvalidInput, UnknownArm
from bayesbandit.index import Catalogue
from bayesbandit.policies.index import SubElim, SubTS
from bayesbandit.policies.index._stage import pack_matrix, pack_outer
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


@pytest.mark.parametrize(
    ("policy", "add_count"),
    [(SubTS(beta=0.5, shortlist=20), 2), (SubElim(beta=0.2, eta=0.01, shortlist=20), 0)],
    ids=repr,
)
def test_annoy_policies_learn_and_match_their_exact_twins(policy, add_count):
    """In the last quarter, regret per round far below uniform play's; total regret within the run-to-run
    noise of the exact twin (common random numbers). Sub-Elim on a fixed catalogue: it plays its last
    stage uniformly, and arrivals keep it exploring far longer than these 3,000 rounds."""
    env = SyntheticCatalogue(initial_arms=1000, d=6, horizon=3000, add_count=add_count)
    twin = dataclasses.replace(policy, index="exact")
    ds = simulate_catalogue({"annoy": policy, "exact": twin}, env, runs=3, seed=0)
    runs = [env.reset(0, r) for r in range(3)]
    uniform = np.mean([run.means.max() - run.means.mean() for run in runs])
    late = ds.regret.isel(round=slice(-750, None)).mean(("run", "round"))
    assert float(late.sel(policy="annoy")) < 0.5 * uniform
    assert float(late.sel(policy="exact")) < 0.5 * uniform
    total = ds.regret.sum("round")
    diff = float((total.sel(policy="annoy") - total.sel(policy="exact")).mean())
    assert abs(diff) <= 2 * float(total.sel(policy="exact").std()) + 0.1 * float(total.sel(policy="exact").mean())


def test_sub_elim_eliminates_and_never_empties():
    env = SyntheticCatalogue(initial_arms=1000, d=4, horizon=3000, add_every=20, add_count=2)
    policy = SubElim(beta=0.1, eta=0.01, index="exact")
    run = env.reset(0, 0)
    state = policy.init(run.initial)
    rng = np.random.default_rng(0)
    for t in range(env.horizon):
        change = run.changes(t)
        if change is not None:
            policy.add_arms(state, change.add_ids, change.add_features)
        item, _ = policy.select(state, None, rng)
        policy.update(state, None, item, run.reward(item, t))
    assert state.eliminated > 500
    assert len(state) >= 1
    live = np.fromiter(state.stage_of, dtype=np.int64)
    assert run.means.argmax() in live or run.means[live].max() > run.means.max() - 0.05


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
    assert len(state.store if isinstance(policy, SubTS) else state) == 50
    assert _state_snapshot(policy, state) == before


def test_bad_hyper_parameters_raise():
    with pytest.raises(InvalidInput, match="index"):
        SubTS(index="faiss")
    with pytest.raises(InvalidInput, match="shortlist"):
        SubElim(shortlist=0)
    with pytest.raises(InvalidInput, match="eta"):
        SubElim(eta=0.5)
