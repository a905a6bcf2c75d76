"""PiecewiseStationary and Drifting: the environment contract suite, segments, parameter paths, the oracle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.drift import Drifting, PiecewiseStationary
from bayesbandit.envs import BernoulliBandit, ClusteredSemiBandit, ContextualLogisticBandit, LogisticBandit
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import TopK
from bayesbandit.testing.envs import ENV_CHECKS

ENVS = [
    BernoulliBandit(means=(0.3, 0.5, 0.9)),
    PiecewiseStationary(LogisticBandit(K=6, d=3), (2, 4)),
    PiecewiseStationary.from_envs((BernoulliBandit(means=(0.3, 0.9)), BernoulliBandit(means=(0.7, 0.1))), (3,)),
    Drifting(LogisticBandit(K=6, d=3), kind="random_walk", scale=0.3, horizon=10),
    Drifting(ContextualLogisticBandit(K=5, d=3), kind="periodic", period=6),
]


@pytest.mark.parametrize("check", ENV_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("env", ENVS, ids=lambda e: type(e).__name__ + str(ENVS.index(e)))
def test_env_contract(env, check):
    check(env)


def _outcomes(env, state, t):
    return jax.vmap(lambda a: env.pull(state, a, jax.random.PRNGKey(0), t)[1])(jnp.arange(env.K))


def test_piecewise_segments_use_their_own_instance_and_oracle():
    means = ((0.3, 0.5, 0.9), (0.3, 0.2, 0.9), (0.7, 0.2, 0.1))
    env = PiecewiseStationary.from_envs(tuple(BernoulliBandit(means=m) for m in means), (10, 20))
    state = env.reset(jax.random.PRNGKey(0))
    for t, seg in ((0, 0), (9, 0), (10, 1), (19, 1), (20, 2), (99, 2)):
        out = _outcomes(env, state, t)
        np.testing.assert_allclose(out.expected_reward, means[seg], rtol=1e-6)
        np.testing.assert_allclose(out.best_expected_reward, max(means[seg]), rtol=1e-6)
    assert env.fixed_arms


def test_piecewise_redraws_theta_and_keeps_the_arms_of_a_parametric_env():
    env = PiecewiseStationary(LogisticBandit(K=8, d=3), (5,))
    state = env.reset(jax.random.PRNGKey(1))
    a, b = env.instance(state, 4), env.instance(state, 5)
    assert np.array_equal(env.arms(state, 0), env.arms(state, 7)) and env.fixed_arms
    assert not np.allclose(a.theta, b.theta)
    np.testing.assert_allclose(b.means, jax.nn.sigmoid(b.arms @ b.theta))
    assert float(b.best_mean) == float(b.means.max())


def test_drifting_random_walk_path_and_oracle():
    env = Drifting(LogisticBandit(K=10, d=4), kind="random_walk", scale=0.2, interval=3, horizon=30)
    state = env.reset(jax.random.PRNGKey(2))
    steps = np.diff(np.asarray(state.path), axis=0)
    assert state.path.shape == (10, 4) and 0.1 < steps.std() < 0.3
    np.testing.assert_array_equal(env.parameter_at(state, 4), state.path[1])
    np.testing.assert_array_equal(env.parameter_at(state, 500), state.path[-1])
    for t in (0, 7, 29):
        out, inst = _outcomes(env, state, t), env.instance(state, t)
        np.testing.assert_allclose(out.expected_reward, jax.nn.sigmoid(inst.arms @ state.path[t // 3]))
        np.testing.assert_allclose(out.best_expected_reward, np.max(out.expected_reward))


def test_drifting_periodic_goes_to_the_second_draw_and_back():
    env = Drifting(BernoulliBandit(K=4), kind="periodic", period=10)
    state = env.reset(jax.random.PRNGKey(3))
    start, other = np.asarray(state.path)
    np.testing.assert_allclose(env.parameter_at(state, 5), other, atol=1e-12)
    np.testing.assert_allclose(env.parameter_at(state, 10), start, atol=1e-12)
    np.testing.assert_allclose(_outcomes(env, state, 5).best_expected_reward, other.max(), rtol=1e-6)


def test_clustered_drift_keeps_a_unit_theta_and_the_top_k_oracle():
    env = Drifting(ClusteredSemiBandit(phi=1.0, oracle=TopK(k=3), d=4, num_arms=9), scale=0.5, horizon=5)
    state = env.reset(jax.random.PRNGKey(4))
    inst = env.instance(state, 4)
    np.testing.assert_allclose(np.linalg.norm(inst.theta), 1.0)
    np.testing.assert_allclose(inst.best, np.sort(np.asarray(inst.means))[-3:].sum())


def test_bad_arguments_raise_invalid_input():
    with pytest.raises(InvalidInput, match="Parametric"):
        Drifting(PiecewiseStationary(LogisticBandit(), (3,)))
    with pytest.raises(InvalidInput, match="horizon"):
        Drifting(LogisticBandit())
    with pytest.raises(InvalidInput, match="change_points"):
        PiecewiseStationary(LogisticBandit(), (5, 5))
    with pytest.raises(InvalidInput, match="one environment per segment"):
        PiecewiseStationary.from_envs((BernoulliBandit(means=(0.1, 0.2)),), (3,))
    with pytest.raises(InvalidInput, match="means"):
        BernoulliBandit(means=(0.5, 1.5))
