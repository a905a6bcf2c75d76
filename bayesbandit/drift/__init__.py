"""Rewards that change over time: forgetting wrappers over any policy, change-point restarts, drifting environments.

==============================  ===================================================================
name                            what it is
==============================  ===================================================================
:class:`Discounted`             discount every earlier observation by ``gamma`` each round
:class:`SlidingWindow`          forget each observation ``window`` rounds after it was made
:class:`ChangePoint`            restart any JAX policy when a change-point test fires
:class:`GLR`                    Bernoulli / sub-Gaussian GLR test (Besson et al. 2020)
:class:`CUSUM`                  two-sided CUSUM test (Liu et al. 2018)
:class:`KnownChanges`           restarts at given rounds (the oracle restart)
:class:`PiecewiseStationary`    an environment that switches instance at change points
:class:`Drifting`               an environment whose parameter drifts (random walk, periodic)
==============================  ===================================================================
"""

from bayesbandit.drift.change_point import CUSUM, GLR, ChangePoint, KnownChanges
from bayesbandit.drift.discounted import Discounted
from bayesbandit.drift.envs import Drifting, PiecewiseStationary
from bayesbandit.drift.sliding_window import SlidingWindow

__all__: list[str] = []
__all__ += ["Discounted", "SlidingWindow"]
__all__ += ["ChangePoint", "GLR", "CUSUM", "KnownChanges", "PiecewiseStationary", "Drifting"]
