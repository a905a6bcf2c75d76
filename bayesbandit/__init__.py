"""bayesbandit: Bayesian bandits from NumPyro reward programs.

Importing bayesbandit changes no global JAX setting. The Newton-based inference (GLM-TSL and
the other GLM policies with their default solver, ``map_estimate``, ``laplace``,
``perturbed_map``) needs float64: call :func:`bayesbandit.enable_x64` first (see
:mod:`bayesbandit.precision`). On CPU, :func:`bayesbandit.enable_fast_rng` makes every random
draw cheaper, with the same numbers (see :mod:`bayesbandit.threefry`), and
:func:`bayesbandit.enable_low_latency`, called before any computation, makes each of an
Agent's calls cheaper (see :mod:`bayesbandit.latency`).
"""

from bayesbandit import envs, errors, precision
from bayesbandit._base import (
    Buffered,
    Catalogued,
    Combinatorial,
    Env,
    Explains,
    HostPolicy,
    HostState,
    Info,
    ModelBased,
    Outcome,
    Policy,
    RewardSupport,
    register_policy,
)
from bayesbandit.agent import Agent
from bayesbandit.compilation_cache import enable_compilation_cache
from bayesbandit.inference import (
    BoundModel,
    DenseNewton,
    FirstOrder,
    Laplace,
    NewtonInfo,
    NewtonResult,
    bind,
    laplace,
    map_estimate,
    perturbed_map,
)
from bayesbandit.latency import enable_low_latency
from bayesbandit.policies import (
    C2UCB,
    GLMFPL,
    GLMTSL,
    GLMUCB,
    PC2UCB,
    UCBGLM,
    ArmTS,
    Catalogue,
    CombGreedy,
    CombLinTS,
    CombLinUCB,
    DeepFL,
    DeepFPL,
    EpsilonGreedy,
    LastLayerLaplaceTS,
    LinTS,
    LinUCB,
    RepGLMFPL,
    RoundTS,
    SubElim,
    SubTS,
)
from bayesbandit.precision import enable_x64
from bayesbandit.sim import plot_regret, simulate, simulate_catalogue, summarize
from bayesbandit.threefry import enable_fast_rng

__version__ = "0.2.0"

__all__ = (
    # precision
    "enable_x64",
    "enable_fast_rng",
    "enable_low_latency",
    "enable_compilation_cache",
    "precision",
    # binding and inference
    "bind",
    "BoundModel",
    "map_estimate",
    "laplace",
    "perturbed_map",
    "Laplace",
    "NewtonInfo",
    "NewtonResult",
    "DenseNewton",
    "FirstOrder",
    # the contract
    "Policy",
    "HostPolicy",
    "ModelBased",
    "Buffered",
    "Catalogued",
    "HostState",
    "Combinatorial",
    "Explains",
    "Info",
    "Env",
    "Outcome",
    "RewardSupport",
    "register_policy",
    # policies
    "GLMTSL",
    "GLMFPL",
    "GLMUCB",
    "UCBGLM",
    "EpsilonGreedy",
    "LinTS",
    "LinUCB",
    "SubTS",
    "SubElim",
    "C2UCB",
    "PC2UCB",
    "RoundTS",
    "ArmTS",
    "CombGreedy",
    "CombLinUCB",
    "CombLinTS",
    "DeepFPL",
    "DeepFL",
    "RepGLMFPL",
    "LastLayerLaplaceTS",
    "Catalogue",
    "Agent",
    # environments and simulation
    "envs",
    "simulate",
    "simulate_catalogue",
    "plot_regret",
    "summarize",
    # errors
    "errors",
)
