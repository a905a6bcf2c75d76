"""MovieLens ratings, movie features by matrix factorisation, and the movie-recommendation bandit.

Yang et al. (sec. 7) hold out 300 users with more than 100 ratings each, factorise the other
users' ratings into 16-dimensional movie features, and recommend movies to each test user for
20,000 rounds from a catalogue that starts with part of the movies and grows by 2 every 20
rounds. A round's regret is 1 when the user's rating of the recommended movie is below 4 or
missing; the learner observes ``1{rating >= 4}`` (the paper does not name the learner's reward;
this is the reward whose regret it reports).

Choices where the paper is silent:

* **Features**: regularised alternating least squares on the *observed* training ratings,
  ``r_ui ~ mu + b_u + c_i + p_u^T q_i``, with ``lambda = 5`` on factors and biases, 15 sweeps;
  missing ratings are not zeros, so a truncated SVD of the zero-filled matrix (which treats them
  as zeros) is not used. The bandit's features are the factors ``q_i`` (16 dimensions); movies
  with no training rating are left out.
* **Test users**: a seeded random choice among the users with more than ``min_test_ratings``
  ratings (MovieLens 100K has fewer than 300 such users: all of them are taken, and their number
  is recorded).
* **Arrival order**: a seeded random permutation of the movies; the catalogue starts with the
  movies the schedule does not need and receives ``add_count`` every ``add_every`` rounds.

Formats: ``u.data`` (100K: ``user item rating time``, tab-separated), ``ratings.dat`` (1M, 10M:
``user::item::rating::time``) and ``ratings.csv`` (20M, latest: header ``userId,movieId,...``).
The path is an argument, or ``$BAYESBANDIT_DATA/ml-100k``; MovieLens may not be redistributed, so
nothing is bundled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayesbandit.datasets._paths import data_path
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = ["Ratings", "MovieLensData", "load_ratings", "movie_features", "movielens_bandit_data"]

_FILES = ("u.data", "ratings.dat", "ratings.csv")


@dataclass(frozen=True, eq=False)
class Ratings:
    """Ratings as parallel arrays."""

    user: np.ndarray  # (n,) int64
    item: np.ndarray  # (n,) int64
    rating: np.ndarray  # (n,) float64
    source: str


def _resolve(path: str | os.PathLike[str] | None) -> Path:
    p = data_path(path, "load_ratings", "ml-100k", "the MovieLens folder or ratings file (ml-100k/u.data)")
    if p.is_dir():
        found = [p / f for f in _FILES if (p / f).is_file()]
        if not found:
            raise InvalidInput(f"load_ratings: {str(p)!r} holds none of {_FILES}. Fix: pass a MovieLens folder.")
        p = found[0]
    if not p.is_file():
        raise InvalidInput(f"load_ratings: {str(p)!r} does not exist. Fix: pass the path of a MovieLens ratings file.")
    return p


def load_ratings(path: str | os.PathLike[str] | None = None) -> Ratings:
    """Read ``u.data``, ``ratings.dat`` or ``ratings.csv`` (a file, or a folder holding one)."""
    p = _resolve(path)
    try:
        if p.name.endswith(".csv"):
            table = np.loadtxt(p, delimiter=",", skiprows=1, usecols=(0, 1, 2), ndmin=2)
        elif p.name.endswith(".dat"):
            rows = [line.split("::")[:3] for line in p.read_text(encoding="latin-1").splitlines() if line.strip()]
            table = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
        else:
            table = np.loadtxt(p, usecols=(0, 1, 2), ndmin=2)
    except ValueError as exc:
        raise InvalidInput(
            f"load_ratings: {str(p)!r} is not a MovieLens ratings file ({exc}). Fix: pass u.data, ratings.dat or "
            "ratings.csv."
        ) from exc
    rating = table[:, 2]
    bad = ~np.isfinite(rating) | (rating < 0.5) | (rating > 5.0)
    if bad.any():
        raise InvalidInput(
            f"load_ratings: {str(p)!r} has {int(bad.sum())} ratings outside 0.5..5 (first {rating[bad][:3].tolist()}). "
            "Fix: pass an unmodified MovieLens file."
        )
    return Ratings(table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), rating, str(p))


def movie_features(
    ratings: Ratings, *, rank: int = 16, reg: float = 5.0, sweeps: int = 15, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Regularised ALS with biases on the observed ratings; returns (item ids, factors ``(n, rank)``).

    Each sweep solves, for every user at once, the ridge normal equations of ``p_u`` and ``b_u``
    given the items, then the same for every item (batched ``(rank + 1)``-dimensional solves).
    """
    users, u_idx = np.unique(ratings.user, return_inverse=True)
    items, i_idx = np.unique(ratings.item, return_inverse=True)
    r = ratings.rating - ratings.rating.mean()
    rng = np.random.default_rng(seed)
    p = 0.1 * rng.standard_normal((users.size, rank))
    q = 0.1 * rng.standard_normal((items.size, rank))
    b_u, b_i = np.zeros(users.size), np.zeros(items.size)

    def solve(rows: np.ndarray, n: int, other: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Per group g: argmin sum (target - [o, 1] w)^2 + reg ||w||^2, w = (factor, bias)."""
        x = np.hstack([other, np.ones((other.shape[0], 1))])
        gram = np.zeros((n, rank + 1, rank + 1))
        np.add.at(gram, rows, x[:, :, None] * x[:, None, :])
        rhs = np.zeros((n, rank + 1))
        np.add.at(rhs, rows, x * target[:, None])
        return np.linalg.solve(gram + reg * np.eye(rank + 1), rhs[..., None])[..., 0]

    for _ in range(sweeps):
        w = solve(u_idx, users.size, q[i_idx], r - b_i[i_idx])
        p, b_u = w[:, :rank], w[:, rank]
        w = solve(i_idx, items.size, p[u_idx], r - b_u[u_idx])
        q, b_i = w[:, :rank], w[:, rank]
    return items, q


@dataclass(frozen=True, eq=False)
class MovieLensData:
    """What the movie-recommendation bandit needs."""

    item_ids: np.ndarray  # (n,) movie ids with features
    features: np.ndarray  # (n, 16)
    test_users: np.ndarray  # (U,) user ids
    test_ratings: np.ndarray  # (U, n) the test users' ratings of item_ids, NaN when missing
    source: str


def movielens_bandit_data(
    path: str | os.PathLike[str] | None = None,
    *,
    num_test_users: int = 300,
    min_test_ratings: int = 100,
    rank: int = 16,
    seed: int = 0,
) -> MovieLensData:
    """Split users, fit features on the training users only, and tabulate the test users' ratings."""
    num_test_users = check_int("movielens_bandit_data", "num_test_users", num_test_users, low=1)
    ratings = load_ratings(path)
    users, counts = np.unique(ratings.user, return_counts=True)
    eligible = users[counts > min_test_ratings]
    if eligible.size == 0:
        raise InvalidInput(
            f"movielens_bandit_data: no user has more than {min_test_ratings} ratings in {ratings.source!r}."
        )
    rng = np.random.default_rng(seed)
    test = np.sort(rng.choice(eligible, min(num_test_users, eligible.size), replace=False))
    train = ~np.isin(ratings.user, test)
    fit = Ratings(ratings.user[train], ratings.item[train], ratings.rating[train], ratings.source)
    items, features = movie_features(fit, rank=rank, seed=seed)
    table = np.full((test.size, items.size), np.nan)
    held = np.isin(ratings.user, test) & np.isin(ratings.item, items)
    table[np.searchsorted(test, ratings.user[held]), np.searchsorted(items, ratings.item[held])] = ratings.rating[held]
    return MovieLensData(items, features, test, table, ratings.source)
