"""bb.Agent over a catalogue policy: select ids, add and remove items, validation with the state unchanged,
save / load continuing bit-for-bit over every index engine."""

from __future__ import annotations

import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.errors import CheckpointError, InvalidInput, UnknownArm

POLICIES = [
    bb.SubTS(beta=0.5, shortlist=10, n_trees=4),
    bb.SubTS(beta=0.5, index="exact"),
    bb.SubTS(beta=0.5, shortlist=10, index="hnsw"),
    bb.SubElim(beta=0.2, eta=0.01, shortlist=10, n_trees=4, exact_below=5),
    bb.SubElim(beta=0.2, eta=0.01, shortlist=10, index="exact", exact_below=5),
    bb.SubElim(beta=0.2, eta=0.01, shortlist=10, index="hnsw", exact_below=5),
]


def make(policy, seed=0):
    rng = np.random.default_rng(0)
    return bb.Agent(policy, bb.Catalogue(np.arange(1000, 1600), rng.standard_normal((600, 5))), seed=seed)


def play(agent, rounds, seed):
    """Rounds with arrivals (every 10th) and, for Sub-TS, departures (every 15th); returns the items shown."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1, 1, 5)
    out = []
    for t in range(rounds):
        if t % 10 == 5:
            agent.add_arms(np.array([5000 + 1000 * seed + t]), rng.standard_normal((1, 5)))
        if t % 15 == 7 and out and isinstance(agent.policy, bb.SubTS):  # Sub-Elim handles additions only
            agent.remove_arms(np.array([out[-1]]))
        item = agent.select()
        agent.update(item, float(rng.standard_normal() + (item % 7) / 7 * theta[0]))
        out.append(item)
    return out


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_a_loaded_agent_continues_bit_for_bit(policy, tmp_path):
    if policy.index == "hnsw":
        pytest.importorskip("hnswlib")
    agent = make(policy)
    play(agent, 40, seed=1)
    agent.save(tmp_path / "agent.bb")
    loaded = bb.Agent.load(tmp_path / "agent.bb", policy)
    assert play(agent, 40, seed=2) == play(loaded, 40, seed=2)
    np.testing.assert_array_equal(agent.state.stats.v_inv, loaded.state.stats.v_inv)
    assert loaded.num_updates == agent.num_updates == 80


def test_a_crash_mid_save_leaves_the_previous_save(tmp_path, monkeypatch):
    policy = POLICIES[0]
    agent = make(policy)
    play(agent, 10, seed=1)
    agent.save(tmp_path / "agent.bb")
    expected = play(bb.Agent.load(tmp_path / "agent.bb", policy), 10, seed=3)
    play(agent, 10, seed=4)

    def power_cut(source, target):
        raise OSError("power cut")

    monkeypatch.setattr("os.replace", power_cut)  # the save's final rename
    with pytest.raises(OSError, match="power cut"):
        agent.save(tmp_path / "agent.bb")
    monkeypatch.undo()
    assert play(bb.Agent.load(tmp_path / "agent.bb", policy), 10, seed=3) == expected
    with pytest.raises(CheckpointError, match="other hyper-parameters"):
        bb.Agent.load(tmp_path / "agent.bb", bb.SubTS(beta=0.9, shortlist=10, n_trees=4))
    with pytest.raises(CheckpointError, match="not .*SubTS|SubElim"):
        bb.Agent.load(tmp_path / "agent.bb", POLICIES[3])


@pytest.mark.parametrize("policy", POLICIES[:2] + POLICIES[3:5], ids=repr)
def test_bad_calls_raise_and_leave_the_agent_unchanged(policy, tmp_path):
    agent = make(policy)
    play(agent, 5, seed=1)
    agent.save(tmp_path / "before.bb")
    reference = bb.Agent.load(tmp_path / "before.bb", policy)
    bad = [
        (lambda: agent.update(123456, 1.0), UnknownArm),
        (lambda: agent.update(1000.0, 1.0), InvalidInput),
        (lambda: agent.update(True, 1.0), InvalidInput),
        (lambda: agent.update(1001, float("nan")), InvalidInput),
        (lambda: agent.update(1001, "good"), InvalidInput),
        (lambda: agent.update_many(np.array([1001, 123456]), np.ones(2)), UnknownArm),
        (lambda: agent.select(np.eye(5)), InvalidInput),
        (lambda: agent.add_arms(np.array([1001]), np.ones((1, 5))), InvalidInput),
        (lambda: agent.add_arms(np.array([9]), np.ones((1, 4))), InvalidInput),
        (lambda: agent.add_arms(np.array([9]), np.full((1, 5), np.nan)), InvalidInput),
        (lambda: agent.remove_arms(np.array([123456])), InvalidInput),
    ]
    for call, error in bad:
        with pytest.raises(error):
            call()
    assert agent.num_updates == reference.num_updates == 5
    assert play(agent, 10, seed=5) == play(reference, 10, seed=5)


def test_batches_are_the_updates_in_turn():
    policy = POLICIES[1]
    one, many = make(policy), make(policy)
    items = one.select(n=6)
    assert many.select(n=6).tolist() == items.tolist()
    rewards = np.linspace(-1, 1, 6)
    for item, reward in zip(items.tolist(), rewards, strict=True):
        one.update(item, reward)
    many.update_many(items, rewards)
    np.testing.assert_array_equal(one.state.stats.v_inv, many.state.stats.v_inv)
    assert one.num_updates == many.num_updates == 6


def test_a_fixed_arm_policy_has_no_catalogue():
    agent = bb.Agent(bb.LinTS(), np.eye(3))
    with pytest.raises(InvalidInput, match="not a catalogue"):
        agent.add_arms(np.array([3]), np.ones((1, 3)))
    with pytest.raises(InvalidInput, match="not a catalogue"):
        agent.remove_arms(np.array([0]))


def test_an_empty_catalogue_grows():
    agent = bb.Agent(bb.SubTS(index="exact"), d=3, seed=0)
    with pytest.raises(InvalidInput, match="empty"):
        agent.select()
    agent.add_arms(np.array([4, 9]), np.eye(2, 3))
    assert agent.select() in (4, 9)


def test_a_sub_ts_state_with_a_feature_store_of_its_own_is_refused():
    """The index holds the features: a saved state that also holds them is another layout."""
    policy = bb.SubTS(index="exact")
    meta, arrays = policy.state_parts(policy.init(np.eye(3)))
    meta["own_arrays"] = 4
    arrays = [*arrays[:2], np.arange(3), np.eye(3), *arrays[2:]]
    with pytest.raises(CheckpointError, match="keeps 2"):
        policy.state_from_parts(meta, arrays)
