"""GSE: Generalized Successive Elimination (Azizi, Kveton and Ghavamzadeh 2022, Alg. 1).

Sequential halving with a joint model of the arms. With ``s`` the smallest integer such that
``eta^s >= K`` and the stage budget ``n = floor(B/s)``, stage ``t`` (``A_1`` = all arms)

1. projects the surviving arms ``A_t`` onto their span (``d_t`` = its dimension);
2. pulls arm ``i`` ``Pi_t(i)`` times, ``sum_i Pi_t(i) = n``, by an allocation rule;
3. estimates from *this stage's data only* (the analysis needs noise independent of the design)

   - linear (Eq. 1): ``theta_t = V_t^+ b_t`` with ``V_t = sum_j X_j X_j^T``, ``b_t = sum_j X_j Y_j``
     (the pseudo-inverse: a stage whose budget is below ``d_t`` leaves directions unobserved);
   - any reward program (Eq. 4 generalised): the MAP of the program on the stage's rows, by the
     spine's Newton (:class:`bayesbandit.inference.DenseNewton`); the program's prior is the ridge that
     keeps it finite under the separation small Bernoulli stages often show. Arms are ranked by
     the natural parameter (the linear predictor of a canonical GLM), which a saturated mean
     function cannot tie;
4. keeps the ``ceil(|A_t|/eta)`` arms of largest estimate, ties broken at random.

With integer ``eta`` the sizes ``ceil(K/eta^t)`` reach one arm after exactly ``s`` stages.

Allocations (``allocation=``), all spending exactly the stage budget:

* ``"g-optimal"`` (default): the G-optimal design of the projected arms by Frank-Wolfe with away
  steps (:func:`bayesbandit.design.fw_away`, stopping at ``g <= 1.01 d_t``), rounded by efficient
  apportionment (:func:`bayesbandit.design.efficient_rounding`). With it, Eq. 3 holds:
  ``delta <= 2 eta log_eta(K) exp(-B Delta_min^2 / (4 sigma^2 d log_eta K))``;
* ``"wynn"``: the same design by Fedorov-Wynn steps;
* ``"greedy"``: the sequential G-allocation of Soare et al. (2014);
* ``"uniform"``: ``n/|A_t|`` pulls each (GSE-Lin: Sequential Halving when the arms are one-hot);
* ``"fw-literal"``: the paper's Alg. 2 as printed. It stalls at the uniform design on symmetric
  instances (0 iterations on the adaptive instance), so it is uniform there; kept to show that.

Choices the paper leaves open, made here:

* The ``B mod s`` pulls ``floor(B/s)`` leaves go one each to the last stages
  (``leftover="spread"``), so every run spends exactly ``B``; ``leftover="drop"`` is the paper's
  rule.
* Rounding is efficient apportionment (exact), not ``ceil(n pi)`` (the authors' code, which
  overspends by up to ``|A_t| - 1`` pulls a stage), nor multinomial sampling (exact but noisy).
* The design is computed on the projected raw features for a GLM too (the paper's choice), with
  no ``h'`` weighting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

import jax.numpy as jnp

from bayesbandit._linalg import pinv_hermitian
from bayesbandit._typing import Array, Model, PRNGKey
from bayesbandit.bai._protocol import BAIEnv, BAIInfo, check_budget, check_call
from bayesbandit.bai._stages import StageData, halving_sizes, run_stages, stage_budgets
from bayesbandit.design import Design, efficient_rounding, fw_away, fw_literal, greedy_allocation, project, wynn
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.inference.solvers import DenseNewton
from bayesbandit.precision import require_x64
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["GSE", "allocate"]

ALLOCATIONS = ("g-optimal", "wynn", "greedy", "uniform", "fw-literal")


def allocate(rule: str, x: Array, n: int, *, tol: float = 0.01) -> Array:
    """Integer pulls of each arm of ``x`` (shape (k, d)) summing to ``n``, by allocation ``rule``.

    The arms are projected onto their span first, so the design is G-optimal in ``d_t`` dimensions.
    """
    k = x.shape[0]
    if rule == "uniform":
        return efficient_rounding(jnp.full(k, 1.0 / k), n)
    z = project(x).coords
    if rule == "greedy":
        return greedy_allocation(z, n)
    solvers: dict[str, Callable[[Array], Design]] = {
        "g-optimal": partial(fw_away, tol=tol),
        "wynn": partial(wynn, tol=tol),
        "fw-literal": fw_literal,
    }
    solve = solvers[rule]
    return efficient_rounding(solve(z).weights, n)


def ols_scores(instance: Instance, data: StageData) -> tuple[Array, Array]:
    """Least squares on the stage's pulls, in the survivors' span: (scores, theta in arm coordinates)."""
    proj = project(instance.arms[data.alive])
    z, m = proj.coords, data.counts.astype(proj.coords.dtype)
    gram = (z * m[:, None]).T @ z
    theta_z = pinv_hermitian(gram) @ (z.T @ data.sums())
    return z @ theta_z, proj.basis @ theta_z


def map_scores(bound: BoundModel, solver: DenseNewton, instance: Instance, data: StageData) -> tuple[Array, Array]:
    """MAP of the reward program on the stage's rows: (natural parameters of the survivors, theta)."""
    rows = (instance.arms[data.alive[data.row_arm]], data.rewards, data.valid.astype(instance.arms.dtype))
    theta0 = bound.init_theta(instance.arms.dtype)
    fit = solver.init(bound, theta0, rows)
    x_alive = instance.arms[data.alive]
    scores = bound.natural_parameter(fit.theta, x_alive) if bound.is_affine else bound.mean_reward(fit.theta, x_alive)
    return scores, fit.theta


def _default_solver() -> DenseNewton:
    return DenseNewton(max_steps=50, tol=1e-10, quadratic_stop=False)


@dataclass(frozen=True, kw_only=True)
class GSE:
    """Generalized Successive Elimination (see the module docstring for the algorithm and choices).

    Parameters
    ----------
    allocation : {"g-optimal", "wynn", "greedy", "uniform", "fw-literal"}
        How each stage's budget is spread over the surviving arms.
    model : NumPyro program, optional
        A reward program ``model(x, y=None)`` (e.g. ``bayesbandit.models.logistic(10.0)``): each
        stage fits its MAP. ``None`` (the default) fits ordinary least squares (GSE-Lin).
    eta : int, >= 2
        Elimination rate: each stage keeps ``ceil(|A_t| / eta)`` arms.
    leftover : {"spread", "drop"}
        What happens to the ``B mod s`` pulls ``floor(B/s)`` leaves: the last stages get one each,
        or they are not spent (the paper).
    design_tol : float
        G-optimal designs stop at ``g <= (1 + design_tol) d_t``.
    solver : DenseNewton
        The MAP solver (used with ``model``).

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.bai import GSE, AdaptiveInstance
    >>> env = AdaptiveInstance(K=4)
    >>> identify = jax.jit(GSE().identify, static_argnums=(0, 2))  # one compiled program
    >>> arm, info = identify(env, env.reset(jax.random.key(0)), 40, jax.random.key(1))
    >>> int(info.pulls), info.survivors.shape
    (40, (2, 4))
    """

    allocation: str = "g-optimal"
    model: Model | None = None
    eta: int = 2
    leftover: str = "spread"
    design_tol: float = 0.01
    solver: DenseNewton = field(default_factory=_default_solver)

    name: ClassVar[str] = "GSE"

    def __post_init__(self) -> None:
        check_choice("GSE", "allocation", self.allocation, ALLOCATIONS)
        check_int("GSE", "eta", self.eta, low=2)
        check_choice("GSE", "leftover", self.leftover, ("spread", "drop"))
        check_scalar("GSE", "design_tol", self.design_tol, low=0.0, low_open=True, high_open=True)
        if self.model is not None and not (callable(self.model) or isinstance(self.model, BoundModel)):
            raise InvalidInput(
                f"The 'model' parameter of GSE must be a NumPyro reward program model(x, y=None) or None. "
                f"Got {type(self.model).__name__} {self.model!r} instead. Fix: pass e.g. "
                "bayesbandit.models.logistic(), or omit model for least squares."
            )
        if not isinstance(self.solver, DenseNewton):
            raise InvalidInput(
                f"The 'solver' parameter of GSE must be a bayesbandit.inference.DenseNewton. "
                f"Got {type(self.solver).__name__} {self.solver!r} instead. Fix: pass DenseNewton(...) or omit solver."
            )

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]:
        """Run GSE on ``instance`` with ``budget`` pulls; returns the recommended arm and what it did."""
        check_call("GSE", env, instance, key)
        num_arms, dim = instance.arms.shape
        sizes = halving_sizes(num_arms, self.eta)
        budget = check_budget("GSE", budget, num_arms, len(sizes))
        budgets = stage_budgets(budget, len(sizes), self.leftover)
        estimate: Any
        if self.model is None:
            estimate = partial(ols_scores, instance)
        else:
            require_x64("GSE with a reward program")
            estimate = partial(map_scores, bound_for(self.model, (dim,)), self.solver, instance)

        def allocate_stage(x: Array, n: int, key: PRNGKey) -> Array:
            return allocate(self.allocation, x, n, tol=self.design_tol)

        return run_stages(env, instance, key, sizes, budgets, allocate_stage, estimate)
