"""Checks for host policies over catalogues with ids (``kind = "host"``, ``add_arms`` / ``remove_arms``).

A synthetic catalogue of 1,000 arms in ``R^6``; the mechanical checks play ``ROUNDS`` rounds or call
the policy directly; :func:`check_host_learns` plays its own ``LEARN_ROUNDS`` rounds (3 runs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesbandit.errors import InvalidInput
from bayesbandit.index.protocol import Catalogue
from bayesbandit.testing._common import cached, policy_id, save_load_continues

__all__ = [
    "HOST_CHECKS",
    "check_host_same_seed_same_actions",
    "check_host_bad_inputs",
    "check_host_catalogue_changes",
    "check_host_save_load",
    "check_host_learns",
]

ROUNDS = 64  # the mechanical checks' horizon
LEARN_ROUNDS, LEARN_RUNS = 3000, 3  # check_host_learns' experiment


def _env() -> Any:
    from bayesbandit.envs import SyntheticCatalogue

    return SyntheticCatalogue(initial_arms=1000, d=6, horizon=LEARN_ROUNDS, add_count=0)


@cached
def _simulate(policy: Any, horizon: int, runs: int, seed: int) -> Any:
    from bayesbandit.sim import simulate_catalogue

    name = policy_id(policy)
    return simulate_catalogue({name: policy}, _env(), horizon=horizon, runs=runs, seed=seed).sel(policy=name)


def check_host_same_seed_same_actions(policy: Any) -> None:
    """The same seed gives the same actions; another seed, others (2 runs of ROUNDS rounds)."""
    name = policy_id(policy)
    a = _simulate(policy, ROUNDS, 2, 0).action.values
    b = _simulate.__wrapped__(policy, ROUNDS, 2, 0).action.values  # type: ignore[attr-defined]
    assert np.array_equal(a, b), f"{name}: one seed gave two action sequences"
    assert not np.array_equal(a, _simulate(policy, ROUNDS, 2, 1).action.values), f"{name}: two seeds, one sequence"


def check_host_bad_inputs(policy: Any) -> None:
    """Duplicate, NaN and wrong-dimension arms, unknown ids: a named exception, the state unchanged."""
    name = policy_id(policy)
    rng = np.random.default_rng(0)
    state = policy.init(Catalogue(np.arange(40), rng.standard_normal((40, 3))))

    def probe() -> Any:
        return policy.select(state, None, np.random.default_rng(5))[0]

    before = probe()
    calls = [
        (lambda: policy.add_arms(state, np.array([3]), rng.standard_normal((1, 3))), "an id already held"),
        (lambda: policy.add_arms(state, np.array([50, 50]), rng.standard_normal((2, 3))), "a repeated id"),
        (lambda: policy.add_arms(state, np.array([50]), np.full((1, 3), np.nan)), "a NaN feature"),
        (lambda: policy.add_arms(state, np.array([50]), np.ones((1, 4))), "a wrong dimension"),
        (lambda: policy.update(state, None, 999, 1.0), "an unknown arm in update"),
        (lambda: policy.remove_arms(state, np.array([999])), "an unknown arm in remove_arms"),
    ]
    for call, what in calls:
        try:
            call()
        except InvalidInput:
            pass
        else:
            raise AssertionError(f"{name}: {what} was accepted")
        assert probe() == before, f"{name}: {what} changed the state"


def check_host_catalogue_changes(policy: Any) -> None:
    """An arm added while running is played once it is the best by far; a removed one never again."""
    name = policy_id(policy)
    rng = np.random.default_rng(1)
    theta = np.ones(4) / 2
    features = rng.standard_normal((300, 4)) * 0.1
    state = policy.init(Catalogue(np.arange(300), features))
    for _ in range(200):
        item, _ = policy.select(state, None, rng)
        policy.update(state, None, item, float(features[item] @ theta + 0.1 * rng.standard_normal()))
    star = np.ones((1, 4))
    policy.add_arms(state, np.array([1000]), star)
    played = []
    for _ in range(300):
        item, _ = policy.select(state, None, rng)
        x = star[0] if item == 1000 else features[item]
        policy.update(state, None, item, float(x @ theta + 0.1 * rng.standard_normal()))
        played.append(item)
    assert 1000 in played, f"{name}: a new arm twice as good as any was never played in 300 rounds"
    try:
        policy.remove_arms(state, np.array([1000]))
    except InvalidInput:
        return  # additions only (Sub-Elim), said and checked in check_host_bad_inputs
    for _ in range(50):
        item, _ = policy.select(state, None, rng)
        assert item != 1000, f"{name}: a removed arm was played"
        policy.update(state, None, item, 0.0)


def _play(agent: Any, rounds: int, seed: int) -> list:
    """Rounds with Gaussian rewards from a seeded generator; returns the actions."""
    rng = np.random.default_rng(seed)
    theta, arms = np.ones(3) / 2, _arms()
    actions = []
    for _ in range(rounds):
        action = agent.select()
        agent.update(action, float(arms[int(action)] @ theta + 0.1 * rng.standard_normal()))
        actions.append(int(action))
    return actions


def _arms() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((40, 3))


def check_host_save_load(policy: Any) -> None:
    """An Agent over a host policy, saved and loaded, continues bit for bit."""
    from bayesbandit.agent import Agent

    save_load_continues(policy, Agent(policy, arms=_arms(), seed=0), _play)


def check_host_learns(policy: Any) -> None:
    """Over the last quarter of LEARN_ROUNDS rounds, regret per round below half of uniform play's."""
    name = policy_id(policy)
    env = _env()
    ds = _simulate(policy, LEARN_ROUNDS, LEARN_RUNS, 0)
    uniform = np.mean([run.means.max() - run.means.mean() for run in (env.reset(0, r) for r in range(LEARN_RUNS))])
    late = float(ds.regret.isel(round=slice(-LEARN_ROUNDS // 4, None)).mean())
    assert late < 0.5 * uniform, f"{name}: late regret per round {late:.3f}, uniform {uniform:.3f}"


HOST_CHECKS = [
    check_host_same_seed_same_actions,
    check_host_bad_inputs,
    check_host_catalogue_changes,
    check_host_save_load,
    check_host_learns,
]
"""The checks :func:`~bayesbandit.testing.check_policy` runs on a host policy, in order."""
