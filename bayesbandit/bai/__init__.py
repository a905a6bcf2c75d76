"""Fixed-budget best-arm identification: GSE and its baselines, instances, paired evaluation."""

from bayesbandit.bai._protocol import BAIAlgorithm, BAIEnv, BAIInfo, is_correct
from bayesbandit.bai.automobile import Automobile, load_automobile
from bayesbandit.bai.bayesgap import BayesGap
from bayesbandit.bai.evaluate import evaluate
from bayesbandit.bai.gse import GSE
from bayesbandit.bai.instances import AdaptiveInstance, CornerInstance, GLMInstance, SphereInstance, StaticInstance
from bayesbandit.bai.most_pulled import MostPulled
from bayesbandit.bai.sequential_halving import SequentialHalving

__all__ = [
    "BAIAlgorithm",
    "BAIEnv",
    "BAIInfo",
    "is_correct",
    "evaluate",
    "MostPulled",
    "BayesGap",
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
