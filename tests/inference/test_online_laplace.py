"""The online Laplace update by one row, solved in one dimension, is the p-dimensional Newton solve.

:func:`bayesbandit.inference.online_laplace.rank_one_laplace` finds the MAP of a Gaussian prior
times one row's likelihood as a root on a line, and the Laplace factor there. It must give the
MAP and Hessian of the reference (``DenseNewton(rank_one=False, derivatives="generic")``, the
forward-over-reverse Newton iteration) for every program on the fast path, rewards on and off
the support included, and an online GLM-TSL must decide the same with it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.inference import DenseNewton, NewtonFit
from tests.inference.test_linear_predictor import FAST, D, _close, play_logistic

ONE_ROW = DenseNewton(tol=1e-14, max_steps=100)
REFERENCE = DenseNewton(derivatives="generic", rank_one=False, quadratic_stop=False, tol=1e-14, max_steps=100)


def _prior(bound, rng):
    """A random Gaussian over the parameters: a mean near the prior median, a precision factor."""
    p = bound.num_params
    mean = np.asarray(bound.init_theta()) + rng.normal(0.0, 0.5, size=p)
    root = rng.normal(0.0, 1.0, size=(p, p)) / np.sqrt(p) + 1.5 * np.eye(p)
    return NewtonFit(jnp.asarray(mean), jnp.linalg.cholesky(jnp.asarray(root @ root.T)))


def _assert_same_fit(fit, want, tol=1e-14, rtol=1e-6):
    """Both solves stop at a decrement below ``tol``: each within ``sqrt(2 tol)`` posterior standard
    deviations (Mahalanobis) of the exact MAP; the Hessians there agree to that order."""
    assert np.linalg.norm(want.chol.T @ (fit.theta - want.theta)) < 4 * np.sqrt(2 * tol)
    _close(fit.chol @ fit.chol.T, want.chol @ want.chol.T, rtol=rtol)


def _update(solver, bound):
    return jax.jit(lambda rows, prior: solver.fit(bound, rows, prior, prior=prior))


@pytest.mark.parametrize("name", ["logistic", "poisson", "linear_gaussian", "correlated_prior", "scaled"])
def test_one_row_update_is_the_newton_solve(name):
    bound = bb.bind(FAST[name][0], np.zeros((1, D)))
    one_row, reference = _update(ONE_ROW, bound), _update(REFERENCE, bound)
    rng = np.random.default_rng(7)
    low, high = bound.reference_rewards
    # On the support, just off it, and far off it (a perturbed reward of GLM-FPL's kind).
    for y in (low, high, high + 0.4, low - 3.0, high + 25.0):
        prior = _prior(bound, rng)
        x = jnp.asarray(rng.uniform(-1.0, 1.0, size=(1, D)))
        rows = (x, jnp.asarray([y], float), jnp.ones(1))
        (fit, info), (want, want_info) = one_row(rows, prior), reference(rows, prior)
        assert bool(info.converged) and bool(want_info.converged), (y, info, want_info)
        _assert_same_fit(fit, want)


def test_the_rank_one_path_is_what_the_online_update_takes():
    """The default solver takes the one-row solve (a handful of scalar evaluations) for the same fit."""
    bound = bb.bind(logistic(), np.zeros((1, D)))
    prior = _prior(bound, np.random.default_rng(1))
    rows = (jnp.ones((1, D)), jnp.asarray([1.0]), jnp.ones(1))
    fit, info = _update(DenseNewton(), bound)(rows, prior)
    plain, plain_info = _update(DenseNewton(rank_one=False, quadratic_stop=False), bound)(rows, prior)
    assert bool(info.converged) and 1 <= int(info.num_steps) <= 6
    assert bool(plain_info.converged)
    _assert_same_fit(fit, plain, tol=1e-8, rtol=1e-3)


def test_a_row_that_moves_the_map_far_converges():
    """A weak prior and an extreme perturbed reward: the root is far out on the line."""
    bound = bb.bind(logistic(prior_scale=100.0), np.zeros((1, D)))
    p = bound.num_params
    prior = NewtonFit(jnp.zeros(p), jnp.eye(p) / 100.0)
    rows = (jnp.full((1, D), 0.5), jnp.asarray([-40.0]), jnp.ones(1))
    (fit, info), (want, _) = _update(ONE_ROW, bound)(rows, prior), _update(REFERENCE, bound)(rows, prior)
    assert bool(info.converged)
    _assert_same_fit(fit, want)


def test_online_glm_tsl_decides_the_same_with_the_one_row_solve():
    def play(solver):
        return play_logistic(bb.GLMTSL(logistic(), a=1.0, history="online", solver=solver), rounds=80, seed=3)

    (actions, thetas), (want_actions, want_thetas) = play(ONE_ROW), play(REFERENCE)
    np.testing.assert_array_equal(actions, want_actions)
    _close(thetas, want_thetas, rtol=1e-5)
