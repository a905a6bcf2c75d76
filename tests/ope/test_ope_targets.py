"""Target action distributions on logged rows: exact where the policy states its law, Monte Carlo otherwise."""

from __future__ import annotations

import jax
import numpy as np
from bayesbandit.models import logistic
from scipy.stats import norm

import bayesbandit as bb
from bayesbandit import ope


def _trained(policy, d, rounds=15, seed=0):
    agent = bb.Agent(policy, d=d, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        arms = rng.uniform(-1, 1, (4, d))
        agent.update(agent.select(arms), float(rng.random() < 0.6), arms=arms)
    return agent


def _logs(n, K, d, seed=1):
    rng = np.random.default_rng(seed)
    arms = rng.uniform(-1, 1, (n, K, d))
    arms[:, -1] = arms[:, -2]  # a tied pair in every row
    return ope.Logs.create(arms, np.zeros(n, int), np.ones(n), np.full(n, 0.5))


def test_exact_and_monte_carlo_distributions_agree_row_by_row():
    logs = _logs(30, 5, 3)
    agent = _trained(bb.EpsilonGreedy(logistic(), epsilon=0.3), 3)
    exact = ope.target_distribution(jax.random.PRNGKey(0), agent.policy, agent.state, logs)
    assert np.all(np.asarray(exact.se) == 0) and np.allclose(np.asarray(exact.probabilities).sum(1), 1, atol=1e-12)
    mc = ope.target_distribution(
        jax.random.PRNGKey(1), agent.policy, agent.state, logs, samples=4000, method="monte_carlo"
    )
    diff = np.abs(np.asarray(mc.probabilities) - np.asarray(exact.probabilities))
    assert np.all(diff <= 5 * np.maximum(np.asarray(mc.se), 2e-3))
    assert np.allclose(np.asarray(mc.probabilities).sum(1), 1, atol=1e-12)


def test_lints_rows_match_the_two_arm_gaussian_closed_form():
    """LinTS samples theta ~ N(theta_hat, v^2 V^-1): P(arm 0) = Phi(D^T theta_hat / (v ||D||_{V^-1})) on every row."""
    agent = _trained(bb.LinTS(v=0.7), 2, rounds=10)
    logs = _logs(20, 2, 2, seed=3)._replace(arms=jax.numpy.asarray(np.random.default_rng(3).uniform(-1, 1, (20, 2, 2))))
    got = ope.target_distribution(jax.random.PRNGKey(2), agent.policy, agent.state, logs, samples=20_000)
    precision, b = np.asarray(agent.state.precision), np.asarray(agent.state.b)
    mean = np.linalg.solve(precision, b)
    diff = np.asarray(logs.arms)[:, 0] - np.asarray(logs.arms)[:, 1]
    scale = 0.7 * np.sqrt(np.einsum("nd,nd->n", diff, np.linalg.solve(precision, diff.T).T))
    exact = norm.cdf(diff @ mean / scale)
    p0, se0 = np.asarray(got.probabilities)[:, 0], np.asarray(got.se)[:, 0]
    assert np.all(np.abs(p0 - exact) <= 4.5 * np.maximum(se0, 1e-3)), np.abs(p0 - exact) / se0
