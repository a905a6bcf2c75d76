"""Agent.decay: validation, what it does to the state, checkpoints and the decision log."""

import math
import sqlite3

import numpy as np
import pytest
from bayesbandit.models import logistic, mlp

import bayesbandit as bb
from bayesbandit.agent import DecisionLog, read_log
from bayesbandit.errors import InvalidInput

ARMS = np.random.default_rng(0).uniform(-1, 1, (5, 3))


def _play(agent, rounds, seed):
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        agent.update(agent.select(), float(rng.random() < 0.5))


def _same(a, b):
    import jax

    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


@pytest.mark.parametrize("gamma", [0.0, -0.5, 1.5, math.nan, "0.5", None])
def test_decay_validates_gamma(gamma):
    agent = bb.Agent(bb.LinTS(), arms=ARMS, seed=0, compile_ahead=False)
    _play(agent, 3, 0)
    before = agent.state
    with pytest.raises(InvalidInput, match="gamma"):
        agent.decay(gamma)
    assert _same(before, agent.state)


def test_decay_refuses_a_policy_that_cannot_discount():
    agent = bb.Agent(bb.DeepFL(mlp(hidden=4)), arms=ARMS, seed=0, compile_ahead=False)
    with pytest.raises(InvalidInput, match="Discounts"):
        agent.decay(0.9)


def test_decay_discounts_and_refits():
    """LinTS: B <- g B + (1 - g) lam I, b <- g b; GLM-TSL: the refitted MAP of the discounted history; g = 1: nothing."""
    ridge = bb.Agent(bb.LinTS(lam=2.0), arms=ARMS, seed=0, compile_ahead=False)
    _play(ridge, 6, 1)
    before = ridge.state
    ridge.decay(1.0)
    assert _same(before, ridge.state)
    ridge.decay(0.5)
    np.testing.assert_allclose(ridge.state.precision, 0.5 * before.precision + np.eye(3), rtol=1e-15)
    np.testing.assert_allclose(ridge.state.b, 0.5 * before.b, rtol=1e-15)
    glm = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=0, compile_ahead=False)
    _play(glm, 6, 1)
    counts = np.asarray(glm.state.history.counts)
    glm.decay(0.5)
    np.testing.assert_allclose(glm.state.history.counts, 0.5 * counts)
    fit = bb.laplace(logistic(), ARMS, glm.state.history.rows()[1], glm.state.history.counts)
    np.testing.assert_allclose(glm.state.fit.theta, fit.mean, atol=1e-4)  # the policy solver's tolerance
    assert glm.num_updates == 6


def test_decay_survives_save_load_and_is_replayed_from_the_log(tmp_path):
    log = tmp_path / "decisions.sqlite"
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=3, log=log, compile_ahead=False)
    _play(agent, 4, 2)
    agent.decay(0.8)
    agent.save(tmp_path / "early.bb")  # the checkpoint holds the first decay
    _play(agent, 3, 3)
    agent.decay(0.5)
    _play(agent, 2, 4)
    agent.decay(0.9)
    agent.save(tmp_path / "late.bb")
    agent.close()
    late = bb.Agent.load(tmp_path / "late.bb", bb.GLMTSL(logistic()), log=None)  # nothing logged after it
    assert _same(agent.state, late.state)
    replayed = bb.Agent.load(tmp_path / "early.bb", bb.GLMTSL(logistic()), log=log)  # 5 updates, 2 decays
    assert _same(agent.state, replayed.state) and replayed.num_updates == agent.num_updates
    replayed.close()
    without_decays = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=3, compile_ahead=False)
    _play(without_decays, 4, 2)
    assert not _same(without_decays.state.history, late.state.history)


def test_a_log_written_before_decays_stays_readable(tmp_path):
    path = tmp_path / "old.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(
        "CREATE TABLE decisions (seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, time REAL NOT NULL, "
        "draw INTEGER NOT NULL, policy TEXT NOT NULL, action TEXT NOT NULL, arms BLOB, arms_shape TEXT, "
        "propensity REAL, propensity_se REAL);"
        "CREATE TABLE rewards (seq INTEGER PRIMARY KEY, decision_id TEXT UNIQUE NOT NULL, time REAL NOT NULL, "
        "reward TEXT NOT NULL);"
        "INSERT INTO decisions VALUES (1, 'a', 0.0, 0, 'LinTS:0', '2', NULL, NULL, NULL, NULL);"
        "INSERT INTO rewards VALUES (2, 'a', 1.0, '1.0');"
    )
    connection.commit()
    connection.close()
    assert read_log(path).reward.tolist() == [1.0]
    log = DecisionLog(path)
    assert log.last_seq == 2 and [kind for kind, _ in log.after(0)] == ["decision", "reward"]
    log.close()
