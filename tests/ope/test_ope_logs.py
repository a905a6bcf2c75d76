"""The log contract: array checks, OBP round trip, and the adapter from a real Agent's decision log."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit import ope
from bayesbandit.errors import InvalidInput


def test_decision_log_adapter_reads_a_real_agents_decisions(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "log.sqlite"
    agent = bb.Agent(bb.LinTS(v=0.5), d=3, seed=0, log=path)
    rows = []
    for i in range(12):
        arms = rng.normal(size=(4, 3))
        decision = agent.decide(arms, propensity=50)
        if i != 5:  # one decision never gets its reward
            agent.update(decision, float(rng.random() < 0.5))
        rows.append((arms, decision))
    agent.update(0, 1.0, arms=rng.normal(size=(4, 3)))  # a plain update: logged without a propensity
    agent.close()
    logs = ope.Logs.from_decision_log(path)
    kept = [(a, d) for i, (a, d) in enumerate(rows) if i != 5]
    assert logs.num_rounds == 11 and logs.arms.shape == (11, 4, 3)
    np.testing.assert_array_equal(np.asarray(logs.action), [d.action for _, d in kept])
    np.testing.assert_allclose(np.asarray(logs.pscore), [d.propensity for _, d in kept])
    np.testing.assert_allclose(np.asarray(logs.arms), np.stack([a for a, _ in kept]))
    assert np.all(np.diff(np.asarray(logs.t)) >= 0)


def test_a_fixed_arm_log_needs_its_arms(tmp_path):
    path = tmp_path / "log.sqlite"
    arms = np.eye(3)
    agent = bb.Agent(bb.EpsilonGreedy(bb.models.logistic(), epsilon=0.5), arms=arms, seed=0, log=path)
    for _ in range(4):
        agent.update(agent.decide(propensity=True), 1.0)
    agent.close()
    with pytest.raises(InvalidInput, match="'arms'.*Fix:"):
        ope.Logs.from_decision_log(path)
    logs = ope.Logs.from_decision_log(path, arms=arms)
    assert logs.fixed_arms and logs.num_rounds == 4
    assert np.all(np.asarray(logs.pscore) >= 0.5 / 3)  # exact epsilon-greedy propensities


@pytest.mark.parametrize(
    "change, name",
    [
        ({"action": np.array([0, 3])}, "action"),
        ({"action": np.array([0.0, 1.0])}, "action"),
        ({"pscore": np.array([0.5, 0.0])}, "pscore"),
        ({"pscore": np.array([0.5, 1.5])}, "pscore"),
        ({"reward": np.array([1.0, np.nan])}, "reward"),
        ({"t": np.array([2.0, 1.0])}, "t"),
        ({"arms": np.zeros((3, 3, 2))}, "arms"),
        ({"pi_b": np.array([[0.4, 0.6, 0.0], [0.2, 0.2, 0.6]])}, "pi_b"),  # disagrees with pscore
        ({"pi_b": np.array([[0.5, 0.6, 0.0], [0.2, 0.2, 0.6]])}, "pi_b"),  # a row summing to 1.1
    ],
)
def test_bad_logs_raise_naming_the_argument(change, name):
    good = {
        "arms": np.zeros((2, 3, 2)),
        "action": np.array([0, 2]),
        "reward": np.array([1.0, 0.0]),
        "pscore": np.array([0.5, 0.6]),
        "t": np.array([0.0, 1.0]),
        "pi_b": np.array([[0.5, 0.5, 0.0], [0.2, 0.2, 0.6]]),
    }
    ope.Logs.create(**good)
    with pytest.raises(InvalidInput, match=f"'{name}'.*Fix:"):
        ope.Logs.create(**{**good, **change})


def test_from_obp_rejects_what_it_cannot_read():
    fed = ope.synthetic_logs(jax.random.PRNGKey(0), 10, n_actions=3, dim_context=2).to_obp()
    with pytest.raises(InvalidInput, match="'bandit_feedback'.*Fix:"):
        ope.Logs.from_obp({k: v for k, v in fed.items() if k != "pscore"})
    with pytest.raises(InvalidInput, match="'bandit_feedback'.*Fix:"):
        ope.Logs.from_obp({**fed, "position": np.ones(10, int)})
    with pytest.raises(InvalidInput, match="'bandit_feedback'.*Fix:"):
        ope.Logs.from_obp([fed])
