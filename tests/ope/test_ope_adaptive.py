"""GLM-TSL's own adaptive logs: the serve-time propensity rule makes IPS unbiased, and the betting interval covers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.experiments.ope_logistic import K, adaptive_log, instance
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit import ope
from bayesbandit.propensities import action_distribution, logged_propensity, select_logged

RUNS, HORIZON, SAMPLES = 400, 120, 8


@pytest.fixture(scope="module")
def adaptive():
    """400 replicate GLM-TSL logs of 120 rounds (M = 8) on one instance, two targets with known values."""
    arms, theta = instance(0)
    means = jax.nn.sigmoid(arms @ theta)
    policy = bb.GLMTSL(logistic(), a=1.0)
    pi = jnp.stack([jnp.full(K, 1.0 / K), jax.nn.one_hot(jnp.argmax(means), K)])
    keys = jax.random.split(jax.random.PRNGKey(7), RUNS)
    action, pscore, reward, support = jax.jit(
        jax.vmap(lambda k: adaptive_log(policy, arms, means, pi, HORIZON, SAMPLES, k))
    )(keys)
    return arms, means, policy, pi, action, pscore, reward, support


def _ips(pi, action, pscore, reward):
    return jnp.mean(pi[:, action] / pscore[None] * reward[None], axis=-1)  # (targets,)


def test_ips_with_the_logged_propensity_is_unbiased_and_the_one_over_k_control_is_not(adaptive):
    arms, means, policy, pi, action, pscore, reward, support = adaptive
    ips = np.asarray(jax.vmap(lambda a, p, r: _ips(pi, a, p, r))(action, pscore, reward))  # (runs, targets)
    gap = ips - np.asarray(support)  # exact theory: E[IPS] = E[drawn-support value]
    z = gap.mean(0) / (gap.std(0, ddof=1) / np.sqrt(RUNS))
    assert np.all(np.abs(z) < 3), z
    truth = np.asarray(pi @ means)
    assert np.all(np.asarray(support).mean(0) <= truth + 1e-12)  # the positivity gap of M draws is one-sided
    control = np.asarray(jax.vmap(lambda a, r: _ips(pi, a, jnp.full(HORIZON, 1.0 / K), r))(action, reward))
    z_control = (control.mean(0) - truth) / (control.std(0, ddof=1) / np.sqrt(RUNS))
    assert np.all(np.abs(z_control) > 5), z_control


def test_the_logged_action_has_the_law_of_one_selection(adaptive):
    arms, means, policy, *_ = adaptive
    state = policy.init(arms)
    rng_keys = jax.random.split(jax.random.PRNGKey(3), 6)
    for k in rng_keys:  # a state after a few rounds of learning
        action, _ = policy.select(state, arms, k)
        state, _ = policy.update(state, arms, action, 1.0 * (action == 0))
    law, _ = action_distribution(jax.random.PRNGKey(4), policy, state, arms, samples=40_000)
    actions, freqs = jax.vmap(lambda k: select_logged(k, policy, state, arms, SAMPLES))(
        jax.random.split(jax.random.PRNGKey(5), 8_000)
    )
    observed = np.bincount(np.asarray(actions), minlength=K) / 8_000
    assert np.all(np.abs(observed - law) <= 4 * np.sqrt(law * (1 - law) / 8_000) + 2e-3), (observed, law)
    freqs = np.asarray(freqs)
    logged = freqs[np.arange(8_000), np.asarray(actions)]
    assert np.all(logged >= 1 / SAMPLES) and np.allclose(freqs.sum(1), 1.0)
    assert np.allclose(logged * SAMPLES, np.round(logged * SAMPLES))


def test_the_agent_logs_the_frequency_among_its_own_and_further_draws():
    arms = np.array([[1.0, 0.2], [0.3, 0.9], [-0.5, 0.4]])
    agent = bb.Agent(bb.LinTS(v=0.7), d=2, seed=0)
    for _ in range(5):
        decision = agent.decide(arms, propensity=16)
        assert (
            decision.propensity * 16 == pytest.approx(round(decision.propensity * 16)) and decision.propensity >= 1 / 16
        )
        agent.update(decision, 1.0)
    direct = logged_propensity(jax.random.PRNGKey(0), agent.policy, agent.state, arms, 0, samples=1)
    assert direct.value == 1.0  # the action alone: frequency 1


def test_betting_interval_covers_on_adaptive_logs_and_fails_with_wrong_propensities(adaptive):
    arms, means, policy, pi, action, pscore, reward, support = adaptive
    truth = np.asarray(pi @ means)

    def intervals(a, p, r):
        w = pi[:, a] / p[None]
        return jax.vmap(lambda wt: ope.betting_interval(wt, r, level=0.9))(w)

    lo, hi = (np.asarray(b) for b in jax.jit(jax.vmap(intervals))(action, pscore, reward))
    covered = (lo <= truth) & (truth <= hi)
    assert covered.mean(0)[1] >= 0.85 and covered.mean(0)[0] >= 0.85, covered.mean(0)
    assert (hi - lo)[:, 1].mean() < 0.6  # informative, not [0, 1]
    wrong = jnp.full_like(pscore, 1.0 / K)
    lo_w, hi_w = (np.asarray(b) for b in jax.jit(jax.vmap(intervals))(action, wrong, reward))
    assert ((lo_w <= truth) & (truth <= hi_w)).mean(0)[1] < 0.5


def test_bootstrap_with_refit_carries_the_reward_models_variability(adaptive):
    arms, means, policy, pi, action, pscore, reward, _ = adaptive
    logs = ope.Logs.create(np.asarray(arms), np.asarray(action[0]), np.asarray(reward[0]), np.asarray(pscore[0]))
    model = ope.RewardModel(logistic(), n_folds=2)
    targets = {"best arm": np.broadcast_to(np.asarray(pi[1]), (HORIZON, K))}
    fixed = ope.evaluate(logs, targets, estimators=[ope.DM()], reward_model=model, intervals=(ope.Bootstrap(num=40),))
    refit = ope.evaluate(
        logs, targets, estimators=[ope.DM()], reward_model=model, intervals=(ope.Bootstrap(num=40, refit=True),)
    )
    width = lambda ds: float((ds.bootstrap_hi - ds.bootstrap_lo).item())  # noqa: E731
    assert width(refit) > 3 * width(fixed)  # held fixed, only the two folds' fits differ between rows
    assert width(refit) > 0.01
    assert float(refit.bootstrap_lo.item()) <= float(refit.value.item()) <= float(refit.bootstrap_hi.item())


def test_nuts_reward_model_agrees_with_laplace(adaptive):
    arms, means, policy, pi, action, pscore, reward, _ = adaptive
    logs = ope.Logs.create(
        np.asarray(arms), np.asarray(action[:3].ravel()), np.asarray(reward[:3].ravel()), np.asarray(pscore[:3].ravel())
    )
    laplace = ope.RewardModel(logistic()).fit_predict(logs)
    nuts = ope.RewardModel(logistic(), method="nuts", num_warmup=150, num_samples=150).fit_predict(
        logs, jax.random.PRNGKey(0)
    )
    assert nuts.shape == (3 * HORIZON, K)
    np.testing.assert_allclose(np.asarray(nuts), np.asarray(laplace), atol=0.03)
