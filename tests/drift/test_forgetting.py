"""Discount and forget, per family, against the posterior computed directly (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.inference import DenseNewton
from bayesbandit.oracles import TopK

GAMMA, ROUNDS = 0.9, 12
TIGHT = DenseNewton(tol=1e-20, quadratic_stop=False)  # MAPs to rounding, so fits compare to 1e-8


def _stream(k: int, rounds: int = ROUNDS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, k, rounds), rng.integers(0, 2, rounds).astype(float)


def _arms(k: int = 6, d: int = 3) -> jnp.ndarray:
    return jax.random.uniform(jax.random.PRNGKey(3), (k, d), minval=-1, maxval=1)


def _played(policy, state, arms, actions, rewards):
    """The state after updates with ``(actions, rewards)``, one ``lax.scan``."""
    step = lambda s, ar: (policy.update(s, arms, ar[0], ar[1])[0], None)  # noqa: E731
    return jax.jit(lambda s: jax.lax.scan(step, s, (jnp.asarray(actions), jnp.asarray(rewards)))[0])(state)


def _discounted_run(policy, state, arms, actions, rewards):
    step = jax.jit(lambda s, a, r: policy.update(policy.discount(s, GAMMA, refit=False), arms, a, r)[0])
    for a, r in zip(actions, rewards, strict=True):
        state = step(state, a, r)
    return state


def _logistic_laplace(x, y, w):
    """MAP and precision of logistic regression with a N(0, I) prior on rows weighted by w (direct)."""
    from bayesbandit.inference import laplace

    fit = laplace(logistic(), x, y, w, tol=1e-20)
    theta = np.asarray(fit.mean)
    mu = 1 / (1 + np.exp(-np.asarray(x) @ theta))
    precision = np.eye(theta.size) + (np.asarray(x) * (w * mu * (1 - mu))[:, None]).T @ np.asarray(x)
    return theta, precision


@pytest.mark.parametrize("contextual", [False, True], ids=["per-arm statistics", "row buffer"])
def test_glm_discount_is_the_weighted_laplace_fit(contextual):
    """Discount-then-update for ROUNDS rounds: history weights gamma^{t-s}; MAP and Hessian equal a direct fit."""
    arms = _arms()
    actions, rewards = _stream(arms.shape[0])
    policy = bb.GLMTSL(logistic(), solver=TIGHT)
    state = policy.init(d=3, capacity=32) if contextual else policy.init(arms)
    state = _discounted_run(policy, state, arms, actions, rewards)
    weights = GAMMA ** np.arange(ROUNDS - 1, -1, -1.0)
    x, y = np.asarray(arms)[actions], rewards
    if contextual:
        np.testing.assert_allclose(state.history.w[:ROUNDS], weights, rtol=1e-14)
        assert np.all(np.asarray(state.history.w[ROUNDS:]) == 0)
    else:
        counts = np.bincount(actions, weights, minlength=6)
        np.testing.assert_allclose(state.history.counts, counts, rtol=1e-13)
        np.testing.assert_allclose(state.history.sums, np.bincount(actions, weights * rewards, minlength=6), atol=1e-13)
    theta, precision = _logistic_laplace(x, y, weights)
    np.testing.assert_allclose(state.fit.theta, theta, atol=1e-8)
    np.testing.assert_allclose(state.fit.chol @ state.fit.chol.T, precision, atol=1e-8)


def test_glm_discount_refit_and_design():
    """discount(refit=True) refits to the discounted rows; GLM-UCB's design and its inverse scale by gamma."""
    arms = _arms()
    actions, rewards = _stream(6)
    policy = bb.UCBGLM(logistic(), alpha=0.5, solver=TIGHT)
    state = policy.init(arms)
    state = _played(policy, state, arms, actions, rewards)
    new = jax.jit(lambda s: policy.discount(s, 0.5))(state)
    theta, precision = _logistic_laplace(np.asarray(arms)[actions], rewards, np.full(ROUNDS, 0.5))
    np.testing.assert_allclose(new.fit.theta, theta, atol=1e-8)
    np.testing.assert_allclose(new.fit.chol @ new.fit.chol.T, precision, atol=1e-8)
    np.testing.assert_allclose(new.design.gram, 0.5 * state.design.gram, rtol=1e-15)
    np.testing.assert_allclose(new.design.inverse @ new.design.gram, np.eye(3), atol=1e-9)
    assert np.array_equal(jax.jit(lambda s: policy.discount(s, 0.5, refit=False))(state).fit.theta, state.fit.theta)


def test_online_discount_is_the_stabilised_rule():
    """history='online': Lambda <- g Lambda + (1 - g) Lambda_0, Lambda mu <- g Lambda mu + (1 - g) Lambda_0 mu_0;
    the precision never falls below the prior's (every eigenvalue of Lambda - Lambda_0 >= 0)."""
    arms = _arms()
    actions, rewards = _stream(6, rounds=40)
    policy = bb.GLMTSL(logistic(), history="online")
    state = policy.init(arms)
    prior = state.fit  # the Laplace approximation of the prior: N(0, I) for logistic()
    np.testing.assert_allclose(prior.chol @ prior.chol.T, np.eye(3), atol=1e-12)
    update = jax.jit(lambda s, a, r: policy.update(s, arms, a, r)[0])
    discount = jax.jit(lambda s: policy.discount(s, GAMMA, refit=False))
    for a, r in zip(actions, rewards, strict=True):
        state = update(state, a, r)
        before = np.asarray(state.fit.chol @ state.fit.chol.T)
        mean = np.asarray(state.fit.theta)
        state = discount(state)
        precision = GAMMA * before + (1 - GAMMA) * np.eye(3)
        np.testing.assert_allclose(state.fit.chol @ state.fit.chol.T, precision, atol=1e-12)
        np.testing.assert_allclose(state.fit.theta, np.linalg.solve(precision, GAMMA * before @ mean), atol=1e-12)
        assert np.linalg.eigvalsh(precision - np.eye(3)).min() >= -1e-12


def _forget_roundtrip(policy, state, arms, action, reward):
    updated, _ = policy.update(state, arms, action, reward)
    return updated, policy.forget(updated, arms, action, reward)


@pytest.mark.parametrize("contextual", [False, True], ids=["per-arm statistics", "row buffer"])
def test_glm_forget_inverts_update(contextual):
    arms = _arms()
    policy = bb.GLMUCB(logistic(), rho=0.5, solver=TIGHT)
    state = policy.init(d=3, capacity=32) if contextual else policy.init(arms)
    state = _played(policy, state, arms, *_stream(6))
    updated, back = jax.jit(lambda s: _forget_roundtrip(policy, s, arms, 2, 1.0))(state)
    history = ["counts", "sums"] if not contextual else ["x", "y", "w"]
    for name in history:
        np.testing.assert_allclose(getattr(back.history, name), getattr(state.history, name), atol=1e-10)
    np.testing.assert_allclose(back.fit.theta, state.fit.theta, atol=1e-10)
    np.testing.assert_allclose(back.design.gram, state.design.gram, atol=1e-10)
    np.testing.assert_allclose(back.design.inverse, state.design.inverse, atol=1e-9)
    assert int(back.t) == int(updated.t) == int(state.t) + 1  # rounds played keep counting
    # an out-of-range action forgets nothing; the online posterior refuses to forget
    assert all(
        np.array_equal(a, b)
        for a, b in zip(jax.tree.leaves(policy.forget(state, arms, 9, 1.0)), jax.tree.leaves(state))
    )
    with pytest.raises(bb.errors.InvalidInput, match="Forgets"):
        bb.GLMTSL(logistic(), history="online").forget(bb.GLMTSL(logistic(), history="online").init(arms), arms, 0, 1.0)


@pytest.mark.parametrize("policy", [bb.LinTS(lam=2.0), bb.LinUCB(lam=0.5)], ids=["LinTS", "LinUCB"])
def test_ridge_discount_and_forget(policy):
    """B = lam I + sum gamma^{t-s} x x^T, b = sum gamma^{t-s} y x; forget(update(s)) == s to 1e-10."""
    arms = _arms()
    actions, rewards = _stream(6)
    state = _discounted_run(policy, policy.init(arms), arms, actions, rewards)
    x = np.asarray(arms)[actions]
    weights = GAMMA ** np.arange(ROUNDS - 1, -1, -1.0)
    np.testing.assert_allclose(state.precision, policy.lam * np.eye(3) + (x * weights[:, None]).T @ x, atol=1e-12)
    np.testing.assert_allclose(state.b, (x * (weights * rewards)[:, None]).sum(0), atol=1e-12)
    _, back = _forget_roundtrip(policy, state, arms, 4, 0.7)
    np.testing.assert_allclose(back.precision, state.precision, atol=1e-10)
    np.testing.assert_allclose(back.b, state.b, atol=1e-10)


def _comb_rounds(policy, arms, discount):
    state = policy.init(arms)
    rng = np.random.default_rng(1)
    for _ in range(ROUNDS):
        if discount:
            state = policy.discount(state, GAMMA, refit=False)
        action = rng.choice(policy.blocks * arms.shape[0], policy.action_shape[0], replace=False)
        state, _ = policy.update(state, arms, action, rng.normal(size=action.shape))
    return state, action


def test_comb_kalman_equals_ridge_under_discount_and_forget():
    """CombLinTS (covariance form) and RoundTS (precision form, lam = noise_var / prior_var) hold the same
    posterior after discounted rounds and after a forget: cov = noise_var V^{-1}, mean = V^{-1} b, per block."""
    arms = jax.random.normal(jax.random.PRNGKey(5), (10, 3))
    prior_var, noise_var = 2.0, 0.25
    kalman = bb.CombLinTS(oracle=TopK(k=2), blocks=2, prior_var=prior_var, noise_var=noise_var)
    ridge = bb.RoundTS(oracle=TopK(k=2), blocks=2, lam=noise_var / prior_var)
    k_state, action = _comb_rounds(kalman, arms, True)
    r_state, _ = _comb_rounds(ridge, arms, True)
    inverse = np.linalg.inv(np.asarray(r_state.precision))
    np.testing.assert_allclose(k_state.cov, noise_var * inverse, atol=1e-12)
    np.testing.assert_allclose(k_state.mean, np.einsum("mij,mj->mi", inverse, r_state.b), atol=1e-12)
    # the ridge statistics are the directly weighted ones: V_j has lam I plus discounted picks
    assert np.all(np.linalg.eigvalsh(np.asarray(r_state.precision)) >= noise_var / prior_var - 1e-12)
    feedback = np.array([0.3, -0.2, 1.1, 0.4])
    for policy, state in ((kalman, k_state), (ridge, r_state)):
        _, back = _forget_roundtrip(policy, state, arms, action, feedback)
        for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(state), strict=True):
            if a.dtype.kind == "f":  # the posterior; the round count keeps counting
                np.testing.assert_allclose(a, b, atol=1e-10)


def test_kalman_discount_formula():
    """Covariance-form discount: cov^{-1} <- g cov^{-1} + (1 - g) I / prior_var, cov^{-1} mean scaled by g."""
    arms = jax.random.normal(jax.random.PRNGKey(6), (10, 3))
    policy = bb.CombLinUCB(oracle=TopK(k=2), prior_var=0.5, noise_var=0.1, c=1.0)
    state, _ = _comb_rounds(policy, arms, False)
    new = policy.discount(state, GAMMA)
    precision = np.linalg.inv(np.asarray(state.cov[0]))
    expected = GAMMA * precision + (1 - GAMMA) * np.eye(3) / 0.5
    np.testing.assert_allclose(np.linalg.inv(np.asarray(new.cov[0])), expected, rtol=1e-10)
    np.testing.assert_allclose(
        expected @ np.asarray(new.mean[0]), GAMMA * precision @ np.asarray(state.mean[0]), atol=1e-10
    )
