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
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import bayesbandit as bb

from ._arviz import az

__all__ = ["to_inference_data", "flat_parameter_names", "SAMPLE_STATS_NAMES"]

#: NumPyro extra field -> ArviZ ``sample_stats`` name (as ``arviz.from_numpyro`` names them).
SAMPLE_STATS_NAMES: dict[str, str] = {
    "diverging": "diverging",
    "num_steps": "n_steps",
    "accept_prob": "acceptance_rate",
    "energy": "energy",
    "adapt_state.step_size": "step_size",
}


@functools.lru_cache(maxsize=128)
def _vmapped(bound: bb.inference.BoundModel, which: str):
    # Compiled once per bound model (and draw count), not once per call.
    return jax.jit(jax.vmap(getattr(bound, which)))


def _per_site(bound: bb.inference.BoundModel, draws: np.ndarray, which: str) -> dict[str, np.ndarray]:
    chains, num_draws, p = draws.shape
    flat = jnp.asarray(draws.reshape(chains * num_draws, p))
    values = _vmapped(bound, which)(flat)
    return {name: np.asarray(v).reshape(chains, num_draws, *np.shape(v)[1:]) for name, v in values.items()}


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


def to_inference_data(
    bound: bb.inference.BoundModel,
    draws: np.ndarray,
    *,
    method: str,
    sample_stats: dict[str, np.ndarray] | None = None,
    attrs: dict[str, Any] | None = None,
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

    Returns
    -------
    arviz.InferenceData
        Groups ``posterior`` (constrained site values), ``unconstrained_posterior`` and, when
        given, ``sample_stats``; all share the dims ``("chain", "draw")``.
    """
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 3 or draws.shape[-1] != bound.num_params:
        raise ValueError(f"draws must have shape (chain, draw, {bound.num_params}); got {draws.shape}.")
    all_attrs = {"method": method, "inference_library": "bayesbandit", **(attrs or {})}
    posterior = _per_site(bound, draws, "constrain")
    unconstrained = _per_site(bound, draws, "unravel")
    idata = az.from_dict(posterior=posterior, sample_stats=sample_stats, attrs=all_attrs)
    idata.add_groups(unconstrained_posterior=az.dict_to_dataset(unconstrained, attrs=all_attrs))
    return idata
