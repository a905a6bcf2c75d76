"""Policies on neural reward programs (Kveton et al. 2020, Section 5.2), one algorithm a file.

============================================================================================  =====================================================================
policy                                                                                        what it does
============================================================================================  =====================================================================
:class:`DeepFPL`                                                                              one optimiser step a round on the perturbed recent mini-batch
:class:`DeepFL`                                                                               the same with ``a = 0`` (follow the leader)
:class:`RepGLMFPL`                                                                            uniform pulls train the network, then GLM-FPL on its frozen embedding
:class:`LastLayerLaplaceTS` the same schedule, then GLM-TSL (Laplace TS) on the output layer
============================================================================================  =====================================================================
"""

from bayesbandit.policies.neural._base import NeuralPolicy
from bayesbandit.policies.neural._neural_linear import (
    NeuralLinear,
    NeuralLinearInfo,
    NeuralLinearState,
    NeuralLinearUpdateInfo,
    uniform_fraction,
)
from bayesbandit.policies.neural._training import NetworkState, StepInfo
from bayesbandit.policies.neural.deep_fpl import DeepFL, DeepFLInfo, DeepFPL, DeepFPLInfo
from bayesbandit.policies.neural.last_layer_ts import LastLayerLaplaceTS, LastLayerLaplaceTSInfo
from bayesbandit.policies.neural.rep_glm_fpl import RepGLMFPL, RepGLMFPLInfo

__all__ = [
    "NeuralPolicy",
    "NetworkState",
    "StepInfo",
    "DeepFPL",
    "DeepFL",
    "DeepFPLInfo",
    "DeepFLInfo",
    "NeuralLinear",
    "NeuralLinearState",
    "NeuralLinearInfo",
    "NeuralLinearUpdateInfo",
    "RepGLMFPL",
    "RepGLMFPLInfo",
    "LastLayerLaplaceTS",
    "LastLayerLaplaceTSInfo",
    "uniform_fraction",
]
