"""Inference engine: binding, MAP (Newton), Laplace, perturbed MAP."""

from bayesbandit.inference.bind import BoundModel, bind
from bayesbandit.inference.laplace import Laplace, laplace
from bayesbandit.inference.newton import NewtonInfo, NewtonResult, map_estimate, newton
from bayesbandit.inference.perturb import perturb_rewards, perturbed_map

__all__ = [
    "BoundModel",
    "bind",
    "Laplace",
    "laplace",
    "NewtonInfo",
    "NewtonResult",
    "map_estimate",
    "newton",
    "perturb_rewards",
    "perturbed_map",
]
