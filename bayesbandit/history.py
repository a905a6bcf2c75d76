"""The two storage forms of a bandit history, proven equal by the tests.

* :class:`ArmHistory`: per-arm sufficient statistics (pull counts and reward sums) for a fixed
  finite arm set. For likelihoods affine in ``y`` (see :mod:`bayesbandit.inference.bind`) the
  rows ``(x_i, mean reward_i, weight n_i)`` give exactly the gradient and Hessian of the full
  history, so a Newton step costs ``O(K d^2)`` however long the history is.
* :class:`RowHistory`: a fixed-capacity buffer of ``(x, y, w)`` rows for contextual features or
  non-affine likelihoods; weight 0 marks an empty row. It grows (outside jit) by doubling.

Both expose ``rows() -> (x, y, w)`` for the potential and ``gram()`` for the unweighted design
matrix ``G = sum_l x_l x_l^T``.

* :class:`OnlineHistory`: no rows at all, for the online (recursive) Laplace posterior of the GLM
  policies (``history="online"``): only the design matrix and the count, ``O(d^2)`` whatever
  the horizon.
* :class:`RecentRows`: a ring buffer of the ``B`` most recent rows, the mini-batch a neural
  policy takes one optimiser step on each round (Kveton et al. 2020, Section 5.2).

Forgetting (:mod:`bayesbandit.drift`): ``discount(gamma)`` multiplies the weight of every
observation so far by ``gamma`` (per-arm counts and sums, or row weights: the means stay, the
likelihood term of row ``s`` becomes ``gamma^{t-s} log p(y_s | x_s, theta)``), and ``remove``
takes one earlier observation out exactly.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from bayesbandit._gaussian_linear import add_outer
from bayesbandit._typing import Array

__all__ = ["ArmHistory", "RowHistory", "OnlineHistory", "RecentRows"]


class ArmHistory(NamedTuple):
    """Per-arm sufficient statistics for a fixed arm set."""

    arms: Array  # (K, d) arm features
    counts: Array  # (K,)  pulls per arm (float64, used as weights)
    sums: Array  # (K,)  reward sums per arm

    @classmethod
    def create(cls, arms: Array) -> ArmHistory:
        zeros = jnp.zeros(arms.shape[:1], dtype=arms.dtype)
        return cls(arms, zeros, zeros)

    def add(self, arm: Array, reward: Array) -> ArmHistory:
        return self._replace(counts=self.counts.at[arm].add(1.0), sums=self.sums.at[arm].add(reward))

    def remove(self, arm: Array, reward: Array) -> ArmHistory:
        """The statistics without one earlier pull of ``arm`` with ``reward`` (the inverse of :meth:`add`)."""
        return self._replace(counts=self.counts.at[arm].add(-1.0), sums=self.sums.at[arm].add(-reward))

    def discount(self, gamma: Array) -> ArmHistory:
        """Every pull's weight times ``gamma``: counts and sums scaled, the means unchanged."""
        return self._replace(counts=gamma * self.counts, sums=gamma * self.sums)

    def rows(self) -> tuple[Array, Array, Array]:
        means = self.sums / jnp.where(self.counts > 0, self.counts, 1.0)
        return self.arms, means, self.counts

    def gram(self) -> Array:
        return (self.arms * self.counts[:, None]).T @ self.arms

    @property
    def num_obs(self) -> Array:
        return jnp.sum(self.counts)


class RowHistory(NamedTuple):
    """A weighted row buffer of capacity ``C``."""

    x: Array  # (C, d) features
    y: Array  # (C,)  rewards
    w: Array  # (C,)  weights, 0 = empty
    size: Array  # ()  int32, rows written (may exceed C: see ``overflowed``)

    @classmethod
    def create(cls, capacity: int, d: int, dtype=None) -> RowHistory:
        dtype = dtype or jnp.result_type(float)
        return cls(
            jnp.zeros((capacity, d), dtype),
            jnp.zeros(capacity, dtype),
            jnp.zeros(capacity, dtype),
            jnp.asarray(0, jnp.int32),
        )

    @property
    def capacity(self) -> int:
        return self.y.shape[0]

    def add(self, features: Array, reward: Array) -> RowHistory:
        i = self.size
        return RowHistory(
            self.x.at[i].set(features, mode="drop"),
            self.y.at[i].set(reward, mode="drop"),
            self.w.at[i].set(1.0, mode="drop"),
            self.size + 1,
        )

    def remove(self, features: Array, reward: Array) -> RowHistory:
        """The buffer without one earlier row ``(features, reward)``: the newest such row with positive weight
        (what the last :meth:`add` of it wrote) is emptied (weight, features and reward 0), so its term
        leaves the potential exactly whatever its weight. Equal rows of equal weight are interchangeable,
        so without discounting it does not matter which goes. A row not in the buffer changes nothing.
        The slot is not reused (``size`` counts rows written).
        """
        match = (self.w > 0) & jnp.all(self.x == features, axis=1) & (self.y == reward)
        i = self.capacity - 1 - jnp.argmax(match[::-1])
        keep = ~(match & (jnp.arange(self.capacity) == i))
        return self._replace(
            x=jnp.where(keep[:, None], self.x, 0.0), y=jnp.where(keep, self.y, 0.0), w=jnp.where(keep, self.w, 0.0)
        )

    def discount(self, gamma: Array) -> RowHistory:
        """Every row's weight times ``gamma`` (empty rows stay at 0)."""
        return self._replace(w=gamma * self.w)

    def rows(self) -> tuple[Array, Array, Array]:
        return self.x, self.y, self.w

    def gram(self) -> Array:
        return (self.x * self.w[:, None]).T @ self.x

    def grow(self, capacity: int) -> RowHistory:
        """A copy with a larger capacity (outside jit; padded on the host, so no XLA compile)."""
        pad = capacity - self.capacity

        def padded(a: Array, width: tuple) -> Array:
            return jnp.asarray(np.pad(np.asarray(a), width))

        return RowHistory(
            padded(self.x, ((0, pad), (0, 0))), padded(self.y, ((0, pad),)), padded(self.w, ((0, pad),)), self.size
        )

    @property
    def num_obs(self) -> Array:
        return jnp.sum(self.w)

    @property
    def overflowed(self) -> Array:
        return self.size > self.capacity


class OnlineHistory(NamedTuple):
    """What the online Laplace posterior keeps of the history: the design matrix and the count."""

    design: Array  # (d, d) G = sum_l x_l x_l^T (unweighted)
    size: Array  # ()  int32, observations

    @classmethod
    def create(cls, d: int, dtype=None) -> OnlineHistory:
        return cls(jnp.zeros((d, d), dtype or jnp.result_type(float)), jnp.asarray(0, jnp.int32))

    def add(self, features: Array) -> OnlineHistory:
        return OnlineHistory(add_outer(self.design, features), self.size + 1)

    def discount(self, gamma: Array) -> OnlineHistory:
        """The design with every pull's weight times ``gamma``."""
        return self._replace(design=gamma * self.design)

    def gram(self) -> Array:
        return self.design

    @property
    def num_obs(self) -> Array:
        return self.size


class RecentRows(NamedTuple):
    """The ``B`` most recent ``(x, y)`` rows, oldest overwritten first; weight 0 marks an empty slot."""

    x: Array  # (B, d) features
    y: Array  # (B,)  rewards
    w: Array  # (B,)  1 for a filled slot, 0 for an empty one
    size: Array  # ()  int32, rows ever written

    @classmethod
    def create(cls, batch: int, d: int, dtype=None) -> RecentRows:
        dtype = dtype or jnp.result_type(float)
        return cls(
            jnp.zeros((batch, d), dtype), jnp.zeros(batch, dtype), jnp.zeros(batch, dtype), jnp.asarray(0, jnp.int32)
        )

    def add(self, features: Array, reward: Array) -> RecentRows:
        i = self.size % self.y.shape[0]
        return RecentRows(self.x.at[i].set(features), self.y.at[i].set(reward), self.w.at[i].set(1.0), self.size + 1)

    def rows(self) -> tuple[Array, Array, Array]:
        return self.x, self.y, self.w

    @property
    def num_obs(self) -> Array:
        return jnp.sum(self.w)
