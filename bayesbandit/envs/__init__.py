"""Pure functional bandit environments (contract: ``docs/contract.md``).

An environment is a frozen dataclass of settings with ``reset(key) -> env_state``,
``arms(env_state, t) -> (K, d)`` and ``pull(env_state, action, key, t) -> (reward, Outcome)``,
plus ``fixed_arms`` (whether the arm set is the same every round). Each owns the oracle for
its best action: the Outcome carries the expected reward of the action and of the best one.

=================================  ======================================  ==================
environment                        rewards                                 arms
=================================  ======================================  ==================
:class:`LogisticBandit`            ``Bernoulli(sigmoid(x^T theta*))``      fixed
:class:`LinearBandit`              ``N(x^T theta*, noise^2)``              fixed
:class:`PoissonBandit`             ``Poisson(exp(x^T theta*))``            fixed
:class:`ProgramBandit`             a reward program at a prior draw        fixed
:class:`ContextualLogisticBandit`  ``Bernoulli(sigmoid(x^T theta*))``      redrawn each round
:class:`BernoulliBandit`           ``Bernoulli(mu_i)``, given means        fixed, one-hot
:class:`ClusteredSemiBandit`       ``+-1``, mean ``x^T theta*``, per pick  fixed, k at once
:class:`PromotionEnv`              MovieLens ratings, per pick             N users a round
:class:`ImageClassBandit`          ``Ber(0.75)`` for the target class      K images a round
=================================  ======================================  ==================

Catalogue environments (:mod:`bayesbandit.envs.catalogue`) are host-side: arms with ids that
arrive and leave while running, for the index-backed policies (:class:`SyntheticCatalogue`).
"""

from bayesbandit.envs._common import ContextualInstance, Instance, describe, theta_variance
from bayesbandit.envs.bernoulli import BernoulliBandit, BernoulliInstance
from bayesbandit.envs.catalogue import CatalogueRun, Changes, SyntheticCatalogue
from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.envs.glm import ContextualLogisticBandit, LinearBandit, LogisticBandit, PoissonBandit, glm_instance
from bayesbandit.envs.images import ImageClassBandit, ImageInstance
from bayesbandit.envs.program import ProgramBandit
from bayesbandit.envs.promotion import PromotionEnv

__all__ = [
    "Instance",
    "ContextualInstance",
    "glm_instance",
    "LogisticBandit",
    "LinearBandit",
    "PoissonBandit",
    "ProgramBandit",
    "ContextualLogisticBandit",
    "BernoulliBandit",
    "BernoulliInstance",
    "theta_variance",
    "describe",
    "SyntheticCatalogue",
    "CatalogueRun",
    "Changes",
    "ClusteredSemiBandit",
    "PromotionEnv",
    "ImageClassBandit",
    "ImageInstance",
]
