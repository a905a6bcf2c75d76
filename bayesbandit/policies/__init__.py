"""Bandit policies: pure ``init`` / ``select`` / ``update`` over a state pytree."""

from bayesbandit.policies import theory
from bayesbandit.policies._base import Policy, PolicyInfo
from bayesbandit.policies._glm import GLMState
from bayesbandit.policies.epsilon_greedy import EpsilonGreedy
from bayesbandit.policies.glm_fpl import GLMFPL
from bayesbandit.policies.glm_tsl import GLMTSL
from bayesbandit.policies.glm_ucb import GLMUCB, UCBGLM
from bayesbandit.policies.linear import LinState, LinTS, LinUCB

__all__ = [
    "Policy",
    "PolicyInfo",
    "GLMState",
    "LinState",
    "GLMTSL",
    "GLMFPL",
    "GLMUCB",
    "UCBGLM",
    "EpsilonGreedy",
    "LinTS",
    "LinUCB",
    "theory",
]
