"""bayesbandit: Bayesian bandits from NumPyro reward programs.

bayesbandit turns JAX's 64-bit mode on when imported: Newton's method and Cholesky factors of
nearly singular Hessians need float64 (arrays you create yourself keep their dtype).
"""

import jax

jax.config.update("jax_enable_x64", True)

from bayesbandit import envs, errors  # noqa: E402
from bayesbandit.agent import Agent  # noqa: E402
from bayesbandit.inference import (  # noqa: E402
    BoundModel,
    Laplace,
    NewtonInfo,
    NewtonResult,
    bind,
    laplace,
    map_estimate,
    perturbed_map,
)
from bayesbandit.policies import (  # noqa: E402
    GLMFPL,
    GLMTSL,
    GLMUCB,
    UCBGLM,
    EpsilonGreedy,
    LinTS,
    LinUCB,
    Policy,
    PolicyInfo,
)
from bayesbandit.simulate import plot_regret, simulate, summarize  # noqa: E402

__version__ = "0.1.0"

__all__ = (
    # binding and inference
    "bind",
    "BoundModel",
    "map_estimate",
    "laplace",
    "perturbed_map",
    "Laplace",
    "NewtonInfo",
    "NewtonResult",
    # policies
    "Policy",
    "PolicyInfo",
    "GLMTSL",
    "GLMFPL",
    "GLMUCB",
    "UCBGLM",
    "EpsilonGreedy",
    "LinTS",
    "LinUCB",
    "Agent",
    # environments and simulation
    "envs",
    "simulate",
    "plot_regret",
    "summarize",
    # errors
    "errors",
)
