"""LinGapE (Xu, Honda and Sugiyama 2018, Alg. 1) run to a fixed budget, and its greedy variant.

LinGapE is a fixed-confidence algorithm; Azizi et al. (2022, sec. 8) run it until the budget is
spent and return its current recommendation. Each arm is pulled once, then every round ``t``
(``t`` pulls so far) with ridge statistics ``A_t = lambda I + sum_s x_s x_s^T``,
``b_t = sum_s x_s Y_s`` and ``theta_t = A_t^{-1} b_t``:

1. ``i_t = argmax_i x_i^T theta_t`` (the empirical best arm);
2. ``j_t = argmax_{j != i_t} (x_j - x_{i_t})^T theta_t + beta_t(i_t, j)``, the most ambiguous
   challenger, with ``beta_t(i, j) = ||x_i - x_j||_{A_t^{-1}} C_t`` and (Abbasi-Yadkori et al. 2011,
   with a union over the ``K^2`` pairs)

   .. math::  C_t = \\sigma \\sqrt{2 \\log(K^2 \\det(A_t)^{1/2} \\det(\\lambda I)^{-1/2} / \\delta)}
              + \\lambda^{1/2} S;

3. the arm that best reduces ``||y_t||_{A^{-1}}``, ``y_t = x_{i_t} - x_{j_t}``:

   - LinGapE: ``w* = argmin ||w||_1`` s.t. ``sum_k w_k x_k = y_t``, ``p*_k = |w*_k| / ||w*||_1``,
     pull ``argmin_{k: p*_k > 0} T_k / p*_k`` (``T_k``: pulls of arm ``k`` so far), so the pulls
     track the sparsest design that estimates the gap;
   - LinGapE-Greedy: pull ``argmin_k ||y_t||^2_{(A_t + x_k x_k^T)^{-1}}``, that is, by
     Sherman-Morrison, ``argmax_k (x_k^T A_t^{-1} y_t)^2 / (1 + x_k^T A_t^{-1} x_k)``.

The fixed-confidence stopping rule (``B(t) = max_j ... <= epsilon``) is not used: the run spends
exactly ``B`` pulls and returns ``argmax_i x_i^T theta`` of the final estimate.

Per round, ``A_t^{-1}`` is updated by Sherman-Morrison (``O(d^2)``), and so are
``x_k^T A_t^{-1} x_k`` for all arms (``O(Kd)``) and ``log det A_t`` (``O(1)``): the greedy variant
costs ``O(d^2 + Kd)`` a round. ``p*`` depends on the pair ``(i_t, j_t)`` only (``p*`` of
``(j, i)`` is that of ``(i, j)``): when the ``K(K-1)/2`` pairs are no more than the ``B - K``
rounds, all pairs are solved up front as one batch (``K^2 (K-1)/2`` floats a replication) and a
round costs ``O(d^2 + Kd)`` too; otherwise the round's pair is solved every round. The ``l1``
problems are solved by a primal-dual interior-point method (:func:`l1_min`, ``O(K d^2)`` an
iteration, about 10 iterations).

Choices the paper leaves open, or where this implementation departs from the authors' code:

* ``C_t`` follows the paper with ``sigma`` the noise *standard deviation* (the sub-Gaussian
  constant ``R``). The code of Azizi et al. (after github.com/liyuan9988/LinGapE) uses
  ``sigma^2 sqrt(d log(K^2 (1 + t L^2) / (lambda delta))) + 2 sqrt(lambda)``: the determinant bound
  ``det A_t <= (lambda + t L^2 / d)^d`` loosened further, with the variance in place of the
  standard deviation (with ``sigma^2 = 10`` its ``C_t`` is about 3-4 times this one).
  ``confidence="simple"`` gives ``sigma sqrt(d log(K^2 (1 + t L^2 / lambda) / delta)) +
  sqrt(lambda) S`` with ``L = max_k ||x_k||``, the paper's closed form of the same bound.
* ``w*`` is signed (the paper); the authors' code solves it with ``w >= 0``, which makes the
  problem infeasible or different whenever ``y_t`` needs a negative coefficient.
* The arms are first written in an orthonormal basis of their span
  (:func:`bayesbandit.design.project`). Ridge estimates, ``A^{-1}`` norms of arm differences and
  ``det(A_t) / det(lambda I)`` are unchanged (directions the arms do not reach carry ``lambda`` in
  both), and the ``l1`` normal equations stay non-singular when ``d > K``.
* ``A_K^{-1}`` (after the initial pulls) is computed once by a Cholesky factorisation, not by
  Sherman-Morrison from ``(lambda I)^{-1}``: with ``lambda = 1e-8`` the latter cancels 8 digits.
* ``j_t`` ranges over ``j != i_t``: for ``j = i_t`` the index is 0 and ``y_t = 0``, where the
  fixed-confidence algorithm would stop.
* Entries ``p*_k <= 1e-8`` count as zero, and ratios ``T_k / p*_k`` within ``1e-6`` (relative) of
  the least count as tied (the ``l1`` solution is accurate to about ``1e-9``: with one-hot arms,
  ``p*`` is ``(1/2, 1/2)`` up to that error and ``T_i = T_j`` is a tie, not a choice by rounding).
  All ties (``i_t``, ``j_t``, the pulled arm, the answer) are broken at random.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit import _gaussian_linear as gl
from bayesbandit._linalg import cho_factor, cho_solve, solve
from bayesbandit._numerics import random_argmax
from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai._protocol import (
    BAIEnv,
    BAIInfo,
    check_budget,
    check_call,
    noise_variance,
    stack_rewards,
    streams,
)
from bayesbandit.design import null_columns, project
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["LinGapE", "l1_min", "arm_ratios"]

SUPPORT_TOL = 1e-8  # p*_k at or below this is 0
RATIO_RTOL = 1e-6  # T_k / p*_k this close (relative) to the least tie


class _IPMState(NamedTuple):
    n: Array  # () int32 iterations done
    u: Array  # (K,) positive part of w
    v: Array  # (K,) negative part of w
    su: Array  # (K,) dual slacks of u
    sv: Array  # (K,) dual slacks of v
    lam: Array  # (d,) dual variables of the equality constraints
    best: Array  # (K,) the iterate of smallest residual so far
    best_merit: Array  # () its residual
    stalled: Array  # () int32 iterations in a row that cut the best residual by less than 10%


def l1_min(x: Array, y: Array, *, max_iter: int = 40, tol: float | None = None) -> Array:
    """``argmin ||w||_1`` s.t. ``x^T w = y`` (``x``: (K, d), ``y`` in the span of its rows).

    The linear program ``min 1^T (u + v)`` s.t. ``x^T (u - v) = y``, ``u, v >= 0`` is solved by
    Mehrotra's predictor-corrector interior-point method on ``y / ||y||_1``: each iteration solves
    the ``d x d`` normal equations ``x^T (U/S_u + V/S_v) x`` by Cholesky (with a relative ridge of
    ``1e-13`` and two steps of iterative refinement). It stops once the largest of the primal and
    dual residuals and the duality gap is below ``tol`` (``sqrt(eps) / 10`` by default: ``1.5e-9``
    in float64), or after two iterations in a row that cut it by less than 10% (rounding's floor,
    above ``tol`` in about 1 problem in 40,000), and returns the iterate of smallest residual.
    Columns of ``x`` that are zero for every arm (the padding of
    :func:`bayesbandit.design.project`) are ignored. Jittable and vmappable.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> x = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> [round(float(w), 3) for w in l1_min(x, jnp.array([2.0, 2.0]))]
    [0.0, 0.0, 2.0]
    """
    x = jnp.asarray(x)
    y = jnp.asarray(y, x.dtype)
    k, d = x.shape
    eps = float(jnp.finfo(x.dtype).eps)
    tol = math.sqrt(eps) / 10.0 if tol is None else tol
    ridge = max(1e-13, 10.0 * eps)
    null = null_columns(x)
    scale = jnp.sum(jnp.abs(y))
    yn = y / jnp.where(scale > 0, scale, 1.0)

    def residuals(s: _IPMState) -> tuple[Array, Array, Array]:
        xl = x @ s.lam
        return yn - x.T @ (s.u - s.v), 1.0 - xl - s.su, 1.0 + xl - s.sv

    def merit(s: _IPMState) -> Array:
        rp, rdu, rdv = residuals(s)
        gap = s.u @ s.su + s.v @ s.sv
        return jnp.max(jnp.abs(jnp.concatenate([rp, rdu, rdv, gap[None]])))

    def max_step(z: Array, dz: Array) -> Array:
        ratio = jnp.where(dz < 0, -z / jnp.where(dz < 0, dz, -1.0), jnp.inf)
        return jnp.minimum(1.0, jnp.min(ratio))

    def body(s: _IPMState) -> _IPMState:
        rp, rdu, rdv = residuals(s)
        gram = (x * (s.u / s.su + s.v / s.sv)[:, None]).T @ x + jnp.diag(null)
        factor = cho_factor(gram + ridge * jnp.trace(gram) / d * jnp.eye(d))

        def refined_solve(r: Array) -> Array:
            sol = cho_solve(factor, r)
            for _ in range(2):
                sol = sol + cho_solve(factor, r - gram @ sol)
            return sol

        def direction(rcu: Array, rcv: Array) -> tuple[Array, Array, Array, Array, Array]:
            rhs = rp - x.T @ (rcu / s.su - rcv / s.sv) + x.T @ (s.u / s.su * rdu - s.v / s.sv * rdv)
            dlam = refined_solve(rhs)
            xd = x @ dlam
            dsu, dsv = rdu - xd, rdv + xd
            return (rcu - s.u * dsu) / s.su, (rcv - s.v * dsv) / s.sv, dsu, dsv, dlam

        mu = (s.u @ s.su + s.v @ s.sv) / (2 * k)
        du, dv, dsu, dsv, _ = direction(-s.u * s.su, -s.v * s.sv)
        ap = jnp.minimum(max_step(s.u, du), max_step(s.v, dv))
        ad = jnp.minimum(max_step(s.su, dsu), max_step(s.sv, dsv))
        mu_aff = ((s.u + ap * du) @ (s.su + ad * dsu) + (s.v + ap * dv) @ (s.sv + ad * dsv)) / (2 * k)
        sigma = (mu_aff / mu) ** 3
        du, dv, dsu, dsv, dlam = direction(sigma * mu - s.u * s.su - du * dsu, sigma * mu - s.v * s.sv - dv * dsv)
        ap = jnp.minimum(1.0, 0.995 * jnp.minimum(max_step(s.u, du), max_step(s.v, dv)))
        ad = jnp.minimum(1.0, 0.995 * jnp.minimum(max_step(s.su, dsu), max_step(s.sv, dsv)))
        new = s._replace(
            n=s.n + 1, u=s.u + ap * du, v=s.v + ap * dv, su=s.su + ad * dsu, sv=s.sv + ad * dsv, lam=s.lam + ad * dlam
        )
        m = merit(new)
        finite = jnp.isfinite(m)
        better = finite & (m < s.best_merit)
        new = new._replace(
            best=jnp.where(better, new.u - new.v, s.best),
            best_merit=jnp.where(better, m, s.best_merit),
            stalled=jnp.where(finite & (m < 0.9 * s.best_merit), 0, s.stalled + 1),
        )
        return jax.tree.map(lambda a, b: jnp.where(finite, a, b), new, s._replace(n=jnp.int32(max_iter)))

    def cond(s: _IPMState) -> Array:
        return (s.n < max_iter) & (s.best_merit > tol) & (s.stalled < 2)

    w0 = x @ solve(x.T @ x + jnp.diag(null), yn)
    shift = 0.1 + 1.0 / k
    ones = jnp.ones(k, x.dtype)
    s0 = _IPMState(
        jnp.int32(0),
        jnp.maximum(w0, 0.0) + shift,
        jnp.maximum(-w0, 0.0) + shift,
        ones,
        ones,
        jnp.zeros(d, x.dtype),
        w0,
        jnp.asarray(jnp.inf, x.dtype),
        jnp.int32(0),
    )
    s = jax.lax.while_loop(cond, body, s0)
    return s.best * scale


def arm_ratios(x: Array, i: Array, j: Array, *, max_iter: int = 40) -> Array:
    """LinGapE's arm proportions for the direction ``x_i - x_j``: ``p*_k = |w*_k| / ||w*||_1``."""
    w = jnp.abs(l1_min(x, x[i] - x[j], max_iter=max_iter))
    total = jnp.sum(w)
    return jnp.where(total > 0, w / jnp.where(total > 0, total, 1.0), 0.0)


class _Round(NamedTuple):
    ainv: Array  # (d, d) A_t^{-1} in the arms' span coordinates
    b: Array  # (d,) sum_s x_s Y_s
    q: Array  # (K,) x_k^T A_t^{-1} x_k
    logdet: Array  # () log det(A_t) - log det(lambda I)
    counts: Array  # (K,) int32 pulls per arm


@dataclass(frozen=True)
class LinGapE:
    """LinGapE (or LinGapE-Greedy) run until the budget is spent (see the module docstring).

    Parameters
    ----------
    greedy : bool
        Pull the arm that most shrinks ``||x_{i_t} - x_{j_t}||_{A^{-1}}`` (LinGapE-Greedy) instead
        of tracking the ``l1``-optimal proportions.
    delta : float, in (0, 1)
        Confidence of ``C_t``. Azizi et al. tune it on {0.5, 0.9, 0.4, 0.1, 0.01}; their code
        ends on 0.4.
    reg : float, > 0
        Ridge ``lambda`` (``1e-8`` in the authors' code).
    noise_var : float, > 0, optional
        ``sigma^2``, the reward noise variance; ``None`` reads ``env.noise_var``.
    norm_bound : float, >= 0
        ``S``, a bound on ``||theta*||_2`` (only ``sqrt(lambda) S`` enters ``C_t``).
    confidence : {"det", "simple"}
        ``C_t`` from ``det A_t`` (the paper), or its closed-form bound in ``t`` (see the module
        docstring).
    l1_iters : int, >= 1
        Most interior-point iterations per ``l1`` problem (about 10 are used).

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.bai import LinGapE, StaticInstance
    >>> env = StaticInstance(K=4, gap=1.0, noise_var=1.0)
    >>> identify = jax.jit(LinGapE().identify, static_argnums=(0, 2))  # one compiled program
    >>> arm, info = identify(env, env.reset(jax.random.key(0)), 20, jax.random.key(1))
    >>> int(info.pulls), info.theta.shape
    (20, (1, 4))
    """

    _: KW_ONLY
    greedy: bool = False
    delta: float = 0.4
    reg: float = 1e-8
    noise_var: float | None = None
    norm_bound: float = 1.0
    confidence: str = "det"
    l1_iters: int = 40

    name: ClassVar[str] = "LinGapE"

    def __post_init__(self) -> None:
        if not isinstance(self.greedy, bool):
            raise InvalidInput(
                f"The 'greedy' parameter of LinGapE must be a bool. Got {self.greedy!r} instead. "
                "Pass greedy=True for LinGapE-Greedy."
            )
        check_scalar("LinGapE", "delta", self.delta, low=0.0, high=1.0, low_open=True, high_open=True)
        check_scalar("LinGapE", "reg", self.reg, low=0.0, low_open=True, high_open=True)
        if self.noise_var is not None:
            check_scalar("LinGapE", "noise_var", self.noise_var, low=0.0, low_open=True, high_open=True)
        check_scalar("LinGapE", "norm_bound", self.norm_bound, low=0.0, high_open=True)
        check_choice("LinGapE", "confidence", self.confidence, ("det", "simple"))
        check_int("LinGapE", "l1_iters", self.l1_iters, low=1)

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]:
        """Run LinGapE for ``budget`` pulls; ``info.theta`` is the final ridge estimate."""
        check_call("LinGapE", env, instance, key)
        num_arms, dim = instance.arms.shape
        budget = check_budget("LinGapE", budget, num_arms, 1)
        sigma = math.sqrt(noise_variance("LinGapE", self.noise_var, env))
        reward_key, own_key = streams(key)
        proj = project(instance.arms)
        z = proj.coords
        width = z.shape[1]
        reg = jnp.asarray(self.reg, z.dtype)
        arange = jnp.arange(num_arms)
        log_pairs = 2.0 * math.log(num_arms) - math.log(self.delta)  # log(K^2 / delta)
        sq_norm = jnp.max(jnp.sum(z**2, axis=1))

        def radius(state: _Round, t: Array) -> Array:
            if self.confidence == "det":
                return sigma * jnp.sqrt(2.0 * log_pairs + state.logdet) + jnp.sqrt(reg) * self.norm_bound
            return sigma * jnp.sqrt(dim * (log_pairs + jnp.log1p(t * sq_norm / reg))) + jnp.sqrt(reg) * self.norm_bound

        def choose(state: _Round, t: Array, keys: Array) -> Array:
            theta = state.ainv @ state.b
            est = z @ theta
            i = random_argmax(keys[0], est)
            g_i = state.ainv @ z[i]
            dist2 = jnp.maximum(state.q[i] + state.q - 2.0 * (z @ g_i), 0.0)
            index = jnp.where(arange == i, -jnp.inf, est - est[i] + jnp.sqrt(dist2) * radius(state, t))
            j = random_argmax(keys[1], index)
            if self.greedy:
                gain = (z @ (g_i - state.ainv @ z[j])) ** 2 / (1.0 + state.q)
                return random_argmax(keys[2], gain)
            p = table[pair_index[i, j]] if table is not None else arm_ratios(z, i, j, max_iter=self.l1_iters)
            ratio = jnp.where(p > SUPPORT_TOL, state.counts / jnp.where(p > SUPPORT_TOL, p, 1.0), jnp.inf)
            return random_argmax(keys[2], -ratio, rtol=RATIO_RTOL)

        def step(state: _Round, t: Array) -> tuple[_Round, None]:
            arm = choose(state, t, jax.random.split(jax.random.fold_in(own_key, t), 3))
            reward = stack_rewards(env, instance, reward_key, arm[None], state.counts[arm][None])[0]
            ainv, g, den = gl.sherman_morrison(state.ainv, z[arm])
            h = z @ g
            return _Round(
                ainv,
                state.b + z[arm] * reward,
                state.q - h**2 / den,
                state.logdet + jnp.log(den),
                state.counts.at[arm].add(1),
            ), None

        table: Array | None = None
        pairs = np.triu_indices(num_arms, 1)
        index_of_pair = np.zeros((num_arms, num_arms), np.int32)
        index_of_pair[pairs] = index_of_pair[pairs[::-1]] = np.arange(pairs[0].size)
        pair_index = jnp.asarray(index_of_pair)
        if not self.greedy and pairs[0].size <= budget - num_arms:
            table = jax.vmap(lambda i, j: arm_ratios(z, i, j, max_iter=self.l1_iters))(*pairs)

        first = stack_rewards(env, instance, reward_key, arange, jnp.zeros(num_arms, jnp.int32))
        gram = z.T @ z
        ainv, factor = gl.invert(gram + reg * jnp.eye(width))
        logdet = 2.0 * jnp.sum(jnp.log(jnp.diag(factor))) - width * jnp.log(reg)
        state = _Round(ainv, z.T @ first, jnp.einsum("kd,de,ke->k", z, ainv, z), logdet, jnp.ones(num_arms, jnp.int32))
        state, _ = jax.lax.scan(step, state, jnp.arange(num_arms, budget))
        theta_z = state.ainv @ state.b
        arm = random_argmax(jax.random.fold_in(own_key, budget), z @ theta_z)
        info = BAIInfo(
            jnp.sum(state.counts), state.counts, jnp.ones((1, num_arms), bool), (proj.basis @ theta_z)[None, :]
        )
        return arm, info
