"""The promotion problem of Takemura and Ito (sec. VII-A2): test movies, user features, and the reward table.

``M`` promotions, one per *test movie*, are each sent to ``k`` users a round; a user's reward for
promotion ``j`` is their rating of test movie ``j`` (0 when they did not rate it). The paper
draws ``M = 10`` test movies uniformly from the MovieLens 20M movies rated by between 1,400 and
2,800 users, keeps all their ratings as test data, and builds user features by a rank-50 SVD of
everything else (the training data), plus a constant element (``d = 51``).

Choices where the paper is silent (spec sec. 5.2 and 7):

* **Rater bounds scale with the number of users.** The paper's 1,400 and 2,800 raters are
  1.01 % and 2.02 % of MovieLens 20M's 138,493 users. By default a movie is eligible when its
  number of raters lies in ``[ceil(1400 U / 138493), floor(2800 U / 138493)]`` for a data set
  with ``U`` users (integer arithmetic): exactly 1,400 .. 2,800 on 20M, and **10 .. 19** raters on
  MovieLens 100K (``U = 943``; 213 of its 1,682 movies are eligible). The rule keeps what the
  experiment is built on: a random user rated a test movie with probability 1-2 %, so a round of
  ``N = 100 k`` users holds ``k`` to ``2 k`` raters of each movie on average, and an oracle can
  fill nearly every one of a promotion's ``k`` slots with a rater. On 100K that holds for
  ``k <= 9`` (``N = 100 k <= 943``); with larger ``k`` the round is capped at all 943 users and
  holds only the 10-19 raters, so most of a promotion's slots earn 0 whatever the policy does (pass
  ``min_raters`` and ``max_raters``, e.g. ``k`` and ``2 k``, to restore the ratio there).
* **Users**: every user in the file is in the pool, including those who rated only test movies
  (their SVD part is zero, so their feature is the constant element alone).
* **Features** (spec sec. 7 defaults): the zero-filled user x training-movie matrix (missing
  ratings are zeros, not centred) is factorised by :func:`scipy.sparse.linalg.svds` (ARPACK, a
  seeded start vector, ``rank`` largest singular values, sorted descending; each component's
  sign fixed so that its largest-magnitude user loading is positive). The user part is
  ``U Sigma^{1/2}``, divided by ``sqrt(2)`` times its largest row norm, and a constant
  ``bias = 1/sqrt(2)`` is appended: one global rescaling, every ``||x|| <= 1``, attained by the
  user with the largest SVD part, and the bias weighs as much as the largest user part.
* **Test movies** are a seeded uniform draw without replacement, stored in increasing id order
  (block ``j`` of the problem is ``movie_ids[j]``).

Formats: whatever :func:`bayesbandit.datasets.load_ratings` reads (``u.data``, ``ratings.dat``,
``ratings.csv``). Nothing is bundled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import svds

from bayesbandit.datasets.movielens import Ratings, load_ratings
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = ["PromotionData", "promotion_data", "rater_bounds", "training_matrix", "user_features"]

PAPER_USERS = 138_493  # MovieLens 20M
PAPER_RATERS = (1_400, 2_800)
BIAS = 2**-0.5


@dataclass(frozen=True, eq=False)
class PromotionData:
    """The user pool of the promotion problem (see the module docstring)."""

    features: np.ndarray  # (U, rank + 1) float64: [scaled U Sigma^{1/2}, bias]; max row norm 1
    rewards: np.ndarray  # (U, M) float64: user u's rating of test movie j, 0 when missing
    movie_ids: np.ndarray  # (M,) int64 test movie ids, increasing
    user_ids: np.ndarray  # (U,) int64 user ids, increasing (row u of features and rewards)
    raters: tuple[int, int]  # the (min, max) number of raters that made a movie eligible
    eligible: int  # number of eligible movies the test movies were drawn from
    source: str

    @property
    def num_users(self) -> int:
        """``U``, the size of the user pool."""
        return int(self.features.shape[0])

    @property
    def num_promotions(self) -> int:
        """``M``, the number of test movies (promotions)."""
        return int(self.rewards.shape[1])

    @property
    def d(self) -> int:
        """Feature dimension, SVD rank + 1 (the bias)."""
        return int(self.features.shape[1])

    def describe(self) -> str:
        """One line: pool, test movies, rater counts and feature dimension."""
        counts = (self.rewards > 0).sum(axis=0)
        return (
            f"promotion data: {self.num_users} users, {self.num_promotions} test movies {self.movie_ids.tolist()} "
            f"drawn from {self.eligible} with {self.raters[0]}..{self.raters[1]} raters (theirs: {counts.tolist()}), "
            f"d = {self.d} (rank {self.d - 1} SVD + bias), from {self.source}"
        )


def rater_bounds(num_users: int) -> tuple[int, int]:
    """The default eligible rater counts for ``num_users`` users: the paper's 1.01 % .. 2.02 % of them.

    Examples
    --------
    >>> rater_bounds(138_493), rater_bounds(943)
    ((1400, 2800), (10, 19))
    """
    low, high = PAPER_RATERS
    return -(-low * num_users // PAPER_USERS), high * num_users // PAPER_USERS


def training_matrix(ratings: Ratings, test_movies: np.ndarray) -> tuple[np.ndarray, np.ndarray, csr_matrix]:
    """The zero-filled user x movie matrix of every rating not of a test movie.

    Returns ``(user ids, training movie ids, matrix)``: rows are *all* users of ``ratings``, columns
    the movies other than ``test_movies`` (increasing ids), missing ratings 0.
    """
    users, rows = np.unique(ratings.user, return_inverse=True)
    train = ~np.isin(ratings.item, test_movies)
    movies, cols = np.unique(ratings.item[train], return_inverse=True)
    matrix = csr_matrix((ratings.rating[train], (rows[train], cols)), shape=(users.size, movies.size))
    matrix.sum_duplicates()
    return users, movies, matrix


def user_features(matrix: csr_matrix, *, rank: int = 50, seed: int = 0) -> np.ndarray:
    """``[c U Sigma^{1/2}, 1/sqrt(2)]`` from a rank-``rank`` truncated SVD, ``c`` making the max norm 1.

    See the module docstring for the solver, ordering and sign convention.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_matrix
    >>> x = user_features(csr_matrix(np.arange(12.0).reshape(4, 3)), rank=1)
    >>> x.shape, bool(np.isclose(np.linalg.norm(x, axis=1).max(), 1.0)), bool(np.allclose(x[:, -1], 2**-0.5))
    ((4, 2), True, True)
    """
    rank = check_int("user_features", "rank", rank, low=1)
    if rank >= min(matrix.shape):
        raise InvalidInput(
            f"user_features: 'rank' must be below min(users, movies) = {min(matrix.shape)} (ARPACK); got {rank}. "
            f"Fix: pass rank <= {min(matrix.shape) - 1}."
        )
    start = np.random.default_rng(seed).standard_normal(min(matrix.shape))
    u, s, _ = svds(matrix.astype(np.float64), k=rank, v0=start)
    order = np.argsort(-s, kind="stable")
    u, s = u[:, order], s[order]
    pivot = np.abs(u).argmax(axis=0)
    u = u * np.sign(u[pivot, np.arange(rank)] + (u[pivot, np.arange(rank)] == 0))
    part = u * np.sqrt(np.maximum(s, 0.0))
    largest = float(np.linalg.norm(part, axis=1).max())
    if not largest > 0:
        raise InvalidInput("user_features: the training matrix is zero. Fix: pass ratings with training data.")
    return np.hstack([part * (BIAS / largest), np.full((part.shape[0], 1), BIAS)])


def promotion_data(
    path: str | os.PathLike[str] | None = None,
    *,
    num_promotions: int = 10,
    rank: int = 50,
    min_raters: int | None = None,
    max_raters: int | None = None,
    seed: int = 0,
) -> PromotionData:
    """Test movies, user features and the reward table of the promotion problem (module docstring).

    Parameters
    ----------
    path : path, optional
        A MovieLens folder or ratings file (``u.data``, ``ratings.dat``, ``ratings.csv``); default
        ``$BAYESBANDIT_DATA/ml-100k``.
    num_promotions : int
        ``M``, the number of test movies (10 in the paper).
    rank : int
        SVD rank; the features have ``rank + 1`` dimensions (50 + 1 in the paper).
    min_raters, max_raters : int, optional
        A movie is eligible when its number of raters lies in ``[min_raters, max_raters]``; default
        :func:`rater_bounds` of the number of users (1,400 .. 2,800 on 20M, 10 .. 19 on 100K).
    seed : int
        Seeds the draw of the test movies and the SVD's start vector.

    Returns
    -------
    PromotionData
    """
    owner = "promotion_data"
    num_promotions = check_int(owner, "num_promotions", num_promotions, low=1)
    rank = check_int(owner, "rank", rank, low=1)
    seed = check_int(owner, "seed", seed, low=0)
    ratings = load_ratings(path)
    num_users = np.unique(ratings.user).size
    default_low, default_high = rater_bounds(num_users)
    low = default_low if min_raters is None else check_int(owner, "min_raters", min_raters, low=1)
    high = default_high if max_raters is None else check_int(owner, "max_raters", max_raters, low=1)
    if low > high:
        raise InvalidInput(
            f"{owner}: 'min_raters' ({low}) must not exceed 'max_raters' ({high}). Fix: pass min_raters <= max_raters "
            f"(the defaults for {num_users} users are {default_low} and {default_high})."
        )
    movies, counts = np.unique(ratings.item, return_counts=True)  # one rating per (user, movie) in MovieLens
    eligible = movies[(counts >= low) & (counts <= high)]
    if eligible.size < num_promotions:
        raise InvalidInput(
            f"{owner}: {num_promotions} test movies are needed, but only {eligible.size} movies of {ratings.source!r} "
            f"have {low}..{high} raters ({num_users} users). Fix: widen min_raters / max_raters or pass fewer "
            "num_promotions."
        )
    test = np.sort(np.random.default_rng(seed).choice(eligible, num_promotions, replace=False))
    users, _, matrix = training_matrix(ratings, test)
    if rank >= min(matrix.shape):
        raise InvalidInput(
            f"{owner}: 'rank' must be below min(users, training movies) = {min(matrix.shape)}; got {rank}. "
            f"Fix: pass rank <= {min(matrix.shape) - 1}."
        )
    features = user_features(matrix, rank=rank, seed=seed)
    rewards = np.zeros((users.size, test.size))
    held = np.isin(ratings.item, test)
    rows, cols = np.searchsorted(users, ratings.user[held]), np.searchsorted(test, ratings.item[held])
    rewards[rows, cols] = ratings.rating[held]
    return PromotionData(features, rewards, test, users, (low, high), int(eligible.size), ratings.source)
