"""The clustered semi-bandit: features, layouts, +-1 rewards with the right mean, and its oracle."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.envs.clustered import ClusteredSemiBandit, cluster_features
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import TopK


@pytest.mark.parametrize("layout", ["contiguous", "interleaved"])
def test_clusters_are_identical_unit_vectors_at_angle_phi(layout):
    phi = 0.7
    arms = cluster_features(phi, 5, 40, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(arms, axis=1), 1.0)
    distinct = np.unique(arms, axis=0)
    assert len(distinct) == 4
    np.testing.assert_allclose(
        distinct @ distinct.T - np.diag(np.diag(distinct @ distinct.T)), math.cos(phi) ** 2 * (1 - np.eye(4))
    )
    if layout == "contiguous":
        assert (arms[:10] == arms[0]).all() and not (arms[10] == arms[0]).all()
    else:
        assert (arms[::4] == arms[0]).all()


def test_rewards_are_plus_minus_one_with_mean_theta_x_and_the_oracle_is_the_best_cluster():
    env = ClusteredSemiBandit(phi=1.1, oracle=TopK(k=3), d=4, num_arms=12)
    instance = env.reset(jax.random.PRNGKey(0))
    means = np.asarray(instance.means)
    best = max(sum(c) for c in itertools.combinations(means, 3))
    np.testing.assert_allclose(float(instance.best), best, rtol=1e-6)
    action = jnp.array([0, 5, 11])
    keys = jax.random.split(jax.random.PRNGKey(1), 4000)
    draws = np.asarray(jax.jit(jax.vmap(lambda k: env.pull(instance, action, k)[0]))(keys))
    assert set(np.unique(draws)) <= {-1.0, 1.0}
    np.testing.assert_allclose(draws.mean(0), means[[0, 5, 11]], atol=0.05)
    _, outcome = env.pull(instance, action, jax.random.PRNGKey(0))
    np.testing.assert_allclose(float(outcome.expected_reward), means[[0, 5, 11]].sum(), rtol=1e-6)


def test_theta_is_shared_across_runs_unless_asked_otherwise():
    shared = ClusteredSemiBandit(phi=1.0, oracle=TopK(k=2), d=3, num_arms=4)
    own = ClusteredSemiBandit(phi=1.0, oracle=TopK(k=2), d=3, num_arms=4, theta_seed=None)
    a, b = (shared.reset(jax.random.PRNGKey(s)).theta for s in (1, 2))
    np.testing.assert_array_equal(a, b)
    c, d = (own.reset(jax.random.PRNGKey(s)).theta for s in (1, 2))
    assert not np.allclose(c, d)


_THETA_CHILD = """
import json, math, jax
from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.oracles import TopK
env = ClusteredSemiBandit(phi=math.pi / 4, oracle=TopK(k=100))
print(json.dumps([str(jax.numpy.zeros(()).dtype), env.reset(jax.random.PRNGKey(0)).theta.tolist()]))
"""


def test_theta_star_is_the_same_draw_in_32_and_64_bit_mode():
    env = ClusteredSemiBandit(phi=math.pi / 4, oracle=TopK(k=100))
    theta64 = np.asarray(env.reset(jax.random.PRNGKey(0)).theta)
    assert theta64.dtype == np.float64
    child = {**os.environ, "JAX_ENABLE_X64": "0", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", _THETA_CHILD], env=child, capture_output=True, text=True, timeout=120)
    dtype, theta32 = json.loads(out.stdout.strip().splitlines()[-1])
    assert dtype == "float32"
    np.testing.assert_allclose(theta32, theta64, rtol=1e-6, atol=1e-7)


def test_seed_0_ranks_cluster_0_second_behind_cluster_9_at_a_quarter_pi():
    """What the README's explanation of the one-theta* results rests on (C2UCB's first super arm is cluster 0)."""
    env = ClusteredSemiBandit(phi=math.pi / 4, oracle=TopK(k=100))
    means = env.cluster_means(env.reset(jax.random.PRNGKey(0)))
    assert list(np.argsort(-means)[:2]) == [9, 0]
    np.testing.assert_allclose(means[[9, 0]], [0.706, 0.678], atol=5e-4)


def test_bad_settings_are_refused():
    with pytest.raises(InvalidInput, match="multiple"):
        ClusteredSemiBandit(phi=1.0, oracle=TopK(k=2), d=11, num_arms=25)
    with pytest.raises(InvalidInput, match="phi"):
        ClusteredSemiBandit(phi=2.0, oracle=TopK(k=2))
    with pytest.raises(InvalidInput, match="only N"):
        ClusteredSemiBandit(phi=1.0, oracle=TopK(k=30), d=3, num_arms=20)


def test_c2ucb_with_index_ties_starts_on_cluster_0_whatever_the_key():
    """All widths are equal before any feedback, so index ties give the lowest k indices: cluster 0's arms."""
    oracle = TopK(k=100, tie_break="index")
    env = ClusteredSemiBandit(phi=math.pi / 4, oracle=oracle)
    arms = env.reset(jax.random.PRNGKey(0)).arms
    policy = bb.C2UCB(oracle=oracle, lam=1.0, alpha=1.0)
    state = policy.init(arms)
    for seed in range(5):
        action, _ = policy.select(state, arms, jax.random.PRNGKey(seed))
        assert sorted(np.asarray(action).tolist()) == list(range(100))  # cluster 0 is arms 0-199
