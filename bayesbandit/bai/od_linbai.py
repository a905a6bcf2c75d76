"""OD-LinBAI: Optimal Design-based Linear Best Arm Identification (Yang and Tan 2021, Alg. 1).

A staged elimination whose first stage is special. With ``d`` the dimension of the span of the
arms and ``R = ceil(log2 d)`` rounds (one round when ``d <= 2``), every round spends

.. math::  m = \\frac{B - \\min(K, d(d+1)/2) - \\sum_{r=1}^{R-1} \\lceil d/2^r \\rceil}{R}

pulls by design (a real number, as in the paper: flooring it spent 144 pulls of a budget of 160 on
8 arms of the unit sphere in ``R^10``, against 158 with the real ``m``), and round ``r`` (``A_0`` = all arms)

1. projects the arms of ``A_{r-1}`` onto their span (``d_r`` = its dimension);
2. computes a G-optimal design ``pi_r`` of the projected arms, supported on at most
   ``d_r (d_r + 1)/2 + 1`` arms;
3. pulls each arm ``x`` ``ceil(pi_r(x) m)`` times;
4. fits ordinary least squares on this round's data only (``bayesbandit.bai.gse.ols_scores``);
5. keeps the ``ceil(d/2^r)`` arms of largest estimate, ties broken at random.

Round 1 keeps ``ceil(d/2)`` arms whatever ``K``: with ``K >> d`` it eliminates almost every arm
from one round of data, which is the weakness Azizi et al. (2022, sec. 7) point out.

Budget. ``pi_r`` sums to one and ``ceil(a) < a + 1``, so round ``r`` spends
``sum_x ceil(pi_r(x) m) < m + |supp pi_r|``. Round 1's support has at most
``min(K, d(d+1)/2 + 1)`` arms and round ``r >= 2``'s at most ``|A_{r-1}| = ceil(d/2^{r-1})``, so
the rounds together spend less than ``R m + reserve + 1 = B + 1`` pulls, where ``reserve`` is
what the formula for ``m`` subtracts: at most ``B``, an integer (``info.pulls`` reports it;
``tests/bai/test_od_linbai.py`` checks it).

Choices the paper leaves open, made here:

* ``d`` is the numerical rank of the arms (singular values above ``1e-10`` of the largest) when
  the instance is concrete; under ``jit`` / ``vmap`` the instance is traced and ``d = min(K, p)``
  for ``p`` features (the rank of arms in general position), since the schedule fixes shapes.
* The design is Frank-Wolfe with away steps (:func:`bayesbandit.design.fw_away`) stopped at
  ``g <= (1 + design_tol) d_r`` (the paper asks for an exact design; the authors ran Todd's
  ``minvol`` at ``1e-7``). On many arms in few dimensions its support is large (97 of 100 arms
  on the sphere of ``R^4``), above the ``d(d+1)/2`` the paper's budget needs, so the support is
  reduced by Caratheodory's theorem (:func:`caratheodory`): the same information matrix, hence
  the same ``g``, on at most ``d_r(d_r + 1)/2 + 1`` arms.
* Weights below ``1e-6`` are dropped before the ceiling, so numerical dust does not cost a pull.
  The ceiling is taken with a ``1e-12`` relative margin, so that a product ``pi(x) m`` that is
  an integer but computed one rounding error above it is not rounded up.
* ``m < 1`` raises :class:`bayesbandit.errors.InvalidInput` naming the smallest budget.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from functools import partial
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._linalg import qr_complete
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai._protocol import BAIEnv, BAIInfo, check_call
from bayesbandit.bai._stages import num_stages, run_stages
from bayesbandit.bai.gse import ols_scores
from bayesbandit.design import fw_away, project
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int, check_scalar

__all__ = ["ODLinBAI", "Schedule", "schedule", "caratheodory"]

TRIM = 1e-6


class Schedule(NamedTuple):
    """OD-LinBAI's rounds, fixed before any pull."""

    sizes: tuple[int, ...]  # arms alive at the start of each round
    per_round: float  # m, the design budget of a round (a real number)
    max_rows: tuple[int, ...]  # ceil(m) plus the round's share of the reserve: the most a round can spend


def schedule(num_arms: int, dim: int, budget: int) -> Schedule:
    """Rounds, ``m`` and per-round caps for ``K`` arms spanning ``R^dim`` (Yang and Tan 2021, Alg. 1).

    Examples
    --------
    >>> schedule(16, 10, 320)
    Schedule(sizes=(16, 5, 3, 2), per_round=73.5, max_rows=(90, 79, 77, 76))
    """
    rounds = num_stages(dim, 2)
    later = tuple(-(-dim // 2**r) for r in range(1, rounds))
    first = min(num_arms, dim * (dim + 1) // 2)
    reserve = first + sum(later)
    per_round = (budget - reserve) / rounds
    if per_round < 1:
        raise InvalidInput(
            f"ODLinBAI: the 'budget' argument must leave every round at least one pull after the reserve "
            f"for rounding (min(K, d(d+1)/2) + sum_r ceil(d/2^r) = {reserve} for K = {num_arms}, d = {dim}), "
            f"that is at least {reserve + rounds}. Got {budget}. Fix: raise the budget to {reserve + rounds} or more."
        )
    whole = math.ceil(per_round)
    return Schedule((num_arms, *later), per_round, (whole + first, *(whole + s for s in later)))


def caratheodory(x: Array, weights: Array, max_support: int) -> Array:
    """A design with the same information matrix ``sum_i w_i x_i x_i^T`` on at most ``max_support`` arms.

    Caratheodory's theorem: ``(x x^T, 1)`` lives in ``p(p+1)/2 + 1`` dimensions, so when the support
    has more arms than that some combination ``v`` of them vanishes, ``sum_i v_i x_i x_i^T = 0``,
    ``sum_i v_i = 0``; ``w - t v`` with the largest ``t`` that keeps ``w >= 0`` drops an arm and
    keeps the matrix. ``max_support`` must be at least ``r(r+1)/2 + 1`` for the rank ``r`` of ``x``.
    Runs ``K - max_support`` such steps (each a no-op once the support is small enough).
    """
    k, p = x.shape
    steps = k - max_support
    if steps <= 0:
        return weights
    rows, cols = np.triu_indices(p)
    moments = jnp.concatenate([(x[:, rows] * x[:, cols]).T, jnp.ones((1, k), x.dtype)])
    width = max_support + 1

    def drop(step: int, w: Array) -> Array:
        support = w > 0
        subset = jnp.argsort(~support, stable=True)[:width]
        q = qr_complete(moments[:, subset].T)
        v = jnp.zeros(k, w.dtype).at[subset].set(q[:, -1])
        ratio = jnp.where(v > 0, w / jnp.where(v > 0, v, 1.0), jnp.inf)
        j = jnp.argmin(ratio)
        reduced = jnp.maximum(w - ratio[j] * v, 0.0).at[j].set(0.0)
        return jnp.where(jnp.sum(support) > max_support, reduced / jnp.sum(reduced), w)

    return jax.lax.fori_loop(0, steps, drop, weights)


def allocate(x: Array, n: float, *, dim: int, tol: float) -> Array:
    """``ceil(pi(x) n)`` pulls for the G-optimal design ``pi`` of ``x`` on at most ``dim(dim+1)/2 + 1`` arms."""
    z = project(x).coords
    weights = fw_away(z, tol=tol).weights
    weights = caratheodory(z, weights, min(x.shape[0], dim * (dim + 1) // 2 + 1))
    weights = jnp.where(weights < TRIM, 0.0, weights)
    weights = weights / jnp.sum(weights)
    return jnp.ceil(weights * n * (1.0 - 1e-12)).astype(jnp.int32)


def _rank(instance: Instance) -> int:
    num_arms, num_features = instance.arms.shape[-2:]
    if isinstance(instance.arms, jax.core.Tracer) or instance.arms.ndim != 2:
        return min(num_arms, num_features)
    s = np.linalg.svd(np.asarray(instance.arms), compute_uv=False)
    return max(int(np.sum(s > 1e-10 * s[0])), 1)


@dataclass(frozen=True)
class ODLinBAI:
    """OD-LinBAI (see the module docstring for the algorithm and choices).

    Parameters
    ----------
    design_tol : float
        G-optimal designs stop at ``g <= (1 + design_tol) d_r``.

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.bai import ODLinBAI, SphereInstance
    >>> env = SphereInstance(K=6, d=4)
    >>> identify = jax.jit(ODLinBAI().identify, static_argnums=(0, 2))  # one compiled program
    >>> arm, info = identify(env, env.reset(jax.random.key(0)), 60, jax.random.key(1))
    >>> int(info.pulls) <= 60, info.survivors.shape
    (True, (2, 6))
    """

    _: KW_ONLY
    design_tol: float = 0.01

    name: ClassVar[str] = "OD-LinBAI"

    def __post_init__(self) -> None:
        check_scalar("ODLinBAI", "design_tol", self.design_tol, low=0.0, low_open=True, high_open=True)

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]:
        """Run OD-LinBAI with at most ``budget`` pulls; returns the recommended arm and what it did."""
        check_call("ODLinBAI", env, instance, key)
        budget = check_int("ODLinBAI", "budget", budget, low=0)
        dim = _rank(instance)
        plan = schedule(instance.arms.shape[-2], dim, budget)
        budgets = (plan.per_round,) * len(plan.sizes)
        allocate_round = partial(allocate, dim=dim, tol=self.design_tol)

        def allocate_stage(x: Array, n: float, key: PRNGKey) -> Array:
            return allocate_round(x, n)

        estimate: Any = partial(ols_scores, instance)
        return run_stages(env, instance, key, plan.sizes, budgets, allocate_stage, estimate, max_rows=plan.max_rows)
