"""Peace (halving with a Gaussian-width design): exact budget, the width it minimises, learning."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from bayesbandit.bai import AdaptiveInstance, SphereInstance, is_correct
from bayesbandit.bai.peace import Peace, gaussian_width, width_design
from bayesbandit.design import fw_away, project
from bayesbandit.errors import InvalidInput

FAST = Peace(num_samples=128, num_steps=20)


def run(algorithm, env, budget, reps, seed=0):
    def one(key):
        instance_key, run_key = jax.random.split(key)
        instance = env.reset(instance_key)
        arm, info = algorithm.identify(env, instance, budget, run_key)
        return is_correct(instance, arm), info

    return jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(seed), reps))


def test_width_of_two_opposite_arms_is_twice_the_mean_absolute_normal():
    # z = +-1 in one dimension, equal weights: A = 1 and the width is E[2 |xi|] = 2 sqrt(2/pi)
    xi = jax.random.normal(jax.random.key(0), (200_000, 1))
    value = gaussian_width(jnp.array([[1.0], [-1.0]]), jnp.array([0.5, 0.5]), xi)
    np.testing.assert_allclose(float(value), 2 * np.sqrt(2 / np.pi), rtol=0.01)


def test_cholesky_width_matches_the_symmetric_square_root_in_expectation():
    """An independent NumPy estimate with A^{-1/2} from the eigendecomposition, on other draws."""
    rng = np.random.default_rng(0)
    z = project(SphereInstance(K=12, d=5).reset(jax.random.key(2)).arms).coords
    weights = rng.dirichlet(np.ones(12))
    a = (np.asarray(z) * weights[:, None]).T @ np.asarray(z)
    vals, vecs = np.linalg.eigh(a)
    xi = rng.normal(size=(100_000, 5))
    projected = np.asarray(z) @ (vecs / np.sqrt(vals)) @ vecs.T @ xi.T
    reference = np.mean(projected.max(axis=0) - projected.min(axis=0))
    ours = gaussian_width(z, jnp.asarray(weights), jax.random.normal(jax.random.key(3), (100_000, 5)))
    np.testing.assert_allclose(float(ours), reference, rtol=0.01)


@pytest.mark.parametrize(
    "env, seed", [(SphereInstance(K=16, d=10), 0), (AdaptiveInstance(K=16), 0), (SphereInstance(K=32, d=4), 1)]
)
def test_design_width_is_at_most_the_g_optimal_and_uniform_widths(env, seed):
    """On the same draws xi, the design's sample width is below the uniform design's and at most the
    G-optimal design's it starts from."""
    z = project(env.reset(jax.random.key(seed)).arms).coords
    xi = jax.random.normal(jax.random.key(seed + 1), (256, z.shape[1]))
    design = width_design(z, xi, num_steps=50)
    width = float(gaussian_width(z, design, xi))
    uniform = float(gaussian_width(z, jnp.full(z.shape[0], 1.0 / z.shape[0]), xi))
    g_optimal = float(gaussian_width(z, fw_away(z).weights, xi))
    assert width <= g_optimal
    assert width < uniform
    np.testing.assert_allclose(float(jnp.sum(design)), 1.0, atol=1e-12)
    assert float(jnp.min(design)) >= 0.0


def test_steps_improve_on_the_start_on_the_sphere():
    # the G-optimal design is not width-optimal here: the steps lower the sample width
    z = project(SphereInstance(K=16, d=10).reset(jax.random.key(0)).arms).coords
    xi = jax.random.normal(jax.random.key(1), (256, z.shape[1]))
    g_optimal = float(gaussian_width(z, fw_away(z).weights, xi))
    assert float(gaussian_width(z, width_design(z, xi, num_steps=50), xi)) < g_optimal - 0.05


def test_allocation_spends_the_stage_budget_exactly():
    x = SphereInstance(K=16, d=10).reset(jax.random.key(0)).arms
    for n in (16, 37, 80):
        counts = FAST.allocate(x, n, jax.random.key(n))
        assert int(jnp.sum(counts)) == n
        assert int(jnp.min(counts)) >= 0


def test_spends_exactly_the_budget_and_learns():
    """K = 16 arms in R^10, B = 320, noise variance 1: about 0.8 correct (chance 1/16); 200
    replications give a standard error of 0.03, so 0.6 is far below the rate and far above chance."""
    correct, info = run(FAST, SphereInstance(K=16, d=10, noise_var=1.0), 321, 200, seed=3)
    assert bool(jnp.all(info.pulls == 321))
    assert bool(jnp.all(jnp.sum(info.counts, axis=1) == 321))
    assert info.survivors.shape == (200, 4, 16)
    rate = float(jnp.mean(correct))
    assert rate >= 0.6
    assert stats.binomtest(int(jnp.sum(correct)), 200, 1 / 16, alternative="greater").pvalue < 1e-20


@pytest.mark.parametrize("name, value", [("num_samples", 0), ("num_steps", -1), ("step_size", 0.0), ("ridge", -1e-3)])
def test_bad_hyper_parameters_are_rejected(name, value):
    with pytest.raises(InvalidInput, match=name):
        Peace(**{name: value})
