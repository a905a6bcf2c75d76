"""Draws of a bound model -> :class:`arviz.InferenceData` (the one module that knows ArviZ's containers).

Every method (Laplace, FPL, NUTS) produces flat *unconstrained* draws ``theta`` of shape
``(chain, draw, p)``. This module maps them through :meth:`bayesbandit.inference.BoundModel.constrain`
(vmapped) so the ``posterior`` group holds the program's own latent sites, constrained, with dims
``("chain", "draw", <site>_dim_0, ...)``, and keeps the same draws split per site, unconstrained,
in the ``unconstrained_posterior`` group (an ArviZ schema group). When ArviZ moves to
``xarray.DataTree`` (ArviZ 1.x) only this file changes.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from numpyro import handlers
from numpyro.distributions import biject_to

import bayesbandit as bb
from bayesbandit._compile import TRACE_LOCK
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

from ._arviz import az

__all__ = ["to_inference_data", "flat_parameter_names", "flat_parameters", "SAMPLE_STATS_NAMES"]

#: NumPyro extra field -> ArviZ ``sample_stats`` name (as ``arviz.from_numpyro`` names them).
SAMPLE_STATS_NAMES: dict[str, str] = {
    "diverging": "diverging",
    "num_steps": "n_steps",
    "accept_prob": "acceptance_rate",
    "energy": "energy",
    "adapt_state.step_size": "step_size",
}


# Draws are constrained in chunks of this many rows: one compiled program per bound model, whatever
# the number of draws (Laplace's, the FPL ensemble's and NUTS's chains x draws differ).
_CHUNK = 512


@functools.lru_cache(maxsize=128)
def _constrain_chunk(bound: bb.inference.BoundModel):
    return jax.jit(jax.vmap(bound.constrain))


def _constrained(bound: bb.inference.BoundModel, draws: np.ndarray) -> dict[str, np.ndarray]:
    """``bound.constrain`` of every draw of shape ``(chain, draw, p)``, per site ``(chain, draw, *shape)``."""
    chains, num_draws, p = draws.shape
    flat = draws.reshape(chains * num_draws, p)
    pad = -len(flat) % _CHUNK
    padded = np.concatenate([flat, np.repeat(flat[-1:], pad, axis=0)])
    parts = [_constrain_chunk(bound)(jnp.asarray(padded[i : i + _CHUNK])) for i in range(0, len(padded), _CHUNK)]
    return {
        name: np.concatenate([np.asarray(part[name]) for part in parts])[: len(flat)].reshape(
            chains, num_draws, *bound.site_shapes[name]
        )
        for name in bound.site_names
    }


def _unconstrained(bound: bb.inference.BoundModel, draws: np.ndarray) -> dict[str, np.ndarray]:
    """The flat draws split per site (``bound.unravel`` on every draw, by slicing)."""
    chains, num_draws, _ = draws.shape
    shapes = bound.site_shapes
    return {name: draws[..., sl].reshape(chains, num_draws, *shapes[name]) for name, sl in bound.site_slices().items()}


def _chains_of_independent(num_draws: int) -> int:
    """Chains to split ``num_draws`` independent draws into: 4, 3 or 2 chains of >= 4 draws each, else 1."""
    return next((k for k in (4, 3, 2) if num_draws % k == 0 and num_draws // k >= 4), 1)


def flat_parameter_names(bound: bb.inference.BoundModel) -> list[str]:
    """Labels of the flat unconstrained vector, in :func:`jax.flatten_util.ravel_pytree` order.

    A site ``theta`` of shape ``(3,)`` gives ``theta[0], theta[1], theta[2]``; a scalar site
    ``sigma`` gives ``sigma`` (ArviZ's label style).
    """
    names: list[str] = []
    for site in sorted(bound.site_names):
        shape = bound.site_shapes[site]
        if shape == ():
            names.append(site)
        else:
            names.extend(f"{site}[{','.join(map(str, idx))}]" for idx in np.ndindex(*shape))
    return names


def flat_parameters(model_or_bound: Any, values: Mapping[str, Any], *, d: int | None = None) -> np.ndarray:
    """The flat unconstrained vector ``theta`` of given (constrained) latent site values.

    The inverse of :meth:`bayesbandit.inference.BoundModel.constrain`: every site's value ``z_s``
    is mapped to the real line by the inverse of its support's bijection,
    ``theta_s = T_s^{-1}(z_s)`` with ``T_s = numpyro.distributions.biject_to(support_s)`` (``log``
    for a positive scale, logit for a unit interval, identity for a real site), and the blocks are
    laid out as :meth:`~bayesbandit.inference.BoundModel.site_slices` says. This is the
    ``theta_true`` that :func:`along_run` and every ``BoundModel`` method take.

    Parameters
    ----------
    model_or_bound : NumPyro program or BoundModel
        The reward program (then ``d`` is needed) or the program bound to its feature shape.
    values : mapping of str to array-like
        One value per latent site, in the constrained space the program samples it in, e.g.
        ``{"beta": [0.5, -1.0, 0.2], "tau": 0.5}``; each of the site's shape
        (:attr:`~bayesbandit.inference.BoundModel.site_shapes`).
    d : int, optional
        Number of features, to bind a program given unbound.

    Returns
    -------
    numpy.ndarray, shape (p,)
        Float64 flat unconstrained parameters; ``bound.constrain(theta)`` gives ``values`` back.

    Raises
    ------
    InvalidInput
        If ``d`` is missing for an unbound program, a site is missing or unknown, a value has the
        wrong shape, or a value lies outside its site's support.

    Examples
    --------
    >>> import numpyro, numpyro.distributions as dist
    >>> def model(x, y=None):
    ...     beta = numpyro.sample("beta", dist.Normal(0, 1).expand([x.shape[-1]]).to_event(1))
    ...     tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    ...     with numpyro.plate("rows", x.shape[0]):
    ...         numpyro.sample("y", dist.Normal(x @ beta, tau), obs=y)
    >>> flat_parameters(model, {"beta": [0.5, -1.0], "tau": 1.0}, d=2)  # tau enters as log(tau)
    array([ 0.5, -1. ,  0. ])
    """
    if isinstance(model_or_bound, bb.inference.BoundModel):
        bound = model_or_bound
    elif d is None:
        raise InvalidInput(
            "flat_parameters: 'd', the number of features, is needed to bind an unbound program. Got d=None. "
            "Fix: pass d=<number of features>, or a BoundModel (bb.bind(model, x))."
        )
    else:
        d = check_int("flat_parameters", "d", d, low=1)
        bound = bb.bind(model_or_bound, np.zeros((1, d)))
    if not isinstance(values, Mapping):
        raise InvalidInput(
            f"flat_parameters: 'values' must be a dict of latent site name to value. Got {type(values).__name__}. "
            f"Fix: pass e.g. {{{', '.join(f'{s!r}: ...' for s in bound.site_names)}}}."
        )
    shapes = bound.site_shapes
    missing = [s for s in bound.site_names if s not in values]
    extra = [s for s in values if s not in shapes]
    if missing or extra:
        raise InvalidInput(
            f"flat_parameters: 'values' must hold exactly the latent sites {list(bound.site_names)}. Got "
            f"{list(values)} (missing {missing}, unknown {extra}). Fix: give one value per latent site, "
            "and none for the observed or deterministic sites."
        )
    arrays = {}
    for site, shape in shapes.items():
        try:
            arrays[site] = np.asarray(values[site], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(
                f"flat_parameters: the value of site '{site}' must be numeric of shape {shape}. Got "
                f"{values[site]!r}. Fix: pass a float or a list of floats."
            ) from exc
        if arrays[site].shape != shape:
            raise InvalidInput(
                f"flat_parameters: the value of site '{site}' must have shape {shape}. Got shape "
                f"{arrays[site].shape}. Fix: pass one value per element of the site."
            )
    # The program run with these values gives every site's support (a support may depend on
    # another site's value).
    x = jnp.zeros((1, *bound.feature_shape))
    with TRACE_LOCK, jax.ensure_compile_time_eval(), numpyro.validation_enabled(False):
        program = handlers.substitute(handlers.seed(bound.model, rng_seed=0), data=arrays)
        trace = handlers.trace(program).get_trace(x, None)
    blocks = {}
    for site in (name for name in trace if name in arrays):  # the program's order: a support's own sites first
        value = arrays[site]
        support = trace[site]["fn"].support
        if not bool(np.all(support.check(jnp.asarray(value)))):
            raise InvalidInput(
                f"flat_parameters: the value of site '{site}' must lie in its support ({support}). Got "
                f"{value.tolist()}. Fix: pass a value the site's prior can produce (a scale > 0, a probability "
                "in (0, 1)...)."
            )
        blocks[site] = np.ravel(np.asarray(biject_to(support).inv(jnp.asarray(value)), dtype=np.float64))
    return np.concatenate([blocks[site] for site in bound.site_slices()])


def to_inference_data(
    bound: bb.inference.BoundModel,
    draws: np.ndarray,
    *,
    method: str,
    sample_stats: dict[str, np.ndarray] | None = None,
    attrs: dict[str, Any] | None = None,
    independent: bool = False,
) -> az.InferenceData:
    """Wrap unconstrained draws of a bound model as an :class:`arviz.InferenceData`.

    Parameters
    ----------
    bound : BoundModel
    draws : array, shape (chain, draw, p)
        Flat unconstrained parameters (``p = bound.num_params``).
    method : str
        Name stored in the attributes (``"laplace"``, ``"fpl"``, ``"nuts"``).
    sample_stats : dict of str to array of shape (chain, draw), optional
        Sampler statistics, already under ArviZ names (``diverging``, ``energy``...).
    attrs : dict, optional
        Extra attributes for every group.
    independent : bool
        The draws are independent, not a Markov chain (Laplace draws, an FPL ensemble). A single
        chain of ``N`` of them is then stored as ``c`` chains of ``N / c`` draws (``c`` the first of
        4, 3, 2 dividing ``N`` with at least 4 draws per chain; 1 if none does), so that
        :func:`arviz.summary` and the other convergence checks, which need at least two chains, are
        defined: for independent draws the split R-hat is about 1 (above ``1.01`` only by Monte Carlo
        chance, or when draws are not exchangeable, e.g. sorted) and the ESS about ``N``. The
        attribute ``draws_split_into_chains`` records ``c``.

    Returns
    -------
    arviz.InferenceData
        Groups ``posterior`` (constrained site values), ``unconstrained_posterior`` and, when
        given, ``sample_stats``; all share the dims ``("chain", "draw")``.

    Raises
    ------
    InvalidInput
        If ``draws`` does not have shape ``(chain, draw, p)``.

    Examples
    --------
    >>> import numpy as np, bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bound = bb.bind(logistic(), np.zeros((1, 2)))
    >>> idata = to_inference_data(bound, np.zeros((1, 100, 2)), method="laplace", independent=True)
    >>> dict(idata.posterior.sizes)
    {'chain': 4, 'draw': 25, 'theta_dim_0': 2}
    """
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 3 or draws.shape[-1] != bound.num_params:
        raise InvalidInput(
            f"to_inference_data: 'draws' must have shape (chain, draw, {bound.num_params}). Got shape {draws.shape}. "
            "Fix: pass flat unconstrained draws, e.g. draws[None] for a single chain."
        )
    all_attrs = {"method": method, "inference_library": "bayesbandit", **(attrs or {})}
    if independent and draws.shape[0] == 1:
        chains = _chains_of_independent(draws.shape[1])
        draws = draws.reshape(chains, -1, bound.num_params)
        all_attrs["draws_split_into_chains"] = chains
    posterior = _constrained(bound, draws)
    unconstrained = _unconstrained(bound, draws)
    idata = az.from_dict(posterior=posterior, sample_stats=sample_stats, attrs=all_attrs)
    idata.add_groups(unconstrained_posterior=az.dict_to_dataset(unconstrained, attrs=all_attrs))
    return idata
