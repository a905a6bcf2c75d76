"""Agent.select(n=...) and Agent.update_many: batched decisions and delayed feedback in one call each."""

import numpy as np
import pytest
from _asserts import leaves, snapshot
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import TopK

bb.runtime.enable_x64()
RNG = np.random.default_rng(3)
ARMS = RNG.uniform(-1, 1, (12, 3))
THETA = np.array([1.0, -1.0, 0.5])


def _rewards(arms, actions, seed):
    p = 1 / (1 + np.exp(-np.asarray(arms)[..., :] @ THETA))
    chosen = np.take_along_axis(p, np.asarray(actions)[..., None], axis=-1)[..., 0] if p.ndim > 1 else p[actions]
    return (np.random.default_rng(seed).random(chosen.shape) < chosen).astype(float)


def test_select_n_draws_one_posterior_sample_per_decision():
    agent, twin = (bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0) for _ in range(2))
    for each in (agent, twin):
        for _ in range(6):
            arm = each.select()
            each.update(arm, _rewards(ARMS, arm, arm))
    batch = agent.select(n=64)
    assert batch.shape == (64,) and batch.dtype.kind == "i" and np.all((batch >= 0) & (batch < len(ARMS)))
    assert len(np.unique(batch)) > 1  # independent posterior samples disagree on an uncertain posterior
    np.testing.assert_array_equal(twin.select(n=64), batch)  # same key, same decisions
    assert agent.last_select_info.theta.shape == (64, 3)


def test_select_n_of_a_deterministic_policy_repeats_its_best_arm():
    agent = bb.Agent(bb.GLMUCB(logistic(), rho=0.5), arms=ARMS, seed=0)
    for _ in range(8):
        arm = agent.select()
        agent.update(arm, _rewards(ARMS, arm, arm))
    batch = agent.select(n=16)
    assert np.all(batch == agent.select())


def _sequential_and_batched(make, round_arms, actions, rewards, contextual, arms_per_row=None, **kwargs):
    one = bb.Agent(make(), seed=1, **kwargs)
    many = bb.Agent(make(), seed=1, **kwargs)
    for i in range(len(actions)):
        if contextual:
            one.select(round_arms if arms_per_row is None else arms_per_row[i])
        one.update(actions[i], rewards[i])
    if contextual:
        many.select(round_arms)
    many.update_many(actions, rewards, arms=arms_per_row)
    return one, many


CASES = [
    ("glm_tsl_fixed", lambda: bb.GLMTSL(logistic(), a=1.0), False, {"arms": ARMS}),
    ("glm_fpl_contextual_growing_buffer", lambda: bb.GLMFPL(logistic(), a=0.5), True, {"d": 3, "capacity": 4}),
    ("lin_ts_contextual", lambda: bb.LinTS(v=0.5), True, {"d": 3}),
    ("c2ucb_subsets", lambda: bb.C2UCB(oracle=TopK(k=2), lam=1.0, alpha=0.5), False, {"arms": ARMS}),
]


@pytest.mark.parametrize("make, contextual, kwargs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_update_many_equals_the_updates_in_turn(make, contextual, kwargs):
    m = 10
    rng = np.random.default_rng(0)
    subsets = isinstance(make(), bb.C2UCB)
    if subsets:
        actions = np.stack([rng.choice(len(ARMS), 2, replace=False) for _ in range(m)])
    else:
        actions = rng.integers(0, len(ARMS), m)
    rewards = rng.random(actions.shape) < 0.5
    one, many = _sequential_and_batched(make, ARMS, actions, rewards.astype(float), contextual, **kwargs)
    assert many.num_updates == one.num_updates == m
    for a, b in zip(leaves(one.state), leaves(many.state), strict=True):
        if a.shape != b.shape:  # a row buffer grown by doubling (one) or to fit the batch (many)
            rows = min(len(a), len(b))
            assert not np.any(a[rows:]) and not np.any(b[rows:])  # empty rows
            a, b = a[:rows], b[:rows]
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert np.asarray(many.last_update_info.converged).shape[0] == m


def test_update_many_takes_one_arm_set_per_row():
    m = 6
    rng = np.random.default_rng(1)
    per_row = rng.uniform(-1, 1, (m, 5, 3))
    actions = rng.integers(0, 5, m)
    rewards = rng.normal(size=m)
    one, many = _sequential_and_batched(lambda: bb.LinTS(v=0.5), per_row[0], actions, rewards, True, per_row, d=3)
    for a, b in zip(leaves(one.state), leaves(many.state), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize(
    "actions, rewards, arms, match",
    [
        ([0, 1, 12], [1.0, 0.0, 1.0], None, r"action must be an array of shape \(3,\)"),
        ([0, 1, 2], [1.0, 0.5, 1.0], None, "support"),
        ([0, 1, 2], [1.0, np.nan, 1.0], None, "not finite"),
        ([0, 1], [1.0, 0.0, 1.0], None, "shape"),
        ([], [], None, "non-empty"),
        ([0, 1], [1.0, 0.0], ARMS[:4], "fixed arm set"),
    ],
)
def test_a_bad_row_in_update_many_changes_nothing(actions, rewards, arms, match):
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)
    agent.update(agent.select(), 1.0)
    before, draws = snapshot(agent.state), agent.num_decisions
    with pytest.raises(InvalidInput, match=match):
        agent.update_many(actions, rewards, arms=arms)
    assert agent.num_updates == 1
    for a, b in zip(before, leaves(agent.state), strict=True):
        np.testing.assert_array_equal(a, b)
    assert agent.num_decisions == draws


def test_contextual_update_many_needs_arms_and_checks_their_count():
    agent = bb.Agent(bb.LinTS(v=0.5), d=3, seed=0)
    with pytest.raises(InvalidInput, match="select"):
        agent.update_many([0], [1.0])
    with pytest.raises(InvalidInput, match="2 arm sets for 3 actions"):
        agent.update_many([0, 1, 2], [1.0, 0.0, 1.0], arms=np.zeros((2, 4, 3)))
    with pytest.raises(InvalidInput, match="n"):
        agent.select(ARMS, n=0)


def test_a_host_policy_takes_batches_through_its_own_loop():
    arms = np.random.default_rng(2).uniform(-1, 1, (40, 4))
    one = bb.Agent(bb.SubTS(beta=0.5, index="exact"), arms=arms, seed=0)
    many = bb.Agent(bb.SubTS(beta=0.5, index="exact"), arms=arms, seed=0)
    actions, rewards = np.array([3, 17, 3, 29]), np.array([0.5, -0.2, 0.4, 1.0])
    for a, r in zip(actions, rewards, strict=True):
        one.update(int(a), float(r))
    many.update_many(actions, rewards)
    assert many.num_updates == 4
    assert one.select() == many.select()  # same statistics, same key
    assert many.select(n=5).shape == (5,)
