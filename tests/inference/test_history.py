"""Compressed per-arm history vs one row per observation, and FPL's per-arm perturbation.

For likelihoods affine in y the per-arm rows (x_i, mean reward_i, weight n_i) give exactly the
potential's gradient and Hessian of the full history, so MAP and Hessian agree to rounding
(1e-8 relative in float64; the potentials differ by a theta-free constant only).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _asserts import map_jit
from bayesbandit.models import linear_gaussian, logistic, poisson
from scipy import stats

import bayesbandit as bb
from bayesbandit.history import ArmHistory, RowHistory
from bayesbandit.inference import perturb_rewards

K, D, N_OBS = 60, 3, 150

LIKELIHOODS = [
    ("bernoulli", logistic(), lambda rng, mu: rng.binomial(1, 1 / (1 + np.exp(-mu))).astype(float)),
    ("poisson", poisson(), lambda rng, mu: rng.poisson(np.exp(mu)).astype(float)),
    ("gaussian", linear_gaussian(), lambda rng, mu: mu + rng.normal(size=mu.shape)),
]


def _histories(sample, seed=0, *, incremental=False):
    rng = np.random.default_rng(seed)
    arms = rng.uniform(-1, 1, (K, D))
    theta = rng.normal(0, 1, D)
    pulls = rng.integers(0, K // 2, N_OBS)  # half the arms are never pulled (weight 0 rows)
    rewards = sample(rng, arms[pulls] @ theta)
    if not incremental:  # the same contents, built directly (``add`` is tested below)
        counts = np.bincount(pulls, minlength=K).astype(float)
        compressed = ArmHistory(jnp.asarray(arms), jnp.asarray(counts), jnp.asarray(np.bincount(pulls, rewards, K)))
        rows = RowHistory(
            jnp.asarray(arms[pulls]), jnp.asarray(rewards), jnp.ones(N_OBS), jnp.asarray(N_OBS, jnp.int32)
        )
        return compressed, rows, pulls, rewards, arms
    add_arm = jax.jit(ArmHistory.add)
    add_row = jax.jit(RowHistory.add)
    compressed = ArmHistory.create(jnp.asarray(arms))
    rows = RowHistory.create(N_OBS, D)
    for arm, reward in zip(pulls, rewards):
        compressed = add_arm(compressed, int(arm), reward)
        rows = add_row(rows, jnp.asarray(arms[arm]), reward)
    return compressed, rows, pulls, rewards, arms


def test_histories_store_what_was_added():
    compressed, rows, pulls, rewards, arms = _histories(LIKELIHOODS[2][2], incremental=True)
    counts = np.bincount(pulls, minlength=K)
    np.testing.assert_array_equal(np.asarray(compressed.counts), counts)
    np.testing.assert_allclose(np.asarray(compressed.sums), np.bincount(pulls, rewards, minlength=K), rtol=1e-12)
    x, y, w = rows.rows()
    np.testing.assert_array_equal(np.asarray(x), arms[pulls])
    np.testing.assert_array_equal(np.asarray(y), rewards)
    assert int(rows.size) == N_OBS and float(rows.num_obs) == N_OBS and not bool(rows.overflowed)
    # both give the same unweighted design matrix
    np.testing.assert_allclose(np.asarray(compressed.gram()), np.asarray(rows.gram()), rtol=1e-12)
    # a full buffer drops further rows and says so
    assert bool(rows.add(jnp.zeros(D), 0.0).overflowed)
    grown = rows.grow(2 * N_OBS)
    assert grown.capacity == 2 * N_OBS and float(grown.num_obs) == N_OBS


@pytest.mark.parametrize("name, model, sample", LIKELIHOODS, ids=[c[0] for c in LIKELIHOODS])
def test_compressed_and_row_histories_give_the_same_map_and_hessian(name, model, sample):
    compressed, rows, *_ = _histories(sample, seed=1)
    a = map_jit(model, *compressed.rows())
    b = map_jit(model, *rows.rows())
    assert bool(a.info.converged) and bool(b.info.converged)
    np.testing.assert_allclose(np.asarray(a.theta), np.asarray(b.theta), rtol=1e-8, atol=1e-10)
    ha = np.asarray(a.chol @ a.chol.T)
    hb = np.asarray(b.chol @ b.chol.T)
    np.testing.assert_allclose(ha, hb, rtol=1e-8, atol=1e-8 * np.abs(hb).max())


def test_matched_perturbations_give_the_same_perturbed_map():
    """Per-observation noise z_l and per-arm noise sum(z_l)/n_i move the potential identically."""
    compressed, rows, pulls, _, _ = _histories(LIKELIHOODS[0][2], seed=2)
    z = np.random.default_rng(3).normal(0, 0.5, N_OBS)
    x_r, y_r, w_r = rows.rows()
    x_c, y_c, w_c = compressed.rows()
    per_arm = np.bincount(pulls, z, minlength=K) / np.maximum(np.asarray(w_c), 1.0)
    a = map_jit(logistic(), x_c, np.asarray(y_c) + per_arm, w_c)
    b = map_jit(logistic(), x_r, np.asarray(y_r) + z, w_r)
    np.testing.assert_allclose(np.asarray(a.theta), np.asarray(b.theta), rtol=1e-8, atol=1e-10)


def test_perturb_rewards_formula_and_masking():
    key = jax.random.PRNGKey(0)
    y = jnp.array([0.5, 1.0, 0.0, 2.0])
    w = jnp.array([4.0, 1.0, 0.0, 9.0])
    xi = np.asarray(jax.random.normal(key, (4,), dtype=jnp.float64))
    out = np.asarray(perturb_rewards(key, y, w, 0.7))
    expected = np.asarray(y) + 0.7 * xi / np.sqrt(np.where(np.asarray(w) > 0, w, 1.0))
    expected[2] = 0.0  # weight-0 rows are untouched
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    np.testing.assert_array_equal(np.asarray(perturb_rewards(key, y, w, 0.0)), np.asarray(y))


def test_per_arm_perturbation_has_the_per_observation_distribution():
    """FPL adds N(0, a^2) to each observation; per-arm statistics add N(0, n_i a^2) to the sum.

    Across 4,000 keys, the perturbation of each arm's reward sum drawn both ways is compared by
    a two-sample KS test at level 1e-4 per arm (3 arms: false-failure rate < 3e-4), and its
    variance against n_i a^2 at 5 standard errors (SE of a normal variance from m draws is
    sigma^2 sqrt(2/m); two-sided rate 6e-7 per check).
    """
    a, m = 0.8, 4000
    counts = np.array([1.0, 4.0, 25.0])
    sums = np.array([1.0, 2.0, 20.0])
    pulls = np.repeat(np.arange(3), counts.astype(int))
    y_rows = (sums / counts)[pulls]  # any split of the sums works; use the means
    keys = jax.random.split(jax.random.PRNGKey(42), 2 * m)

    @jax.jit
    def draw(keys):
        per_arm = jax.vmap(lambda k: perturb_rewards(k, jnp.asarray(sums / counts), jnp.asarray(counts), a))(keys[:m])
        per_row = jax.vmap(lambda k: perturb_rewards(k, jnp.asarray(y_rows), jnp.ones(len(pulls)), a))(keys[m:])
        return per_arm, per_row

    per_arm, per_row = map(np.asarray, draw(keys))
    arm_sums = per_arm * counts - sums
    row_sums = np.stack([per_row[:, pulls == i].sum(1) for i in range(3)], axis=1) - sums
    for i in range(3):
        assert stats.ks_2samp(arm_sums[:, i], row_sums[:, i]).pvalue > 1e-4
        var = counts[i] * a**2
        for sample in (arm_sums[:, i], row_sums[:, i]):
            assert abs(sample.var() - var) < 5 * var * np.sqrt(2 / m)
            assert abs(sample.mean()) < 5 * np.sqrt(var / m)


def test_perturbed_map_uses_the_perturbed_rewards():
    """The paper's noise: the MAP of the rewards plus N(0, a^2 / w) under the prior as written."""
    compressed, *_ = _histories(LIKELIHOODS[0][2], seed=4)
    x, y, w = compressed.rows()
    key = jax.random.PRNGKey(7)
    fit = jax.jit(lambda k: bb.perturbed_map(k, logistic(), x, y, w, a=0.5, noise="paper", init=jnp.zeros(3)))(key)
    ref = map_jit(logistic(), x, perturb_rewards(key, y, w, 0.5), w)
    # Both stop at a Newton decrement below 1e-12 nats, a distance of about 1e-7 from the MAP (another
    # perturbation moves the MAP by about 0.1).
    np.testing.assert_allclose(np.asarray(fit.theta), np.asarray(ref.theta), atol=1e-6)
    with pytest.raises(bb.errors.InvalidInput, match="perturbed_map: the 'key' argument must be one JAX PRNG key"):
        bb.perturbed_map(logistic(), x, y, w)  # the key comes first
