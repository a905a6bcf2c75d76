"""Inference engine: binding reward programs, solvers, MAP, Laplace and perturbed-MAP posteriors.

=====================  =============================================================
module                 job
=====================  =============================================================
``program``            run a NumPyro program at flat unconstrained parameters
``structure``          check a program against the reward-model contract (tracing)
``potential``          :func:`bind` and :class:`BoundModel`: the weighted potential
``linear_predictor``   the GLM fast path: derivatives through the natural parameter
``newton``             damped, warm-started Newton's method
``solvers``            the solver slot of model-based policies: Newton or Optax steps
``posteriors``         :func:`map_estimate`, :func:`laplace`, :func:`perturbed_map`
``psis``               :func:`laplace_psis`: is the Laplace approximation good? (Pareto k-hat)
``online_laplace``     the online Laplace update by one GLM row, a root in one dimension
``fingerprint``        what a bound program computes, as a hash (checkpoints record it)
``glm_program``        the GLM reward program (the model zoo's GLMs, the default head)
=====================  =============================================================
"""

from bayesbandit.inference.newton import NewtonInfo, NewtonResult, newton_minimize
from bayesbandit.inference.posteriors import (
    Laplace,
    laplace,
    map_estimate,
    perturb_prior,
    perturb_rewards,
    perturb_weights,
    perturbed_map,
)
from bayesbandit.inference.potential import BoundModel, bind
from bayesbandit.inference.psis import LaplacePSIS, laplace_psis, resampled_draws
from bayesbandit.inference.solvers import DenseNewton, FirstOrder, FirstOrderFit, FirstOrderInfo, NewtonFit, Solver

__all__ = [
    "BoundModel",
    "bind",
    "NewtonInfo",
    "NewtonResult",
    "newton_minimize",
    "Solver",
    "DenseNewton",
    "NewtonFit",
    "FirstOrder",
    "FirstOrderFit",
    "FirstOrderInfo",
    "map_estimate",
    "Laplace",
    "laplace",
    "perturb_prior",
    "perturb_rewards",
    "perturb_weights",
    "perturbed_map",
    "LaplacePSIS",
    "laplace_psis",
    "resampled_draws",
]
