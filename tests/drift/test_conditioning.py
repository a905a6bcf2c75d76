"""Forgetting stays well conditioned: arms in a 2-dimensional subspace of d = 10, logistic rewards, 10^4 rounds.

The stabilised rule (online posterior) and the discounted Laplace fit (full history) keep the precision at
the prior's (the identity for ``logistic()``) in the 8 directions no arm excites, with no failed fit; plain
exponential forgetting (``Lambda <- gamma Lambda``, computed here with the online update) lets it collapse.
``benchmarks/bench_forgetting_conditioning.py`` runs the same for 10^5 rounds.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb

D, K, ROUNDS, GAMMA = 10, 20, 10_000, 0.99


def _problem():
    basis, _ = jnp.linalg.qr(jax.random.normal(jax.random.PRNGKey(0), (D, D)))
    span, rest = basis[:, :2], basis[:, 2:]
    arms = jax.random.normal(jax.random.PRNGKey(1), (K, 2)) @ span.T
    arms = arms / jnp.maximum(1.0, jnp.linalg.norm(arms, axis=1, keepdims=True))
    return arms, jax.nn.sigmoid(arms @ (span @ jnp.array([1.5, -1.0]))), rest


def _run(step_state):
    """Scan ROUNDS rounds of ``step_state(state, arms, key) -> (state, converged)``; per round: the smallest
    and largest eigenvalue of the precision restricted to the unexcited directions, its smallest eigenvalue
    overall, and whether the update converged."""
    arms, means, rest = _problem()
    policy = bb.GLMTSL(logistic(), a=1.0, history="online")

    def step(state, key):
        state, converged = step_state(state, arms, means, key)
        precision = state.fit.chol @ state.fit.chol.T
        unexcited = jnp.linalg.eigvalsh(rest.T @ precision @ rest)
        return state, (unexcited[0], unexcited[-1], jnp.linalg.eigvalsh(precision)[0], converged)

    keys = jax.random.split(jax.random.PRNGKey(2), ROUNDS)
    return jax.jit(lambda s: jax.lax.scan(step, s, keys)[1])(policy.init(arms))


def _play(policy):
    def step_state(state, arms, means, key):
        k_select, k_reward = jax.random.split(key)
        action, _ = policy.select(state, arms, k_select)
        reward = jax.random.bernoulli(k_reward, means[action]).astype(arms.dtype)
        state, info = policy.update(state, arms, action, reward)
        return state, info.converged & ~getattr(info, "fit_rejected", False)

    return step_state


@pytest.mark.parametrize("history", ["online", "full"])
def test_forgetting_keeps_the_prior_floor(history):
    policy = bb.drift.Discounted(bb.GLMTSL(logistic(), a=1.0, history=history), gamma=GAMMA)
    low, high, smallest, converged = (np.asarray(a) for a in _run(_play(policy)))
    assert converged.all(), f"{(~converged).sum()} failed fits"
    np.testing.assert_allclose(low, 1.0, atol=1e-9)  # the prior precision, in all 8 unexcited directions
    np.testing.assert_allclose(high, 1.0, atol=1e-9)
    assert smallest.min() >= 1.0 - 1e-9


def test_exponential_forgetting_collapses():
    """The contrast: Lambda <- gamma Lambda (no prior term) before each online update."""
    inner = bb.GLMTSL(logistic(), a=1.0, history="online")
    play = _play(inner)

    def step_state(state, arms, means, key):
        fit = state.fit._replace(chol=jnp.sqrt(GAMMA) * state.fit.chol)
        return play(state._replace(fit=fit), arms, means, key)

    low, _, smallest, converged = (np.asarray(a) for a in _run(step_state))
    collapsed = ~np.isfinite(low) | (low < 1e-10) | ~converged
    assert collapsed.any(), "exponential forgetting kept its precision"
    first = int(np.argmax(collapsed))
    assert first < ROUNDS // 2
    # until then the unexcited directions decay as gamma^t after round t: nothing holds them up
    np.testing.assert_allclose(low[:first], GAMMA ** np.arange(1, first + 1), rtol=1e-6, atol=1e-13)
    assert smallest[first - 1] < 1e-9
