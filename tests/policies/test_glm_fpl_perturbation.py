"""GLM-FPL's perturbations scaled to the posterior: the prior anchored at a draw, reward noise of the reward's variance."""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.models import linear_gaussian, poisson

import bayesbandit as bb
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.posteriors import perturb_history

DRAWS = 2_000


def _ensemble(model, x, y, *, noise, a, draws=DRAWS, seed=0):
    bound = bb.bind(model, x[:1])
    center = bb.map_estimate(bound, x, y).theta
    keys = jax.random.split(jax.random.PRNGKey(seed), draws)
    solve = jax.jit(jax.vmap(lambda k: bb.perturbed_map(k, bound, x, y, a=a, noise=noise, init=center).theta))
    return np.asarray(solve(keys))


def test_gaussian_linear_draws_are_exact_posterior_draws():
    """For a Gaussian linear program and a = 1 the perturbed MAP is an exact posterior draw (GLMFPL's derivation)."""
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-1, 1, (12, 3)))
    y = jnp.asarray(x @ np.array([0.5, -1.0, 0.2]) + 0.7 * rng.normal(size=12))
    noise_scale, prior_scale = 0.7, 2.0
    draws = _ensemble(linear_gaussian(noise_scale=noise_scale, prior_scale=prior_scale), x, y, noise="posterior", a=1.0)
    precision = np.eye(3) / prior_scale**2 + np.asarray(x).T @ np.asarray(x) / noise_scale**2
    cov = np.linalg.inv(precision)
    mean = cov @ np.asarray(x).T @ np.asarray(y) / noise_scale**2
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(draws.mean(0), mean, atol=4 * sd.max() / np.sqrt(DRAWS))
    np.testing.assert_allclose(draws.std(0) / sd, 1.0, atol=0.08)
    # a scales the draws' spread about the MAP.
    half = _ensemble(linear_gaussian(noise_scale=noise_scale, prior_scale=prior_scale), x, y, noise="posterior", a=0.5)
    np.testing.assert_allclose(half.std(0) / sd, 0.5, atol=0.05)


def test_reward_noise_has_the_reward_variance_at_the_fit():
    """Poisson rows of mean mu and weight n get noise of variance a^2 mu / n; the paper's noise ignores mu."""
    bound = bb.bind(poisson(), jnp.zeros((1, 2)))
    x = jnp.array([[1.0, 0.5], [-0.5, 0.2], [0.3, -1.0]])
    y = jnp.array([3.0, 1.0, 2.0])
    w = jnp.array([4.0, 1.0, 0.0])
    center = jnp.array([1.2, 0.4])
    keys = jax.random.split(jax.random.PRNGKey(3), 20_000)

    def noise_of(noise):
        perturbed = jax.vmap(
            lambda k: (
                perturb_history(k, bound, x, y, w, center, perturbation="rewards", noise=noise, a=0.8, weight_sd=1.0).y
            )
        )(keys)
        return np.asarray(perturbed) - np.asarray(y)

    mu = np.exp(np.asarray(x) @ np.asarray(center))
    got = noise_of("posterior")
    np.testing.assert_allclose(got[:, :2].var(0), 0.64 * mu[:2] / np.array([4.0, 1.0]), rtol=0.05)
    assert np.all(got[:, 2] == 0.0)  # a row of weight 0 is untouched
    np.testing.assert_allclose(noise_of("paper")[:, :2].var(0), 0.64 / np.array([4.0, 1.0]), rtol=0.05)


def hierarchy(x, y=None):
    """Non-centred partial pooling over 5 groups (column 0 of x) with shared slopes."""
    group = x[:, 0].astype(jnp.int32)
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.5))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([5]).to_event(1))
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    with numpyro.plate("n", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=mu + tau * z[group] + x[:, 1:] @ beta), obs=y)


def _hierarchy_data():
    rng = np.random.default_rng(0)
    groups = rng.choice([0, 1, 2], size=60)  # groups 3 and 4 are never observed
    x = np.column_stack([groups, rng.uniform(-1, 1, (60, 2))])
    logits = 0.3 + np.array([0.8, -0.5, 0.2, 0.0, 0.0])[groups] + x[:, 1:] @ [1.0, -1.0]
    y = (rng.uniform(size=60) < 1 / (1 + np.exp(-logits))).astype(float)
    return jnp.asarray(x), jnp.asarray(y)


def test_never_observed_groups_vary_only_with_the_prior_anchor():
    """A group no row reaches: the paper's perturbed MAP is the prior's mode in every draw; anchored, it spreads like its prior."""
    x, y = _hierarchy_data()
    names = bb.diagnostics.flat_parameter_names(bb.bind(hierarchy, x[:1]))
    unseen = [names.index("z[3]"), names.index("z[4]")]
    paper = _ensemble(hierarchy, x, y, noise="paper", a=0.5, draws=400)
    np.testing.assert_allclose(paper[:, unseen].std(0), 0.0, atol=1e-6)
    anchored = _ensemble(hierarchy, x, y, noise="posterior", a=1.0, draws=400)
    assert np.all((anchored[:, unseen].std(0) > 0.8) & (anchored[:, unseen].std(0) < 1.2))


def test_ensemble_spread_matches_nuts_for_every_latent():
    """FPL sd / NUTS sd in [0.5, 2] for every latent of the hierarchy, never-observed groups included."""
    x, y = _hierarchy_data()
    comparison = bb.diagnostics.compare(hierarchy, x, y, methods=("fpl", "nuts"), fpl_a=1.0, seed=0)
    row = comparison.table.loc["fpl"]
    assert 0.5 <= row["sd_ratio_min"] and row["sd_ratio_max"] <= 2.0, comparison.table


def test_noise_is_validated():
    with pytest.raises(InvalidInput, match="noise"):
        bb.GLMFPL(poisson(), noise="constant")
