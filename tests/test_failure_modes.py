"""No silent failure: programs and inputs that once broke the spine quietly.

Each test reproduces a finding that failed silently before (a state poisoned by NaN, data
dropped, a reward credited to the wrong arm) and checks that it is now refused with a clear
error, or absorbed with a finite state and a plain-words warning, and that learning recovers.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _asserts import all_finite, assert_unchanged, snapshot
from bayesbandit.models import linear_gaussian, logistic, poisson

import bayesbandit as bb
from bayesbandit.errors import InvalidInput

ARMS = np.random.default_rng(0).uniform(-1, 1, (5, 3))


def noise_model(x, y=None):
    """The README's kind of program: Gaussian reward with a HalfNormal noise scale."""
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta, sigma), obs=y)


def test_equal_rewards_do_not_leave_the_agent_stuck():
    """Equal rewards: the noise scale's MAP runs to 0 (its log to about -700, and the Hessian's
    factor to NaN). The agent keeps its last good fit, says so once in plain words naming the
    site, and learns once rewards vary."""
    agent = bb.Agent(bb.GLMTSL(noise_model, a=1.0), arms=ARMS, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            agent.update(0, 0.0)
    assert all_finite(agent.state)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "'sigma'" in messages[0] and "keeps its last good fit" in messages[0]
    rng = np.random.default_rng(1)
    theta = np.array([1.0, -0.5, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(60):
            arm = agent.select()
            agent.update(arm, float(ARMS[arm] @ theta + 0.3 * rng.normal()))
    assert all_finite(agent.state) and bool(agent.last_update_info.converged)
    sigma = float(np.exp(agent.state.fit.theta[0]))  # sites in sorted order: sigma, theta
    assert 0.1 < sigma < 1.0


@pytest.mark.parametrize("model", [poisson(), linear_gaussian()], ids=["poisson", "gaussian"])
def test_absurd_finite_rewards_and_features_are_refused(model):
    agent = bb.Agent(bb.GLMTSL(model, a=1.0), arms=ARMS, seed=0)
    before = snapshot(agent.state)
    with pytest.raises(InvalidInput, match="numeric range"):
        agent.update(0, 1e300)
    assert_unchanged(before, agent.state)
    with pytest.raises(InvalidInput, match="numeric range"):
        bb.Agent(bb.GLMTSL(model, a=1.0), arms=ARMS * 1e300)


def test_pure_api_flags_out_of_range_actions_and_leaves_the_state_unchanged():
    for policy in (bb.GLMTSL(logistic(), a=1.0), bb.LinTS(v=0.5)):
        arms = jnp.asarray(np.random.default_rng(2).uniform(-1, 1, (20, 3)))
        state = policy.init(arms)
        for action in (99, -1, 20):
            new, info = policy.update(state, arms, jnp.asarray(action), jnp.asarray(1.0))
            assert not bool(info.recorded) and not bool(info.converged), (type(policy).__name__, action)
            for x, y in zip(jax.tree.leaves(state), jax.tree.leaves(new), strict=True):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_pure_api_reports_a_full_row_buffer_inside_scan():
    """A non-affine program on a fixed arm set keeps a row buffer; a scan longer than its capacity
    reports every round it could not record, and the state keeps exactly the rows it had."""
    policy = bb.GLMTSL(noise_model, a=1.0)
    arms = jnp.asarray(ARMS)
    state = policy.init(arms, capacity=8)

    def step(state, k):
        action, _ = policy.select(state, arms, k)
        state, info = policy.update(state, arms, action, 0.3 * jax.random.normal(k))
        return state, info.recorded

    state, recorded = jax.jit(lambda s: jax.lax.scan(step, s, jax.random.split(jax.random.PRNGKey(0), 12)))(state)
    np.testing.assert_array_equal(np.asarray(recorded), [True] * 8 + [False] * 4)
    assert int(state.t) == 8 and int(state.history.size) == 8


def test_fixed_arm_agent_refuses_another_arm_set():
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)
    before = snapshot(agent.state)
    with pytest.raises(InvalidInput, match="wrong arm"):
        agent.select(ARMS[::-1])
    assert_unchanged(before, agent.state)
    assert isinstance(agent.select(ARMS.copy()), int)  # the same arm set again is fine


def centred(x, y=None):
    tau = numpyro.sample("tau", dist.HalfCauchy(1.0))
    theta = numpyro.sample("theta", dist.Normal(0.0, tau).expand([x.shape[-1]]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ theta), obs=y)


def non_centred(x, y=None):
    tau = numpyro.sample("tau", dist.HalfCauchy(1.0))
    z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ (tau * z)), obs=y)


def test_a_program_without_a_joint_mode_is_refused_early_with_the_remedy():
    """A centred hierarchical scale: the log joint is unbounded as tau -> 0, so MAP-based policies
    cannot follow it. Agent and simulate say so before running, naming the site and the fix; the
    non-centred program (which has a mode) is accepted."""
    with pytest.raises(bb.errors.ModelSpecError, match=r"site 'tau'.*non-centred"):
        bb.Agent(bb.GLMTSL(centred), arms=ARMS)
    with pytest.raises(bb.errors.ModelSpecError, match="site 'tau'"):
        bb.simulate(bb.GLMFPL(centred), bb.envs.LogisticBandit(K=5, d=3), horizon=5)
    agent = bb.Agent(bb.GLMTSL(non_centred), arms=ARMS)
    agent.update(agent.select(), 1.0)
    assert all_finite(agent.state)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: bb.Agent(bb.LinTS(), d=0), "'d' parameter of Agent"),
        (lambda: bb.Agent(bb.LinTS(), d=3, seed=1.5), "'seed' parameter of Agent"),
        (lambda: bb.Agent(bb.LinTS(), d=3, seed=2**70), "'seed' parameter of Agent"),
        (lambda: bb.Agent(bb.LinTS(), d=3, capacity=-5), "'capacity' parameter of Agent"),
        (lambda: bb.GLMTSL(logistic(), a="1"), "'a' parameter of GLMTSL"),
        (lambda: bb.GLMTSL(logistic(), num_explore=-2), "'num_explore' parameter of GLMTSL"),
        (lambda: bb.LinUCB(num_explore=1.5), "'num_explore' parameter of LinUCB"),
        (lambda: bb.Agent(object(), d=3), "expected a bandit policy"),
    ],
)
def test_bad_arguments_raise_library_errors(make, match):
    with pytest.raises(bb.errors.BayesBanditError, match=match):
        make()
