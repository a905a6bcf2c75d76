"""The NumPy GSE of the benchmarks (benchmarks/baselines/numpy_gse.py) is the same algorithm as bayesbandit's GSE."""

import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.bai import GSE, AdaptiveInstance, is_correct
from bayesbandit.bai.evaluation import replication_keys
from bayesbandit.design import efficient_rounding, fw_away, project

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "baselines" / "numpy_gse.py"
_SPEC = importlib.util.spec_from_file_location("numpy_gse", _PATH)
numpy_gse = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(numpy_gse)


def sphere(seed, k, d):
    x = np.random.default_rng(seed).normal(size=(k, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(5))
def test_rounding_is_bayesbandits_count_for_count(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 20))
    w = rng.dirichlet(np.ones(k)) * (rng.random(k) < 0.7)
    w = w if w.sum() > 0 else np.ones(k)
    w = w / w.sum()
    for n in (k, 3 * k + 1, 97):
        counts = numpy_gse.efficient_rounding(w, n)
        assert counts.sum() == n
        np.testing.assert_array_equal(counts, np.asarray(efficient_rounding(jnp.asarray(w), n)))


@pytest.mark.parametrize("k, d, seed", [(16, 5, 0), (64, 10, 1), (30, 4, 2)])
def test_design_is_bayesbandits_fw_away(k, d, seed):
    x = sphere(seed, k, d)
    z = numpy_gse.project(x)
    assert z.shape == (k, d)
    weights, iterations = numpy_gse.fw_away(z)
    g = np.max(np.sum((z @ np.linalg.inv((z.T * weights) @ z)) * z, axis=1))
    assert g <= 1.01 * d
    design = fw_away(project(jnp.asarray(x)).coords)
    assert iterations == int(design.num_iterations)
    np.testing.assert_allclose(weights, np.asarray(design.weights), atol=1e-8)


def test_projection_keeps_the_rank_only():
    x = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, 1.0]])
    z = numpy_gse.project(x)
    assert z.shape == (3, 2)
    np.testing.assert_allclose(z @ z.T, x @ x.T, atol=1e-12)


def test_accuracy_agrees_with_bayesbandit_gse_on_the_adaptive_instance():
    """K = 8, B = 160, 1,000 replications each: the accuracies agree within 3 binomial standard errors."""
    env, budget, reps = AdaptiveInstance(K=8), 160, 1000
    instance = env.reset(jax.random.key(0))
    arms = np.broadcast_to(np.asarray(instance.arms), (reps, *instance.arms.shape))
    means = np.broadcast_to(np.asarray(instance.means), (reps, env.K))
    chosen = numpy_gse.run(arms, means, budget, env.noise_var, seed=1)
    acc_numpy = float(np.mean(chosen == 0))

    _, keys = replication_keys(0, reps)
    correct = jax.jit(jax.vmap(lambda k: is_correct(instance, GSE().identify(env, instance, budget, k)[0])))(keys)
    acc_bb = float(np.mean(correct))

    se = np.sqrt(acc_numpy * (1 - acc_numpy) / reps + acc_bb * (1 - acc_bb) / reps)
    assert abs(acc_numpy - acc_bb) <= 3 * se, (acc_numpy, acc_bb, se)
    assert acc_numpy > 1 / env.K + 5 * np.sqrt(acc_numpy * (1 - acc_numpy) / reps)  # it learns
