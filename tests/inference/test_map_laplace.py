"""MAP and Laplace against references written independently of bayesbandit.

Each log joint below is written by hand with NumPy/SciPy (never through
``BoundModel.potential``), minimised with SciPy, and differentiated by finite differences.

Tolerances: the MAP is compared to 1e-5 (SciPy's BFGS stops at gtol 1e-10 with central
difference gradients, accurate to ~1e-9, so its minimiser is good to ~1e-8); covariances to
1e-4 relative (a central second difference with step 1e-4 has truncation error ~1e-8 and
rounding error ~eps * |U| / h^2 ~ 1e-6 relative to the Hessian's scale).
"""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _asserts import laplace_jit, map_jit
from bayesbandit.models import linear_gaussian, logistic, poisson, probit
from scipy import optimize, special

import bayesbandit as bb

MAP_TOL = 1e-5
COV_RTOL = 1e-4


# --------------------------------------------------------------------------- reference joints
def _prior(theta, scale=1.0):
    return 0.5 * np.sum(theta**2) / scale**2


def u_logistic(theta, x, y, w):
    eta = x @ theta
    return _prior(theta) - np.sum(w * (y * eta - np.logaddexp(0.0, eta)))


def u_probit(theta, x, y, w):
    eta = x @ theta
    return _prior(theta) - np.sum(w * (y * special.log_ndtr(eta) + (1 - y) * special.log_ndtr(-eta)))


def u_poisson(theta, x, y, w):
    eta = x @ theta
    return _prior(theta) - np.sum(w * (y * eta - np.exp(eta) - special.gammaln(y + 1)))


def u_gaussian(theta, x, y, w, noise=1.0):
    eta = x @ theta
    return _prior(theta) + np.sum(w * 0.5 * ((y - eta) / noise) ** 2)


def noise_model(x, y=None):
    """User program with two latent sites, one constrained: theta (d,) and sigma > 0."""
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ theta, sigma), obs=y)


def u_noise_model(z, x, y, w):
    """Unconstrained potential of ``noise_model`` with z = (log sigma, theta) by hand.

    log p = log N(theta; 0, I) + log HalfNormal(sigma; 1) + log sigma (Jacobian of exp)
            + sum_i w_i log N(y_i; x_i theta, sigma).
    """
    s, theta = z[0], z[1:]
    sigma = np.exp(s)
    log_prior = -0.5 * np.sum(theta**2) + (0.5 * np.log(2 / np.pi) - 0.5 * sigma**2) + s
    resid = y - x @ theta
    log_lik = np.sum(w * (-0.5 * (resid / sigma) ** 2 - s - 0.5 * np.log(2 * np.pi)))
    return -(log_prior + log_lik)


def _data(family, n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, d))
    theta = rng.normal(0, 1, d)
    eta = x @ theta
    if family in ("logistic", "probit"):
        y = rng.binomial(1, special.expit(eta)).astype(float)
    elif family == "poisson":
        y = rng.poisson(np.exp(eta)).astype(float)
    else:
        y = eta + rng.normal(0, 0.7 if family == "noise" else 1.0, n)
    w = rng.integers(1, 4, n).astype(float)
    w[:5] = 0.0  # masked rows must not count
    return x, y, w


CASES = [
    ("logistic", logistic(), u_logistic),
    ("probit", probit(), u_probit),
    ("poisson", poisson(), u_poisson),
    ("linear_gaussian", linear_gaussian(), u_gaussian),
    ("noise", noise_model, u_noise_model),
]


def _reference_map(u, x, y, w, p):
    res = optimize.minimize(
        u, np.zeros(p), args=(x, y, w), method="BFGS", jac="3-point", options={"gtol": 1e-10, "maxiter": 10_000}
    )
    return res.x


def _fd_hessian(f, z, h=1e-4):
    p = z.shape[0]
    hess = np.empty((p, p))
    eye = np.eye(p) * h
    for i in range(p):
        for j in range(p):
            hess[i, j] = (
                f(z + eye[i] + eye[j]) - f(z + eye[i] - eye[j]) - f(z - eye[i] + eye[j]) + f(z - eye[i] - eye[j])
            ) / (4 * h * h)
    return 0.5 * (hess + hess.T)


@pytest.mark.parametrize("name, model, u", CASES, ids=[c[0] for c in CASES])
def test_map_matches_scipy(name, model, u):
    x, y, w = _data(name)
    bound = bb.bind(model, x)
    if name == "noise":
        assert bound.site_names == ("sigma", "theta")
        assert not bound.is_affine
    else:
        assert bound.is_affine
    fit = map_jit(model, x, y, w)
    assert bool(fit.info.converged)
    ref = _reference_map(u, x, y, w, bound.num_params)
    np.testing.assert_allclose(np.asarray(fit.theta), ref, atol=MAP_TOL, rtol=0)
    # the potential differs from the reference only by a theta-free constant
    z2 = ref + 0.3
    diff = [float(bound.potential(z, x, y, w)) - u(z, x, y, w) for z in (ref, z2)]
    assert diff[0] == pytest.approx(diff[1], abs=1e-8)


@pytest.mark.parametrize("name, model, u", CASES, ids=[c[0] for c in CASES])
def test_laplace_covariance_is_inverse_fd_hessian(name, model, u):
    x, y, w = _data(name, seed=1)
    post = bb.inference.Laplace(*map_jit(model, x, y, w))
    assert bool(post.info.converged)
    theta = np.asarray(post.mean)
    hess = _fd_hessian(lambda z: u(z, x, y, w), theta)
    ref_cov = np.linalg.inv(hess)
    cov = np.asarray(post.covariance())
    np.testing.assert_allclose(cov, ref_cov, atol=COV_RTOL * np.abs(ref_cov).max(), rtol=0)
    # chol is the lower factor of the precision
    chol = np.asarray(post.chol)
    assert np.allclose(chol, np.tril(chol))
    np.testing.assert_allclose(chol @ chol.T, hess, atol=COV_RTOL * np.abs(hess).max(), rtol=0)


def test_laplace_samples_have_the_laplace_covariance():
    """Monte Carlo: 20,000 draws; each covariance entry within 5 standard errors
    (entries are ~normal; 5 SE has a two-sided rate 6e-7 per entry, < 1e-5 over 9 entries)."""
    x, y, w = _data("logistic", seed=2)
    post = bb.inference.Laplace(*map_jit(logistic(), x, y, w))
    a = 1.7
    draws = np.asarray(post.sample(jax.random.PRNGKey(0), (20_000,), a=a))
    assert draws.shape == (20_000, 3)
    cov = a**2 * np.asarray(post.covariance())
    centred = draws - np.asarray(post.mean)
    emp = centred.T @ centred / draws.shape[0]
    sd = np.sqrt(np.outer(np.diag(cov), np.diag(cov)) + cov**2) / np.sqrt(draws.shape[0])
    assert np.all(np.abs(emp - cov) < 5 * sd)
    se_mean = np.sqrt(np.diag(cov) / draws.shape[0])
    assert np.all(np.abs(centred.mean(0)) < 5 * se_mean)


def test_gaussian_linear_laplace_is_the_conjugate_posterior():
    """Normal prior, Normal likelihood of known scale: the posterior is exactly Gaussian."""
    rng = np.random.default_rng(3)
    n, d, noise, prior_scale = 40, 4, 0.6, 2.0
    x = rng.normal(size=(n, d))
    y = x @ rng.normal(size=d) + noise * rng.normal(size=n)
    w = rng.integers(0, 3, n).astype(float)
    post = laplace_jit(linear_gaussian(noise_scale=noise, prior_scale=prior_scale), x, y, w)
    precision = np.eye(d) / prior_scale**2 + (x * w[:, None]).T @ x / noise**2
    cov = np.linalg.inv(precision)
    mean = cov @ (x.T @ (w * y)) / noise**2
    assert bool(post.info.converged)
    np.testing.assert_allclose(np.asarray(post.mean), mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(post.covariance()), cov, rtol=1e-8, atol=1e-12)


def test_bind_reports_structure():
    x = jnp.zeros((5, 3))
    bound = bb.bind(logistic(), x)
    assert bound.num_params == 3 and bound.site_names == ("theta",) and bound.is_affine
    init = np.asarray(bound.init_theta())
    assert init.shape == (3,) and np.all(np.abs(init) < 0.5)  # the prior median, estimated
    theta = jnp.array([0.5, -1.0, 2.0])
    xs = jnp.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    np.testing.assert_allclose(np.asarray(bound.mean_reward(theta, xs)), special.expit([0.5, 1.0]), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(bound.unravel(theta)["theta"]), np.asarray(theta))
    nb = bb.bind(noise_model, x)
    z = jnp.array([np.log(2.0), 1.0, 2.0, 3.0])
    values = nb.constrain(z)
    assert float(values["sigma"]) == pytest.approx(2.0, rel=1e-12)
    np.testing.assert_allclose(np.asarray(values["theta"]), [1.0, 2.0, 3.0])


# ----------------------------------------------------------------------------- edge cases
EDGE_MODELS = [("logistic", logistic()), ("probit", probit()), ("poisson", poisson())]


@pytest.mark.parametrize("name, model", EDGE_MODELS, ids=[m[0] for m in EDGE_MODELS])
def test_all_zero_rewards_give_a_finite_converged_map(name, model):
    x = np.random.default_rng(4).uniform(-1, 1, (60, 3))
    fit = map_jit(model, x, np.zeros(60), np.ones(60))
    assert bool(fit.info.converged)
    assert np.all(np.isfinite(np.asarray(fit.theta))) and np.all(np.isfinite(np.asarray(fit.chol)))


@pytest.mark.parametrize("name, model", EDGE_MODELS, ids=[m[0] for m in EDGE_MODELS])
def test_one_arm_history_gives_a_finite_converged_map(name, model):
    x = np.random.default_rng(8).uniform(-1, 1, (60, 3))
    w = np.zeros(60)
    w[7] = 50.0  # every observation is of one arm; the other rows are masked
    fit = map_jit(model, x, np.ones(60), w)
    assert bool(fit.info.converged)
    assert np.all(np.isfinite(np.asarray(fit.theta)))


def test_separable_logistic_data_gives_a_finite_map():
    """The MLE diverges on separable data; the N(0, 1) prior keeps the MAP finite."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (60, 3))
    y = (x[:, 0] + x[:, 1] > 0).astype(float)
    fit = map_jit(logistic(), x, y, np.full(60, 5.0))
    assert bool(fit.info.converged)
    theta = np.asarray(fit.theta)
    assert np.all(np.isfinite(theta)) and np.linalg.norm(theta) < 50
    ref = _reference_map(u_logistic, x, y, np.full(60, 5.0), 3)
    np.testing.assert_allclose(theta, ref, atol=MAP_TOL)


def test_map_converges_from_a_bad_start():
    x, y, w = _data("logistic", seed=6)
    fit = map_jit(logistic(), x, y, w, init=np.full(3, 8.0))
    ref = map_jit(logistic(), x, y, w)
    assert bool(fit.info.converged) and int(fit.info.num_steps) > 0
    np.testing.assert_allclose(np.asarray(fit.theta), np.asarray(ref.theta), atol=1e-8)


@pytest.mark.parametrize("family", ["logistic", "probit"])
def test_derivatives_are_right_where_every_logit_is_zero(family):
    """At the prior mode theta = 0 every logit is exactly 0, a kink of NumPyro's
    logits-Bernoulli formula (its autodiff gradient there is -y instead of 1/2 - y). The bound
    potential (prior N(0, I)) must give the analytic derivatives at that point:
    logistic: g = sum (1/2 - y) x, H = I + sum x x^T / 4;
    probit: g = 4 phi(0) sum (1/2 - y) x, H = I + 4 phi(0)^2 sum x x^T."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (7, 3))
    y = np.array([0, 0, 1, 0, 1, 1, 0], float)
    bound = bb.bind(logistic() if family == "logistic" else probit(), x)
    theta = jnp.zeros(3)
    grad = jax.grad(bound.potential)(theta, x, y)
    hess = jax.hessian(bound.potential)(theta, x, y)
    phi0 = 1.0 / np.sqrt(2.0 * np.pi)
    scale, curvature = (1.0, 0.25) if family == "logistic" else (4.0 * phi0, 4.0 * phi0**2)
    np.testing.assert_allclose(grad, scale * x.T @ (0.5 - y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hess, np.eye(3) + curvature * x.T @ x, rtol=1e-10, atol=1e-12)
