"""The combinatorial oracles against brute force, their tie rules, and their use inside jit and vmap."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import ExclusiveAssignment, TopK, exclusive_assignment

KEY = jax.random.PRNGKey(0)


def split(action, num_arms):
    """``(block, arm)`` of lifted indices."""
    return np.divmod(np.asarray(action), num_arms)


def value(scores, action):
    return float(np.asarray(scores).reshape(-1)[np.asarray(action)].sum())


def assert_super_arm(action, num_blocks, num_arms, k, *, exclusive):
    action = np.asarray(action)
    assert action.dtype == np.int32 and action.shape == (num_blocks * k,)
    block, arm = split(action, num_arms)
    np.testing.assert_array_equal(block, np.repeat(np.arange(num_blocks), k))  # block-major, k per block
    for j in range(num_blocks):
        assert np.unique(arm[block == j]).size == k
    if exclusive:
        assert np.unique(arm).size == num_blocks * k


def brute_top_k(scores, k):
    return sum(max(sum(row[list(c)]) for c in itertools.combinations(range(row.size), k)) for row in scores)


def brute_exclusive(scores, k):
    """Best total over every assignment of k distinct arms per block, no arm in two blocks."""
    blocks, n = scores.shape
    best = -np.inf

    def extend(j, used, total):
        nonlocal best
        if j == blocks:
            best = max(best, total)
            return
        for c in itertools.combinations([i for i in range(n) if i not in used], k):
            extend(j + 1, used | set(c), total + scores[j, list(c)].sum())

    extend(0, set(), 0.0)
    return best


KINDS = ("ties", "negative", "continuous")


def instance(rng, blocks, n, kind):
    if kind == "ties":
        return rng.integers(-2, 3, (blocks, n)).astype(np.float64)
    if kind == "negative":
        return np.round(rng.normal(-5.0, 2.0, (blocks, n)), 1)
    return rng.standard_normal((blocks, n)) + 3.0 * (rng.random(n) < 0.5)  # shared favourites: collisions


# ---------------------------------------------------------------- TopK


@pytest.mark.parametrize("blocks", [1, 3])
def test_top_k_value_matches_brute_force(blocks):
    rng = np.random.default_rng(blocks)
    n = 7
    scores = np.concatenate([np.stack([instance(rng, blocks, n, kind) for _ in range(8)]) for kind in KINDS])
    keys = jax.random.split(KEY, len(scores))
    for k in (1, 3, n):
        best = [brute_top_k(s, k) for s in scores]
        for rule in ("index", "random"):
            actions = jax.jit(jax.vmap(TopK(k=k, tie_break=rule)))(jnp.asarray(scores), keys)
            for s, action, optimum in zip(scores, actions, best, strict=True):
                assert_super_arm(action, blocks, n, k, exclusive=False)
                assert value(s, action) == pytest.approx(optimum, abs=1e-12)


@pytest.mark.parametrize("blocks", [1, 3])
def test_top_k_index_rule_takes_the_lowest_tied_indices_best_first(blocks):
    n = 8
    scores = np.random.default_rng(3).integers(0, 3, (20, blocks, n)).astype(np.float64)  # many exact ties
    for k in (1, 4, n):
        actions = np.asarray(jax.jit(jax.vmap(TopK(k=k), in_axes=(0, None)))(jnp.asarray(scores), KEY))
        expected = np.argsort(-scores, axis=2, kind="stable")[:, :, :k] + n * np.arange(blocks)[:, None]
        np.testing.assert_array_equal(actions, expected.reshape(20, -1))


def test_top_k_random_rule_spreads_over_the_tied_arms_only():
    scores = jnp.array([[5.0, 3.0, 3.0, 3.0, 3.0, 1.0], [5.0, 3.0, 3.0, 3.0, 3.0, 1.0]])
    oracle = TopK(k=3, tie_break="random")
    actions = np.asarray(jax.vmap(lambda key: oracle(scores, key))(jax.random.split(KEY, 400)))
    block, arm = split(actions, 6)
    for j in range(2):
        picks = arm[block == j].reshape(400, 3)
        assert (picks[:, 0] == 0).all()  # certainly in, and best first
        counts = np.bincount(picks.ravel(), minlength=6)
        assert counts[5] == 0
        assert ((counts[1:5] > 0.35 * 400) & (counts[1:5] < 0.65 * 400)).all()  # each tied arm ~ half the time
    first, second = (set(map(tuple, np.sort(arm[block == j].reshape(400, 3), axis=1))) for j in range(2))
    assert len(first) == 6 and len(second) == 6  # every pair of the 4 tied arms appears
    same = (np.sort(arm[block == 0].reshape(400, 3), 1) == np.sort(arm[block == 1].reshape(400, 3), 1)).all(1)
    assert 0 < same.mean() < 0.5  # blocks draw independently (1/6 agree by chance)


def test_top_k_round_off_is_a_tie_and_tol_zero_is_exact():
    scores = jnp.array([[1.0, 1.0 + 1e-13, 0.5]])
    assert TopK(k=1)(scores, KEY).tolist() == [0]
    assert TopK(k=1, tol=0.0)(scores, KEY).tolist() == [1]
    assert TopK(k=1, tol=1e-9)(jnp.array([[1.0, 1.0 + 1e-6, 0.5]]), KEY).tolist() == [
        1
    ]  # beyond tol: a real difference
    big = jnp.array([[1e6, 1e6 + 1e-4, 0.0]])  # the tolerance is relative to max(1, |v|)
    assert TopK(k=1)(big, KEY).tolist() == [0]


def test_top_k_takes_k_arms_even_when_all_scores_are_negative_and_handles_infinities():
    assert TopK(k=2)(jnp.array([[-5.0, -1.0, -3.0]]), KEY).tolist() == [1, 2]
    assert TopK(k=2)(jnp.array([[-jnp.inf, -jnp.inf, 5.0]]), KEY).tolist() == [2, 0]
    assert TopK(k=1)(jnp.array([[jnp.nan, 0.0, jnp.inf]]), KEY).tolist() == [2]


def test_top_k_under_jit_and_vmap_matches_eager():
    oracle = TopK(k=2, tie_break="random")
    scores = jnp.asarray(np.random.default_rng(0).integers(0, 3, (3, 2, 6)).astype(np.float64))
    keys = jax.random.split(KEY, 3)
    batched = jax.jit(jax.vmap(oracle))(scores, keys)
    for b in range(3):
        np.testing.assert_array_equal(batched[b], oracle(scores[b], keys[b]))
    assert hash(TopK(k=2)) == hash(TopK(k=2)) and TopK(k=2) == TopK(k=2)


# ---------------------------------------------------------------- ExclusiveAssignment


@pytest.mark.parametrize("kind", KINDS)
def test_exclusive_assignment_matches_brute_force(kind):
    rng = np.random.default_rng(len(kind))
    for _ in range(40):
        blocks, k = int(rng.integers(2, 4)), int(rng.integers(1, 3))
        n = int(rng.integers(blocks * k, min(blocks * k + 4, 7) + 1))
        scores = instance(rng, blocks, n, kind)
        best = brute_exclusive(scores, k)
        for rule in ("index", "random"):
            action = ExclusiveAssignment(k=k, tie_break=rule)(
                jnp.asarray(scores), jax.random.PRNGKey(int(rng.integers(99)))
            )
            assert_super_arm(action, blocks, n, k, exclusive=True)
            assert value(scores, action) == pytest.approx(best, abs=1e-9)


def test_exclusive_assignment_resolves_a_collision_that_greedy_gets_wrong():
    # greedy over sorted pairs gives arm 0 to block 0 (the largest pair, 10) and block 1 a 0: total 10
    scores = np.array([[10.0, 9.0, 0.0], [9.5, 0.0, 0.0]])
    action = ExclusiveAssignment(k=1).solve(scores)
    assert action.tolist() == [1, 3] and value(scores, action) == 18.5


def test_exclusive_assignment_equals_top_k_when_the_top_k_sets_do_not_collide():
    scores = np.random.default_rng(5).integers(0, 4, (200, 3, 12)).astype(np.float64)  # with exact ties
    tops = np.asarray(jax.jit(jax.vmap(TopK(k=2), in_axes=(0, None)))(jnp.asarray(scores), KEY))
    disjoint = [i for i, top in enumerate(tops) if np.unique(split(top, 12)[1]).size == 6]
    assert len(disjoint) > 20
    for i in disjoint:
        np.testing.assert_array_equal(ExclusiveAssignment(k=2).solve(scores[i]), tops[i])


def test_exclusive_assignment_index_rule_is_deterministic_and_random_rule_varies():
    scores = jnp.array([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])  # two optimal assignments of value 2
    index = {tuple(ExclusiveAssignment(k=1)(scores, key).tolist()) for key in jax.random.split(KEY, 20)}
    assert index == {(0, 5)}  # the earlier arm to the earlier block
    oracle = ExclusiveAssignment(k=1, tie_break="random")
    drawn = [tuple(a) for a in np.asarray(jax.vmap(lambda key: oracle(scores, key))(jax.random.split(KEY, 40)))]
    assert set(drawn) == {(0, 5), (1, 4)}
    assert oracle.solve(np.asarray(scores), 7).tolist() == oracle.solve(np.asarray(scores), 7).tolist()


def test_exclusive_assignment_round_off_is_a_tie():
    scores = np.array([[1.0, 1.0 + 1e-13, 0.0], [0.0, 0.0, 1.0]])
    assert ExclusiveAssignment(k=1).solve(scores).tolist() == [0, 5]
    assert ExclusiveAssignment(k=1, tol=0.0).solve(scores).tolist() == [1, 5]


def medium_instance(structure, rng, blocks, n):
    if structure == "correlated":  # the promotion benchmark's shape: shared user effects, lists collide
        x = rng.standard_normal((n, 51))
        theta = 0.3 * rng.standard_normal((blocks, 51))
        return (x @ theta.T + 0.5 * np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(1, 2, (n, 1))).T
    if structure == "proportional":  # every block ranks the arms alike: the price sweeps stall, paths do the work
        return np.outer(rng.uniform(0.5, 1.5, blocks), rng.standard_normal(n)) + 0.01 * rng.standard_normal((blocks, n))
    return rng.integers(0, 5, (blocks, n)).astype(np.float64) + rng.integers(0, 3, n)  # exact ties everywhere


@pytest.mark.parametrize("structure", ["correlated", "proportional", "integer"])
def test_exclusive_assignment_matches_linear_sum_assignment_on_a_medium_instance(structure):
    blocks, n, k = 10, 2000, 20
    scores = medium_instance(structure, np.random.default_rng(11), blocks, n)
    top = np.argsort(-scores, axis=1)[:, :k]
    assert np.unique(top).size < blocks * k  # the lists collide: the solver has work to do
    repeated = np.repeat(scores, k, axis=0)
    rows, cols = linear_sum_assignment(repeated, maximize=True)
    best = repeated[rows, cols].sum()
    for tol in (1e-9, 0.0):
        for rule in ("index", "random"):
            action = ExclusiveAssignment(k=k, tie_break=rule, tol=tol).solve(scores, 3)
            assert_super_arm(action, blocks, n, k, exclusive=True)
            assert value(scores, action) == pytest.approx(best, rel=1e-9)
    chosen = exclusive_assignment(scores, k)  # the host helper: (M, k) arms, best first
    picked = np.take_along_axis(scores, chosen, 1)
    assert chosen.shape == (blocks, k) and picked.sum() == pytest.approx(best, rel=1e-9)
    assert (np.diff(picked, axis=1) <= 0).all()


def test_exclusive_assignment_under_jit_and_vmap():
    rng = np.random.default_rng(2)
    scores = jnp.asarray(rng.integers(0, 4, (3, 3, 8)).astype(np.float64))  # a batch of 3, with collisions
    keys = jax.random.split(KEY, 3)
    for rule in ("index", "random"):
        oracle = ExclusiveAssignment(k=2, tie_break=rule)
        batched = np.asarray(jax.jit(jax.vmap(oracle))(scores, keys))
        assert batched.shape == (3, 6) and batched.dtype == np.int32
        for b in range(3):
            single = np.asarray(jax.jit(oracle)(scores[b], keys[b]))
            np.testing.assert_array_equal(batched[b], single)
            assert_super_arm(single, 3, 8, 2, exclusive=True)
            assert value(scores[b], single) == pytest.approx(brute_exclusive(np.asarray(scores[b]), 2))


def test_exclusive_assignment_survives_non_finite_scores():
    scores = np.array([[np.nan, 1.0, np.inf, 0.0], [2.0, -np.inf, 3.0, 1.0]])
    action = ExclusiveAssignment(k=1).solve(scores)
    assert_super_arm(action, 2, 4, 1, exclusive=True)
    assert action.tolist() == [2, 4]  # inf first; block 1 then takes arm 0 (2.0)


# ---------------------------------------------------------------- bad input


def test_bad_input_raises_invalid_input_naming_the_argument():
    with pytest.raises(InvalidInput, match=r"k = 4 .* N = 3.*Fix"):
        TopK(k=4).check(1, 3)
    with pytest.raises(InvalidInput, match=r"k = 4"):
        TopK(k=4)(jnp.zeros((2, 3)), KEY)
    TopK(k=3).check(5, 3)  # blocks do not interact: k <= N suffices
    with pytest.raises(InvalidInput, match=r"M k = 3 x 2 = 6 .* N = 5.*Fix"):
        ExclusiveAssignment(k=2).check(3, 5)
    with pytest.raises(InvalidInput, match=r"M k = 3 x 2"):
        ExclusiveAssignment(k=2)(jnp.zeros((3, 5)), KEY)
    ExclusiveAssignment(k=2).check(3, 6)
    for cls in (TopK, ExclusiveAssignment):
        with pytest.raises(InvalidInput, match=rf"'tie_break' parameter of {cls.__name__}.*'index', 'random'"):
            cls(k=2, tie_break="first")
        for k in (0, -1, 1.5, True):
            with pytest.raises(InvalidInput, match=rf"'k' parameter of {cls.__name__}"):
                cls(k=k)
        with pytest.raises(InvalidInput, match=r"'tol' parameter"):
            cls(k=2, tol=-1e-9)
    with pytest.raises(InvalidInput, match=r"shape \(M, N\)"):
        ExclusiveAssignment(k=1).solve(np.zeros(4))
