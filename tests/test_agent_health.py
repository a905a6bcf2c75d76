"""``Agent.health``: posterior checks off the request path, the poor-posterior warning, the lock-in signal.

Every wait for a check is bounded (``health(timeout=...)``); no test sleeps.
"""

from __future__ import annotations

import threading
import warnings

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.agent import AgentHealth
from bayesbandit.errors import InvalidInput, PosteriorQualityWarning

pytestmark = pytest.mark.timeout(240)

ARMS = np.random.default_rng(0).uniform(-1, 1, (5, 2))
WAIT = 120.0  # seconds a test waits for a check (the first one compiles)


def funnel(x, y=None):
    """Neal's funnel over a logistic model's coefficients: its Laplace fit sits in the neck (k-hat > 0.7)."""
    v = numpyro.sample("v", dist.Normal(0.0, 3.0))
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), jnp.exp(v / 2)).to_event(1))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ theta), obs=y)


def _play(agent: bb.Agent, rounds: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        agent.update(agent.select(), float(rng.random() < 0.5))


def _poor_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, PosteriorQualityWarning)]


def test_a_fresh_agent_has_nothing_checked_yet():
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=0, health_every=10)
    health = agent.health(timeout=WAIT)
    assert isinstance(health, AgentHealth)
    assert (health.num_updates, health.failed_updates, health.checked_at, health.k_hat, health.lock_in) == (
        0,
        0,
        None,
        None,
        None,
    )
    assert "no posterior check yet" in health.summary
    with pytest.raises(AttributeError):
        health.k_hat = 0.1  # frozen


def test_well_specified_logistic_is_checked_below_0_7_without_warning():
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=0, health_every=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _play(agent, 20, seed=1)
        health = agent.health(timeout=WAIT)
    assert health.num_updates == 20 and health.failed_updates == agent.failed_updates == 0
    assert health.checked_at is not None and 10 <= health.checked_at <= 20
    assert health.k_hat is not None and health.k_hat < 0.7 and health.ess > 1000
    assert health.check_error is None
    assert "k-hat" in health.summary and ("good" in health.summary or "usable" in health.summary)
    assert not _poor_warnings(caught)


def test_a_poor_posterior_warns_once_per_crossing():
    agent = bb.Agent(bb.GLMTSL(funnel), arms=ARMS, seed=0, health_every=5)
    grades = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for block in range(3):
            _play(agent, 5, seed=block)
            grades.append(agent.health(timeout=WAIT))
    assert [h.checked_at for h in grades] == [5, 10, 15]
    assert all(h.k_hat > 0.7 for h in grades), [h.k_hat for h in grades]
    messages = _poor_warnings(caught)
    assert len(messages) == 1, messages  # three checks above 0.7, one crossing
    assert "k-hat" in messages[0] and "diagnostics.compare" in messages[0] and "proposals=" in messages[0]
    assert "POOR" in grades[-1].summary


def test_health_every_0_checks_nothing():
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=0, health_every=0)
    _play(agent, 12, seed=0)
    health = agent.health(timeout=WAIT)
    assert health.num_updates == 12
    assert (health.checked_at, health.k_hat, health.ess, health.lock_in) == (None, None, None, None)
    assert "checks off" in health.summary


def test_online_history_has_no_k_hat_and_other_policies_no_check():
    online = bb.Agent(bb.GLMTSL(logistic(), history="online"), arms=ARMS, seed=0, health_every=10)
    _play(online, 30, seed=0)
    health = online.health(timeout=WAIT)
    assert health.checked_at is not None and health.k_hat is None and health.lock_in is not None
    assert "keeps no rows" in health.summary
    ridge = bb.Agent(bb.LinTS(), arms=ARMS, seed=0, health_every=5)
    _play(ridge, 5, seed=0)
    health = ridge.health(timeout=WAIT)
    assert (health.checked_at, health.k_hat, health.lock_in) == (None, None, None)
    assert "no Laplace posterior" in health.summary


def test_a_contextual_agent_has_a_k_hat_and_no_lock_in_signal():
    agent = bb.Agent(bb.GLMTSL(logistic()), d=2, seed=0, health_every=25)
    rng = np.random.default_rng(0)
    for _ in range(25):
        arms = rng.uniform(-1, 1, (4, 2))
        agent.update(agent.select(arms), float(rng.random() < 0.5), arms=arms)
    health = agent.health(timeout=WAIT)
    assert health.k_hat is not None and health.k_hat < 0.7
    assert health.lock_in is None  # an index means another arm each round


def _two_in_three(agent: bb.Agent, rounds: int) -> None:
    """Each arm's rewards 1, 1, 0, 1, 1, 0, ... in the order it is pulled: a success rate of 2/3."""
    pulls = np.zeros(3, int)
    for _ in range(rounds):
        arm = agent.select()
        agent.update(arm, float(pulls[arm] % 3 != 2))
        pulls[arm] += 1


def test_lock_in_fires_when_one_arm_takes_the_decisions_and_another_may_be_best():
    """A nearly greedy policy (a = 0.001) on three unrelated arms keeps the first arm whose MAP rose; the
    untried arms' posterior is the prior, under which either beats a 2/3-success arm with probability ~0.27."""
    arms = np.eye(3)
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1e-3, num_explore=0), arms=arms, seed=0, health_every=30)
    _two_in_three(agent, 30)
    health = agent.health(timeout=WAIT)
    counts = np.asarray(agent.state.history.counts)
    assert counts.max() == 30  # one arm took every decision
    assert health.lock_in is True
    assert health.dominant_arm == int(np.argmax(counts)) and health.dominant_share == 1.0
    assert 0.3 < health.other_best_probability < 0.7
    assert f"LOCK-IN: arm {health.dominant_arm}" in health.summary


def test_no_lock_in_when_thompson_sampling_spreads_its_decisions():
    arms = np.eye(3)
    agent = bb.Agent(bb.GLMTSL(logistic(), num_explore=0), arms=arms, seed=0, health_every=30)
    _two_in_three(agent, 30)
    health = agent.health(timeout=WAIT)
    assert health.lock_in is False and health.dominant_share < 0.9
    assert "no lock-in" in health.summary


def test_threads_deciding_and_updating_while_checks_run():
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, seed=0, health_every=7)
    errors: list[BaseException] = []
    stop = threading.Event()
    seen: list[AgentHealth] = []

    def serve(i: int) -> None:
        rng = np.random.default_rng(i)
        try:
            for _ in range(20):
                decision = agent.decide()
                agent.update(decision, float(rng.random() < 0.5))
        except BaseException as exc:  # surfaced in the test thread
            errors.append(exc)

    def watch() -> None:
        while not stop.wait(0.005):
            seen.append(agent.health())

    watcher = threading.Thread(target=watch)
    servers = [threading.Thread(target=serve, args=(i,)) for i in range(4)]
    watcher.start()
    for thread in servers:
        thread.start()
    for thread in servers:
        thread.join(timeout=200)
    stop.set()
    watcher.join(timeout=30)
    assert not any(thread.is_alive() for thread in [*servers, watcher])
    assert not errors, errors[0]
    health = agent.health(timeout=WAIT)
    assert health.num_updates == agent.num_updates == agent.num_decisions == 80
    assert int(np.asarray(agent.state.history.counts).sum()) == 80 and agent.pending_decisions == 0
    assert health.check_error is None and health.checked_at is not None and 7 <= health.checked_at <= 80
    assert health.k_hat < 0.7
    assert all(h.num_updates <= 80 and (h.checked_at or 0) <= h.num_updates for h in seen)


def test_bad_settings_name_the_argument():
    with pytest.raises(InvalidInput, match="'health_every'"):
        bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, health_every=-1)
    agent = bb.Agent(bb.GLMTSL(logistic()), arms=ARMS, compile_ahead=False)
    with pytest.raises(InvalidInput, match="'timeout'"):
        agent.health(timeout=-1.0)
