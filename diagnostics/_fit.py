"""Fit one posterior approximation on a bound model and data: Laplace, FPL ensemble, NUTS.

Each fitter returns a :class:`MethodFit` with flat *unconstrained* draws of shape
``(chain, draw, p)`` and a Gaussian summary of them in the same space. All three work on the
same weighted potential :meth:`bayesbandit.BoundModel.potential`, so weighted or compressed
histories (per-arm counts and mean rewards) are handled identically by every method.
"""

from __future__ import annotations

import functools
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import MCMC, NUTS

import bayesbandit as bb

from ._convert import SAMPLE_STATS_NAMES
from ._metrics import fit_gaussian

__all__ = ["MethodFit", "fit_laplace", "fit_fpl", "fit_nuts"]

# Rows x parameters x ensemble members evaluated at once by the FPL ensemble (memory bound).
_FPL_BATCH_ELEMENTS = 2**22


class MethodFit(NamedTuple):
    """One method's posterior in unconstrained space."""

    name: str
    draws: np.ndarray  # (chain, draw, p) flat unconstrained draws
    mean: np.ndarray  # (p,)  Gaussian summary: Laplace's MAP, else the draws' mean
    cov: np.ndarray  # (p, p) Laplace's H^{-1}, else the draws' covariance
    sample_stats: dict[str, np.ndarray] | None  # ArviZ-named sampler statistics, (chain, draw)
    info: dict[str, Any]  # converged fits, wall time, settings


def fit_laplace(
    bound: bb.BoundModel, x: jax.Array, y: jax.Array, w: jax.Array, key: jax.Array, *, num_draws: int
) -> tuple[MethodFit, bb.Laplace]:
    """Laplace approximation ``N(bar theta, H^{-1})`` and ``num_draws`` draws from it.

    ``bar theta`` minimises the potential ``U`` (damped Newton) and ``H = nabla^2 U(bar theta)``
    (:func:`bayesbandit.laplace`). Draws use the Cholesky factor of ``H`` (triangular solve).

    Returns
    -------
    fit : MethodFit
        Draws of shape ``(1, num_draws, p)``; ``mean``/``cov`` are the exact Gaussian.
    laplace : bayesbandit.Laplace
        The fitted approximation (its MAP warm-starts FPL and initialises NUTS).
    """
    start = time.perf_counter()
    post, draws, cov = _laplace_fn(bound, num_draws)(x, y, w, key)
    draws, cov = np.asarray(draws), np.asarray(cov)
    info = {
        "converged": bool(post.info.converged) and bool(np.all(np.isfinite(np.asarray(post.chol)))),
        "num_converged": int(bool(post.info.converged)),
        "num_fits": 1,
        "time_s": time.perf_counter() - start,
    }
    return MethodFit("laplace", draws, np.asarray(post.mean), cov, None, info), post


def fit_fpl(
    bound: bb.BoundModel,
    x: jax.Array,
    y: jax.Array,
    w: jax.Array,
    key: jax.Array,
    *,
    num_draws: int,
    a: float,
    init: jax.Array,
) -> MethodFit:
    """An ensemble of ``num_draws`` perturbed MAP fits (the GLM-FPL posterior).

    Member ``k`` is ``argmin_theta U(theta; x, y + a xi_k / sqrt(w), w)`` with fresh
    ``xi_k ~ N(0, I)`` (:func:`bayesbandit.perturbed_map`), warm-started at ``init`` (the MAP).
    Members are solved with :func:`jax.lax.map` over vmapped batches.

    Returns
    -------
    MethodFit
        Draws of shape ``(1, num_draws, p)``; ``mean``/``cov`` are their moments. Members
        whose Newton solve did not converge are kept (and counted in ``info``).
    """
    start = time.perf_counter()
    batch = int(max(1, min(num_draws, _FPL_BATCH_ELEMENTS // max(1, x.shape[0] * bound.num_params))))
    theta, converged = _fpl_fn(bound, num_draws, batch)(x, y, w, key, jnp.asarray(a, x.dtype), init)
    draws = np.asarray(theta)[None]
    mean, cov = fit_gaussian(draws[0])
    num_converged = int(np.sum(np.asarray(converged)))
    info = {
        "converged": num_converged == num_draws,
        "num_converged": num_converged,
        "num_fits": num_draws,
        "a": float(a),
        "time_s": time.perf_counter() - start,
    }
    return MethodFit("fpl", draws, mean, cov, None, info)


def fit_nuts(
    bound: bb.BoundModel,
    x: jax.Array,
    y: jax.Array,
    w: jax.Array,
    key: jax.Array,
    *,
    num_draws: int,
    num_warmup: int,
    num_chains: int,
    init: jax.Array,
    chain_method: str = "vectorized",
    dense_mass: bool = True,
    target_accept_prob: float = 0.8,
) -> MethodFit:
    """NUTS on the bound potential in unconstrained space (the exact reference).

    Runs ``numpyro.infer.MCMC(NUTS(potential_fn=lambda t: U(t; x, y, w)))``: the same weighted
    negative log joint the approximations use, so a compressed history is exact for affine
    likelihoods. Chains start at ``init`` of shape ``(num_chains, p)``. (NumPyro compiles its
    sampling loop on every run, about 5-10 s on a small CPU; Laplace and FPL, below, are
    compiled once per model, setting and data shape.)

    Returns
    -------
    MethodFit
        Draws of shape ``(num_chains, num_draws, p)``, their moments, and ``sample_stats``
        (``diverging``, ``n_steps``, ``acceptance_rate``, ``energy``, ``step_size``, ``lp``).
    """
    start = time.perf_counter()
    kernel = NUTS(
        potential_fn=lambda t: bound.potential(t, x, y, w),
        dense_mass=dense_mass,
        target_accept_prob=target_accept_prob,
    )
    mcmc = MCMC(
        kernel,
        num_warmup=num_warmup,
        num_samples=num_draws,
        num_chains=num_chains,
        chain_method=chain_method,
        progress_bar=False,
    )
    fields = (*SAMPLE_STATS_NAMES, "potential_energy")
    init = jnp.asarray(init)
    mcmc.run(key, init_params=init if num_chains > 1 else init[0], extra_fields=fields)
    draws = np.asarray(mcmc.get_samples(group_by_chain=True)).reshape(num_chains, num_draws, bound.num_params)
    extra = mcmc.get_extra_fields(group_by_chain=True)
    stats = {SAMPLE_STATS_NAMES[k]: np.asarray(extra[k]).reshape(num_chains, num_draws) for k in SAMPLE_STATS_NAMES}
    stats["lp"] = -np.asarray(extra["potential_energy"]).reshape(num_chains, num_draws)
    mean, cov = fit_gaussian(draws.reshape(-1, bound.num_params))
    info = {
        "num_chains": num_chains,
        "num_warmup": num_warmup,
        "num_draws": num_draws,
        "chain_method": chain_method,
        "time_s": time.perf_counter() - start,
    }
    return MethodFit("nuts", draws, mean, cov, stats, info)


# ------------------------------------------------------------------------------ compiled pieces
# Each is compiled once per bound model, setting and data shape, and reused (for instance by
# along_run, whose per-arm history keeps one shape): on a CPU, compiling Newton costs far more
# than running it on a bandit-sized history.


@functools.lru_cache(maxsize=64)
def _laplace_fn(bound: bb.BoundModel, num_draws: int):
    @jax.jit
    def fn(x, y, w, key):
        post = bb.laplace(bound, x, y, w)
        return post, post.sample(key, (1, num_draws)), post.covariance()

    return fn


@functools.lru_cache(maxsize=64)
def _fpl_fn(bound: bb.BoundModel, num_draws: int, batch: int):
    @jax.jit
    def fn(x, y, w, key, a, init):
        def one(k):
            res = bb.perturbed_map(bound, x, y, w, k, a=a, init=init)
            return res.theta, res.info.converged

        return jax.lax.map(one, jax.random.split(key, num_draws), batch_size=batch)

    return fn
