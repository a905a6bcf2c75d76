"""Data sets loaded from a path (nothing is bundled): MovieLens for the recommendation bandits, MNIST
(or scikit-learn's 8x8 digits) for the deep contextual bandit."""

from bayesbandit.datasets.images import ImageData, load_digits, load_mnist, parse_idx
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
    "ImageData",
    "load_mnist",
    "load_digits",
    "parse_idx",
]
