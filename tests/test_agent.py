"""bb.Agent: no retrace, checkpoints that continue bit-for-bit, atomic saves."""

import os
import pickle

import numpy as np
import pytest
from _asserts import assert_trees_equal
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import CheckpointError
from bayesbandit.history import ArmHistory, RowHistory

ARMS = np.random.default_rng(0).uniform(-1, 1, (5, 3))
THETA = np.array([1.5, -1.0, 0.5])


def _reward(rng, x):
    return float(rng.random() < 1 / (1 + np.exp(-x @ THETA)))


def play(agent, rounds, seed, contextual=False):
    """Play ``rounds`` rounds with rewards (and contexts) from a seeded generator; return arms."""
    rng = np.random.default_rng(seed)
    chosen = []
    for _ in range(rounds):
        if contextual:
            arms = rng.uniform(-1, 1, (4, 3))
            arm = agent.select(arms)
            x = arms[arm]
        else:
            arm = agent.select()
            x = ARMS[arm]
        agent.update(arm, _reward(rng, x))
        chosen.append(arm)
    return chosen


AGENTS = [
    ("glm_tsl", lambda seed: bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=seed), False),
    ("glm_fpl", lambda seed: bb.Agent(bb.GLMFPL(logistic(), a=0.5), arms=ARMS, seed=seed), False),
    ("contextual_tsl", lambda seed: bb.Agent(bb.GLMTSL(logistic(), a=1.0), d=3, seed=seed, capacity=8), True),
]


@pytest.mark.parametrize("name, make, contextual", AGENTS, ids=[a[0] for a in AGENTS])
def test_save_load_continues_bit_for_bit(tmp_path, name, make, contextual):
    agent = make(0)
    play(agent, 6, seed=1, contextual=contextual)
    path = tmp_path / "agent.bb"
    agent.save(path)
    loaded = bb.Agent.load(path)
    assert_trees_equal(agent.state, loaded.state)
    # 6 more rounds each (the contextual buffer of capacity 8 grows on the way)
    a = play(agent, 6, seed=2, contextual=contextual)
    b = play(loaded, 6, seed=2, contextual=contextual)
    assert a == b
    assert_trees_equal(agent.state, loaded.state)
    assert agent.num_updates == loaded.num_updates == 12
    history = agent.state.history
    assert isinstance(history, RowHistory if contextual else ArmHistory)
    if contextual:
        assert history.capacity == 16 and int(history.size) == 12
    # 12 selects and updates with new values (states, keys, rewards) compiled once each; the
    # contextual buffer grew once (8 -> 16 rows), a new shape, hence one more compile
    expected = 2 if contextual else 1
    assert agent._select._cache_size() == expected and agent._update._cache_size() == expected


def test_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    agent = AGENTS[0][1](0)
    play(agent, 3, seed=1)
    path = tmp_path / "agent.bb"
    agent.save(path)
    saved = bb.Agent.load(path).state
    play(agent, 3, seed=2)

    def boom(*args, **kwargs):
        raise OSError("disk full")

    for target in ("os.replace", "pickle.dump"):
        with monkeypatch.context() as m:
            m.setattr(target, boom)
            with pytest.raises(OSError, match="disk full"):
                agent.save(path)
        assert sorted(os.listdir(tmp_path)) == ["agent.bb"], target  # no temporary file left
        assert_trees_equal(bb.Agent.load(path).state, saved)
    agent.save(path)  # a save that completes replaces it
    assert_trees_equal(bb.Agent.load(path).state, agent.state)


def test_bad_checkpoints_raise_checkpoint_error(tmp_path):
    agent = AGENTS[0][1](0)
    good = tmp_path / "good.bb"
    agent.save(good)
    data = good.read_bytes()
    cases = {
        "garbage.bb": b"this is not a checkpoint",
        "truncated.bb": data[: len(data) // 2],
        "empty.bb": b"",
        "foreign.bb": pickle.dumps({"some": "dict"}),
        "version.bb": pickle.dumps({"magic": "bayesbandit-agent", "version": 999}),
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(CheckpointError):
            bb.Agent.load(tmp_path / name)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        bb.Agent.load(tmp_path / "missing.bb")
