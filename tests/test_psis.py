"""The Pareto-smoothed importance-sampling check of the Laplace approximation (``bayesbandit.inference.psis``).

Programs where the answer is known: a Gaussian-linear program, whose Laplace approximation is its
posterior (k-hat below 0.5), a Gaussian made too narrow or moved off the mode (poor), and Neal's
funnel as a reward program, whose Laplace fit sits in the funnel's neck while the posterior spreads
over its mouth (k-hat above 0.7; ``bayesbandit.diagnostics.compare`` against NUTS puts its KL
in the thousands). The resampled draws are checked against a posterior mean computed by quadrature
with NumPy, independently of the library's potential.
"""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.models import linear_gaussian, logistic

import bayesbandit as bb
from bayesbandit.errors import InvalidInput
from bayesbandit.inference import LaplacePSIS, NewtonFit, laplace_psis, psis, resampled_draws

pytestmark = pytest.mark.timeout(120)


def funnel(x, y=None):
    """Neal's funnel over a logistic model's coefficients: ``theta ~ N(0, exp(v) I)``, ``v ~ N(0, 3^2)``."""
    v = numpyro.sample("v", dist.Normal(0.0, 3.0))
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), jnp.exp(v / 2)).to_event(1))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ theta), obs=y)


def _gaussian_data(n=40):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3))
    return x, x @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=n), np.ones(n)


def test_gaussian_linear_laplace_is_exact():
    x, y, w = _gaussian_data()
    fit = bb.laplace(linear_gaussian(), x, y)
    check = laplace_psis(jax.random.PRNGKey(0), linear_gaussian(), (x, y, w), fit)
    assert check.k_hat < psis.K_HAT_GOOD
    assert check.ess == pytest.approx(psis.DEFAULT_DRAWS)  # every ratio equal: the weights are uniform
    np.testing.assert_allclose(check.log_weights, -np.log(psis.DEFAULT_DRAWS))
    assert check.draws.shape == (psis.DEFAULT_DRAWS, 3)
    np.testing.assert_allclose(check.draws.mean(0), fit.mean, atol=0.05)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_too_narrow_or_misplaced_gaussian_is_poor_and_a_wider_one_good(seed):
    """The ratios are weighed against the exact potential: an overconfident Gaussian (precision x 9) or one
    moved 3 posterior sd off the mode has heavy-tailed ratios, a wider one bounded ratios."""
    x, y, w = _gaussian_data()
    fit = bb.laplace(linear_gaussian(), x, y)
    sd = np.sqrt(np.diag(np.asarray(fit.covariance())))
    key = jax.random.PRNGKey(seed)
    narrow = laplace_psis(key, linear_gaussian(), (x, y, w), NewtonFit(fit.mean, 3.0 * fit.chol))
    moved = laplace_psis(key, linear_gaussian(), (x, y, w), NewtonFit(fit.mean + 3.0 * sd * np.eye(3)[0], fit.chol))
    wide = laplace_psis(key, linear_gaussian(), (x, y, w), NewtonFit(fit.mean, 0.5 * fit.chol))
    assert narrow.k_hat > psis.K_HAT_POOR and narrow.ess < 0.5 * psis.DEFAULT_DRAWS
    assert moved.k_hat > 0.6  # k-hat of log-normal ratios of sd 3: 0.66 to 1.19 over seeds 0-4
    # bounded ratios; ESS / S = (sqrt(2 s^2 - 1) / s^2)^p = 0.29 for sd ratio s = 2 in p = 3 dimensions
    assert wide.k_hat < psis.K_HAT_GOOD and 0.2 < wide.ess / psis.DEFAULT_DRAWS < 0.4


def test_well_specified_logistic_is_good():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 4)) / 2.0
    y = (rng.uniform(size=300) < 1.0 / (1.0 + np.exp(-x @ np.array([1.0, -1.0, 0.5, 0.0])))).astype(float)
    fit = bb.laplace(logistic(), x, y)
    check = laplace_psis(jax.random.PRNGKey(0), logistic(), (x, y, np.ones(300)), fit)
    assert check.k_hat < psis.K_HAT_POOR
    assert check.ess > 0.8 * psis.DEFAULT_DRAWS


@pytest.mark.parametrize("seed", [0, 1])
def test_funnel_laplace_is_poor(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(10, 2))
    y = (rng.uniform(size=10) < 0.5).astype(float)
    fit = bb.laplace(funnel, x, y)
    assert bool(fit.info.converged) and float(fit.mean[-1]) < -8.0  # the mode: v = -9, the funnel's neck
    check = laplace_psis(jax.random.PRNGKey(seed), funnel, (x, y, np.ones(10)), fit)
    assert check.k_hat > psis.K_HAT_POOR


def test_a_policy_states_fit_and_a_laplace_give_the_same_check():
    """``fit`` may be a GLM state's NewtonFit or :func:`bayesbandit.laplace`'s result; the rows a policy's."""
    x, y, w = _gaussian_data()
    fit = bb.laplace(logistic(), x, (y > 0).astype(float))
    rows = (x, (y > 0).astype(float), w)
    one = laplace_psis(jax.random.PRNGKey(3), logistic(), rows, fit)
    two = laplace_psis(jax.random.PRNGKey(3), bb.bind(logistic(), x), rows, NewtonFit(fit.mean, fit.chol))
    np.testing.assert_array_equal(one.log_weights, two.log_weights)
    assert one.k_hat == two.k_hat


def test_compiled_once_per_program_draws_and_shapes():
    x, y, w = _gaussian_data(n=17)  # a shape no other test uses
    fit = bb.laplace(linear_gaussian(), x, y)
    before = psis._executable.cache_info().misses
    for seed in range(3):
        laplace_psis(jax.random.PRNGKey(seed), linear_gaussian(), (x, y, w), fit, num_draws=500)
    assert psis._executable.cache_info().misses == before + 1
    laplace_psis(jax.random.PRNGKey(0), linear_gaussian(), (x[:16], y[:16], w[:16]), fit, num_draws=500)
    assert psis._executable.cache_info().misses == before + 2


def _exact_mean_of_intercept(successes, prior_scale):
    """Posterior mean of ``theta`` for ``y ~ Bernoulli(sigmoid(theta))``, ``theta ~ N(0, s^2)``, all ``y = 1``,
    by quadrature in NumPy."""
    grid = np.linspace(-40.0, 60.0, 400_001)
    log_density = -0.5 * (grid / prior_scale) ** 2 - successes * np.logaddexp(0.0, -grid)
    density = np.exp(log_density - log_density.max())
    return float(np.sum(grid * density) / np.sum(density))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_resampled_draws_move_toward_the_exact_posterior_mean(seed):
    """Three successes under a N(0, 3^2) prior: a right-skewed posterior the Gaussian at the mode misses."""
    model, x, y = logistic(prior_scale=3.0), np.ones((3, 1)), np.ones(3)
    exact = _exact_mean_of_intercept(3, 3.0)
    fit = bb.laplace(model, x, y)
    check = laplace_psis(jax.random.PRNGKey(seed), model, (x, y, np.ones(3)), fit)
    assert psis.K_HAT_GOOD - 0.1 < check.k_hat <= psis.K_HAT_POOR  # usable but imperfect
    draws = resampled_draws(jax.random.PRNGKey(100 + seed), check, 2000)
    assert draws.shape == (2000, 1)
    assert np.isin(np.asarray(draws[:, 0]), check.draws[:, 0]).all()  # draws of the proposal, repeated
    laplace_error = abs(check.draws.mean() - exact)
    resampled_error = abs(float(draws.mean()) - exact)
    assert laplace_error > 0.5  # the Gaussian's mean is the mode's, well below the skewed posterior's
    assert resampled_error < 0.5 * laplace_error


def test_resampling_follows_the_weights():
    draws = np.arange(4.0).reshape(4, 1)
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    result = LaplacePSIS(0.3, 1.0 / np.sum(weights**2), np.log(weights), draws)
    picked = np.asarray(resampled_draws(jax.random.PRNGKey(0), result, 20_000))[:, 0]
    np.testing.assert_allclose(np.bincount(picked.astype(int), minlength=4) / 20_000, weights, atol=0.015)


def test_bad_inputs_name_the_argument():
    x, y, w = _gaussian_data()
    fit = bb.laplace(linear_gaussian(), x, y)
    key = jax.random.PRNGKey(0)
    model = linear_gaussian()
    with pytest.raises(InvalidInput, match="'rows'"):
        laplace_psis(key, model, (x, y), fit)
    with pytest.raises(InvalidInput, match="'y'"):
        laplace_psis(key, model, (x, y[:-1], w), fit)
    with pytest.raises(InvalidInput, match="'fit'"):
        laplace_psis(key, model, (x, y, w), NewtonFit(fit.mean[:2], fit.chol))
    with pytest.raises(InvalidInput, match="'fit'"):
        laplace_psis(key, model, (x, y, w), NewtonFit(fit.mean, fit.chol.T))  # upper triangular
    with pytest.raises(InvalidInput, match="'num_draws'"):
        laplace_psis(key, model, (x, y, w), fit, num_draws=10)
    with pytest.raises(InvalidInput, match="'key'"):
        laplace_psis(0, model, (x, y, w), fit)
    check = laplace_psis(key, model, (x, y, w), fit, num_draws=200)
    with pytest.raises(InvalidInput, match="'n'"):
        resampled_draws(key, check, 0)
    with pytest.raises(InvalidInput, match="'result'"):
        resampled_draws(key, (check.k_hat, check.ess), 5)
