"""The structured programs of ``bayesbandit.models.structured``: their means are the formulas they state, GLM-TSL
accepts them, a centred hierarchy is refused naming its scale, and bad settings are refused naming the argument."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
import xarray as xr
from bayesbandit.experiments.programs import ARMS, PROGRAMS, hard_world
from bayesbandit.models import (
    arm_random_effect_logistic,
    correlated_gaussian,
    hierarchical_logistic,
    horseshoe_logistic,
    negative_binomial_exposure,
    poisson_exposure,
    regularised_horseshoe_logistic,
)
from jax.flatten_util import ravel_pytree

import bayesbandit as bb
from bayesbandit.errors import InvalidInput, ModelSpecError

RNG = np.random.default_rng(0)
COV = np.array([[1.0, 0.6], [0.6, 2.0]])


def flat(bound: bb.inference.BoundModel, **unconstrained: np.ndarray) -> jax.Array:
    """The flat parameter vector of the given unconstrained site values (every site named)."""
    assert set(unconstrained) == set(bound.site_names)
    return ravel_pytree({k: jnp.asarray(v, dtype=float) for k, v in unconstrained.items()})[0]


def test_hierarchical_logistic_pools_group_intercepts_from_the_group_column():
    bound = bb.bind(hierarchical_logistic(num_groups=3), jnp.zeros((1, 3)))
    z, beta = RNG.normal(size=3), RNG.normal(size=2)
    theta = flat(bound, mu=0.3, tau=np.log(0.5), z=z, beta=beta)  # tau is positive: its unconstrained value is log
    x = np.column_stack([[0.0, 1.0, 2.0, 1.0], RNG.uniform(-1, 1, size=(4, 2))])
    expected = jax.nn.sigmoid(0.3 + 0.5 * z[x[:, 0].astype(int)] + x[:, 1:] @ beta)
    np.testing.assert_allclose(bound.mean_reward(theta, x), expected, rtol=1e-12)


def test_the_regularised_horseshoe_is_the_horseshoe_far_below_its_slab_and_shrinks_above_it():
    x = RNG.uniform(-1, 1, size=(5, 4))
    lam, z = RNG.normal(size=4), RNG.normal(size=4)
    plain = bb.bind(horseshoe_logistic(), jnp.zeros((1, 4)))
    slab = bb.bind(regularised_horseshoe_logistic(), jnp.zeros((1, 4)))
    sites = dict(alpha=0.2, tau=np.log(0.3), z=z)
    horseshoe = plain.mean_reward(flat(plain, **sites, **{"lambda": lam}), x)
    wide = slab.mean_reward(flat(slab, **sites, **{"lambda": lam, "c2": np.log(1e12)}), x)
    np.testing.assert_allclose(wide, horseshoe, rtol=1e-9)
    beta = 0.3 * np.exp(lam) * z
    np.testing.assert_allclose(horseshoe, jax.nn.sigmoid(0.2 + x @ beta), rtol=1e-12)
    # a slab of c = 0.1: every |beta_j| < c whatever its local scale
    narrow = slab.mean_reward(flat(slab, **sites, **{"lambda": lam + 5.0, "c2": np.log(0.01)}), x)
    slopes = np.linalg.lstsq(x, np.log(narrow / (1 - narrow)) - 0.2, rcond=None)[0]
    assert np.all(np.abs(slopes) < 0.1 * np.abs(z) + 1e-9)


@pytest.mark.parametrize("program", [poisson_exposure(), negative_binomial_exposure()], ids=["poisson", "nb"])
def test_exposure_programs_scale_the_mean_by_the_exposure(program):
    bound = bb.bind(program, jnp.zeros((1, 3)))
    theta = bound.sample_prior(jax.random.PRNGKey(0))
    features = RNG.uniform(-1, 1, size=(1, 2))
    x = np.column_stack([np.log([1.0, 5.0]), np.repeat(features, 2, axis=0)])
    means = np.asarray(bound.mean_reward(theta, x))
    np.testing.assert_allclose(means[1] / means[0], 5.0, rtol=1e-12)
    beta = bound.unravel(theta)["beta"]
    np.testing.assert_allclose(means[0], np.exp(features[0] @ beta), rtol=1e-12)


def test_negative_binomial_exposure_is_overdispersed_by_its_concentration():
    bound = bb.bind(negative_binomial_exposure(), jnp.zeros((1, 2)))
    theta = flat(bound, beta=np.array([0.0]), phi=np.log(2.0))
    x = jnp.tile(jnp.array([[np.log(4.0), 0.0]]), (20_000, 1))  # mean 4: variance 4 + 16 / 2 = 12
    y = np.asarray(bound.sample_rewards(theta, x, jax.random.PRNGKey(1)))
    assert abs(y.mean() - 4.0) < 0.1 and abs(y.var() - 12.0) < 0.8  # s.e. of the variance about 0.2


def test_correlated_gaussian_draws_beta_with_the_given_covariance():
    bound = bb.bind(correlated_gaussian(cov=COV), jnp.zeros((1, 2)))
    draws = jax.vmap(bound.sample_prior)(jax.random.split(jax.random.PRNGKey(0), 20_000))
    beta = np.asarray(jax.vmap(lambda t: bound.unravel(t)["beta"])(draws))
    np.testing.assert_allclose(np.cov(beta.T), COV, atol=0.06)  # s.e. of each entry about 0.02


def test_arm_random_effect_moves_only_its_own_arm():
    bound = bb.bind(arm_random_effect_logistic(num_arms=3), jnp.zeros((1, 3)))
    z, beta = RNG.normal(size=3), RNG.normal(size=2)
    x = np.column_stack([[0.0, 1.0, 2.0], RNG.uniform(-1, 1, size=(3, 2))])
    base = bound.mean_reward(flat(bound, sigma=0.0, z=z, beta=beta), x)
    moved = bound.mean_reward(flat(bound, sigma=0.0, z=z + np.array([0.0, 1.0, 0.0]), beta=beta), x)
    changed = ~np.isclose(base, moved)
    assert changed.tolist() == [False, True, False]
    np.testing.assert_allclose(base, jax.nn.sigmoid(x[:, 1:] @ beta + z), rtol=1e-12)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_glm_tsl_accepts_every_program_on_its_own_arms(name):
    d = ARMS[name](jax.random.PRNGKey(0)).shape[1]
    bb.GLMTSL(PROGRAMS[name]).check_program(d)  # raises ModelSpecError when refused


def test_a_hard_world_has_its_runner_up_within_the_gap():
    env = hard_world("poisson_exposure", (0.1, 0.2), 0)
    means = np.sort(np.asarray(env.reset(jax.random.PRNGKey(0)).means))[::-1]
    assert 0.1 <= (means[0] - means[1]) / means[0] <= 0.2
    np.testing.assert_allclose(np.exp(np.asarray(env.arm_features)[:, 0]).max(), 5.0)  # exposures 1 to 5


def centred_hierarchy(x, y=None):
    """The hierarchy written centred: group intercepts drawn around mu with scale tau."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    with numpyro.plate("groups", 5):
        intercept = numpyro.sample("intercept", dist.Normal(mu, tau))
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([x.shape[-1] - 1]).to_event(1))
    eta = intercept[x[:, 0].astype(jnp.int32)] + x[:, 1:] @ beta
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)


def test_a_centred_hierarchy_is_refused_naming_its_scale():
    with pytest.raises(ModelSpecError, match="site 'tau'.*non-centred"):
        bb.GLMTSL(centred_hierarchy).check_program(4)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: hierarchical_logistic(num_groups=0), ["'num_groups'", "hierarchical_logistic", "0"]),
        (lambda: arm_random_effect_logistic(num_arms=2.5), ["'num_arms'", "2.5"]),
        (lambda: regularised_horseshoe_logistic(slab_df=-1.0), ["'slab_df'", "-1"]),
        (lambda: horseshoe_logistic(global_scale=0.0), ["'global_scale'"]),
        (lambda: correlated_gaussian(cov=[[1.0, 2.0], [2.0, 1.0]]), ["'cov'", "positive definite", "ridge"]),
        (lambda: correlated_gaussian(cov=[[1.0, 0.1], [0.0, 1.0]]), ["'cov'", "symmetric"]),
        (lambda: correlated_gaussian(cov=[1.0, 2.0]), ["'cov'", "square", "(2,)"]),
        (lambda: negative_binomial_exposure(concentration_rate=0.0), ["'concentration_rate'"]),
    ],
    ids=["groups", "arms", "slab_df", "global", "cov-pd", "cov-sym", "cov-shape", "concentration"],
)
def test_bad_settings_are_refused_naming_the_argument(make, words):
    with pytest.raises(InvalidInput) as info:
        make()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize(
    "program, d, words",
    [
        (poisson_exposure(), 1, ["'x'", "log exposure", "d >= 2"]),
        (correlated_gaussian(cov=COV), 3, ["'x'", "2 features", "Got 3"]),
    ],
    ids=["no-feature", "cov-size"],
)
def test_rows_of_the_wrong_width_are_refused(program, d, words):
    with pytest.raises(InvalidInput) as info:
        program(jnp.zeros((2, d)))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_the_experiment_resumes_from_its_stored_cells_and_counts_lock_ins(tmp_path):
    """Every cell stored with the quick settings: ``run`` computes nothing and tabulates them."""
    from bayesbandit.experiments import programs

    settings = {"horizon": 100, "runs": 4, "seeds": 4, "world_gaps": [[0.1, 0.2]], "seed": 0}
    ran = {"refused": "", "prior": [0.0, 0.1, 0.6, 0.2], "hard": [[0.5, 0.0, 0.1, 0.0]], "converged": 1.0}
    ran |= {"compile_s": 1.0, "run_s": 1.0}
    refused = {"refused": "ModelSpecError: site 'tau' has no mode"}
    for name in programs.PROGRAMS:
        for policy in programs.QUICK_POLICIES:
            path = programs._cell_path(tmp_path, name, policy)
            path.parent.mkdir(exist_ok=True)
            cell = refused if (name, policy) == ("horseshoe_logistic", "GLM-FPL") else ran
            path.write_text(json.dumps({"settings": settings, "cell": cell}))
    paths = programs.run(tmp_path, quick=True)
    table = paths["summary"].read_text()
    assert "| poisson_exposure | GLM-TSL | 8 | 0.225 | 0.150 | 2 / 8 (over target) |" in table
    assert "| horseshoe_logistic | GLM-FPL | 0 |" in table and "site 'tau' has no mode" in table
    ds = xr.open_dataset(paths["results"])
    assert ds.hard_late_ratio.sizes == {"program": 7, "policy": 2, "world": 1, "seed": 4}
    assert np.isnan(ds.prior_late_ratio.sel(program="horseshoe_logistic", policy="GLM-FPL")).all()
    assert json.loads(paths["run"].read_text())["options"]["policies"] == ["GLM-TSL", "GLM-FPL"]


def test_policies_are_chosen_by_name_or_prefix():
    from bayesbandit.experiments.programs import _choose

    assert _choose(["GLM-TSL"]) == ["GLM-TSL"]
    assert _choose(["GLM-T"]) == ["GLM-TSL", "GLM-TSL (online)", "GLM-TSL (resampled)"]
    assert _choose(["GLM-FPL"]) == ["GLM-FPL"]
    with pytest.raises(InvalidInput, match="'policies'.*GLM-UCB"):
        _choose(["UCB"])
