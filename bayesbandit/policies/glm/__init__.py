"""Generalised-linear policies over a NumPyro reward program (Kveton et al. 2020 and baselines)."""

from bayesbandit.policies.glm import theory
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState, GLMUpdateInfo
from bayesbandit.policies.glm.epsilon_greedy import EpsilonGreedy, EpsilonGreedyInfo
from bayesbandit.policies.glm.glm_fpl import GLMFPL, GLMFPLInfo
from bayesbandit.policies.glm.glm_tsl import GLMTSL, GLMTSLInfo
from bayesbandit.policies.glm.glm_ucb import GLMUCB, GLMUCBInfo
from bayesbandit.policies.glm.ucb_glm import UCBGLM, UCBGLMInfo

__all__ = [
    "GLMPolicy",
    "GLMState",
    "GLMUpdateInfo",
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
    "theory",
]
