"""Bad input raises a named bayesbandit error and leaves the agent as it was."""

import math

import hypothesis.strategies as st
import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _asserts import assert_unchanged, snapshot
from bayesbandit.models import logistic, poisson
from hypothesis import HealthCheck, given, settings

import bayesbandit as bb
from bayesbandit.errors import InvalidInput, ModelSpecError
from bayesbandit.validation import check_names

ARMS = np.random.default_rng(0).uniform(-1, 1, (5, 3))
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# Every check runs before any jitted call, so the agents need not play (and compile) first.
@pytest.fixture(scope="module")
def bernoulli_agent():
    return bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)


@pytest.fixture(scope="module")
def poisson_agent():
    return bb.Agent(bb.GLMTSL(poisson(), a=1.0), arms=ARMS, seed=0)


@pytest.fixture(scope="module")
def contextual_agent():
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), d=3, seed=0, capacity=8)
    agent.select(ARMS)  # update(action, reward) then indexes these arms
    return agent


def _rejects(agent, call, match):
    """``call(agent)`` raises InvalidInput matching ``match``; state and draw count unchanged."""
    before, draws = snapshot(agent.state), agent.num_decisions
    with pytest.raises(InvalidInput, match=match):
        call(agent)
    assert_unchanged(before, agent.state)
    assert agent.num_decisions == draws


@pytest.mark.parametrize("reward", [math.nan, math.inf, -math.inf])
def test_non_finite_reward(bernoulli_agent, reward):
    _rejects(bernoulli_agent, lambda a: a.update(0, reward), "not finite")


@pytest.mark.parametrize("reward", [2.0, -1.0, 0.5])
def test_reward_outside_bernoulli_support(bernoulli_agent, reward):
    _rejects(bernoulli_agent, lambda a: a.update(1, reward), r"outside the support of the reward model \(Bernoulli")


@pytest.mark.parametrize("reward", [-1.0, 0.5])
def test_reward_outside_poisson_support(poisson_agent, reward):
    _rejects(poisson_agent, lambda a: a.update(1, reward), r"outside the support of the reward model \(Poisson")


@pytest.mark.parametrize("arm", [5, -1, 1.5, "a", [0, 1]])
def test_arm_index_out_of_range(bernoulli_agent, contextual_agent, arm):
    _rejects(bernoulli_agent, lambda a: a.update(arm, 1.0), "arm")
    _rejects(contextual_agent, lambda a: a.update(arm, 1.0), "arm")


def test_empty_arm_set(contextual_agent):
    _rejects(contextual_agent, lambda a: a.select(np.zeros((0, 3))), "empty arm set")
    with pytest.raises(InvalidInput, match="empty arm set"):
        bb.Agent(bb.GLMTSL(logistic()), arms=np.zeros((0, 3)))


@SETTINGS
@given(k=st.integers(1, 6), d=st.integers(1, 6).filter(lambda d: d != 3))
def test_wrong_feature_dimension(contextual_agent, k, d):
    _rejects(contextual_agent, lambda a: a.select(np.zeros((k, d))), f"feature dimension {d}")


@SETTINGS
@given(shape=st.sampled_from([(3,), (2, 2, 3), ()]))
def test_wrong_rank_of_arms(contextual_agent, shape):
    _rejects(contextual_agent, lambda a: a.select(np.zeros(shape)), r"shape \(K, d\)")


@SETTINGS
@given(
    k=st.integers(1, 6),
    data=st.data(),
    bad=st.sampled_from([math.nan, math.inf, -math.inf]),
)
def test_non_finite_feature_in_arms(contextual_agent, k, data, bad):
    i = data.draw(st.integers(0, k - 1))
    j = data.draw(st.integers(0, 2))
    arms = np.random.default_rng(2).uniform(-1, 1, (k, 3))
    arms[i, j] = bad
    _rejects(contextual_agent, lambda a: a.select(arms), rf"non-finite value \({bad}\) at index \({i}, {j}\)")


def test_non_finite_feature_in_fixed_arm_set():
    arms = ARMS.copy()
    arms[2, 1] = math.nan
    with pytest.raises(InvalidInput, match=r"arms contains a non-finite value \(nan\) at index \(2, 1\)"):
        bb.Agent(bb.GLMTSL(logistic()), arms=arms)


def test_contextual_update_needs_a_select_first():
    agent = bb.Agent(bb.LinUCB(), d=3)
    with pytest.raises(InvalidInput, match="select"):
        agent.update(0, 1.0)
    with pytest.raises(InvalidInput, match="arms"):
        agent.select()
    with pytest.raises(InvalidInput):
        bb.Agent(bb.LinUCB())


# --------------------------------------------------------------------------- hyper-parameters
HYPER = [
    (lambda: bb.GLMTSL(logistic(), a=-1), "a", "GLMTSL"),
    (lambda: bb.GLMTSL(logistic(), a=0.0), "a", "GLMTSL"),
    (lambda: bb.GLMTSL(logistic(), a=math.nan), "a", "GLMTSL"),
    (lambda: bb.GLMFPL(logistic(), a=-0.1), "a", "GLMFPL"),
    (lambda: bb.GLMUCB(logistic(), rho=-1.0), "rho", "GLMUCB"),
    (lambda: bb.UCBGLM(logistic(), alpha=-1.0), "alpha", "UCBGLM"),
    (lambda: bb.EpsilonGreedy(logistic(), epsilon=1.5), "epsilon", "EpsilonGreedy"),
    (lambda: bb.EpsilonGreedy(logistic(), epsilon=-0.1), "epsilon", "EpsilonGreedy"),
    (lambda: bb.LinTS(lam=0.0), "lam", "LinTS"),
    (lambda: bb.LinTS(v=-1.0), "v", "LinTS"),
    (lambda: bb.LinUCB(alpha=math.inf * 0), "alpha", "LinUCB"),
    (lambda: bb.LinUCB(lam=-2.0), "lam", "LinUCB"),
    (lambda: bb.GLMTSL(logistic(), init_params="zeros"), "init_params", "GLMTSL"),
    (lambda: bb.GLMTSL(logistic(), solver=bb.inference.FirstOrder()), "solver", "GLMTSL"),
    (lambda: bb.inference.DenseNewton(max_steps=0), "max_steps", "DenseNewton"),
    (lambda: bb.inference.DenseNewton(tol=-1.0), "tol", "DenseNewton"),
    (lambda: bb.inference.FirstOrder(num_steps=0), "num_steps", "FirstOrder"),
    (lambda: logistic(prior_scale=0.0), "prior_scale", "logistic"),
    (lambda: bb.envs.LinearBandit(noise=0.0), "noise", "LinearBandit"),
    (lambda: bb.envs.LogisticBandit(K=0), "K", "LogisticBandit"),
]


@pytest.mark.parametrize("make, name, owner", HYPER)
def test_hyper_parameter_validation(make, name, owner):
    with pytest.raises(InvalidInput, match=f"The '{name}' parameter of {owner}"):
        make()


def test_valid_hyper_parameters_and_traced_values_pass():
    bb.GLMFPL(logistic(), a=0.0)  # follow-the-leader is allowed
    bb.EpsilonGreedy(logistic(), epsilon=1.0)
    # tracers skip the check, so a sweep over a hyper-parameter vmaps
    out = jax.vmap(lambda a: bb.LinTS(lam=1.0, v=a).v * 2)(np.array([0.5, 1.0]))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0])


# ----------------------------------------------------------------------------------- binding
def no_reward_site(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0, 1).expand([x.shape[-1]]).to_event(1))
    numpyro.sample("reward", dist.Normal(x @ theta, 1.0).to_event(1), obs=y)


def discrete_latent(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0, 1).expand([x.shape[-1]]).to_event(1))
    switch = numpyro.sample("switch", dist.Bernoulli(0.5))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta + switch, 1.0), obs=y)


def two_observed(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0, 1).expand([x.shape[-1]]).to_event(1))
    numpyro.sample("offset_obs", dist.Normal(theta.sum(), 1.0), obs=0.3)
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta, 1.0), obs=y)


def no_latent(x, y=None):
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x.sum(-1), 1.0), obs=y)


def vector_reward(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0, 1).expand([x.shape[-1]]).to_event(1))
    numpyro.sample("y", dist.Normal(x @ theta, 1.0).to_event(1), obs=y)


def failing(x, y=None):
    raise RuntimeError("user bug")


BIND_ERRORS = [
    (no_reward_site, "no sample site named 'y'"),
    (discrete_latent, "latent site 'switch' is discrete"),
    (two_observed, r"observed sites \['offset_obs'\] besides 'y'"),
    (no_latent, "no latent sample site"),
    (vector_reward, "observed site 'y' must have one scalar reward per row"),
    (failing, "RuntimeError: user bug"),
]


@pytest.mark.parametrize("model, match", BIND_ERRORS, ids=[m.__name__ for m, _ in BIND_ERRORS])
def test_bind_errors_name_the_site(model, match):
    with pytest.raises(ModelSpecError, match=match):
        bb.bind(model, np.zeros((4, 3)))


def test_bind_rejects_bad_shapes():
    with pytest.raises(ModelSpecError, match="at least 2 dimensions"):
        bb.bind(logistic(), np.zeros(3))
    bound = bb.bind(logistic(), np.zeros((2, 3)))
    with pytest.raises(ModelSpecError, match="bound to features of shape"):
        bb.bind(bound, np.zeros((2, 4)))


@pytest.mark.parametrize(
    ("given", "why"),
    [("draws", "not a non-empty list"), ([], "not a non-empty list"), (["draws", "theta"], "'theta'"), ([1], "1")],
)
def test_check_names_refuses_a_string_an_empty_list_and_unknown_names(given, why):
    with pytest.raises(InvalidInput, match="'sections' parameter of owner") as raised:
        check_names("owner", "sections", given, ("index", "draws"))
    assert why in str(raised.value) and "Fix: pass e.g. sections=['index']" in str(raised.value)
    assert check_names("owner", "sections", ["draws"], ("index", "draws")) == ("draws",)
