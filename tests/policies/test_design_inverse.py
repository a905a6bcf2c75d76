"""GLM-UCB / UCB-GLM widths from the rank-one-updated design inverse equal a fresh factorisation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit._gaussian_linear import DesignInverse, mahalanobis_norms
from bayesbandit._numerics import jittered_cholesky
from bayesbandit.errors import InvalidInput
from bayesbandit.policies.glm.glm_ucb import design_widths


def _fresh_widths(gram, arms):
    chol, _ = jittered_cholesky(gram)
    return mahalanobis_norms(chol, arms)


def test_rank_one_inverse_matches_the_factorised_one_over_a_long_run():
    bb.runtime.enable_x64()
    rng = np.random.default_rng(0)
    d, rounds = 8, 5_000
    arms = jnp.asarray(rng.uniform(-1, 1, (50, d)))
    pulls = rng.integers(0, 50, rounds)
    design = DesignInverse.create(d)
    add = jax.jit(DesignInverse.add)
    for t, i in enumerate(pulls):
        design = add(design, arms[i])
        if t in (d + 2, 100, rounds - 1):
            assert bool(design.exact)
            np.testing.assert_allclose(design.inverse, np.linalg.inv(np.asarray(design.gram)), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(design.widths(arms), _fresh_widths(design.gram, arms), rtol=1e-9)


def test_singular_design_uses_the_jittered_inverse_until_it_is_positive_definite():
    bb.runtime.enable_x64()
    d = 3
    design = DesignInverse.create(d)
    basis = jnp.eye(d)
    for k in range(d):
        assert not bool(design.exact)
        design = design.add(basis[k] * (k + 1.0))
        np.testing.assert_allclose(design.widths(basis), _fresh_widths(design.gram, basis), rtol=1e-9)
    assert bool(design.exact)  # G = diag(1, 4, 9) is positive definite after the d-th pull
    np.testing.assert_allclose(design.inverse, np.diag([1.0, 1 / 4, 1 / 9]), rtol=1e-12)


@pytest.mark.parametrize("policy_cls", [bb.GLMUCB, bb.UCBGLM])
@pytest.mark.parametrize("contextual", [False, True])
def test_ucb_policies_widths_equal_the_design_matrix_norms(policy_cls, contextual):
    bb.runtime.enable_x64()
    rng = np.random.default_rng(1)
    d, K = 4, 20
    arms = jnp.asarray(rng.uniform(-1, 1, (K, d)))
    policy = policy_cls(logistic())
    state = policy.init(d=d, capacity=64) if contextual else policy.init(arms)
    update = jax.jit(policy.update)
    gram = np.zeros((d, d))
    for _ in range(30):
        i = int(rng.integers(K))
        state, _ = update(state, arms, jnp.asarray(i), jnp.asarray(float(rng.random() < 0.5)))
        gram += np.outer(arms[i], arms[i])
        widths, fresh = design_widths(state, arms), _fresh_widths(jnp.asarray(gram), arms)
        if bool(state.design.exact):
            assert np.linalg.cond(gram) < 1e6
            np.testing.assert_allclose(widths, fresh, rtol=1e-8)
        else:  # singular or nearly: widths ~1e4 and more off the span; only their order is meaningful
            assert np.linalg.cond(gram) > 1e5
            assert int(jnp.argmax(widths)) == int(jnp.argmax(fresh))
    assert bool(state.design.exact)
    _, info = policy.select(state, arms, jax.random.key(0))
    np.testing.assert_allclose(info.widths, _fresh_widths(jnp.asarray(gram), arms), rtol=1e-8)


def test_design_widths_names_a_state_without_the_design_inverse():
    bb.runtime.enable_x64()
    state = bb.GLMTSL(logistic()).init(jnp.eye(3))
    with pytest.raises(InvalidInput, match="keeps_design"):
        design_widths(state, jnp.eye(3))
