"""Data sets loaded from a path (nothing is bundled): MovieLens for the recommendation bandits."""

from bayesbandit.datasets.movielens import MovieLensData, Ratings, load_ratings, movie_features, movielens_bandit_data
from bayesbandit.datasets.promotion import PromotionData, promotion_data

__all__ = [
    "Ratings",
    "MovieLensData",
    "load_ratings",
    "movie_features",
    "movielens_bandit_data",
    "PromotionData",
    "promotion_data",
]
