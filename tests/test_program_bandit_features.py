"""``ProgramBandit`` on the user's own arms (``arms=``: an array or a function of the key) and a fixed world (``theta=``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic, poisson_exposure

import bayesbandit as bb
from bayesbandit.envs._common import uniform_arms
from bayesbandit.errors import InvalidInput
from bayesbandit.testing.envs import ENV_CHECKS

MINE = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5], [-1.0, 0.2], [0.3, 0.3]])


def exposures(key):
    """Five arms: log exposures 0 .. log 5 and one uniform feature drawn from the key."""
    return jnp.column_stack([jnp.log(jnp.linspace(1.0, 5.0, 5)), jax.random.uniform(key, (5,), minval=-1.0)])


def test_the_arms_given_are_the_arms_played():
    env = bb.envs.ProgramBandit(model=logistic(), arms=MINE)
    assert (env.K, env.d) == MINE.shape
    ds = bb.simulate(
        bb.LinTS(v=0.5), env, horizon=6, runs=2, seed=3, record=lambda rnd: {"arms": rnd.arms}, num_chunks=1
    )
    played = ds.arms.isel(policy=0).values  # (run, round, K, d)
    np.testing.assert_array_equal(played, np.broadcast_to(MINE, played.shape))


def test_an_arms_function_draws_per_key_and_repeats_per_key():
    env = bb.envs.ProgramBandit(model=poisson_exposure(), arms=exposures)
    assert (env.K, env.d) == (5, 2)
    one, again, other = (env.reset(jax.random.PRNGKey(k)).arms for k in (0, 0, 1))
    np.testing.assert_array_equal(one, again)
    assert not np.allclose(one[:, 1], other[:, 1])
    np.testing.assert_allclose(np.exp(one[:, 0]), [1.0, 2.0, 3.0, 4.0, 5.0])  # the function's own design column
    np.testing.assert_array_equal(one, exposures(jax.random.split(jax.random.PRNGKey(0))[0]))  # the arms key


def test_a_fixed_theta_is_every_instance_s_parameter_and_sets_the_means():
    theta = np.array([-0.7])  # poisson_exposure's one latent: the slope of the feature after the exposure column
    env = bb.envs.ProgramBandit(model=poisson_exposure(), arms=exposures, theta=theta)
    for key in (0, 5):
        instance = env.reset(jax.random.PRNGKey(key))
        np.testing.assert_array_equal(instance.theta, theta)
        np.testing.assert_allclose(instance.means, np.exp(instance.arms[:, 0] - 0.7 * instance.arms[:, 1]))


def test_without_arms_the_instances_are_the_uniform_draws_of_before():
    """Common random numbers kept: the arms key is the first half of the reset key, as it was."""
    env = bb.envs.ProgramBandit(model=logistic(), K=6, d=3)
    key = jax.random.PRNGKey(11)
    np.testing.assert_array_equal(env.reset(key).arms, uniform_arms(jax.random.split(key)[0], 6, 3))


def test_equal_settings_are_equal_and_other_arms_are_not():
    model = logistic()
    same = bb.envs.ProgramBandit(model=model, arms=MINE.copy()), bb.envs.ProgramBandit(model=model, arms=MINE.copy())
    assert same[0] == same[1] and hash(same[0]) == hash(same[1])
    assert same[0] != bb.envs.ProgramBandit(model=model, arms=MINE + 1.0)
    assert same[0] != bb.envs.ProgramBandit(model=model, arms=MINE, theta=np.zeros(2))


@pytest.mark.parametrize("check", ENV_CHECKS, ids=lambda c: c.__name__)
def test_the_environment_contract_holds_with_an_arms_function_and_a_theta(check):
    check(bb.envs.ProgramBandit(model=poisson_exposure(), arms=exposures, theta=np.array([0.2])))


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(arms=np.zeros(3)), ["'arms'", "2-d", "(3,)", "shape (K, d)"]),
        (dict(arms=[["a", "b"]]), ["'arms'", "numeric", "Fix"]),
        (dict(arms=np.array([[0.0, np.nan]])), ["'arms'", "finite", "(0, 1)"]),
        (dict(arms=MINE, K=4), ["'K'", "5 rows", "K=4", "drop K="]),
        (dict(arms=MINE, d=3), ["'d'", "2 columns", "d=3", "drop d="]),
        (dict(arms=lambda key: jnp.zeros(4)), ["'arms' function", "(4,)", "(K, d)"]),
        (dict(arms=lambda key: np.asarray(key) + np.zeros((3, 2))), ["'arms' function", "jittable", "jax.random"]),
        (dict(arms=MINE, theta=np.zeros(3)), ["'theta'", "2 flat", "'theta' 2", "(3,)", "sample_prior"]),
        (dict(arms=MINE, theta=np.array([0.0, np.inf])), ["'theta'", "non-finite"]),
    ],
    ids=["1-d", "text", "nan", "K", "d", "function", "numpy-function", "theta-length", "theta-inf"],
)
def test_bad_arms_and_theta_are_refused_with_the_argument_and_the_fix(kwargs, words):
    with pytest.raises(InvalidInput) as info:
        bb.envs.ProgramBandit(model=logistic(), **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
