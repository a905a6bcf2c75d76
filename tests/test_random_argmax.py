"""The random-tie argmax: one random integer per call, the j-th tie in index order, uniform among the
ties (its law ``tie_probabilities``), against NumPy references."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import bayesbandit as bb
from bayesbandit._numerics import _random_below, random_argmax, tie_probabilities


@pytest.fixture(autouse=True, scope="module")
def _x64():
    bb.runtime.enable_x64()


def _index(keys, n):
    """The stated law of ``J`` for each of ``keys``: from the two words of ``bits(key, (2,), uint32)``,
    ``(2^32 hi + lo) mod n`` for ``n <= 2^16``, ``lo mod n`` above (NumPy ``uint64``)."""
    words = np.asarray(jax.vmap(lambda k: jax.random.bits(k, (2,), jnp.uint32))(keys.reshape(-1))).astype(np.uint64)
    hi, lo = words[:, 0], words[:, 1]
    index = ((hi << np.uint64(32)) | lo) % np.uint64(n) if n <= 1 << 16 else lo % np.uint64(n)
    return index.astype(np.int64).reshape(keys.shape)


def _reference(key, scores, rtol=0.0):
    """NumPy: the ties (NaN as -inf, ``>= best - rtol |best|``, the best itself when infinite) in
    index order, of which the one at :func:`_index`."""
    scores = np.where(np.isnan(scores), -np.inf, scores) if np.issubdtype(scores.dtype, np.floating) else scores
    best = scores.max()
    ties = np.flatnonzero(scores >= (best if np.isinf(best) else best - rtol * abs(best)))
    return ties[int(_index(key, ties.size))]


@partial(jax.jit, static_argnames="rtol")
def _choose(keys, scores, rtol=0.0):
    """``random_argmax`` of the same scores under each key."""
    return jax.vmap(lambda k: random_argmax(k, scores, rtol=rtol))(keys)


def _picks(scores, draws, rtol=0.0, seed=0):
    return np.asarray(_choose(jax.random.split(jax.random.key(seed), draws), jnp.asarray(scores), rtol=rtol))


def test_without_ties_it_is_the_argmax():
    scores = np.random.default_rng(1).normal(size=(50, 30))
    keys = jax.random.split(jax.random.key(1), 50)
    picks = jax.jit(jax.vmap(random_argmax))(keys, jnp.asarray(scores))
    np.testing.assert_array_equal(picks, np.argmax(scores, axis=1))


def test_it_is_the_tie_at_one_random_integer():
    """The rule itself: the J-th tie in index order, J the stated function of two random words, against NumPy
    on random tie patterns (floats, integers, NaN, rtol)."""
    rng = np.random.default_rng(2)
    for trial in range(40):
        scores = rng.integers(0, 3, 37).astype(float if trial % 2 else np.int32)
        if trial % 2:
            scores[rng.random(37) < 0.2] = np.nan
        rtol = 0.3 if trial % 4 == 1 else 0.0
        key = jax.random.key(trial)
        assert int(_choose(key[None], jnp.asarray(scores), rtol=rtol)[0]) == _reference(key, scores, rtol)


def test_the_tie_search_finds_every_tie_at_every_size():
    """Every tie ``j`` of random masks at sizes around the blocks' widths (padding, one block, K = 1)."""
    rng = np.random.default_rng(3)
    for size in (1, 3, 10, 11, 100, 101):
        scores = (rng.random(size) < 0.3).astype(float)
        scores[rng.integers(size)] = 1.0
        ties = np.flatnonzero(scores == 1.0)
        # 40 keys per tie: their integers J reach every tie
        keys = jax.random.split(jax.random.key(size), 40 * ties.size)
        js = _index(keys, ties.size)
        picks = np.asarray(_choose(keys, jnp.asarray(scores)))
        np.testing.assert_array_equal(picks, ties[js])
        assert set(js) == set(range(ties.size))  # every tie was reached


def test_uniform_over_exact_ties_and_never_a_non_tied_arm():
    """7 ties among 50 scores (other scores just below the maximum, one NaN): 20,000 draws, chi-square
    against ``tie_probabilities`` (1/7 on the ties) with p > 1e-4; no non-tied index is ever chosen."""
    rng = np.random.default_rng(4)
    scores = 1.0 - rng.uniform(1e-12, 1.0, size=50)
    tied = rng.choice(50, 7, replace=False)
    scores[tied] = 1.0
    scores[np.setdiff1d(np.arange(50), tied)[0]] = np.nan
    counts = np.bincount(_picks(scores, 20_000), minlength=50)
    law = np.asarray(tie_probabilities(jnp.asarray(scores)))
    np.testing.assert_array_equal(law > 0, np.isin(np.arange(50), tied))
    np.testing.assert_allclose(law[tied], 1 / 7, rtol=1e-15)
    assert counts[law == 0].sum() == 0
    assert stats.chisquare(counts[tied], 20_000 * law[tied]).pvalue > 1e-4


def test_ties_within_rtol():
    scores = np.array([1.0, 1.0 - 1e-9, 0.5, 1.0 - 1e-3])
    assert set(_picks(scores, 200)) == {0}
    picks = _picks(scores, 4000, rtol=1e-6)
    assert set(picks) == {0, 1}
    assert abs(np.mean(picks == 1) - 0.5) < 4 * 0.5 / np.sqrt(4000)
    np.testing.assert_allclose(tie_probabilities(jnp.asarray(scores), rtol=1e-6), [0.5, 0.5, 0.0, 0.0])
    negative = np.array([-2.0, -1.0, -1.0 - 1e-9, -1.1])  # |best| in the tolerance: -1 - 1e-6 and above tie
    assert set(_picks(negative, 400, rtol=1e-6)) == {1, 2}


def test_nan_infinities_and_a_single_entry():
    one = jnp.array([3.0])
    assert int(random_argmax(jax.random.key(0), one)) == 0
    np.testing.assert_array_equal(tie_probabilities(one), [1.0])
    for scores in (np.full(5, -np.inf), np.full(5, np.nan), np.array([np.nan, -np.inf, np.nan, -np.inf, -np.inf])):
        assert set(_picks(scores, 400)) == set(range(5))  # all tie at -inf
        np.testing.assert_allclose(tie_probabilities(jnp.asarray(scores)), np.full(5, 0.2))
    with_inf = np.array([1.0, np.inf, 2.0, np.inf, np.nan])
    for rtol in (0.0, 1e-6):  # the infinite best ties with itself only, with or without a tolerance
        assert set(_picks(with_inf, 400, rtol=rtol)) == {1, 3}
        np.testing.assert_allclose(tie_probabilities(jnp.asarray(with_inf), rtol=rtol), [0, 0.5, 0, 0.5, 0])


def test_integer_scores_tie():
    counts = np.array([3, 7, 7, 1, 7], np.int32)
    picks = _picks(counts, 3000)
    assert set(picks) == {1, 2, 4}
    assert stats.chisquare(np.bincount(picks)[[1, 2, 4]]).pvalue > 1e-4
    np.testing.assert_allclose(tie_probabilities(jnp.asarray(counts)), [0, 1 / 3, 1 / 3, 0, 1 / 3])


def _random_bits_sizes(jaxpr) -> list[int]:
    """Element counts of the outputs of every ``random_bits`` in ``jaxpr`` and its sub-jaxprs."""
    sizes = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "random_bits":
            sizes.append(int(np.prod(eqn.outvars[0].aval.shape)))
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else (param,):
                if isinstance(sub, jax.extend.core.ClosedJaxpr):
                    sizes += _random_bits_sizes(sub.jaxpr)
                elif isinstance(sub, jax.extend.core.Jaxpr):
                    sizes += _random_bits_sizes(sub)
    return sizes


@pytest.mark.parametrize("key", [jax.random.key(0), jax.random.PRNGKey(0)], ids=["typed", "raw"])
def test_a_constant_number_of_random_words(key):
    """At K = 1,000 the traced program draws no random vector of more than 4 words (K uniforms would be
    one of 1,000: the walker finds that in ``jax.random.uniform``)."""
    scores = jnp.zeros(1000)
    sizes = _random_bits_sizes(jax.make_jaxpr(lambda k, s: random_argmax(k, s, rtol=1e-6))(key, scores).jaxpr)
    assert sizes and max(sizes) <= 4, sizes
    assert max(_random_bits_sizes(jax.make_jaxpr(lambda k: jax.random.uniform(k, (1000,)))(key).jaxpr)) == 1000


@pytest.mark.parametrize("n", [1, 7, 100, 1 << 16, (1 << 16) + 1, 1_000_003, (1 << 31) + 5])
def test_the_integer_is_the_stated_function_of_two_words(n):
    """``J = (2^32 hi + lo) mod n`` for ``n <= 2^16``, ``lo mod n`` above, as stated in ``random_argmax``;
    the same law as JAX's ``randint`` (checked on its own two words, from a split key)."""
    keys = jax.random.split(jax.random.key(n % 1000), 20)
    np.testing.assert_array_equal(jax.vmap(_random_below, (0, None))(keys, jnp.asarray(n, jnp.uint32)), _index(keys, n))
    if n < 1 << 31:
        for key in keys[:5]:
            hi, lo = (int(jax.random.bits(k, (), jnp.uint32)) for k in jax.random.split(key))
            expected = ((hi << 32) + lo) % n if n <= 1 << 16 else lo % n
            assert int(jax.random.randint(key, (), 0, n, dtype=jnp.int32)) == expected
