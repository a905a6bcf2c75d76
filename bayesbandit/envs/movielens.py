"""The movie-recommendation catalogue of Yang et al. (sec. 7): one run per held-out user.

Run ``r`` recommends to test user ``r mod U`` (:class:`~bayesbandit.datasets.MovieLensData`).
Movies are arms (their 16-dimensional factors); the reward of a movie is ``1{rating >= 4}``
(0 when unrated) and the regret ``1 - reward``, as in the paper (1 for a rating below 4 or a
missing one). The catalogue starts with ``initial_fraction`` of the movies in a seeded random
order and receives ``add_count`` more every ``add_every`` rounds until all are in (the paper:
1,952 of MovieLens 1M's 3,952 movies, then 2 every 20 rounds for 20,000 rounds; MovieLens 100K's
1,443 factorised movies run out after about 7,200 rounds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesbandit.datasets import MovieLensData
from bayesbandit.envs.catalogue import CatalogueRounds, CatalogueRun, Changes
from bayesbandit.validation import check_int, check_scalar

__all__ = ["MovieLensCatalogue"]


@dataclass(frozen=True, eq=False, kw_only=True)
class MovieLensCatalogue(CatalogueRounds):
    """Recommend movies to held-out users (see the module docstring)."""

    data: MovieLensData
    horizon: int = 20_000
    add_every: int = 20
    add_count: int = 2
    initial_fraction: float = 0.5

    def __post_init__(self) -> None:
        name = type(self).__name__
        check_int(name, "horizon", self.horizon, low=1)
        check_int(name, "add_every", self.add_every, low=1)
        check_int(name, "add_count", self.add_count, low=0)
        check_scalar(name, "initial_fraction", self.initial_fraction, low=0.0, high=1.0, low_open=True)

    def __repr__(self) -> str:
        return (
            f"MovieLensCatalogue(users={self.data.test_users.size}, movies={self.data.item_ids.size}, "
            f"horizon={self.horizon}, add_every={self.add_every}, add_count={self.add_count}, "
            f"initial_fraction={self.initial_fraction})"
        )

    def reset(self, seed: int, run: int) -> CatalogueRun:
        """Run ``run``: test user ``run mod U``, movies in the order of seed ``seed``."""
        user = run % self.data.test_users.size
        liked = np.nan_to_num(self.data.test_ratings[user], nan=0.0) >= 4.0
        n = self.data.item_ids.size
        order = np.random.default_rng([seed, 7]).permutation(n).astype(np.int64)
        start = max(1, int(round(self.initial_fraction * n)))
        schedule = {}
        rest = order[start:]
        for k, t in enumerate(range(self.add_every, self.horizon, self.add_every)):
            batch = rest[k * self.add_count : (k + 1) * self.add_count]
            if batch.size == 0:
                break
            schedule[t] = Changes(batch, self.data.features[batch], np.zeros(0, np.int64))
        return CatalogueRun(
            self.data.features, liked.astype(np.float64), order[:start], schedule, None, best_reward=1.0
        )
