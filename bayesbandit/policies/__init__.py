"""Bandit policies on the contract of ``docs/contract.md``: one family a folder, one algorithm a file.

=====================  ===========================================================
family                 policies
=====================  ===========================================================
``glm/``               GLMTSL, GLMFPL, GLMUCB, UCBGLM, EpsilonGreedy (+ ``theory``)
``linear/``            LinTS, LinUCB
``sublinear/``         SubTS, SubElim: host-side, over a MIPS index of a changing catalogue
``comb/``              C2UCB, PC2UCB, RoundTS, ArmTS, CombGreedy, CombLinUCB, CombLinTS: super arms
``neural/``            DeepFPL, DeepFL, RepGLMFPL, LastLayerLaplaceTS: neural reward programs
=====================  ===========================================================
"""

from bayesbandit.policies.comb import C2UCB, PC2UCB, ArmTS, CombGreedy, CombLinTS, CombLinUCB, RoundTS
from bayesbandit.policies.glm import (
    GLMFPL,
    GLMTSL,
    GLMUCB,
    UCBGLM,
    EpsilonGreedy,
    EpsilonGreedyInfo,
    GLMFPLInfo,
    GLMPolicy,
    GLMState,
    GLMTSLInfo,
    GLMUCBInfo,
    UCBGLMInfo,
    theory,
)
from bayesbandit.policies.linear import LinTS, LinTSInfo, LinUCB, LinUCBInfo, RidgeState, RidgeUpdateInfo
from bayesbandit.policies.neural import DeepFL, DeepFPL, LastLayerLaplaceTS, RepGLMFPL
from bayesbandit.policies.sublinear import Catalogue, SubElim, SubElimInfo, SubTS, SubTSInfo

__all__ = [
    "GLMPolicy",
    "GLMState",
    "GLMTSL",
    "GLMTSLInfo",
    "GLMFPL",
    "GLMFPLInfo",
    "GLMUCB",
    "GLMUCBInfo",
    "UCBGLM",
    "UCBGLMInfo",
    "EpsilonGreedy",
    "EpsilonGreedyInfo",
    "RidgeState",
    "RidgeUpdateInfo",
    "LinTS",
    "LinTSInfo",
    "LinUCB",
    "LinUCBInfo",
    "theory",
    "Catalogue",
    "SubTS",
    "SubTSInfo",
    "SubElim",
    "SubElimInfo",
    "C2UCB",
    "PC2UCB",
    "RoundTS",
    "ArmTS",
    "CombGreedy",
    "CombLinUCB",
    "CombLinTS",
    "DeepFPL",
    "DeepFL",
    "RepGLMFPL",
    "LastLayerLaplaceTS",
]
