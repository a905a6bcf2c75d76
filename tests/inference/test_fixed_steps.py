"""Newton's fixed-effort start: the same MAP and factor as the loop, and the loop finishes what it leaves."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit._linalg import cholesky
from bayesbandit.errors import InvalidInput
from bayesbandit.inference import DenseNewton, newton_minimize
from bayesbandit.inference.linear_predictor import fast_derivatives
from bayesbandit.inference.online_laplace import rank_one_laplace

TOL = 1e-8


def _problem(seed: int, n: int = 40, d: int = 6, a: float = 0.0):
    """Per-arm logistic rows (means and pull counts), rewards perturbed by ``N(0, a^2)`` per pull as GLM-FPL's."""
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.uniform(-1, 1, (n, d)))
    counts = rng.integers(0, 30, n).astype(float)
    theta = rng.normal(0, 1.0, d)
    sums = rng.binomial(counts.astype(int), 1 / (1 + np.exp(-np.asarray(x) @ theta))) + a * np.sqrt(counts) * (
        rng.standard_normal(n)
    )
    y = jnp.asarray(np.where(counts > 0, sums / np.maximum(counts, 1), 0.0))
    return bb.bind(logistic(), np.zeros((1, d))), x, y, jnp.asarray(counts)  # one bound program per d: one compile


def _solve(bound, x, y, w, theta0, factor0, fixed_steps, **kw):
    fn = lambda t: bound.potential(t, x, y, w)  # noqa: E731
    return newton_minimize(
        fn,
        theta0,
        max_steps=50,
        tol=TOL,
        quadratic_stop=True,
        derivatives=fast_derivatives(bound, x, y, w),
        positive_definite=True,
        factor0=factor0,
        fixed_steps=fixed_steps,
        **kw,
    )


def _hessian_factor(bound, x, y, w, theta):
    return cholesky(fast_derivatives(bound, x, y, w)(theta)[2])


@pytest.mark.parametrize("fixed_steps", [1, 2])
def test_warm_started_fixed_steps_give_the_loops_map_and_the_factor_at_it(fixed_steps):
    """A refit after one more pull (the bandit's update): the same MAP to the tolerance, the factor at it."""
    bb.runtime.enable_x64()
    solve = jax.jit(_solve, static_argnums=(0, 6))
    stopped_fresh = 0
    for seed in range(6):
        bound, x, y, w = _problem(seed)
        last = solve(bound, x, y, w, bound.init_theta(), None, 0)
        w_new = w.at[seed].add(1.0)
        loop = solve(bound, x, y, w_new, last.theta, last.chol, 0)
        fixed = solve(bound, x, y, w_new, last.theta, last.chol, fixed_steps)
        assert bool(loop.info.converged) and bool(fixed.info.converged)
        # Both within the tolerance of the MAP: decrement <= tol bounds ||theta - theta*||_H by about sqrt(2 tol).
        np.testing.assert_allclose(fixed.theta, loop.theta, atol=3e-4)
        at_theta = _hessian_factor(bound, x, y, w_new, fixed.theta)
        if float(fixed.info.decrement) <= TOL:  # stopped at an evaluated point: the factor is the Hessian's there
            np.testing.assert_allclose(fixed.chol, at_theta, rtol=1e-12, atol=1e-12)
            stopped_fresh += 1
        # Otherwise the loop's quadratic stop ended it, one step stale: the Hessian's to the MAP's tolerance.
        np.testing.assert_allclose(fixed.chol, at_theta, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(fixed.chol, loop.chol, rtol=1e-3, atol=1e-3)
    assert stopped_fresh >= 3  # most warm-started refits stop within the fixed steps


def test_a_lane_the_fixed_steps_leave_unconverged_is_finished_by_the_loop():
    """Far starts (the prior median under perturbed rewards: GLM-FPL's hard solves) need more than one
    step; vmapped with easy lanes, every lane converges to its own unbatched MAP."""
    bb.runtime.enable_x64()
    problems = [_problem(seed, a=3.0) for seed in range(4)]
    bound = problems[0][0]
    x, y, w = (jnp.stack([p[i] for p in problems]) for i in (1, 2, 3))
    theta0 = jnp.broadcast_to(bound.init_theta(), (4, x.shape[2]))
    one_step = jax.jit(jax.vmap(lambda x, y, w, t: _solve(bound, x, y, w, t, None, 1)))(x, y, w, theta0)
    loop = jax.jit(jax.vmap(lambda x, y, w, t: _solve(bound, x, y, w, t, None, 0)))(x, y, w, theta0)
    steps = np.asarray(one_step.info.num_steps)
    assert np.all(np.asarray(one_step.info.converged))
    assert steps.max() > 2  # the loop ran: one fixed step does not reach these MAPs
    np.testing.assert_allclose(one_step.theta, loop.theta, atol=3e-4)
    for i in range(4):  # each lane is its own solve, whatever the others needed
        alone = _solve(bound, x[i], y[i], w[i], theta0[i], None, 1)
        np.testing.assert_allclose(one_step.theta[i], alone.theta, atol=1e-10)
        assert int(alone.info.num_steps) == steps[i]
        grad = fast_derivatives(bound, x[i], y[i], w[i])(alone.theta)[1]
        assert float(jnp.linalg.norm(grad)) < 1e-3


def test_a_rejected_trial_hands_the_lane_to_the_loop():
    """A chord factor far too small (steps 100x too long): the trial is rejected, the damped loop converges."""
    bb.runtime.enable_x64()
    bound, x, y, w = _problem(1)
    last = _solve(bound, x, y, w, bound.init_theta(), None, 0)
    w_new = w.at[0].add(5.0)
    bad = 0.1 * last.chol
    fixed = _solve(bound, x, y, w_new, last.theta, bad, 2)
    loop = _solve(bound, x, y, w_new, last.theta, bad, 0)
    assert bool(fixed.info.converged)
    np.testing.assert_allclose(fixed.theta, loop.theta, atol=3e-4)


def test_off_convexity_the_value_test_reaches_the_same_map():
    """``positive_definite=False`` (generic derivatives, shifted factor): the trial's value decides; same MAP."""
    bb.runtime.enable_x64()
    bound, x, y, w = _problem(3, a=1.0)
    fn = lambda t: bound.potential(t, x, y, w)  # noqa: E731
    ref = newton_minimize(fn, bound.init_theta(), max_steps=50, tol=1e-12)
    fixed = newton_minimize(fn, bound.init_theta(), max_steps=50, tol=1e-12, fixed_steps=2)
    assert bool(fixed.info.converged)
    np.testing.assert_allclose(fixed.theta, ref.theta, atol=1e-6)
    assert float(fn(fixed.theta)) <= float(fn(bound.init_theta()))


def test_online_root_finder_unrolled_gives_the_same_update():
    bb.runtime.enable_x64()
    bound, x, y, w = _problem(4)
    prior = _solve(bound, x, y, w, bound.init_theta(), None, 0)
    row = (x[:1] * 3.0, jnp.ones(1), jnp.ones(1))
    loop = rank_one_laplace(bound, row, prior.theta, prior.chol, max_steps=50, tol=TOL)
    fixed = rank_one_laplace(bound, row, prior.theta, prior.chol, max_steps=50, tol=TOL, fixed_steps=2)
    np.testing.assert_allclose(fixed.theta, loop.theta, atol=1e-12)
    np.testing.assert_allclose(fixed.chol, loop.chol, atol=1e-12)
    assert int(fixed.info.num_steps) == int(loop.info.num_steps)


def test_fixed_steps_must_be_a_non_negative_int():
    with pytest.raises(InvalidInput, match="fixed_steps"):
        DenseNewton(fixed_steps=-1)
    with pytest.raises(InvalidInput, match="fixed_steps"):
        newton_minimize(lambda t: jnp.sum(t**2), jnp.zeros(2), fixed_steps=1.5)  # type: ignore[arg-type]
