"""An agent's first requests, served: no tracing race, exploration spread over concurrent decisions, no silent loss."""

import threading

import jax
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import CheckpointError

K, D, THREADS = 20, 5, 8
ARMS = np.random.default_rng(0).uniform(-1, 1, (K, D))


def _kinds(a):
    """A fresh agent of each kind, of a policy no other agent has compiled (``a`` differs)."""
    catalogue = bb.Catalogue(np.arange(50), np.random.default_rng(1).normal(size=(50, D)))
    return {
        "fixed_glm_tsl": lambda: bb.Agent(bb.GLMTSL(logistic(), a=a), arms=ARMS, seed=0),
        "contextual_glm_tsl": lambda: bb.Agent(bb.GLMTSL(logistic(), a=a), d=D, seed=0),
        "contextual_glm_fpl": lambda: bb.Agent(bb.GLMFPL(logistic(), a=a), d=D, seed=0),
        "online_glm_tsl": lambda: bb.Agent(bb.GLMTSL(logistic(), a=a, history="online"), d=D, seed=0),
        "contextual_lin_ts": lambda: bb.Agent(bb.LinTS(v=a), d=D, seed=0),
        "host_sub_ts": lambda: bb.Agent(bb.SubTS(index="exact", beta=a), catalogue, seed=0),
    }


@pytest.mark.timeout(900)
def test_fresh_agents_first_decisions_from_many_threads_raise_nothing():
    """50 fresh agents of every kind, 8 threads each making their first decisions at once, half with
    propensities: 0 exceptions. The first agents of a kind are of distinct policies (nothing compiled yet),
    so their first calls trace reward programs in many threads at once; the rest share the compiled calls."""
    errors, lock = [], threading.Lock()
    agents = []  # (agent, the arms its select takes)
    for i in range(50):
        a = 1.0 + 0.1 * min(i, 3)  # agents 0-3 of each kind trace their own programs
        agents += [(make(), None if name.startswith(("fixed", "host")) else ARMS) for name, make in _kinds(a).items()]
    start = threading.Barrier(len(agents) * THREADS)

    def first_decisions(agent, arms, j):
        try:
            start.wait()
            for _ in range(2):
                decision = agent.decide(arms, propensity=32 if j % 2 == 0 else False)
                agent.update(decision, 1.0)
        except Exception as exc:  # noqa: BLE001 (every exception is the failure this test looks for)
            with lock:
                errors.append(repr(exc))

    threads = [
        threading.Thread(target=first_decisions, args=(agent, arms, j))
        for agent, arms in agents
        for j in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert all(agent.num_updates == 2 * THREADS for agent, _ in agents)


def test_concurrent_first_decisions_spread_over_the_design():
    """With the defaults, the first d concurrent decisions of a fixed-arm agent pull d distinct arms (the
    exploration order), each logged with its exact propensity 1; the d+1-th is the policy's own choice."""
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=0)
    start = threading.Barrier(D)
    decisions = []

    def decide():
        start.wait()
        decisions.append(agent.decide(propensity=True))

    threads = [threading.Thread(target=decide) for _ in range(D)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert sorted(d.action for d in decisions) == sorted(np.asarray(agent.state.explore_order).tolist())
    assert len({d.action for d in decisions}) == D
    assert all(d.propensity == 1.0 and d.propensity_se == 0.0 for d in decisions)
    after = agent.decide(propensity=True)  # no reward has arrived, and exploration is over
    assert not bool(agent.last_select_info.exploring) and after.propensity < 1.0


@pytest.mark.parametrize("contextual", [False, True], ids=["fixed", "contextual"])
def test_played_in_turn_the_agent_explores_as_the_policy_does(contextual):
    """One decision then its reward: counted in decisions or in rewards, exploration pulls the same arms."""
    policy = bb.LinTS()
    agent = bb.Agent(policy, d=D, seed=0) if contextual else bb.Agent(policy, arms=ARMS, seed=0)
    state = policy.init(None if contextual else ARMS, d=D)
    rng = np.random.default_rng(3)
    for _ in range(D + 2):
        arms = rng.uniform(-1, 1, (K, D)) if contextual else ARMS
        action = agent.select(arms) if contextual else agent.select()
        exploring = bool(agent.last_select_info.exploring)
        expected, info = policy.select(state, arms, jax.random.PRNGKey(0))  # exploration ignores the key here
        if bool(info.exploring) or exploring:
            assert exploring == bool(info.exploring) and action == int(expected)
        reward = float(rng.normal())
        agent.update(action, reward)
        state, _ = policy.update(state, arms, np.int32(action), np.float64(reward))


def test_loading_without_the_log_it_was_saved_with_is_refused(tmp_path):
    """A checkpoint saved with a decision log, loaded without ``log=``, would drop what was logged after it:
    refused, naming the log; ``log=None`` accepts the loss."""
    log = tmp_path / "decisions.sqlite"
    agent = bb.Agent(bb.LinTS(), arms=ARMS, seed=0, log=log)
    agent.update(agent.decide(), 1.0)
    agent.save(tmp_path / "agent.bb")
    pending = agent.decide()
    agent.update(agent.decide(), 0.5)
    agent.close()
    with pytest.raises(CheckpointError, match=f"log={str(log)!r}"):
        bb.Agent.load(tmp_path / "agent.bb", bb.LinTS())
    without = bb.Agent.load(tmp_path / "agent.bb", bb.LinTS(), log=None)
    assert without.num_updates == 1 and without.pending_decisions == 0
    replayed = bb.Agent.load(tmp_path / "agent.bb", bb.LinTS(), log=log)
    assert replayed.num_updates == 2 and replayed.pending_decisions == 1
    replayed.update(pending, 1.0)
    replayed.close()


def test_a_batch_of_first_decisions_explores_in_turn():
    """``select(n=...)`` on a contextual agent: its first d decisions pull d arms that span the features (each
    sees the arms the ones before it chose), the rest are the policy's own; a fixed arm set's follow its order."""
    arms = np.random.default_rng(4).uniform(-1, 1, (50, D))
    agent = bb.Agent(bb.LinTS(), d=D, seed=0)
    batch = agent.select(arms, n=3 * D)
    exploring = np.asarray(agent.last_select_info.exploring)
    assert exploring[:D].all() and not exploring[D:].any()
    assert np.linalg.matrix_rank(arms[batch[:D]]) == D
    fixed = bb.Agent(bb.LinTS(), arms=ARMS, seed=0)
    np.testing.assert_array_equal(fixed.select(n=D), np.asarray(fixed.state.explore_order))
