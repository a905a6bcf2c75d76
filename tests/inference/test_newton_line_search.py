"""Newton's inner line search: far-from-the-start solves converge, and a capped solve says so."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.inference import newton_minimize


def _perturbed_problem(a: float, seed: int = 0):
    """A logistic history whose rewards carry N(0, a^2) noise, as GLM-FPL's with the theory ``a``."""
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.uniform(-1, 1, (60, 8)))
    y = jnp.asarray((rng.random(60) < 0.5) + a * rng.standard_normal(60))
    bound = bb.bind(logistic(), x)
    return bound, (lambda t: bound.potential(t, x, y)), bound.init_theta()


def test_far_start_perturbed_solves_converge_to_the_map():
    bb.runtime.enable_x64()
    for seed in range(5):
        bound, fn, theta0 = _perturbed_problem(a=7.0, seed=seed)
        result = jax.jit(lambda t, fn=fn: newton_minimize(fn, t, max_steps=50, tol=1e-10))(theta0)
        assert bool(result.info.converged) and int(result.info.num_steps) < 30
        grad = jax.grad(fn)(result.theta)
        assert float(jnp.linalg.norm(grad)) < 1e-4  # a stationary point of a strictly convex potential
        # Every accepted step decreased U (Armijo), so the value is below the start's.
        assert float(fn(result.theta)) < float(fn(theta0))


def test_capped_solve_reports_it_and_keeps_its_last_iterate():
    bb.runtime.enable_x64()
    _, fn, theta0 = _perturbed_problem(a=7.0)
    capped = newton_minimize(fn, theta0, max_steps=2, tol=1e-10)
    assert not bool(capped.info.converged) and int(capped.info.num_steps) == 2
    assert float(fn(capped.theta)) < float(fn(theta0))  # progress is kept, not discarded
    resumed = newton_minimize(fn, capped.theta, max_steps=50, tol=1e-10)
    full = newton_minimize(fn, theta0, max_steps=50, tol=1e-10)
    np.testing.assert_allclose(resumed.theta, full.theta, atol=1e-6)


def test_non_finite_potential_stops_as_failed():
    bb.runtime.enable_x64()
    result = newton_minimize(lambda t: jnp.sum(t**2) + jnp.log(-1.0), jnp.zeros(3), max_steps=10)
    assert not bool(result.info.converged) and int(result.info.num_steps) == 1


def test_glm_fpl_theory_perturbed_solves_all_converge():
    """GLM-FPL with a large ``a`` (the theory value at d = 20, n = 50,000 is 6.7): every perturbed MAP is reached."""
    bb.runtime.enable_x64()
    d, runs, rounds = 20, 4, 400
    policy = bb.GLMFPL(logistic(), a=6.67)

    def one_run(key):
        k_arms, k_theta, k_rounds = jax.random.split(key, 3)
        arms = jax.random.uniform(k_arms, (100, d), minval=-1, maxval=1)
        mu = jax.nn.sigmoid(arms @ (jax.random.normal(k_theta, (d,)) * jnp.sqrt(3.0 / d**2)))

        def step(state, k):
            k_select, k_reward = jax.random.split(k)
            action, info = policy.select(state, arms, k_select)
            reward = jax.random.bernoulli(k_reward, mu[action]).astype(float)
            return policy.update(state, arms, action, reward)[0], (info.converged, info.solver.num_steps)

        return jax.lax.scan(step, policy.init(arms), jax.random.split(k_rounds, rounds))[1]

    converged, steps = jax.jit(jax.vmap(one_run))(jax.random.split(jax.random.PRNGKey(0), runs))
    solved = np.asarray(steps)[:, d:] > 0  # after the d exploration pulls, every select solves
    assert solved.all() and np.asarray(converged)[:, d:].all()
    assert np.asarray(steps).max() < 50
