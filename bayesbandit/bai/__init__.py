"""Fixed-budget best-arm identification: GSE, its baselines, the paper's instances, paired evaluation.

Given ``B`` pulls, find the arm of largest mean among ``K`` arms with known features (an A/B/n
test over variants that share features). The contract is ``identify(env, instance, budget, key)
-> (arm, BAIInfo)``, pure and jittable, so replications ``vmap`` (``docs/contract.md``).

==========================  ==========================================================================
module                      job
==========================  ==========================================================================
``gse``                     GSE (Azizi et al. 2022): halving with a G-optimal design, OLS or the
                            MAP of any reward program
``sequential_halving``      Sequential Halving (Karnin et al. 2013)
``od_linbai``               OD-LinBAI (Yang and Tan 2021)
``peace``                   Peace, fixed budget (Katz-Samuels et al. 2020), approximated
``lingape``                 LinGapE and its greedy variant (Xu et al. 2018)
``bayesgap``                BayesGap with linear, exponential and Matern kernels (Hoffman et al. 2014)
``most_pulled``             any bandit policy run for ``B`` rounds, recommending its most-pulled arm
``instances``               adaptive, static, unit-sphere, GLM and corner-case instances
``automobile``              the UCI Automobile instance
``evaluation``              paired replications on common random numbers -> ``xarray.Dataset``
``_protocol``, ``_stages``  the contract, the stack of rewards, the shared elimination loop
==========================  ==========================================================================
"""

from bayesbandit.bai._protocol import BAIAlgorithm, BAIEnv, BAIInfo, is_correct
from bayesbandit.bai.automobile import Automobile, load_automobile
from bayesbandit.bai.bayesgap import BayesGap
from bayesbandit.bai.evaluation import concat_replications, replicate
from bayesbandit.bai.gse import GSE
from bayesbandit.bai.instances import AdaptiveInstance, CornerInstance, GLMInstance, SphereInstance, StaticInstance
from bayesbandit.bai.lingape import LinGapE
from bayesbandit.bai.most_pulled import MostPulled
from bayesbandit.bai.od_linbai import ODLinBAI
from bayesbandit.bai.peace import Peace
from bayesbandit.bai.sequential_halving import SequentialHalving

__all__ = [
    "BAIAlgorithm",
    "BAIEnv",
    "BAIInfo",
    "is_correct",
    "replicate",
    "concat_replications",
    "MostPulled",
    "BayesGap",
    "ODLinBAI",
    "LinGapE",
    "Peace",
    "Automobile",
    "load_automobile",
    "GSE",
    "SequentialHalving",
    "AdaptiveInstance",
    "StaticInstance",
    "SphereInstance",
    "GLMInstance",
    "CornerInstance",
]
