"""Combinatorial linear semi-bandits (Takemura and Ito 2021, "An Arm-Wise Randomization Approach").

Each round a policy scores ``N`` arms in ``M`` blocks and an exact oracle
(:mod:`bayesbandit.oracles`) picks the super arm; every chosen arm's reward is observed.

=================  ===============================================  =================================
policy             scores                                           randomness
=================  ===============================================  =================================
``C2UCB``          ``theta^T x + alpha ||x||_{V^-1}``               none (ties go to the oracle)
``PC2UCB``         ``theta^T x + (1 + U[0, c]) alpha ||x||``        fresh per arm (proposed)
``RoundTS``        ``theta~^T x``, one ``theta~`` per block         shared by all arms
``ArmTS``          ``theta^T x + v ||x|| xi``, ``xi ~ N(0, 1)``     fresh per arm (proposed)
``CombGreedy``     ``theta^T x`` (random in round one)              round one only
``CombLinUCB``     Wen et al.'s UCB (= C2UCB reparameterised)       none
``CombLinTS``      Wen et al.'s TS (= RoundTS reparameterised)      shared by all arms
=================  ===============================================  =================================
"""

from bayesbandit.policies.comb._base import CombInfo, CombState, CombUpdateInfo
from bayesbandit.policies.comb._kalman import KalmanState
from bayesbandit.policies.comb.arm_ts import ArmTS, ArmTSInfo
from bayesbandit.policies.comb.c2ucb import C2UCB, C2UCBInfo
from bayesbandit.policies.comb.comb_lin_ts import CombLinTS, CombLinTSInfo
from bayesbandit.policies.comb.comb_lin_ucb import CombLinUCB, CombLinUCBInfo
from bayesbandit.policies.comb.greedy import CombGreedy, CombGreedyInfo
from bayesbandit.policies.comb.pc2ucb import PC2UCB, PC2UCBInfo
from bayesbandit.policies.comb.round_ts import RoundTS, RoundTSInfo

__all__ = [
    "C2UCB",
    "PC2UCB",
    "RoundTS",
    "ArmTS",
    "CombGreedy",
    "CombLinUCB",
    "CombLinTS",
    "CombState",
    "KalmanState",
    "C2UCBInfo",
    "PC2UCBInfo",
    "RoundTSInfo",
    "ArmTSInfo",
    "CombGreedyInfo",
    "CombLinUCBInfo",
    "CombLinTSInfo",
    "CombInfo",
    "CombUpdateInfo",
]
