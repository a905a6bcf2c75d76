"""The promotion problem (Takemura and Ito, sec. VII-A2): the data split, the SVD features, the environment."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.datasets import load_ratings
from bayesbandit.datasets.promotion import promotion_data, rater_bounds, training_matrix
from bayesbandit.envs import PromotionEnv
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import ExclusiveAssignment, TopK

ML100K = Path(os.environ.get("BAYESBANDIT_DATA", "")) / "ml-100k"
USERS, MOVIES, RANK, M, K = 300, 80, 5, 4, 3
BOUNDS = {"min_raters": 20, "max_raters": 60}


def synthetic_ratings(rng, users=USERS, movies=MOVIES):
    """Ratings 1..5; movie m is rated by about a fraction 0.02 .. 0.4 of the users (increasing in m)."""
    rated = rng.random((users, movies)) < np.linspace(0.02, 0.4, movies)
    u, i = np.nonzero(rated)
    return u + 1, i + 1, rng.integers(1, 6, u.size)


def write_udata(path: Path, u, i, r) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{a}\t{b}\t{int(c)}\t880000000\n" for a, b, c in zip(u, i, r, strict=True)))
    return path


@pytest.fixture(scope="module")
def ratings_file(tmp_path_factory):
    rng = np.random.default_rng(7)
    return write_udata(tmp_path_factory.mktemp("ml") / "u.data", *synthetic_ratings(rng))


@pytest.fixture(scope="module")
def data(ratings_file):
    return promotion_data(ratings_file, num_promotions=M, rank=RANK, seed=3, **BOUNDS)


@pytest.fixture(scope="module", params=["exclusive", "top_k"])
def env(request, data):
    oracle = ExclusiveAssignment(k=K) if request.param == "exclusive" else TopK(k=K)
    return PromotionEnv(features=data.features, rewards=data.rewards, num_users_per_round=40, k=K, oracle=oracle)


def random_action(env, seed):
    """A feasible super arm: k users per promotion, distinct users (so feasible for both oracles)."""
    users = np.random.default_rng(seed).permutation(env.K)[: env.blocks * env.k].reshape(env.blocks, env.k)
    return jnp.asarray((users + env.K * np.arange(env.blocks)[:, None]).reshape(-1), jnp.int32)


# --------------------------------------------------------------------------- data


def test_default_rater_bounds_are_the_papers_fraction_of_users():
    assert rater_bounds(138_493) == (1_400, 2_800)
    assert rater_bounds(943) == (10, 19)


def test_features_are_rank_plus_bias_with_max_norm_one(data):
    assert data.features.shape == (USERS, RANK + 1) and data.features.dtype == np.float64
    norms = np.linalg.norm(data.features, axis=1)
    assert norms.max() <= 1.0 + 1e-12
    np.testing.assert_allclose(norms.max(), 1.0)
    np.testing.assert_array_equal(data.features[:, -1], data.features[0, -1])  # the constant element
    np.testing.assert_allclose(data.features[0, -1], 2**-0.5)
    assert data.d == RANK + 1 and data.num_users == USERS
    print(data.describe())


def test_rewards_are_the_ratings_of_the_test_movies(ratings_file, data):
    ratings = load_ratings(ratings_file)
    assert data.rewards.shape == (USERS, M) and data.movie_ids.shape == (M,)
    np.testing.assert_array_equal(data.user_ids, np.unique(ratings.user))
    expected = np.zeros((USERS, M))
    for user, item, rating in zip(ratings.user, ratings.item, ratings.rating, strict=True):
        if item in data.movie_ids:
            expected[np.searchsorted(data.user_ids, user), np.searchsorted(data.movie_ids, item)] = rating
    np.testing.assert_array_equal(data.rewards, expected)
    counts = (data.rewards > 0).sum(axis=0)
    assert np.all((counts >= BOUNDS["min_raters"]) & (counts <= BOUNDS["max_raters"]))
    assert data.raters == (BOUNDS["min_raters"], BOUNDS["max_raters"])


def test_the_split_keeps_test_ratings_out_of_the_training_matrix(ratings_file, data, tmp_path):
    ratings = load_ratings(ratings_file)
    users, movies, matrix = training_matrix(ratings, data.movie_ids)
    assert not np.isin(data.movie_ids, movies).any()
    assert matrix.nnz == np.count_nonzero(~np.isin(ratings.item, data.movie_ids))
    assert matrix.shape == (USERS, np.unique(ratings.item).size - M) and users.size == USERS
    # changing every test rating changes the rewards and leaves the features alone
    held = np.isin(ratings.item, data.movie_ids)
    changed = np.where(held, 6 - ratings.rating, ratings.rating)
    other = promotion_data(
        write_udata(tmp_path / "u.data", ratings.user, ratings.item, changed),
        num_promotions=M,
        rank=RANK,
        seed=3,
        **BOUNDS,
    )
    np.testing.assert_array_equal(other.movie_ids, data.movie_ids)
    np.testing.assert_allclose(other.features, data.features)
    assert not np.array_equal(other.rewards, data.rewards)


def test_data_is_reproducible_and_the_seed_moves_the_test_movies(ratings_file, data):
    again = promotion_data(ratings_file, num_promotions=M, rank=RANK, seed=3, **BOUNDS)
    np.testing.assert_array_equal(again.features, data.features)
    np.testing.assert_array_equal(again.movie_ids, data.movie_ids)
    other = promotion_data(ratings_file, num_promotions=M, rank=RANK, seed=4, **BOUNDS)
    assert not np.array_equal(other.movie_ids, data.movie_ids)


def test_bad_data_arguments_raise(ratings_file):
    with pytest.raises(InvalidInput, match="min_raters"):
        promotion_data(ratings_file, min_raters=30, max_raters=20)
    with pytest.raises(InvalidInput, match="num_promotions"):
        promotion_data(ratings_file, num_promotions=500, **BOUNDS)
    with pytest.raises(InvalidInput, match="rank"):
        promotion_data(ratings_file, num_promotions=M, rank=MOVIES, **BOUNDS)


# --------------------------------------------------------------------------- environment


def test_rounds_draw_distinct_users_from_the_instance_and_round_only(env, data):
    s = env.reset(jax.random.PRNGKey(0))
    users = np.asarray(env.users(s, 0))
    assert users.shape == (40,) and np.unique(users).size == 40
    assert users.min() >= 0 and users.max() < USERS
    np.testing.assert_array_equal(env.users(env.reset(jax.random.PRNGKey(0)), 0), users)  # same key, same users
    assert not np.array_equal(env.users(s, 1), users)  # a new round, new users
    assert not np.array_equal(env.users(env.reset(jax.random.PRNGKey(1)), 0), users)  # a new instance too
    np.testing.assert_array_equal(env.arms(s, 0), data.features[users])
    assert env.arms(s, 0).shape == (env.K, env.d) == (40, RANK + 1)
    assert env.blocks == M and env.action_shape == (M * K,) and env.fixed_arms is False


def test_feedback_is_the_rating_lookup_and_the_oracle_bounds_it(env, data):
    s = env.reset(jax.random.PRNGKey(2))
    for t in range(3):
        users = np.asarray(env.users(s, t))
        for seed in range(5):
            action = random_action(env, seed + 10 * t)
            env.check_action(action)
            feedback, outcome = env.pull(s, action, jax.random.PRNGKey(seed), t)
            a = np.asarray(action)
            np.testing.assert_array_equal(feedback, data.rewards[users[a % env.K], a // env.K])
            np.testing.assert_allclose(outcome.expected_reward, np.sum(feedback))
            assert outcome.best_expected_reward >= outcome.expected_reward
        best = env.oracle(env.round_rewards(s, t), jax.random.PRNGKey(0))
        env.check_action(best)
        feedback, outcome = env.pull(s, best, jax.random.PRNGKey(5), t)
        np.testing.assert_allclose(outcome.best_expected_reward, outcome.expected_reward)
        assert float(outcome.regret) == 0.0


def test_exclusive_best_is_at_most_the_per_promotion_top_k(data):
    both = [
        PromotionEnv(features=data.features, rewards=data.rewards, num_users_per_round=40, k=K, oracle=o)
        for o in (ExclusiveAssignment(k=K), TopK(k=K))
    ]
    s = both[0].reset(jax.random.PRNGKey(4))
    action = random_action(both[0], 0)
    for t in range(4):
        excl, free = (float(e.pull(s, action, jax.random.PRNGKey(0), t)[1].best_expected_reward) for e in both)
        assert excl <= free + 1e-9


def test_pull_jits_and_vmaps_over_instances(env):
    action = random_action(env, 1)
    keys = jax.random.split(jax.random.PRNGKey(3), 3)

    def one(key, t):
        s = env.reset(key)
        feedback, outcome = env.pull(s, action, key, t)
        return env.arms(s, t), feedback, outcome

    arms, feedback, outcome = jax.jit(jax.vmap(one, in_axes=(0, None)))(keys, 4)
    assert arms.shape == (3, env.K, env.d) and feedback.shape == (3, M * K)
    for r, key in enumerate(keys):
        a, f, o = one(key, 4)
        np.testing.assert_array_equal(arms[r], a)
        np.testing.assert_array_equal(feedback[r], f)
        np.testing.assert_allclose(outcome.best_expected_reward[r], o.best_expected_reward)
    assert np.all(outcome.best_expected_reward >= outcome.expected_reward)


def test_from_movielens_caps_the_round_at_the_pool(ratings_file):
    kwargs = {"num_promotions": M, "rank": RANK, **BOUNDS}
    small = PromotionEnv.from_movielens(ratings_file, k=2, users_per_k=10, **kwargs)
    assert small.K == 20 and isinstance(small.oracle, ExclusiveAssignment) and small.exclusive
    capped = PromotionEnv.from_movielens(ratings_file, k=5, exclusive=False, tie_break="random", **kwargs)
    assert capped.K == USERS and isinstance(capped.oracle, TopK) and capped.oracle.tie_break == "random"
    assert capped.horizon == 20 and capped.d == RANK + 1 and capped.blocks == M
    assert {capped: 1}[capped] == 1 and capped != small  # hashed by identity: a runner's cache key
    with pytest.raises(InvalidInput, match="ExclusiveAssignment"):
        PromotionEnv.from_movielens(ratings_file, k=80, **kwargs)  # M k = 320 > 300 users


def test_bad_settings_raise(data):
    base = {"features": data.features, "rewards": data.rewards, "num_users_per_round": 40, "k": K}
    with pytest.raises(InvalidInput, match="num_users_per_round"):
        PromotionEnv(**{**base, "num_users_per_round": USERS + 1}, oracle=TopK(k=K))
    with pytest.raises(InvalidInput, match="ExclusiveAssignment"):
        PromotionEnv(**{**base, "num_users_per_round": M * K - 1}, oracle=ExclusiveAssignment(k=K))
    with pytest.raises(InvalidInput, match="'oracle'"):
        PromotionEnv(**base, oracle=TopK(k=K + 1))
    with pytest.raises(InvalidInput, match="'oracle'"):
        PromotionEnv(**base, oracle="top-k")
    bad = data.features.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidInput, match="'features'.*finite"):
        PromotionEnv(**{**base, "features": bad}, oracle=TopK(k=K))
    with pytest.raises(InvalidInput, match="'rewards'.*one row per user"):
        PromotionEnv(**{**base, "rewards": data.rewards[:-1]}, oracle=TopK(k=K))
    with pytest.raises(InvalidInput, match="'k'"):
        PromotionEnv(**{**base, "k": 0}, oracle=TopK(k=K))


def test_check_action_rejects_infeasible_super_arms(env):
    good = np.asarray(random_action(env, 0))
    assert env.check_action(good).dtype == np.int64
    cases = {
        "integer lifted indices": good[:-1],  # wrong length
        "lie in": np.where(np.arange(good.size) == 0, env.blocks * env.K, good),  # out of range
        "repeat": np.concatenate([good[:1], good[:-1]]),
        "exactly k": np.concatenate([good[: K - 1], good[K - 1 :] % env.K]),  # promotion 0 gets too many users
    }
    for message, action in cases.items():
        with pytest.raises(InvalidInput, match=message):
            env.check_action(action)
    with pytest.raises(InvalidInput, match="integer"):
        env.check_action(good.astype(float))
    twice = good.copy()
    twice[K] = env.K + good[0] % env.K  # promotion 1's first user is promotion 0's first user
    if env.exclusive:
        with pytest.raises(InvalidInput, match="two promotions"):
            env.check_action(twice)
    else:
        env.check_action(twice)


# --------------------------------------------------------------------------- MovieLens 100K


def test_movielens_100k_sizes():
    if not (ML100K / "u.data").is_file():
        pytest.skip("MovieLens 100K not found: set BAYESBANDIT_DATA to a folder holding ml-100k/u.data")
    data = promotion_data(ML100K)
    print(data.describe())
    assert data.features.shape == (943, 51) and data.rewards.shape == (943, 10)
    assert data.raters == (10, 19) and data.eligible == 213
    counts = (data.rewards > 0).sum(axis=0)
    assert np.all((counts >= 10) & (counts <= 19))
    assert np.linalg.norm(data.features, axis=1).max() <= 1.0 + 1e-12
    env = PromotionEnv.from_data(data, k=5)  # N = 500 <= 943: the paper's proportions
    s = env.reset(jax.random.PRNGKey(0))
    best = env.oracle(env.round_rewards(s, 0), jax.random.PRNGKey(0))
    feedback, outcome = env.pull(s, best, jax.random.PRNGKey(0), 0)
    assert feedback.shape == (50,) and float(outcome.regret) == 0.0 and float(outcome.expected_reward) > 0
    assert PromotionEnv.from_data(data, k=50).K == 943  # capped
