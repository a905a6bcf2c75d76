"""The GLM fast path is exact: same derivatives, MAP and Hessian as the generic path.

:mod:`bayesbandit.inference.linear_predictor` computes the gradient and Hessian of the potential
through the observed site's natural parameter when that is affine in the parameters. It must
be taken exactly for such programs (the model zoo, intercepts, several coefficient sites,
hierarchical priors, observation scales) and refused for every other one, and where taken it
must agree with the generic forward-over-reverse path to 1e-10.
"""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from bayesbandit.models import linear_gaussian, logistic, poisson, probit
from numpyro import handlers

import bayesbandit as bb
from bayesbandit.inference import DenseNewton, NewtonFit

D = 3


def _observe(x, y, fn):
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", fn, obs=y)


def _theta(x):
    return numpyro.sample("theta", dist.Normal(0.0, 1.5).expand([x.shape[-1]]).to_event(1))


def intercept(x, y=None):
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    alpha = numpyro.sample("alpha", dist.Normal(-0.5, 2.0))
    _observe(x, y, dist.Bernoulli(logits=x @ beta + alpha))


def hierarchical(x, y=None):
    tau = numpyro.sample("tau", dist.LogNormal(0.0, 0.5))  # keeps the joint mode finite (no funnel)
    theta = numpyro.sample("theta", dist.Normal(0.0, tau).expand([x.shape[-1]]).to_event(1))
    _observe(x, y, dist.Poisson(jnp.exp(x @ theta)))


def correlated_prior(x, y=None):
    d = x.shape[-1]
    cov = 0.5 * jnp.eye(d) + 0.5
    theta = numpyro.sample("theta", dist.MultivariateNormal(jnp.zeros(d), cov))
    _observe(x, y, dist.Binomial(total_count=4, logits=x @ theta))


def scaled(x, y=None):
    theta = _theta(x)
    with handlers.scale(scale=2.5):
        _observe(x, y, dist.Normal(x @ theta, 0.7))


def offset(x, y=None):
    theta = _theta(x)
    _observe(x, y, dist.Poisson(jnp.exp(x @ theta + jnp.sin(x[:, 0]))))


def unknown_noise(x, y=None):
    theta = _theta(x)
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    _observe(x, y, dist.Normal(x @ theta, sigma))


def quadratic_predictor(x, y=None):
    theta = _theta(x)
    _observe(x, y, dist.Bernoulli(logits=x @ theta + 0.3 * (x @ theta) ** 2))


def data_factor(x, y=None):
    theta = _theta(x)
    numpyro.factor("ridge_on_rows", -0.1 * jnp.sum((x @ theta) ** 2))
    _observe(x, y, dist.Bernoulli(logits=x @ theta))


def student_t(x, y=None):
    _observe(x, y, dist.StudentT(4.0, x @ _theta(x), 0.5))


FAST = {
    "logistic": (logistic(), True),
    "logistic_weak_prior": (logistic(prior_scale=100.0), True),
    "poisson": (poisson(), True),
    "linear_gaussian": (linear_gaussian(noise_scale=0.5), True),
    "intercept": (intercept, True),
    "hierarchical": (hierarchical, False),
    "correlated_prior": (correlated_prior, True),
    "scaled": (scaled, True),
    "offset": (offset, True),
}
GENERIC = {
    "probit": probit(),
    "unknown_noise": unknown_noise,
    "quadratic_predictor": quadratic_predictor,
    "data_factor": data_factor,
    "student_t": student_t,
}


def _rows(bound, n=30, seed=0):
    """Rows with counts (zeros mask a row) and rewards off the support (FPL's perturbed rewards)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, D))
    low, high = bound.reference_rewards
    y = rng.choice([low, high], size=n) + rng.normal(0.0, 0.4, size=n)
    w = rng.integers(0, 4, size=n).astype(float)
    return jnp.asarray(x), jnp.asarray(y), jnp.asarray(w)


def _close(a, b, rtol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * (1.0 + np.max(np.abs(b))))


def play_logistic(policy, rounds, seed=0):
    """A logistic bandit played by ``policy`` in one compiled scan: per-round actions and MAPs."""
    rng = np.random.default_rng(seed)
    arms = jnp.asarray(rng.uniform(-1.0, 1.0, size=(20, D)))
    theta_star = jnp.asarray(rng.normal(0.0, 1.0, size=D))
    keys = jax.random.split(jax.random.PRNGKey(seed), rounds)
    uniforms = jnp.asarray(rng.random(rounds))

    def step(state, inputs):
        key, u = inputs
        action, _ = policy.select(state, arms, key)
        reward = (u < jax.nn.sigmoid(arms[action] @ theta_star)).astype(arms.dtype)
        state, _ = policy.update(state, arms, action, reward)
        return state, (action, state.fit.theta)

    return jax.jit(lambda: jax.lax.scan(step, policy.init(arms), (keys, uniforms))[1])()


@pytest.mark.parametrize("name", sorted(FAST))
def test_fast_path_is_taken_and_matches_the_generic_derivatives(name):
    program, gaussian = FAST[name]
    bound = bb.bind(program, np.zeros((2, D)))
    assert bound.linear_predictor is not None
    assert bound.linear_predictor.gaussian_prior == gaussian
    x, y, w = _rows(bound)
    fast = jax.jit(lambda t: bound.potential_derivatives(x, y, w)(t))
    generic = jax.jit(lambda t: bound.potential_derivatives(x, y, w, method="generic")(t))
    rng = np.random.default_rng(1)
    for _ in range(3):
        theta = jnp.asarray(np.asarray(bound.init_theta()) + rng.normal(0.0, 0.8, size=bound.num_params))
        for got, want in zip(fast(theta), generic(theta), strict=True):
            _close(got, want)


@pytest.mark.parametrize("name", sorted(GENERIC))
def test_programs_without_a_linear_predictor_keep_the_generic_path(name):
    bound = bb.bind(GENERIC[name], np.zeros((2, D)))
    assert bound.linear_predictor is None


def _solve(bound, rows, method, reuse_factor=False, start=None):
    solver = DenseNewton(derivatives=method, tol=1e-14, max_steps=100, quadratic_stop=False, reuse_factor=reuse_factor)
    p = bound.num_params
    start = start if start is not None else NewtonFit(bound.init_theta(), jnp.zeros((p, p)))
    return jax.jit(lambda r, s: solver.fit(bound, r, s))(rows, start)


@pytest.mark.parametrize("name", ["logistic_weak_prior", "hierarchical", "correlated_prior", "scaled", "offset"])
def test_fast_path_gives_the_same_map_and_hessian(name):
    bound = bb.bind(FAST[name][0], np.zeros((2, D)))
    rows = _rows(bound, n=60, seed=3)
    (fast, fast_info), (generic, generic_info) = (_solve(bound, rows, m) for m in ("auto", "generic"))
    assert bool(fast_info.converged) and bool(generic_info.converged)
    _close(fast.theta, generic.theta)
    _close(fast.chol @ fast.chol.T, generic.chol @ generic.chol.T)


@pytest.mark.parametrize("name", ["logistic", "hierarchical"])
def test_a_chord_start_reaches_the_same_map(name):
    """reuse_factor's first step uses the previous fit's factor; the MAP is the same to the tolerance.

    Both stop at a decrement below 1e-14, i.e. within ``sqrt(2e-14)`` posterior standard
    deviations (Mahalanobis) of the exact MAP.
    """
    bound = bb.bind(FAST[name][0], np.zeros((2, D)))
    x, y, w = _rows(bound, n=60, seed=4)
    previous, _ = _solve(bound, (x, y, w.at[0].set(0.0)), "auto")
    rows = (x, y, w.at[0].set(3.0))
    chord, chord_info = _solve(bound, rows, "auto", reuse_factor=True, start=previous)
    plain, plain_info = _solve(bound, rows, "auto", reuse_factor=False, start=previous)
    assert bool(chord_info.converged) and bool(plain_info.converged)
    assert int(chord_info.num_steps) <= int(plain_info.num_steps)
    assert np.linalg.norm(plain.chol.T @ (chord.theta - plain.theta)) < 4 * np.sqrt(2e-14)
    _close(chord.chol @ chord.chol.T, plain.chol @ plain.chol.T, rtol=1e-6)


def test_glm_tsl_decides_the_same_on_both_paths():
    """Online and full-history GLM-TSL pick the same arms on the fast and the generic path.

    The online update by the p-dimensional Newton iteration (its one-row solve is checked in
    ``test_online_laplace.py``), the loop alone on both paths (``fixed_steps=0``: the fixed-effort
    start, taken on the fast path only, reaches the same MAP by other iterates: ``test_fixed_steps.py``).
    """
    for history in ("full", "online"):
        runs = [
            play_logistic(
                bb.GLMTSL(
                    logistic(),
                    a=1.0,
                    history=history,
                    solver=DenseNewton(derivatives=m, tol=1e-12, rank_one=False, fixed_steps=0),
                ),
                rounds=60,
            )
            for m in ("auto", "generic")
        ]
        np.testing.assert_array_equal(runs[0][0], runs[1][0])
        _close(runs[0][1], runs[1][1], rtol=1e-8)
