"""Pure functional bandit environments (DESIGN section 5).

An environment is a frozen dataclass of settings with ``reset(key) -> env_state``,
``arms(env_state, t) -> (K, d)`` and ``pull(env_state, arm, key, *, t) -> (reward, means)``,
plus ``fixed_arms`` (whether the arm set is the same every round). See
:mod:`bayesbandit.envs._base` for the contract and the common-random-numbers convention.

=============================  =====================================  =================
environment                    rewards                                arms
=============================  =====================================  =================
:class:`LogisticBandit`        ``Bernoulli(sigmoid(x^T theta*))``     fixed
:class:`LinearBandit`          ``N(x^T theta*, noise^2)``             fixed
:class:`PoissonBandit`         ``Poisson(exp(x^T theta*))``           fixed
:class:`ContextualLogisticBandit` ``Bernoulli(sigmoid(x^T theta*))``  redrawn each round
=============================  =====================================  =================
"""

from bayesbandit.envs._base import ContextualInstance, Env, Instance, describe, theta_variance
from bayesbandit.envs.glm import ContextualLogisticBandit, LinearBandit, LogisticBandit, PoissonBandit

__all__ = [
    "Env",
    "Instance",
    "ContextualInstance",
    "LogisticBandit",
    "LinearBandit",
    "PoissonBandit",
    "ContextualLogisticBandit",
    "theta_variance",
    "describe",
]
