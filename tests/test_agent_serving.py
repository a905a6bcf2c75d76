"""Serving an Agent: threads lose nothing, delayed rewards reach their own decision, pending decisions are bounded."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import DecisionAlreadyRewarded, ExpiredDecision, InvalidInput, UnknownDecision

RNG = np.random.default_rng(0)
ARMS = RNG.uniform(-1, 1, (6, 3))


def _in_threads(count: int, work) -> None:
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            work(i)
        except BaseException as exc:  # surfaced in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"
    assert not errors, errors[0]


def test_threads_lose_no_update_and_credit_each_reward_to_its_arm():
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)
    made: list[list[tuple[int, float]]] = [[] for _ in range(4)]

    def work(i: int) -> None:
        rng = np.random.default_rng(i)
        for _ in range(60):
            arm = agent.select()
            reward = float(rng.random() < 0.5)
            agent.update(arm, reward)
            made[i].append((arm, reward))

    _in_threads(4, work)
    pairs = [pair for thread in made for pair in thread]
    counts = np.bincount([a for a, _ in pairs], minlength=len(ARMS))
    sums = np.bincount([a for a, _ in pairs], weights=[r for _, r in pairs], minlength=len(ARMS))
    history = agent.state.history
    assert agent.num_updates == 240 and int(agent.state.t) == 240
    np.testing.assert_array_equal(np.asarray(history.counts), counts)
    np.testing.assert_array_equal(np.asarray(history.sums), sums)


def test_threads_selecting_side_by_side_use_distinct_draws():
    agent = bb.Agent(bb.LinTS(), d=3, seed=0)
    _in_threads(4, lambda i: [agent.select(ARMS) for _ in range(50)])
    assert agent.num_decisions == 200


def test_concurrent_saves_each_write_a_whole_checkpoint(tmp_path):
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)
    path = tmp_path / "agent.bbckpt"

    def work(i: int) -> None:
        for _ in range(15):
            agent.update(agent.select(), 1.0)
            agent.save(path)

    _in_threads(3, work)
    agent.save(path)
    loaded = bb.Agent.load(path, bb.GLMTSL(logistic(), a=1.0))
    assert loaded.num_updates == agent.num_updates == 45
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.bbckpt"]


def _ridge(agent):
    return np.asarray(agent.state.precision), np.asarray(agent.state.b)


def test_delayed_and_reordered_rewards_equal_in_order_updates_with_the_right_arms():
    contexts = [RNG.uniform(-1, 1, (5, 3)) for _ in range(12)]
    rewards = RNG.normal(size=12)
    served = bb.Agent(bb.LinTS(), d=3, seed=1)
    decisions = [served.decide(arms) for arms in contexts]
    in_order = bb.Agent(bb.LinTS(), d=3, seed=1)
    for decision, arms, reward in zip(decisions, contexts, rewards, strict=True):
        in_order.update(decision.action, reward, arms=arms)
    for i in np.random.default_rng(3).permutation(12):  # out of order, after every decision was made
        served.update(decisions[i] if i % 2 else decisions[i].id, rewards[i])
    for a, b in zip(_ridge(served), _ridge(in_order), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert served.pending_decisions == 0 and served.num_updates == 12


def test_update_with_arms_credits_those_arms_not_the_last_selected():
    first, second = RNG.uniform(-1, 1, (4, 3)), RNG.uniform(-1, 1, (4, 3))
    agent = bb.Agent(bb.LinTS(), d=3, seed=0)
    action = agent.select(first)
    agent.select(second)
    agent.update(action, 2.0, arms=first)
    np.testing.assert_allclose(_ridge(agent)[1], 2.0 * first[action])


def _unchanged(agent, call, error, match):
    before, updates = _ridge(agent), agent.num_updates
    with pytest.raises(error, match=match):
        call()
    for a, b in zip(before, _ridge(agent), strict=True):
        np.testing.assert_array_equal(a, b)
    assert agent.num_updates == updates


def test_unknown_rewarded_expired_and_reused_decisions_are_refused_by_name():
    agent = bb.Agent(bb.LinTS(), d=3, seed=0, max_pending=2)
    first = agent.decide(ARMS, decision_id="a")
    agent.update(first, 1.0)
    _unchanged(agent, lambda: agent.update("a", 1.0), DecisionAlreadyRewarded, "rewarded already")
    _unchanged(agent, lambda: agent.update("nope", 1.0), UnknownDecision, "no decision 'nope'")
    _unchanged(agent, lambda: agent.decide(ARMS, decision_id="a"), InvalidInput, "used already")
    for name in "bcd":
        agent.decide(ARMS, decision_id=name)
    assert agent.pending_decisions == 2 and agent.expired_decisions == 1
    _unchanged(agent, lambda: agent.update("b", 1.0), ExpiredDecision, "expired before its reward")
    _unchanged(agent, lambda: agent.update("c", np.nan), InvalidInput, "finite")
    agent.update("c", 1.0)  # the refused reward left it pending
    _unchanged(agent, lambda: agent.update("d", 1.0, arms=ARMS), InvalidInput, "keeps its own arms")


def test_decisions_older_than_max_age_expire():
    agent = bb.Agent(bb.LinTS(), d=3, seed=0, max_age=0.05)
    decision = agent.decide(ARMS)
    time.sleep(0.1)
    with pytest.raises(ExpiredDecision):
        agent.update(decision, 1.0)
    assert agent.expired_decisions == 1


def test_pending_decisions_live_in_the_checkpoint(tmp_path):
    contexts = [RNG.uniform(-1, 1, (5, 3)) for _ in range(3)]
    agent = bb.Agent(bb.LinTS(), d=3, seed=2, max_pending=50)
    decisions = [agent.decide(arms) for arms in contexts]
    agent.update(decisions[0], 1.0)
    agent.save(tmp_path / "a.bbckpt")
    loaded = bb.Agent.load(tmp_path / "a.bbckpt", bb.LinTS())
    assert loaded.pending_decisions == 2
    with pytest.raises(DecisionAlreadyRewarded):
        loaded.update(decisions[0].id, 1.0)
    for twin in (agent, loaded):
        twin.update(decisions[2].id, -1.0)
        twin.update(decisions[1].id, 0.5)
    for a, b in zip(_ridge(agent), _ridge(loaded), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(agent.select(contexts[0]), loaded.select(contexts[0]))  # same draw count
