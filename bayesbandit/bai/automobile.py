"""The Automobile instance of Azizi et al. (2022, App. E.2): find the most expensive of ``K`` cars.

UCI Automobile (Schlimmer 1987, 205 cars). Features: curb weight, width, engine size, city mpg,
highway mpg (``d = 5``), each min-max scaled to ``[0, 1]``; the mean reward of a car is its price,
min-max scaled to ``[0, 1]``; a pull returns ``N(price, noise_var)`` with variance 0.1. Each
replication draws ``K`` cars.

Choices that differ from the code behind the paper, and why:

* cars are drawn **without** replacement (the code draws with replacement, which creates
  duplicate arms and ties for the best);
* cars with identical features are merged into one arm whose price is their mean price (the data
  has 187 distinct feature vectors among 205 cars; identical arms cannot be told apart by any
  algorithm, and ``bayesbandit.bai._protocol.check_instance`` refuses them);
* rows with a missing price or feature (``?``) are dropped rather than mean-imputed (an imputed
  price is not a car one could identify as the most expensive).

The loader reads a path; by default ``$BAYESBANDIT_DATA/automobile/imports-85.csv`` or
``../shared/data/automobile/imports-85.csv`` when present.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._linalg import lstsq
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai.instances import gaussian_reward
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int, check_scalar

__all__ = ["Automobile", "load_automobile", "default_automobile_path", "FEATURES"]

FEATURES = ("curb-weight", "width", "engine-size", "city-mpg", "highway-mpg")
"""The Automobile columns that are the arms' features (the target is the price)."""
TARGET = "price"


def default_automobile_path() -> Path | None:
    """``$BAYESBANDIT_DATA/automobile/imports-85.csv`` or ``../shared/data/...`` if either exists."""
    candidates = [Path("../shared/data/automobile/imports-85.csv")]
    if "BAYESBANDIT_DATA" in os.environ:
        candidates.insert(0, Path(os.environ["BAYESBANDIT_DATA"]) / "automobile" / "imports-85.csv")
    return next((p for p in candidates if p.is_file()), None)


def _scale(v: np.ndarray) -> np.ndarray:
    lo, hi = v.min(axis=0), v.max(axis=0)
    return (v - lo) / np.where(hi > lo, hi - lo, 1.0)


def load_automobile(path: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct scaled feature vectors (n, 5) and their scaled mean prices (n,), from the UCI file.

    Raises
    ------
    InvalidInput
        No path given and no default file, a missing file, or a file without the needed columns.
    """
    resolved = Path(path) if path is not None else default_automobile_path()
    if resolved is None or not resolved.is_file():
        raise InvalidInput(
            f"The Automobile data file was not found (path={str(path) if path else None!r}). Pass the path "
            "of UCI's imports-85.csv (with its header row), or set BAYESBANDIT_DATA to a folder holding "
            "automobile/imports-85.csv."
        )
    with open(resolved, newline="") as fh:
        rows = list(csv.DictReader(fh))
    missing = [c for c in (*FEATURES, TARGET) if rows and c not in rows[0]]
    if not rows or missing:
        raise InvalidInput(
            f"The Automobile file {resolved} must have a header row with columns {(*FEATURES, TARGET)}. "
            f"Missing: {missing or 'every row'}. Use UCI's imports-85 data with the header added."
        )
    complete = [r for r in rows if all(r[c].strip() not in ("", "?") for c in (*FEATURES, TARGET))]
    x = _scale(np.array([[float(r[c]) for c in FEATURES] for r in complete]))
    price = _scale(np.array([float(r[TARGET]) for r in complete]))
    distinct, inverse = np.unique(x, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    mean_price = np.bincount(inverse, weights=price) / np.bincount(inverse)
    return distinct, mean_price


@dataclass(frozen=True, kw_only=True)
class Automobile:
    """``K`` distinct cars drawn per replication; rewards ``N(price, noise_var)`` (module docstring).

    Parameters
    ----------
    K : int
        Cars per replication (8 or 16 in the paper).
    path : path, optional
        The UCI file (default: see :func:`default_automobile_path`).
    noise_var : float
        Variance of the reward noise (0.1 in the paper).
    """

    K: int = 8
    path: str | None = None
    noise_var: float = 0.1
    features: np.ndarray = field(init=False, repr=False, compare=False)
    prices: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_int("Automobile", "K", self.K, low=2)
        check_scalar("Automobile", "noise_var", self.noise_var, low=0.0, low_open=True, high_open=True)
        features, prices = load_automobile(self.path)
        if self.K > features.shape[0]:
            raise InvalidInput(
                f"Automobile: 'K' must be at most the number of distinct cars ({features.shape[0]}). Got {self.K}. "
                f"Fix: use K <= {features.shape[0]}."
            )
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "prices", prices)

    @property
    def num_arms(self) -> int:
        return self.K

    @property
    def dim(self) -> int:
        return len(FEATURES)

    def reset(self, key: PRNGKey) -> Instance:
        """Draw ``K`` distinct cars; ``theta`` is the least-squares fit of price on all cars (a reference)."""
        x = jnp.asarray(self.features)
        y = jnp.asarray(self.prices)
        pick = jax.random.choice(key, x.shape[0], (self.K,), replace=False)
        theta = lstsq(x, y)
        return Instance(x[pick], theta, y[pick], jnp.max(y[pick]))

    def reward(self, instance: Instance, arm: Array, key: PRNGKey) -> Array:
        """One pull: the car's scaled price plus Gaussian noise of variance ``noise_var``."""
        return gaussian_reward(key, instance, arm, self.noise_var)
