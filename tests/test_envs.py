"""Environments: the environment checks of :mod:`bayesbandit.testing`, the theta* covariance conventions, common random numbers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import likelihoods

import bayesbandit as bb
from bayesbandit import envs
from bayesbandit.testing.envs import ENV_CHECKS

FIXED = [
    envs.LogisticBandit(K=7, d=3),
    envs.LinearBandit(K=7, d=3, noise=0.5),
    envs.PoissonBandit(K=7, d=3),
    envs.ProgramBandit(model=likelihoods.gamma, K=7, d=3),
]


@pytest.mark.parametrize("check", ENV_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("env", [*FIXED, envs.ContextualLogisticBandit(K=6, d=4)], ids=lambda e: type(e).__name__)
def test_env_contract(env, check):
    check(env)


@pytest.mark.parametrize("env", FIXED, ids=lambda e: type(e).__name__)
def test_fixed_arms_lie_in_the_unit_cube_and_the_oracle_is_the_means(env):
    s = env.reset(jax.random.PRNGKey(0))
    assert env.arms(s, 0).dtype == jnp.float64 and np.all(np.abs(env.arms(s, 0)) <= 1.0)
    assert not np.allclose(s.theta, env.reset(jax.random.PRNGKey(3)).theta)  # another key, another instance
    _, outcome = env.pull(s, 2, jax.random.PRNGKey(1), 0)
    np.testing.assert_allclose(float(outcome.best_expected_reward), float(s.means.max()))
    np.testing.assert_allclose(float(outcome.expected_reward), float(s.means[2]))


@pytest.mark.parametrize("env", FIXED, ids=lambda e: type(e).__name__)
def test_rewards_are_common_across_arms_choice(env):
    """The same key gives each arm the same reward whichever arm index is asked first."""
    s = env.reset(jax.random.PRNGKey(0))
    key = jax.random.PRNGKey(7)
    rewards = [float(env.pull(s, i, key, 0)[0]) for i in range(env.K)]
    assert rewards == [float(env.pull(s, i, key, 0)[0]) for i in reversed(range(env.K))][::-1]


def test_reward_means_match():
    """Empirical mean of many pulls matches the stated mean (5 s.e.; failure rate ~6e-7)."""
    env = envs.LogisticBandit(K=4, d=2, theta_cov="unit")
    s = env.reset(jax.random.PRNGKey(2))
    keys = jax.random.split(jax.random.PRNGKey(3), 20_000)
    rewards, outcome = jax.vmap(lambda k: env.pull(s, 1, k, 0))(keys)
    mu = float(outcome.expected_reward[0])
    assert abs(float(rewards.mean()) - mu) < 5 * np.sqrt(mu * (1 - mu) / 20_000)


def test_contextual_env():
    env = envs.ContextualLogisticBandit(K=6, d=4)
    assert not env.fixed_arms
    s = env.reset(jax.random.PRNGKey(0))
    a0, a1 = env.arms(s, 0), env.arms(s, 1)
    assert a0.shape == (6, 4)
    assert not np.allclose(a0, a1)  # redrawn every round
    np.testing.assert_array_equal(a1, env.arms(s, 1))  # a pure function of (instance, t)
    means = jax.nn.sigmoid(a1 @ s.theta)
    for arm in range(6):
        _, outcome = env.pull(s, arm, jax.random.PRNGKey(1), 1)
        np.testing.assert_allclose(float(outcome.expected_reward), float(means[arm]))
        np.testing.assert_allclose(float(outcome.best_expected_reward), float(means.max()))


@pytest.mark.parametrize("theta_cov, expected", [("paper", lambda d: 1.0 / d), ("unit", lambda d: 1.0)])
def test_theta_cov_gives_stated_variance(theta_cov, expected):
    """var(x^T theta*) over instances and arms: 1/d for "paper" (3/d^2), 1 for "unit" (3/d).

    x^T theta* is Gaussian given x, so var over 4000 instances x 100 arms has relative standard
    error about sqrt(2 / 4000) = 2.2% (arms within an instance are correlated through theta*);
    10% tolerance is > 4 s.e. (failure rate below 1e-4).
    """
    d = 10
    env = envs.LogisticBandit(K=100, d=d, theta_cov=theta_cov)
    states = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), 4000))
    eta = jnp.einsum("nkd,nd->nk", states.arms, states.theta)
    assert float(jnp.var(eta)) == pytest.approx(expected(d), rel=0.1)
    assert envs.theta_variance(theta_cov, d) == pytest.approx({"paper": 3 / d**2, "unit": 3 / d}[theta_cov])


@pytest.mark.parametrize("bad", [{"K": 0}, {"d": -1}, {"theta_cov": "wide"}, {"theta_cov": -1.0}])
def test_bad_settings_raise(bad):
    name = next(iter(bad))
    with pytest.raises(bb.errors.InvalidInput, match=f"'{name}' parameter"):
        envs.LogisticBandit(**bad)
