"""TopK's float32 candidate pool against the selection on all arms (the reference below), bit for bit.

The reference is TopK's selection as it stood before the pool: float64 ``top_k`` for the k-th
score, one integer ``top_k`` over (class, tie order), a stable sort best first.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.oracles import TopK, tie_order

KEY = jax.random.PRNGKey(0)


def reference(oracle, scores, key):
    blocks, n = scores.shape
    scores = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    kth = jax.lax.top_k(scores, oracle.k)[0][:, -1:]
    slack = jnp.where(jnp.isfinite(kth), oracle.tol * jnp.maximum(1.0, jnp.abs(kth)), 0.0)
    tier = jnp.where(scores > kth + slack, 2, jnp.where(scores >= kth - slack, 1, 0)).astype(jnp.int32)
    order = tie_order(key, (blocks, n), oracle.tie_break)
    chosen = jax.lax.top_k(tier * n + order, oracle.k)[1]
    best_first = jnp.take_along_axis(chosen, jnp.argsort(-jnp.take_along_axis(scores, chosen, 1), 1, stable=True), 1)
    return (best_first + n * jnp.arange(blocks, dtype=jnp.int32)[:, None]).reshape(-1).astype(jnp.int32)


def scores_of(kind, rng, shape):
    """Score batches that stress the boundary: continuous, exact ties, ties within tol, non-finite, extreme."""
    s = rng.standard_normal(shape)
    if kind == "ties":  # few distinct values: long runs of exact ties across the k-th score
        s = np.round(2 * s) / 2
    elif kind == "near":  # ties within tol = 1e-9 (round-off), equal in float32, distinct in float64
        s = np.round(s) + 1e-12 * rng.standard_normal(shape)
    elif kind == "nonfinite":
        u = rng.random(shape)
        s[u < 0.2] = np.nan
        s[(u >= 0.2) & (u < 0.3)] = np.inf
        s[(u >= 0.3) & (u < 0.5)] = -np.inf
    elif kind == "empty":  # mostly NaN / -inf: fewer than k finite scores in some blocks
        s[rng.random(shape) < 0.9] = np.nan
        s[rng.random(shape) < 0.05] = -np.inf
    elif kind == "huge":  # beyond float32's range: overflow to +-inf when rounded
        s = s * 1e300
    elif kind == "tiny":  # below float32's range: flushed to (signed) zero when rounded
        s = s * 1e-300
    return s


KINDS = ["continuous", "ties", "near", "nonfinite", "empty", "huge", "tiny"]


@pytest.mark.parametrize("rule", ["index", "random"])
@pytest.mark.parametrize("blocks, n, k", [(1, 200, 7), (3, 120, 40)])
def test_pool_equals_the_full_selection_under_jit_and_vmap(rule, blocks, n, k):
    rng = np.random.default_rng(n + k)
    batch = 16
    keys = jax.random.split(KEY, batch)
    for tol in (1e-9, 0.0):
        oracle = TopK(k=k, tie_break=rule, tol=tol)
        assert oracle.pool_size(n) < n  # the pool, not all arms
        for dtype in (np.float64, np.float32):
            new = jax.jit(jax.vmap(oracle))
            old = jax.jit(jax.vmap(lambda s, key, o=oracle: reference(o, s, key)))
            for kind in KINDS:
                with np.errstate(over="ignore", under="ignore"):
                    s = jnp.asarray(scores_of(kind, rng, (batch, blocks, n)).astype(dtype))
                np.testing.assert_array_equal(new(s, keys), old(s, keys), err_msg=f"{kind} {dtype} tol={tol}")


def test_pool_equals_the_full_selection_eagerly_and_when_the_pool_is_every_arm():
    rng = np.random.default_rng(1)
    for k, n in [(3, 12), (5, 200), (1, 1)]:  # pool_size(n) >= n for the small ones
        for rule in ("index", "random"):
            oracle = TopK(k=k, tie_break=rule)
            for kind in ("continuous", "ties", "nonfinite"):
                s = jnp.asarray(scores_of(kind, rng, (2, n)))
                np.testing.assert_array_equal(oracle(s, KEY), reference(oracle, s, KEY), err_msg=f"{kind} {n} {rule}")


def test_the_check_passes_on_continuous_scores_and_fails_when_the_band_overflows_the_pool():
    rng = np.random.default_rng(2)
    oracle = TopK(k=10)
    pooled = jax.jit(jax.vmap(oracle._pooled))
    continuous = jnp.asarray(rng.standard_normal((50, 2, 1000)))
    assert not np.asarray(pooled(continuous)[1]).any()  # the fast path alone
    # 100 scores within 1e-12 of 1 (one float32 value, distinct float64 values) at the boundary: more than P - k
    s = rng.standard_normal((1, 1000)) - 3.0
    s[0, 500:600] = 1.0 + 1e-12 * rng.standard_normal(100)
    _, fallback = oracle._pooled(jnp.asarray(s))
    assert bool(fallback)
    expected = 500 + np.argsort(-s[0, 500:600], kind="stable")[:10]  # no tie within tol = 0: the exact order
    np.testing.assert_array_equal(TopK(k=10, tol=0.0)(jnp.asarray(s), KEY), expected)
    np.testing.assert_array_equal(oracle(jnp.asarray(s), KEY), reference(oracle, jnp.asarray(s), KEY))
    # "random" needs the permutation only where the band has more arms than free slots or picks tie
    rand = TopK(k=10, tie_break="random")
    assert not bool(rand._pooled(continuous[0])[1])
    assert bool(rand._pooled(jnp.round(continuous[0]))[1])


def test_a_batch_where_one_member_falls_back_gives_every_member_its_own_exact_answer():
    rng = np.random.default_rng(3)
    oracle = TopK(k=10, tie_break="random")
    s = rng.standard_normal((8, 2, 500))
    s[5] = np.round(s[5])  # ties: member 5 needs the full selection, the others do not
    s = jnp.asarray(s)
    keys = jax.random.split(KEY, 8)
    flags = np.asarray(jax.vmap(oracle._pooled)(s)[1])
    assert flags.tolist() == [i == 5 for i in range(8)]
    np.testing.assert_array_equal(
        jax.jit(jax.vmap(oracle))(s, keys), jax.vmap(lambda a, b: reference(oracle, a, b))(s, keys)
    )
