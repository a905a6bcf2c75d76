"""Takemura and Ito's clustered semi-bandit (sec. VII-A1): ``N`` arms in ``d - 1`` clusters of identical arms.

Cluster ``j = 1 .. d - 1`` has the feature ``x = cos(phi) e_0 + sin(phi) e_j`` (unit norm, two
non-zeros; two clusters' inner product is ``cos^2 phi``: ``phi = pi / 2`` makes them orthogonal,
small ``phi`` nearly parallel), and every arm of a cluster has exactly that vector. ``theta*`` is a
normalised Gaussian draw; the reward of arm ``i`` is ``+1`` with probability ``(1 + theta*^T x_i) /
2`` and ``-1`` otherwise (mean ``theta*^T x_i``, ``R = S = 1``). A super arm is ``k`` arms (top-k,
``|I| = k``); the best is ``k`` arms of the best cluster, found by the oracle on the true means.

Choices where the paper is silent (spec sec. 7):

* **Cluster sizes and layout**: ``N / (d - 1)`` arms each (200 at ``N = 2000, d = 11``), in
  contiguous index blocks (``layout="contiguous"``) as in the paper's sec. IV-A example, or
  interleaved (``layout="interleaved"``: arm ``i`` in cluster ``i mod (d - 1)``). With the
  oracle's lowest-index tie rule the layout decides which tied arms C2UCB picks.
* **theta***: drawn once from ``theta_seed`` and shared by every run (``theta_seed=None``: a new
  draw per run from the run's key), as float32 normals then normalised in the working precision,
  so 32- and 64-bit modes have the same ``theta*`` (to float32 rounding) and the same cluster
  ranking (:meth:`ClusteredSemiBandit.cluster_means`).
* Rewards use one uniform per arm and round from the round's key, so the same arm gets the same
  realisation whichever policy pulls it (common random numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["ClusteredSemiBandit", "ClusteredInstance", "cluster_features"]


class ClusteredInstance(NamedTuple):
    """One instance of the clustered semi-bandit."""

    arms: Array  # (N, d) features
    theta: Array  # (d,) theta*, unit norm
    means: Array  # (N,) theta*^T x_i
    best: Array  # () expected reward of the best super arm


def cluster_features(phi: float, d: int, num_arms: int, *, layout: str = "contiguous") -> np.ndarray:
    """The ``(num_arms, d)`` features: arm ``i`` of cluster ``j`` is ``cos(phi) e_0 + sin(phi) e_{j+1}``."""
    clusters = d - 1
    size = num_arms // clusters
    index = np.arange(num_arms)
    cluster = index // size if layout == "contiguous" else index % clusters
    arms = np.zeros((num_arms, d))
    arms[:, 0] = math.cos(phi)
    arms[index, 1 + cluster] = math.sin(phi)
    return arms


@dataclass(frozen=True, kw_only=True)
class ClusteredSemiBandit:
    """The clustered data of Takemura and Ito (sec. VII-A1; see the module docstring).

    Parameters
    ----------
    phi : float
        The clusters' angle, in ``(0, pi / 2]``.
    oracle : oracle
        Picks the best super arm from the true means (:class:`bayesbandit.oracles.TopK`, with
        the same ``k`` as the policies').
    d : int
        Feature dimension (``d - 1`` clusters); 11 in the paper.
    num_arms : int
        ``N``, a multiple of ``d - 1``; 2000 in the paper.
    layout : {"contiguous", "interleaved"}
    theta_seed : int or None
        Seed of the one ``theta*`` shared by every run; ``None`` draws one per run.

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.oracles import TopK
    >>> env = ClusteredSemiBandit(phi=1.0, oracle=TopK(k=100))
    >>> instance = env.reset(jax.random.PRNGKey(0))
    >>> instance.arms.shape, round(float(instance.best) / 100, 4) == round(float(instance.means.max()), 4)
    ((2000, 11), True)
    """

    phi: float
    oracle: Any
    d: int = 11
    num_arms: int = 2000
    layout: str = "contiguous"
    theta_seed: int | None = 0
    blocks: int = field(default=1, init=False)

    fixed_arms: ClassVar[bool] = True

    def __post_init__(self) -> None:
        name = type(self).__name__
        check_scalar(name, "phi", self.phi, low=0.0, high=math.pi / 2, low_open=True)
        check_int(name, "d", self.d, low=2)
        check_int(name, "num_arms", self.num_arms, low=1)
        check_choice(name, "layout", self.layout, ("contiguous", "interleaved"))
        if self.theta_seed is not None:
            check_int(name, "theta_seed", self.theta_seed, low=0)
        if self.num_arms % (self.d - 1):
            raise InvalidInput(
                f"{name}: 'num_arms' must be a multiple of the {self.d - 1} clusters (d - 1). Got {self.num_arms}. "
                f"Fix: pass num_arms={(self.num_arms // (self.d - 1) + 1) * (self.d - 1)}."
            )
        self.oracle.check(1, self.num_arms)

    @property
    def K(self) -> int:
        """Arms per round, ``N``."""
        return self.num_arms

    def reset(self, key: PRNGKey) -> ClusteredInstance:
        """One instance: the fixed features, ``theta*``, the means and the best super arm's value."""
        arms = jnp.asarray(cluster_features(self.phi, self.d, self.num_arms, layout=self.layout), dtype=float)
        theta_key = key if self.theta_seed is None else jax.random.PRNGKey(self.theta_seed)
        # drawn in float32 whatever the precision mode, so the same seed gives the same theta* in both
        theta = jax.random.normal(theta_key, (self.d,), dtype=jnp.float32).astype(arms.dtype)
        return self._instance(arms, theta)

    def parameter(self, env_state: ClusteredInstance) -> Array:
        """The instance's ``theta*``, shape (d,) (:class:`~bayesbandit.contract.Parametric`)."""
        return env_state.theta

    def with_parameter(self, env_state: ClusteredInstance, parameter: Array) -> ClusteredInstance:
        """The same arms with ``theta*`` the unit vector along ``parameter`` (unit norm keeps every mean
        ``theta*^T x_i`` in ``[-1, 1]``, a valid ``+-1`` reward), the means and the best super arm recomputed."""
        return self._instance(env_state.arms, jnp.asarray(parameter, env_state.theta.dtype))

    def _instance(self, arms: Array, theta: Array) -> ClusteredInstance:
        """The instance of ``arms`` and the unit vector along ``theta``: means and the oracle's best super arm."""
        theta = theta / jnp.linalg.norm(theta)
        means = arms @ theta
        best_action = self.oracle(means[None, :], jax.random.PRNGKey(0))
        return ClusteredInstance(arms, theta, means, jnp.sum(means[best_action]))

    def cluster_means(self, env_state: ClusteredInstance) -> np.ndarray:
        """The mean reward ``theta*^T x`` of each cluster's arms, shape ``(d - 1,)`` (cluster ``j`` is ``e_{j+1}``'s)."""
        return np.asarray(
            cluster_features(self.phi, self.d, self.d - 1, layout="contiguous") @ np.asarray(env_state.theta)
        )

    def arms(self, env_state: ClusteredInstance, t: ArrayLike = 0) -> Array:
        """The fixed features ``(N, d)``."""
        return env_state.arms

    def pull(
        self, env_state: ClusteredInstance, action: Array, key: PRNGKey, t: ArrayLike = 0
    ) -> tuple[Array, Outcome]:
        """``+-1`` rewards of the ``k`` chosen arms, and the round's :class:`~bayesbandit.contract.Outcome`."""
        u = jax.random.uniform(key, env_state.means.shape, dtype=env_state.means.dtype)
        rewards = jnp.where(2.0 * u < 1.0 + env_state.means, 1.0, -1.0)
        return rewards[action], Outcome(jnp.sum(env_state.means[action]), env_state.best)
