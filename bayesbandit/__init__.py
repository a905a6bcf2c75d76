"""bayesbandit: Bayesian bandits from NumPyro reward programs.

The names here are what a user reaches for: the policies, :class:`Agent` (its :class:`Decision`, and the
:class:`Catalogue` a catalogue policy starts from), :func:`simulate`, the inference entry points
(:func:`bind`, :func:`map_estimate`, :func:`laplace`, :func:`perturbed_map`), :mod:`errors` and
the process settings in :mod:`runtime`. Everything else lives in a named subpackage:
:mod:`bayesbandit.contract` (the policy and environment protocols), :mod:`bayesbandit.envs`,
:mod:`bayesbandit.sim` (runners, sweeps, results), :mod:`bayesbandit.inference`,
:mod:`bayesbandit.bai`, :mod:`bayesbandit.index`, :mod:`bayesbandit.oracles`,
:mod:`bayesbandit.design`, :mod:`bayesbandit.propensities`, :mod:`bayesbandit.scale` (beyond one process), :mod:`bayesbandit.models` (the reward-program zoo),
:mod:`bayesbandit.diagnostics` and :mod:`bayesbandit.testing` (the contract suite).

Importing bayesbandit changes no global JAX setting. The Newton-based inference (GLM-TSL and
the other GLM policies with their default solver, ``map_estimate``, ``laplace``,
``perturbed_map``) needs float64: call :func:`bayesbandit.runtime.enable_x64` first (see
:mod:`bayesbandit.precision`).
"""

# the named subpackages, reachable as attributes (bb.envs, bb.sim, bb.contract, ...)
from bayesbandit import (  # noqa: F401
    bai,
    contract,
    drift,
    envs,
    errors,
    index,
    inference,
    oracles,
    propensities,
    runtime,
    scale,
    sharding,
    sim,
)
from bayesbandit.agent import Agent, Decision
from bayesbandit.inference import bind, laplace, map_estimate, perturbed_map
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
from bayesbandit.sim import simulate

__version__ = "0.2.0"  # the one place the version is written (pyproject.toml reads it)

# The other public subpackages load on first access (``bb.ope``, ``bb.diagnostics``, ...): every
# subpackage is reachable the same way, and ``import bayesbandit`` stays light (no ArviZ, no Dask).
_LAZY = (
    "agent",
    "checkpoint",
    "datasets",
    "design",
    "diagnostics",
    "experiments",
    "history",
    "models",
    "ope",
    "policies",
    "precision",
    "testing",
    "threefry",
    "validation",
)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"bayesbandit.{name}")
    raise AttributeError(f"module 'bayesbandit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = (
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
    # acting
    "Agent",
    "Decision",
    "Catalogue",
    "simulate",
    # inference
    "bind",
    "map_estimate",
    "laplace",
    "perturbed_map",
    # errors and process settings
    "errors",
    "runtime",
)
