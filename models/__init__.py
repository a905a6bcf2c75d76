"""The reward-model zoo: NumPyro programs ``model(x, y=None)`` ready for :func:`bayesbandit.bind`.

Any NumPyro program following the same contract can be used in their place. Factories validate
their settings and raise :class:`bayesbandit.errors.InvalidInput`.
"""

from .glm import GLM, linear_gaussian, logistic, poisson, probit
from .neural import MLP, mlp
from .structured import (
    arm_random_effect_logistic,
    correlated_gaussian,
    hierarchical_logistic,
    horseshoe_logistic,
    negative_binomial_exposure,
    poisson_exposure,
    regularised_horseshoe_logistic,
)

__all__ = [
    "GLM",
    "logistic",
    "probit",
    "poisson",
    "linear_gaussian",
    "MLP",
    "mlp",
    "hierarchical_logistic",
    "horseshoe_logistic",
    "regularised_horseshoe_logistic",
    "poisson_exposure",
    "negative_binomial_exposure",
    "correlated_gaussian",
    "arm_random_effect_logistic",
]
