"""compare(): Bernstein-von Mises on a large logistic posterior, a flag on a small separable one,
and every zoo model plus a user program with a constrained latent site.

One comparison serves all the assertions about it (the large one is a module-scoped fixture):
the cost of a comparison is mostly compiling its fits (once per model and data shape).

Monte Carlo tolerances: with 2 chains x 500 NUTS draws (ESS ~ 1000) the fitted-Gaussian KL has a
positive bias of about p (p + 3) / (4 ESS) = 0.01 for p = 5 and the averaged coverage a standard
error of about 0.01, so ``kl < 0.05`` and ``|coverage90 - 0.9| < 0.05`` hold with a failure
rate far below 1e-4 when Laplace is as good as Bernstein-von Mises says (true KL ~ 1/n).
"""

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
import scipy.stats
from bayesbandit.diagnostics import Comparison, compare, plot_marginals, plot_pairs
from bayesbandit.models import linear_gaussian, logistic, poisson, probit

import bayesbandit as bb

SMALL = dict(num_draws=200, num_warmup=200, num_chains=2)


def _logistic_data(rng, n, d, scale=0.7):
    x = rng.normal(size=(n, d))
    theta = rng.normal(size=d) * scale
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ theta))).astype(float)
    return x, y


def _check_idata(c: Comparison, site_names, num_draws):
    for method, idata in c.idata.items():
        post = idata.posterior
        assert set(post.data_vars) == set(site_names), method
        for name in site_names:
            assert post[name].dims[:2] == ("chain", "draw")
        # NUTS: its 2 chains; Laplace and FPL: their independent draws split into 4 chains
        chains = 2 if method == "nuts" else 4
        assert post.sizes["chain"] == chains
        assert post.sizes["draw"] * post.sizes["chain"] == num_draws * (chains if method == "nuts" else 1)
        assert np.all(np.isfinite(post.to_array().values))
    stats = c.idata["nuts"].sample_stats
    assert {"diverging", "n_steps", "acceptance_rate", "energy", "step_size", "lp"} <= set(stats.data_vars)
    assert stats["diverging"].dims == ("chain", "draw")


@pytest.fixture(scope="module")
def large():
    rng = np.random.default_rng(0)
    x, y = _logistic_data(rng, 5000, 5)
    return compare(logistic(), x, y, methods=("laplace", "nuts"), num_draws=500, num_warmup=300, num_chains=2, seed=1)


def test_bernstein_von_mises_large_n(large):
    """n = 5000 well-spread observations, d = 5: the posterior is nearly Gaussian, Laplace ~ NUTS."""
    lap = large.table.loc["laplace"]
    assert lap["kl"] < 0.05, large
    assert abs(lap["coverage90"] - 0.9) < 0.05, large
    assert not lap["poor"]
    assert not any(f.startswith("laplace") for f in large.flags), large.flags
    assert large.rhat_max < 1.05 and large.divergences == 0, large
    _check_idata(large, ["theta"], 500)


def test_small_nearly_separable_is_flagged():
    """20 nearly separable observations: the Gaussian at the MAP misses the skewed posterior.

    The prior is weak (``prior_scale=10``) on purpose: under the default N(0, 1) prior, 20
    observations barely move the posterior from the Gaussian prior and Laplace is fine. With a
    weak prior, the likelihood's ridge towards infinite ``theta`` (the separating direction) is
    held back only by the prior's tails, so the posterior is long and skewed along it.
    """
    rng = np.random.default_rng(3)
    x = rng.normal(size=(20, 2))
    y = (x @ np.array([3.0, 3.0]) + 0.3 * rng.normal(size=20) > 0).astype(float)
    c = compare(
        logistic(prior_scale=10.0), x, y, methods=("laplace", "nuts"), num_draws=500, num_warmup=500, num_chains=2
    )
    assert c.table.loc["laplace", "poor"], c
    assert any(f.startswith("laplace: approximation is poor") for f in c.flags), c.flags


def _halfnormal_scale_program(x, y=None):
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta, sigma), obs=y)


@pytest.mark.parametrize(
    "model, sites",
    [
        (logistic(), ["theta"]),
        (probit(), ["theta"]),
        (poisson(), ["theta"]),
        (linear_gaussian(), ["theta"]),
        (_halfnormal_scale_program, ["theta", "sigma"]),
    ],
    ids=["logistic", "probit", "poisson", "linear_gaussian", "user_halfnormal"],
)
def test_every_model(model, sites, tmp_path):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40, 2)) * 0.5
    bound = bb.bind(model, x)
    eta = x @ np.full(2, 0.3)  # rewards in NumPy: eager JAX would compile op by op, per model
    family = getattr(model, "family", "user")
    if family == "poisson":
        y = rng.poisson(np.exp(eta)).astype(float)
    elif family in ("logistic", "probit"):
        mean = 1 / (1 + np.exp(-eta)) if family == "logistic" else scipy.stats.norm.cdf(eta)
        y = (rng.random(40) < mean).astype(float)
    else:
        y = eta + rng.normal(size=40) * 0.5
    c = compare(model, x, y, **SMALL)
    _check_idata(c, sites, 200)
    assert list(c.table.index) == ["laplace", "fpl"]
    assert np.all(np.isfinite(c.table[["kl", "w1_max", "coverage90"]].to_numpy()))
    assert c.draws["nuts"].shape == (2, 200, bound.num_params)
    assert list(c.params.columns.get_level_values(0).unique()) == ["laplace", "fpl", "nuts"]
    assert (
        list(c.params.index)
        == c.param_names
        == (["sigma", "theta[0]", "theta[1]"] if "sigma" in sites else ["theta[0]", "theta[1]"])
    )
    if "sigma" in sites:
        assert np.all(c.idata["nuts"].posterior["sigma"].values > 0)  # constrained values
        assert "sigma" in c.idata["nuts"].unconstrained_posterior
        plot_marginals(c, tmp_path / "m.png")
        plot_pairs(c, tmp_path / "p.png")
        assert (tmp_path / "m.png").stat().st_size > 0 and (tmp_path / "p.png").stat().st_size > 0


def test_rewards_outside_the_models_range_are_refused():
    """compare refuses what the Agent refuses: y = 2 for a Bernoulli model (per-arm mean rewards,
    such as 0.35, stay allowed)."""
    x = np.zeros((3, 2))
    with pytest.raises(bb.errors.InvalidInput, match=r"outside \[0, 1\]"):
        compare(logistic(), x, np.array([0.0, 1.0, 2.0]))
    with pytest.raises(bb.errors.InvalidInput, match=r"outside \[0, inf\]"):
        compare(poisson(), x, np.array([0.0, -1.0, 2.0]))
