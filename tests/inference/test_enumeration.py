"""Per-row discrete sites marked for enumeration are summed out exactly (``bayesbandit.inference.enumeration``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.models import likelihoods
from scipy import special, stats

import bayesbandit as bb
from bayesbandit.errors import ModelSpecError
from bayesbandit.inference.posteriors import resolve_perturbation

ROWS = np.random.default_rng(0).uniform(-1, 1, (12, 3))


def _thetas(bound, count=3):
    rng = np.random.default_rng(1)
    return [jnp.asarray(bound.prior_median + rng.normal(0, 0.7, bound.num_params)) for _ in range(count)]


def test_an_enumerated_mixture_equals_the_mixture_written_by_hand():
    """``mixture`` (indicator marked for enumeration) against ``mixture_marginal`` (``MixtureSameFamily``)."""
    enumerated, marginal = bb.bind(likelihoods.mixture, ROWS), bb.bind(likelihoods.mixture_marginal, ROWS)
    assert enumerated.site_names == marginal.site_names == ("theta", "weight")
    y = jnp.asarray(np.random.default_rng(2).normal(1.0, 1.5, len(ROWS)))
    for theta in _thetas(enumerated):
        np.testing.assert_allclose(
            enumerated.log_likelihood(theta, ROWS, y), marginal.log_likelihood(theta, ROWS, y), rtol=1e-12
        )
        np.testing.assert_allclose(enumerated.mean_reward(theta, ROWS), marginal.mean_reward(theta, ROWS), rtol=1e-12)
        np.testing.assert_allclose(enumerated.potential(theta, ROWS, y), marginal.potential(theta, ROWS, y), rtol=1e-12)
        np.testing.assert_allclose(
            jax.hessian(enumerated.potential)(theta, ROWS, y),
            jax.hessian(marginal.potential)(theta, ROWS, y),
            rtol=1e-10,
            atol=1e-12,
        )


def chained(x, y=None):
    """Two per-row indicators, the second depending on the first, both shifting the reward."""
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    rate = numpyro.sample("rate", dist.Beta(2.0, 3.0))
    with numpyro.plate("rows", x.shape[0]):
        first = numpyro.sample("first", dist.Bernoulli(rate), infer={"enumerate": "parallel"})
        probs = jnp.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])[first]
        second = numpyro.sample("second", dist.Categorical(probs), infer={"enumerate": "parallel"})
        numpyro.sample("y", dist.Normal(x @ theta + 1.5 * first - second, 0.7), obs=y)


def test_two_chained_sites_are_summed_out_jointly():
    """``log p(y_i) = log sum_{a, b} p(a) p(b | a) N(y_i | eta_i + 1.5 a - b, 0.7)``, by hand over the 6 pairs."""
    bound = bb.bind(chained, ROWS)
    assert bound.site_names == ("rate", "theta")
    y = np.random.default_rng(3).normal(0.0, 1.5, len(ROWS))
    second = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    for flat in _thetas(bound):
        values = bound.constrain(flat)
        eta = ROWS @ np.asarray(values["theta"])
        rate = float(values["rate"])
        pairs = [(a, b) for a in (0, 1) for b in (0, 1, 2)]
        log_weights = np.array([np.log([1 - rate, rate][a]) + np.log(second[a, b]) for a, b in pairs])
        means = np.stack([eta + 1.5 * a - b for a, b in pairs])
        terms = log_weights[:, None] + stats.norm.logpdf(y, means, 0.7)
        np.testing.assert_allclose(bound.log_likelihood(flat, ROWS, y), special.logsumexp(terms, axis=0), rtol=1e-12)
        np.testing.assert_allclose(bound.mean_reward(flat, ROWS), np.exp(log_weights) @ means, rtol=1e-12)


def test_rewards_drawn_from_the_summed_out_site_have_its_mean_and_spread():
    bound = bb.bind(likelihoods.mixture, ROWS)
    theta = _thetas(bound, 1)[0]
    draws = jax.vmap(lambda key: bound.sample_rewards(theta, ROWS[:2], key))(
        jax.random.split(jax.random.PRNGKey(0), 40_000)
    )
    np.testing.assert_allclose(draws.mean(0), bound.mean_reward(theta, ROWS[:2]), atol=0.03)
    weight = float(bound.constrain(theta)["weight"])  # two components 2 apart, sd 0.5: variance 0.25 + 4 w (1 - w)
    np.testing.assert_allclose(draws.var(0), 0.25 + 4 * weight * (1 - weight), rtol=0.05)


def test_an_agent_on_an_enumerated_mixture_decides_and_learns_a_step():
    agent = bb.Agent(bb.GLMFPL(likelihoods.mixture), arms=ROWS, seed=0)
    arm = agent.select()
    agent.update(arm, 1.7)
    assert bool(agent.last_update_info.converged)
    bound = bb.bind(likelihoods.mixture, ROWS)
    assert resolve_perturbation(bound, "auto", "GLMFPL") == "weights"  # the marginal is not affine in the reward


def _global(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    regime = numpyro.sample("regime", dist.Bernoulli(0.5), infer={"enumerate": "parallel"})
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta + regime, 1.0), obs=y)


def _feeds_a_factor(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    with numpyro.plate("rows", x.shape[0]):
        z = numpyro.sample("z", dist.Bernoulli(0.5), infer={"enumerate": "parallel"})
        numpyro.factor("penalty", -z * jnp.sum(theta**2))
        numpyro.sample("y", dist.Normal(x @ theta + z, 1.0), obs=y)


def _unbounded(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    with numpyro.plate("rows", x.shape[0]):
        count = numpyro.sample("count", dist.Poisson(1.0), infer={"enumerate": "parallel"})
        numpyro.sample("y", dist.Normal(x @ theta + count, 1.0), obs=y)


def _unmarked(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    with numpyro.plate("rows", x.shape[0]):
        z = numpyro.sample("z", dist.Bernoulli(0.5))
        numpyro.sample("y", dist.Normal(x @ theta + z, 1.0), obs=y)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (_global, "'regime'.*not one value per row.*Fix: draw it inside the rows' plate"),
        (_feeds_a_factor, "site 'penalty' depends on the enumerated site.*\\['z'\\].*Fix"),
        (_unbounded, "'count'.*no finite support.*Fix"),
        (_unmarked, "'z' is discrete.*not marked for enumeration.*Fix.*'enumerate': 'parallel'"),
    ],
)
def test_a_discrete_site_that_cannot_be_summed_out_is_refused_naming_it(program, message):
    with pytest.raises(ModelSpecError, match=message):
        bb.bind(program, ROWS)
