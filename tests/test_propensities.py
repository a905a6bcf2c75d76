"""Propensities: a closed form where one exists, the policy's own selections otherwise."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from bayesbandit.models import logistic
from scipy.stats import norm

import bayesbandit as bb
from bayesbandit.oracles import TopK
from bayesbandit.propensities import action_distribution, propensity

RNG = np.random.default_rng(0)


def _trained(policy, arms, rounds=12, seed=0):
    agent = bb.Agent(policy, d=arms.shape[1], seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        action = agent.select(arms)
        agent.update(action, float(rng.random() < 0.5), arms=arms)
    return agent


def test_lints_on_two_arms_matches_the_gaussian_closed_form():
    """LinTS samples theta ~ N(theta_hat, v^2 V^-1): P(arm 0) = Phi(D^T theta_hat / (v ||D||_{V^-1})), D = x0 - x1."""
    arms = np.array([[1.0, 0.2], [0.3, 0.9]])
    agent = _trained(bb.LinTS(v=0.7), arms)
    state = agent.state
    precision, b = np.asarray(state.precision), np.asarray(state.b)
    diff = arms[0] - arms[1]
    exact = norm.cdf(diff @ np.linalg.solve(precision, b) / (0.7 * np.sqrt(diff @ np.linalg.solve(precision, diff))))
    estimate = propensity(jax.random.PRNGKey(1), agent.policy, state, arms, 0, samples=20_000)
    assert not estimate.exact and 0.05 < exact < 0.95
    assert abs(estimate.value - exact) < 4 * estimate.se, (estimate, exact)
    decided = agent.decide(arms, propensity=20_000)
    target = exact if decided.action == 0 else 1 - exact
    assert abs(decided.propensity - target) < 4 * decided.propensity_se


@pytest.mark.parametrize(
    "make",
    [
        lambda: bb.EpsilonGreedy(logistic(), epsilon=0.3),
        lambda: bb.GLMUCB(logistic(), rho=0.5),
        lambda: bb.UCBGLM(logistic()),
        lambda: bb.LinUCB(alpha=0.5),
    ],
    ids=["epsilon-greedy", "glm-ucb", "ucb-glm", "linucb"],
)
@pytest.mark.parametrize("rounds", [1, 12], ids=["exploring", "after-exploration"])
def test_exact_laws_match_the_policys_own_selections(make, rounds):
    arms = np.vstack([RNG.uniform(-1, 1, (3, 3)), np.repeat(RNG.uniform(-1, 1, (1, 3)), 2, axis=0)])  # a tied pair
    agent = _trained(make(), arms, rounds=rounds)
    assert isinstance(agent.policy, bb.contract.ExactLaw)
    exact, zero = action_distribution(jax.random.PRNGKey(0), agent.policy, agent.state, arms)
    assert np.all(zero == 0.0) and abs(exact.sum() - 1.0) < 1e-12
    frequencies, se = action_distribution(  # the law against 20,000 of the policy's own selections
        jax.random.PRNGKey(2), agent.policy, agent.state, arms, samples=20_000, method="monte_carlo"
    )
    np.testing.assert_array_less(np.abs(frequencies - exact), 4 * np.maximum(se, 1e-3))


def test_a_monte_carlo_estimate_is_never_below_one_over_the_draws():
    arms = np.array([[3.0, 0.0], [-3.0, 0.0]])
    agent = _trained(bb.LinTS(v=0.01), arms, rounds=30)  # arm 0 pays, arm 1 is never drawn at this scale
    estimate = propensity(jax.random.PRNGKey(0), agent.policy, agent.state, arms, int(np.argmin(arms @ agent.state.b)))
    assert estimate.value == 1 / 1000


def test_a_super_arm_is_matched_as_a_set():
    arms = RNG.uniform(-1, 1, (6, 3))
    agent = bb.Agent(bb.CombLinUCB(oracle=TopK(k=2)), d=3, seed=0)
    for _ in range(8):
        agent.update(agent.select(arms), np.ones(2), arms=arms)
    decided = agent.decide(arms, propensity=200)
    assert decided.propensity == 1.0  # deterministic scores without ties: the same set every draw
    reversed_set = propensity(jax.random.PRNGKey(0), agent.policy, agent.state, arms, decided.action[::-1], samples=50)
    assert reversed_set.value == 1.0
