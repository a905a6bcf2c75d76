"""Catalogue environments: linear bandits over arms with ids that arrive and leave while running.

A catalogue environment (the :class:`bayesbandit.contract.CatalogueEnv` contract) is a frozen dataclass of
settings whose ``reset(seed, run)`` draws one problem (:class:`CatalogueRun`, a host object): the
initial catalogue, every arrival and departure, the reward noise of every round. ``reset`` with
the same ``(seed, run)`` gives the same problem, so every policy of a comparison plays the same
arms, changes and noise (common random numbers). Its round functions (:class:`CatalogueRounds`)
read the problem: ``initial``, ``changes`` and ``pull``, which
:func:`bayesbandit.sim.play_round` calls.

:class:`CatalogueRun` keeps the best live arm up to date as the catalogue changes: a running
maximum for arrivals, a max-heap with lazy deletion for departures, ``O(log K)`` per change and no
scan over the arms.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from bayesbandit.contract import Outcome
from bayesbandit.index import Catalogue, FeatureStore
from bayesbandit.validation import check_int, check_scalar

__all__ = ["Changes", "CatalogueRun", "CatalogueRounds", "SyntheticCatalogue", "arrival_steps"]


class Changes(NamedTuple):
    """The catalogue's change at the start of a round."""

    add_ids: np.ndarray  # (n,) int64
    add_features: np.ndarray  # (n, d)
    remove_ids: np.ndarray  # (m,) int64


def arrival_steps(horizon: int, add_every: int) -> np.ndarray:
    """Rounds at whose start a batch arrives: ``k add_every`` for ``k = 1, 2, ...`` below ``horizon`` (round 0 is the first)."""
    return np.arange(add_every, horizon, add_every, dtype=np.int64)


class CatalogueRun:
    """One drawn problem: the live catalogue, its scheduled changes, and the best live arm.

    Parameters
    ----------
    features : (N, d) array
        Every arm that will ever exist, id ``i`` in row ``i``.
    means : (N,) array
        Their expected rewards.
    initial : (K0,) int array
        Ids live at round 0.
    schedule : dict
        Round -> :class:`Changes` applied at the start of that round.
    noise : (T,) array, optional
        Round ``t``'s reward noise (``None``: rewards are the means).
    best_reward : float, optional
        A fixed benchmark for the regret (``best_reward - mean``) instead of the best live arm's
        mean (MovieLens: 1, a liked movie).
    """

    def __init__(
        self,
        features: np.ndarray,
        means: np.ndarray,
        initial: np.ndarray,
        schedule: dict[int, Changes],
        noise: np.ndarray | None,
        *,
        best_reward: float | None = None,
    ) -> None:
        self.features = features
        self.best_reward = best_reward
        self.means = means
        self.schedule = schedule
        self.noise = noise
        self.live = np.zeros(len(means), dtype=bool)
        self._heap: list[tuple[float, int]] = []
        self._add(initial)
        self.initial = Catalogue(initial.astype(np.int64), features[initial])

    def _add(self, ids: np.ndarray) -> None:
        self.live[ids] = True
        for item in ids.tolist():
            heapq.heappush(self._heap, (-float(self.means[item]), item))

    def changes(self, t: int) -> Changes | None:
        """The change at the start of round ``t`` (applied to the live set), or ``None``."""
        change = self.schedule.get(t)
        if change is not None:
            self.live[change.remove_ids] = False
            self._add(change.add_ids)
        return change

    @property
    def best_mean(self) -> float:
        """Expected reward of the best live arm (lazy deletion of departed heap tops)."""
        while not self.live[self._heap[0][1]]:
            heapq.heappop(self._heap)
        return -self._heap[0][0]

    @property
    def num_live(self) -> int:
        return int(self.live.sum())

    def reward(self, item: int, t: int) -> float:
        """The observed reward of ``item`` at round ``t``: its mean plus the round's noise."""
        return float(self.means[item] + (0.0 if self.noise is None else self.noise[t]))

    def outcome(self, item: int) -> Outcome:
        """The expected reward of playing ``item`` now, and of the best live arm (or ``best_reward``)."""
        best: Any = self.best_mean if self.best_reward is None else self.best_reward  # host floats, not arrays
        mean: Any = float(self.means[item])
        return Outcome(mean, best)


class CatalogueRounds:
    """The round functions of a catalogue environment (:class:`bayesbandit.contract.CatalogueEnv`) over its problem."""

    def initial(self, env_state: CatalogueRun) -> Catalogue:
        """The catalogue live at round 0."""
        return env_state.initial

    def changes(self, env_state: CatalogueRun, t: int) -> Changes | None:
        """The arrivals and departures at the start of round ``t`` (applied to the live set), or ``None``."""
        return env_state.changes(t)

    def pull(self, env_state: CatalogueRun, action: int, key: object, t: int) -> tuple[float, Outcome]:
        """The reward of arm id ``action`` in round ``t`` and the round's outcome (``key`` is unused:
        the noise was drawn by ``reset``)."""
        return env_state.reward(action, t), env_state.outcome(action)


@dataclass(frozen=True, kw_only=True)
class SyntheticCatalogue(CatalogueRounds):
    """Yang et al.'s synthetic catalogue (sec. 7, App. C), arms and theta* on the unit sphere.

    ``theta*`` and every arm are ``N(0, I_d)`` draws normalised to unit length (Assumption 4.3,
    ``||x||, ||theta*|| <= 1``; the paper draws "from the unit spherical Gaussian" and does not
    say whether it normalises; ``normalise=False`` keeps the raw draws); rewards are ``x^T theta* + N(0, noise_sd^2)``. At the start of
    rounds ``add_every, 2 add_every, ...`` ``add_count`` new arms arrive and ``remove_count``
    live arms, chosen uniformly, leave (Table 4: 2 and 2 every 20 rounds). With
    ``initial_arms = K - 2 (T / 20 - 1)`` and no removals the catalogue ends with ``K`` arms, as
    in Table 1.

    Examples
    --------
    >>> env = SyntheticCatalogue(initial_arms=100, d=4, horizon=50, add_every=20, add_count=2)
    >>> run = env.reset(seed=0, run=0)
    >>> run.initial.ids.size, run.changes(20).add_ids.tolist()
    (100, [100, 101])
    """

    initial_arms: int
    d: int = 16
    horizon: int = 20_000
    add_every: int = 20
    add_count: int = 2
    remove_count: int = 0
    noise_sd: float = 1.0
    normalise: bool = True

    def __post_init__(self) -> None:
        name = type(self).__name__
        check_int(name, "initial_arms", self.initial_arms, low=1)
        check_int(name, "d", self.d, low=1)
        check_int(name, "horizon", self.horizon, low=1)
        check_int(name, "add_every", self.add_every, low=1)
        check_int(name, "add_count", self.add_count, low=0)
        check_int(name, "remove_count", self.remove_count, low=0, high=self.initial_arms - 1)
        check_scalar(name, "noise_sd", self.noise_sd, low=0.0)

    @property
    def final_arms(self) -> int:
        """Arms live after the last round."""
        batches = arrival_steps(self.horizon, self.add_every).size
        return self.initial_arms + batches * (self.add_count - self.remove_count)

    def reset(self, seed: int, run: int) -> CatalogueRun:
        """The problem of run ``run`` of seed ``seed`` (the same pair gives the same problem)."""
        rng = np.random.default_rng([seed, run])
        steps = arrival_steps(self.horizon, self.add_every)
        total = self.initial_arms + steps.size * self.add_count
        features = rng.standard_normal((total, self.d))
        theta = rng.standard_normal(self.d)
        if self.normalise:
            features, theta = _unit_rows(features), theta / np.linalg.norm(theta)
        means = features @ theta
        noise = self.noise_sd * rng.standard_normal(self.horizon)
        schedule: dict[int, Changes] = {}
        live = FeatureStore(1, capacity=total)
        initial = np.arange(self.initial_arms, dtype=np.int64)
        live.add_unchecked(initial, np.zeros((initial.size, 1)))
        next_id = self.initial_arms
        for t in steps.tolist():
            gone = live.ids[rng.choice(len(live), self.remove_count, replace=False)].copy()
            live.remove_unchecked(gone)
            new = np.arange(next_id, next_id + self.add_count, dtype=np.int64)
            live.add_unchecked(new, np.zeros((new.size, 1)))
            next_id += self.add_count
            schedule[t] = Changes(new, features[new], gone)
        return CatalogueRun(features, means, initial, schedule, noise)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)
