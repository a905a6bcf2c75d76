"""Fit one posterior approximation on a bound model and data: Laplace, FPL ensemble, NUTS.

Each fitter returns a :class:`MethodFit` with flat *unconstrained* draws of shape
``(chain, draw, p)`` and a Gaussian summary of them in the same space. All three work on the
same weighted potential :meth:`bayesbandit.inference.BoundModel.potential`, so weighted or compressed
histories (per-arm counts and mean rewards) are handled identically by every method.
"""

from __future__ import annotations

import functools
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer.hmc import hmc

import bayesbandit as bb
from bayesbandit._compile import jit_once
from bayesbandit.errors import InvalidInput

from ._metrics import moments

__all__ = ["MethodFit", "fit_laplace", "fit_fpl", "fit_nuts"]

# Rows x parameters x ensemble members evaluated at once by the FPL ensemble (memory bound).
_FPL_BATCH_ELEMENTS = 2**22


class MethodFit(NamedTuple):
    """One method's posterior in unconstrained space (``mean`` and ``cov`` are NaN where the draws are not finite)."""

    name: str
    draws: np.ndarray  # (chain, draw, p) flat unconstrained draws
    mean: np.ndarray  # (p,)  Gaussian summary: Laplace's MAP, else the draws' mean
    cov: np.ndarray  # (p, p) Laplace's H^{-1}, else the draws' covariance
    sample_stats: dict[str, np.ndarray] | None  # ArviZ-named sampler statistics, (chain, draw)
    info: dict[str, Any]  # converged fits, wall time, settings


def fit_laplace(
    bound: bb.inference.BoundModel, x: jax.Array, y: jax.Array, w: jax.Array, key: jax.Array, *, num_draws: int
) -> tuple[MethodFit, bb.inference.Laplace]:
    """Laplace approximation ``N(bar theta, H^{-1})`` and ``num_draws`` draws from it.

    ``bar theta`` minimises the potential ``U`` (damped Newton) and ``H = nabla^2 U(bar theta)``
    (:func:`bayesbandit.laplace`). Draws use the Cholesky factor of ``H`` (triangular solve).

    Returns
    -------
    fit : MethodFit
        Draws of shape ``(1, num_draws, p)``; ``mean``/``cov`` are the exact Gaussian.
    laplace : bayesbandit.inference.Laplace
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
    bound: bb.inference.BoundModel,
    x: jax.Array,
    y: jax.Array,
    w: jax.Array,
    key: jax.Array,
    *,
    num_draws: int,
    a: float,
    noise: str,
    init: jax.Array,
) -> MethodFit:
    """An ensemble of ``num_draws`` perturbed MAP fits (the GLM-FPL posterior).

    Member ``k`` is :func:`bayesbandit.perturbed_map` with its own key, scale ``a`` and ``noise``
    (GLM-FPL's draw: the prior and the history perturbed), warm-started at ``init`` (the MAP).
    Members are solved with :func:`jax.lax.map` over vmapped batches.

    Returns
    -------
    MethodFit
        Draws of shape ``(1, num_draws, p)``; ``mean``/``cov`` are their moments. Members
        whose Newton solve did not converge are kept (and counted in ``info``).
    """
    start = time.perf_counter()
    batch = int(max(1, min(num_draws, _FPL_BATCH_ELEMENTS // max(1, x.shape[0] * bound.num_params))))
    theta, converged = _fpl_fn(bound, num_draws, batch, noise)(x, y, w, key, jnp.asarray(a, x.dtype), init)
    draws = np.asarray(theta)[None]
    mean, cov = moments(draws[0])
    num_converged = int(np.sum(np.asarray(converged)))
    info = {
        "converged": num_converged == num_draws,
        "num_converged": num_converged,
        "num_fits": num_draws,
        "a": float(a),
        "noise": noise,
        "time_s": time.perf_counter() - start,
    }
    return MethodFit("fpl", draws, mean, cov, None, info)


def fit_nuts(
    bound: bb.inference.BoundModel,
    x: jax.Array,
    y: jax.Array,
    w: jax.Array,
    key: jax.Array,
    *,
    num_draws: int,
    num_warmup: int,
    num_chains: int,
    init: jax.Array,
    chain_method: str = "sequential",
    dense_mass: bool = True,
    target_accept_prob: float = 0.8,
    max_tree_depth: int = 10,
) -> MethodFit:
    """NUTS on the bound potential in unconstrained space (the exact reference).

    Drives NumPyro's functional NUTS kernel (:func:`numpyro.infer.hmc.hmc` with
    ``potential_fn_gen``) on ``U(theta; x, y, w)``: the same weighted negative log joint the
    approximations use, so a compressed history is exact for affine likelihoods. Warm-up
    (windowed step-size and mass-matrix adaptation, as in :class:`numpyro.infer.MCMC`) and draws
    run in one :func:`jax.lax.scan` per chain, chains are vmapped (``"vectorized"``) or mapped
    (``"sequential"``; ``"parallel"`` uses :func:`jax.pmap` when there are enough devices). The
    data are traced arguments, so the sampler is compiled once per bound model, data shape and
    setting, and reused (for instance by :func:`along_run`, whose per-arm history keeps one
    shape). Chains start at ``init`` of shape ``(num_chains, p)``.

    Returns
    -------
    MethodFit
        Draws of shape ``(num_chains, num_draws, p)``, their moments, and ``sample_stats``
        (``diverging``, ``n_steps``, ``acceptance_rate``, ``energy``, ``step_size``, ``lp``).
    """
    if chain_method not in ("vectorized", "sequential", "parallel"):
        raise InvalidInput(
            f"fit_nuts: chain_method must be 'vectorized', 'sequential' or 'parallel'. Got {chain_method!r}. "
            "Fix: pass one of those names."
        )
    if chain_method == "parallel" and jax.local_device_count() < num_chains:
        chain_method = "sequential"  # as numpyro.infer.MCMC does, without the warning
    start = time.perf_counter()
    fn = _nuts_fn(
        bound,
        int(num_warmup),
        int(num_draws),
        chain_method,
        bool(dense_mass),
        float(target_accept_prob),
        int(max_tree_depth),
    )
    keys = jax.random.split(key, num_chains)
    init = jnp.asarray(init, dtype=x.dtype).reshape(num_chains, bound.num_params)
    out = jax.device_get(fn(x, y, w, keys, init))
    draws = np.asarray(out.pop("z")).reshape(num_chains, num_draws, bound.num_params)
    stats = {name: np.asarray(v).reshape(num_chains, num_draws) for name, v in out.items()}
    mean, cov = moments(draws.reshape(-1, bound.num_params))
    info = {
        "num_chains": num_chains,
        "num_warmup": num_warmup,
        "num_draws": num_draws,
        "chain_method": chain_method,
        "time_s": time.perf_counter() - start,
    }
    return MethodFit("nuts", draws, mean, cov, stats, info)


# ------------------------------------------------------------------------------ compiled pieces
# Each is compiled once per bound model (static: it is hashable), setting and data shape, with the
# data as traced arguments, and reused (for instance by along_run, whose per-arm history keeps one
# shape): on a CPU, compiling Newton or NUTS costs far more than running it on a bandit-sized
# history.


@functools.lru_cache(maxsize=64)
def _laplace_fn(bound: bb.inference.BoundModel, num_draws: int):
    @jit_once
    def fn(x, y, w, key):
        post = bb.laplace(bound, x, y, w)
        return post, post.sample(key, (1, num_draws)), post.covariance()

    return fn


@functools.lru_cache(maxsize=64)
def _fpl_fn(bound: bb.inference.BoundModel, num_draws: int, batch: int, noise: str):
    @jit_once
    def fn(x, y, w, key, a, init):
        def one(k):
            res = bb.perturbed_map(k, bound, x, y, w, a=a, noise=noise, init=init)
            return res.theta, res.info.converged

        return jax.lax.map(one, jax.random.split(key, num_draws), batch_size=batch)

    return fn


@functools.lru_cache(maxsize=64)
def _nuts_fn(
    bound: bb.inference.BoundModel,
    num_warmup: int,
    num_draws: int,
    chain_method: str,
    dense_mass: bool,
    target_accept_prob: float,
    max_tree_depth: int,
):
    def potential_fn_gen(x, y, w):
        return lambda theta: bound.potential(theta, x, y, w)

    def one_chain(data, key, z0):
        # hmc() keeps warm-up settings in its closure: build it inside the trace.
        init_kernel, sample_kernel = hmc(potential_fn_gen=potential_fn_gen, algo="NUTS")
        state = init_kernel(
            z0,
            num_warmup,
            dense_mass=dense_mass,
            target_accept_prob=target_accept_prob,
            max_tree_depth=max_tree_depth,
            model_args=data,
            rng_key=key,
        )

        def step(s, _):
            s = sample_kernel(s, model_args=data)
            return s, {
                "z": s.z,
                "diverging": s.diverging,
                "n_steps": s.num_steps,
                "acceptance_rate": s.accept_prob,
                "energy": s.energy,
                "step_size": s.adapt_state.step_size,
                "lp": -s.potential_energy,
            }

        # One scan over warm-up and draws (one trace of the kernel); warm-up outputs are dropped.
        _, out = jax.lax.scan(step, state, None, length=num_warmup + num_draws)
        return jax.tree_util.tree_map(lambda v: v[num_warmup:], out)

    if chain_method == "parallel":
        chains = jax.pmap(one_chain, in_axes=(None, 0, 0))
        return lambda x, y, w, keys, init: chains((x, y, w), keys, init)

    @jax.jit
    def fn(x, y, w, keys, init):
        data = (x, y, w)
        if chain_method == "vectorized":
            return jax.vmap(one_chain, in_axes=(None, 0, 0))(data, keys, init)
        return jax.lax.map(lambda a: one_chain(data, *a), (keys, init))

    return fn
