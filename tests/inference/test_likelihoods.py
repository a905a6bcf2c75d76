"""Every likelihood a practitioner writes learns or is refused clearly (``bayesbandit.models.likelihoods``).

The pieces: discrete rewards reach the program as integers, GLM-FPL perturbs the weights of a
history whose likelihood is not affine in the reward, a warm Newton start stopped by the cap
restarts from the prior median, and :class:`bayesbandit.envs.ProgramBandit` draws a bandit of
the program's own family. The matrix itself (every program, every GLM policy) is
``bayesbandit run likelihoods``; the cells that exercise each piece run here on short horizons.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.experiments.likelihoods import LEARNS_BELOW, play
from bayesbandit.models import likelihoods, logistic

import bayesbandit as bb
from bayesbandit.errors import InvalidInput, ModelSpecError
from bayesbandit.inference.newton import newton_minimize
from bayesbandit.inference.posteriors import perturb_weights, resolve_perturbation
from bayesbandit.inference.program import expected_reward, log_prob

ARMS = np.random.default_rng(0).uniform(-1, 1, (8, 3))


def test_an_ordinal_reward_reaches_its_distribution_as_an_integer():
    fn = dist.OrderedLogistic(jnp.array([0.3, -1.0]), jnp.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(log_prob(fn, jnp.array([2.0, 0.0])), fn.log_prob(jnp.array([2, 0])))
    probs = fn.probs
    np.testing.assert_allclose(expected_reward(fn), probs @ np.arange(4.0), rtol=1e-12)


def test_an_ordinal_agent_learns_its_ratings_and_refuses_others():
    agent = bb.Agent(bb.GLMTSL(likelihoods.ordered_logistic), arms=ARMS, seed=0)
    arm = agent.select()
    agent.update(arm, 3.0)
    assert bool(agent.last_update_info.converged)
    for bad in (2.5, 4.0, -1.0):
        with pytest.raises(InvalidInput, match="OrderedLogistic"):
            agent.update(arm, bad)
    assert agent.num_updates == 1


def test_bootstrap_weights_have_mean_w_and_variance_w_s2():
    w = jnp.array([0.0, 1.0, 5.0])
    draws = jax.vmap(lambda k: perturb_weights(k, w, 0.7))(jax.random.split(jax.random.PRNGKey(0), 40_000))
    assert np.all(np.asarray(draws[:, 0]) == 0.0)  # a masked row stays masked
    np.testing.assert_allclose(draws[:, 1:].mean(0), w[1:], rtol=0.02)
    np.testing.assert_allclose(draws[:, 1:].var(0), w[1:] * 0.49, rtol=0.05)
    np.testing.assert_array_equal(perturb_weights(jax.random.PRNGKey(1), w, 0.0), w)  # s = 0: follow the leader


def test_fpl_perturbs_rewards_of_an_affine_likelihood_and_weights_of_any_other():
    assert resolve_perturbation(bb.bind(logistic(), ARMS), "auto", "GLMFPL") == "rewards"
    gamma = bb.bind(likelihoods.gamma, ARMS)
    assert resolve_perturbation(gamma, "auto", "GLMFPL") == "weights"
    with pytest.raises(ModelSpecError, match="site 'y' .*Gamma.*not affine.*perturbation='weights'"):
        bb.Agent(bb.GLMFPL(likelihoods.gamma, perturbation="rewards"), arms=ARMS)
    with pytest.raises(InvalidInput, match="perturbation"):
        bb.GLMFPL(logistic(), perturbation="labels")


def test_ucb_glm_refuses_a_likelihood_without_a_natural_parameter_and_names_the_alternative():
    with pytest.raises(ModelSpecError, match="UCBGLM.*site 'y'.*not affine.*Fix: use GLMUCB"):
        bb.Agent(bb.UCBGLM(likelihoods.gamma), arms=ARMS)


def test_a_program_that_cannot_be_traced_is_refused_at_binding():
    def branching(x, y=None):
        theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
        scale = 1.0 if float(theta[0]) > 0 else 2.0  # a Python branch on a sampled value
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Normal(x @ theta, scale), obs=y)

    with pytest.raises(ModelSpecError, match="traceable"):
        bb.bind(branching, ARMS)


def test_a_capped_warm_start_restarts_from_the_given_point():
    """``theta^4 / 4 + theta^2 / 2`` from 100: Newton shrinks theta by about a third a step, 3 steps are not enough."""
    fn = lambda t: jnp.sum(t**4) / 4 + jnp.sum(t**2) / 2  # noqa: E731
    start = jnp.array([100.0])
    stuck = newton_minimize(fn, start, max_steps=3, tol=1e-12)
    assert not bool(stuck.info.converged)
    restarted = newton_minimize(fn, start, max_steps=3, tol=1e-12, restart=jnp.array([0.01]))
    assert bool(restarted.info.converged) and abs(float(restarted.theta[0])) < 1e-6
    assert int(restarted.info.num_steps) > 3  # both starts are counted


def test_program_bandit_draws_rewards_from_the_program():
    env = bb.envs.ProgramBandit(model=likelihoods.poisson_log, K=4, d=3)
    instance = env.reset(jax.random.PRNGKey(0))
    np.testing.assert_allclose(instance.means, env.bound.mean_reward(instance.theta, instance.arms))
    pulls = jax.vmap(lambda k: env.pull(instance, 2, k)[0])(jax.random.split(jax.random.PRNGKey(1), 20_000))
    assert np.all(np.asarray(pulls) == np.round(np.asarray(pulls)))
    np.testing.assert_allclose(float(pulls.mean()), float(instance.means[2]), rtol=0.03)


# Each piece on the programs that need it, 4 runs: learns (late regret per round below LEARNS_BELOW x
# uniform play's), and nearly every round converged.
CELLS = [
    ("ordered_logistic", "GLM-TSL"),  # integer rewards, an expected label as the mean
    ("gamma", "GLM-FPL"),  # weight perturbation (reward perturbation left the support)
    ("student_t", "GLM-TSL"),  # the restart of capped warm starts
    ("zero_inflated", "GLM-FPL"),
    ("mixture", "GLM-TSL"),  # a per-row indicator summed out
]


@pytest.mark.parametrize(("name", "policy"), CELLS)
def test_each_piece_learns_on_its_own_family(name, policy):
    cell = play(name, policy, horizon=200, runs=4, seed=0)
    assert not cell["refused"], cell["refused"]
    assert cell["late_ratio"] < LEARNS_BELOW, cell
    assert cell["converged"] >= 0.97, cell


def test_the_first_decision_is_timed_in_a_fresh_process_that_binds_the_program_inside_the_clock():
    from bayesbandit.experiments.likelihoods import first_decision_seconds

    timed = first_decision_seconds("bernoulli_logit", "GLM-TSL", fast_rng=False)
    parts = timed["agent_s"] + timed["select_s"] + timed["update_s"]
    assert timed["first_decision_s"] == pytest.approx(parts)
    # the inspection's programs count too (15 programs in all; 8 when the program was bound before the clock)
    assert timed["compilations"] >= 12
    assert timed["trace_s"] > 0 and timed["xla_s"] > 0


def test_the_restart_is_timed_in_a_fresh_process_that_replays_the_log_after_the_checkpoint():
    from bayesbandit.experiments.likelihoods import RESTART_PENDING, RESTART_ROUNDS, restart_seconds

    timed = restart_seconds("bernoulli_logit", "GLM-TSL")
    assert timed["restart_s"] == pytest.approx(timed["load_s"] + timed["decide_s"])
    assert timed["updates"] == sum(RESTART_ROUNDS) - RESTART_PENDING
    assert timed["pending"] == RESTART_PENDING
    assert timed["decisions"] == sum(RESTART_ROUNDS)
    assert timed["xla_s"] > 0
