"""GLM-TSL with importance-resampled draws (proposals > 1): draws move from the Laplace towards the exact posterior."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import InvalidInput


def _skewed_state():
    """Three successes of one arm under a wide prior: a right-skewed posterior whose Laplace mean is too low."""
    policy_args = dict(num_explore=0)
    arms = jnp.ones((1, 1))
    model = logistic(prior_scale=3.0)
    laplace = bb.GLMTSL(model, **policy_args)
    state = laplace.init(arms)
    for _ in range(3):
        state, _ = laplace.update(state, arms, jnp.asarray(0), jnp.asarray(1.0))
    return model, arms, state, policy_args


def _draws(policy, state, arms, n=4_000):
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    return np.asarray(jax.jit(jax.vmap(lambda k: policy.select(state, arms, k)[1].theta[0]))(keys))


def test_resampled_draws_have_the_exact_posterior_mean():
    model, arms, state, args = _skewed_state()
    grid = np.linspace(-15, 25, 200_001)
    log_post = 3 * -np.logaddexp(0, -grid) - grid**2 / (2 * 9.0)
    post = np.exp(log_post - log_post.max())
    exact = float(np.sum(grid * post) / np.sum(post))
    laplace = _draws(bb.GLMTSL(model, **args), state, arms).mean()
    resampled = _draws(bb.GLMTSL(model, proposals=64, **args), state, arms).mean()
    assert abs(resampled - exact) < 0.5 * abs(laplace - exact), (laplace, resampled, exact)


def test_proposals_need_the_rows():
    with pytest.raises(InvalidInput, match="proposals"):
        bb.GLMTSL(logistic(), proposals=8, history="online")
    with pytest.raises(InvalidInput, match="proposals"):
        bb.GLMTSL(logistic(), proposals=0)
