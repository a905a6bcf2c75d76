"""MovieLens loader (synthetic files in the three formats), ALS features, the user split, the bandit."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.datasets import load_ratings, movie_features, movielens_bandit_data
from bayesbandit.datasets.movielens import Ratings
from bayesbandit.envs.movielens import MovieLensCatalogue
from bayesbandit.errors import InvalidInput


def low_rank_ratings(rng, users=120, items=80, rank=3, density=0.6):
    """Ratings 1..5 from a rank-3 model, a random ``density`` of the pairs observed."""
    scores = rng.standard_normal((users, rank)) @ rng.standard_normal((rank, items))
    ratings = np.clip(np.round(3 + scores), 1, 5)
    mask = rng.random((users, items)) < density
    u, i = np.nonzero(mask)
    return u + 1, i + 1, ratings[u, i]


def write(folder: Path, fmt: str, u, i, r) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "u.data":
        lines = [f"{a}\t{b}\t{int(c)}\t880000000" for a, b, c in zip(u, i, r, strict=True)]
    elif fmt == "ratings.dat":
        lines = [f"{a}::{b}::{int(c)}::880000000" for a, b, c in zip(u, i, r, strict=True)]
    else:
        lines = ["userId,movieId,rating,timestamp"] + [
            f"{a},{b},{c},880000000" for a, b, c in zip(u, i, r, strict=True)
        ]
    (folder / fmt).write_text("\n".join(lines) + "\n")
    return folder / fmt


def test_the_three_formats_load_identically(tmp_path, rng):
    u, i, r = low_rank_ratings(rng)
    loaded = [load_ratings(write(tmp_path / fmt, fmt, u, i, r)) for fmt in ("u.data", "ratings.dat", "ratings.csv")]
    for other in loaded[1:]:
        np.testing.assert_array_equal(other.user, loaded[0].user)
        np.testing.assert_array_equal(other.rating, loaded[0].rating)
    assert load_ratings(tmp_path / "u.data").user.size == u.size  # a folder works too


def test_als_fits_held_in_ratings_far_better_than_biases(tmp_path, rng):
    u, i, r = low_rank_ratings(rng)
    ratings = Ratings(u, i, r.astype(float), "synthetic")
    items, q = movie_features(ratings, rank=3, reg=1.0, sweeps=20)
    assert q.shape == (items.size, 3)
    # refit users by least squares on the item factors: the factors explain the ratings
    x = np.hstack([q, np.ones((items.size, 1))])
    resid = []
    for user in np.unique(u)[:40]:
        rows = u == user
        cols = np.searchsorted(items, i[rows])
        w, *_ = np.linalg.lstsq(x[cols], r[rows] - r.mean(), rcond=None)
        resid.append(r[rows] - r.mean() - x[cols] @ w)
    mean_only = np.sqrt(np.mean((r - r.mean()) ** 2))
    assert np.sqrt(np.mean(np.concatenate(resid) ** 2)) < 0.6 * mean_only


def test_test_users_do_not_leak_into_the_features(tmp_path, rng):
    u, i, r = low_rank_ratings(rng)
    path = write(tmp_path / "a", "u.data", u, i, r)
    data = movielens_bandit_data(path, num_test_users=5, min_test_ratings=30, rank=4)
    assert data.test_users.size == 5
    changed = r.copy()
    changed[np.isin(u, data.test_users)] = 6 - changed[np.isin(u, data.test_users)]
    other = movielens_bandit_data(
        write(tmp_path / "b", "u.data", u, i, changed), num_test_users=5, min_test_ratings=30, rank=4
    )
    np.testing.assert_array_equal(other.test_users, data.test_users)
    np.testing.assert_allclose(other.features, data.features)
    assert not np.allclose(np.nan_to_num(other.test_ratings), np.nan_to_num(data.test_ratings))


def test_bad_files_raise_with_the_path(tmp_path, rng):
    with pytest.raises(InvalidInput, match="does not exist"):
        load_ratings(tmp_path / "missing.data")
    with pytest.raises(InvalidInput, match="holds none"):
        load_ratings(tmp_path)
    u, i, r = low_rank_ratings(rng, users=5, items=5)
    r[0] = 7
    with pytest.raises(InvalidInput, match="outside 0.5..5"):
        load_ratings(write(tmp_path / "seven", "u.data", u, i, r))
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "u.data").write_text("a b c d\n")
    with pytest.raises(InvalidInput, match="not a MovieLens"):
        load_ratings(tmp_path / "text")


def test_the_movie_bandit_grows_by_two_every_20_rounds_and_policies_learn(tmp_path, rng):
    u, i, r = low_rank_ratings(rng, users=150, items=200)
    data = movielens_bandit_data(write(tmp_path, "u.data", u, i, r), num_test_users=4, min_test_ratings=60, rank=4)
    env = MovieLensCatalogue(data=data, horizon=600)
    run = env.reset(0, 0)
    seen = set(run.initial.ids.tolist())
    for t in range(600):
        change = run.changes(t)
        if change is not None:
            assert t % 20 == 0 and change.add_ids.size == 2
            assert not seen & set(change.add_ids.tolist())
            seen |= set(change.add_ids.tolist())
    ds = bb.sim.simulate_catalogue({"ts": bb.SubTS(index="exact", beta=0.5)}, env, runs=4)
    regret = ds.regret.values[0]
    assert regret[:, -150:].mean() < regret[:, :150].mean()


@pytest.mark.skipif(
    not (Path(os.environ.get("BAYESBANDIT_DATA", "/nonexistent")) / "ml-100k" / "u.data").is_file(),
    reason="MovieLens 100K not found: set BAYESBANDIT_DATA to a folder holding ml-100k/u.data",
)
def test_movielens_100k():
    data = movielens_bandit_data()
    assert data.features.shape[1] == 16 and data.test_users.size == 300
