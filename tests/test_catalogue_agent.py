"""CatalogueAgent: select ids, add and remove items, validation with the state unchanged, atomic save/load."""

from __future__ import annotations

import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.errors import CheckpointError, InvalidInput, UnknownArm

POLICIES = [
    bb.SubTS(beta=0.5, shortlist=10, n_trees=4),
    bb.SubTS(beta=0.5, index="exact"),
    bb.SubElim(beta=0.2, eta=0.01, shortlist=10, n_trees=4, exact_below=5),
]


def make(policy, seed=0):
    rng = np.random.default_rng(0)
    return bb.CatalogueAgent(policy, bb.Catalogue(np.arange(1000, 1600), rng.standard_normal((600, 5))), seed=seed)


def play(agent, rounds, seed):
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1, 1, 5)
    out = []
    for t in range(rounds):
        if t % 10 == 5:
            agent.add_arms(np.array([5000 + 1000 * seed + t]), rng.standard_normal((1, 5)))
        item = agent.select()
        agent.update(item, float(rng.standard_normal() + (item % 7) / 7 * theta[0]))
        out.append(item)
    return out


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_a_loaded_agent_continues_bit_for_bit(policy, tmp_path):
    agent = make(policy)
    play(agent, 40, seed=1)
    agent.save(tmp_path / "agent")
    loaded = bb.CatalogueAgent.load(tmp_path / "agent", policy)
    assert play(agent, 40, seed=2) == play(loaded, 40, seed=2)
    np.testing.assert_array_equal(agent.state.stats.v_inv, loaded.state.stats.v_inv)


def test_a_crash_mid_save_leaves_the_previous_save(tmp_path, monkeypatch):
    policy = POLICIES[0]
    agent = make(policy)
    play(agent, 10, seed=1)
    agent.save(tmp_path / "agent")
    expected = play(bb.CatalogueAgent.load(tmp_path / "agent", policy), 10, seed=3)
    play(agent, 10, seed=4)
    import bayesbandit.catalogue_agent as module

    real = module.write_checkpoint

    def crash(target, meta, arrays):
        if str(target).endswith("MANIFEST"):
            raise OSError("power cut")
        real(target, meta, arrays)

    monkeypatch.setattr(module, "write_checkpoint", crash)
    with pytest.raises(OSError, match="power cut"):
        agent.save(tmp_path / "agent")
    monkeypatch.undo()
    assert play(bb.CatalogueAgent.load(tmp_path / "agent", policy), 10, seed=3) == expected
    with pytest.raises(CheckpointError, match="saved for"):
        bb.CatalogueAgent.load(tmp_path / "agent", bb.SubTS(beta=0.9))


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_bad_calls_raise_and_leave_the_agent_unchanged(policy, tmp_path):
    agent = make(policy)
    play(agent, 5, seed=1)
    agent.save(tmp_path / "before")
    item = agent.select()
    bad = [
        (lambda: agent.update(item + 1 if item + 1 != item else item - 1, 1.0), UnknownArm),
        (lambda: agent.update(item, float("nan")), InvalidInput),
        (lambda: agent.update(item, "good"), InvalidInput),
        (lambda: agent.add_arms(np.array([item]), np.ones((1, 5))), InvalidInput),
        (lambda: agent.add_arms(np.array([9]), np.ones((1, 4))), InvalidInput),
        (lambda: agent.add_arms(np.array([9]), np.full((1, 5), np.nan)), InvalidInput),
        (lambda: agent.remove_arms(np.array([123456])), InvalidInput),
    ]
    for call, error in bad:
        with pytest.raises(error):
            call()
    reference = bb.CatalogueAgent.load(tmp_path / "before", policy)
    reference.select()
    assert play(agent, 10, seed=5) == play(reference, 10, seed=5)


def test_only_index_backed_policies():
    with pytest.raises(InvalidInput, match="index-backed"):
        bb.CatalogueAgent(bb.LinTS(), np.eye(3))
