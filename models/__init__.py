"""The reward-model zoo: NumPyro programs ``model(x, y=None)`` ready for :func:`bayesbandit.bind`.

Any NumPyro program following the same contract can be used in their place. Factories validate
their settings and raise :class:`bayesbandit.errors.InvalidInput`.
"""

from .glm import GLM, linear_gaussian, logistic, poisson, probit
from .neural import MLP, mlp

__all__ = ["GLM", "logistic", "probit", "poisson", "linear_gaussian", "MLP", "mlp"]
