"""Perturbed-history MAP: the randomisation behind GLM-FPL (Kveton et al. 2020, eq. 6)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.inference.newton import NewtonResult, map_estimate

__all__ = ["perturb_rewards", "perturbed_map"]


def perturb_rewards(key: PRNGKey, y: Array, w: Array, a: ArrayLike) -> Array:
    """Add fresh Gaussian noise to a weighted history.

    A row of weight ``w`` and reward ``y`` stands for ``w`` observations whose mean is ``y``.
    Adding ``N(0, a^2)`` to each of them shifts their mean by ``N(0, a^2 / w)``, so

    .. math::  \\tilde y = y + a\\, \\xi / \\sqrt{w}, \\qquad \\xi \\sim N(0, 1),

    which for per-arm sufficient statistics (``w = n_i``, ``y`` the mean reward of arm ``i``)
    is the paper's ``Y_i + N(0, n_i a^2)`` on the reward sum. Rows of weight zero are untouched.

    Parameters
    ----------
    key : PRNGKey
    y : array, shape (n,)
    w : array, shape (n,)
    a : float
        Perturbation scale.
    """
    xi = jax.random.normal(key, y.shape, dtype=y.dtype)
    return jnp.where(w > 0, y + a * xi / jnp.sqrt(jnp.where(w > 0, w, 1.0)), y)


def perturbed_map(
    model,
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike | None = None,
    key: PRNGKey | None = None,
    *,
    a: ArrayLike = 1.0,
    init: ArrayLike | None = None,
    max_steps: int = 50,
    tol: float = 1e-12,
) -> NewtonResult:
    """MAP estimate on rewards perturbed with fresh ``N(0, a^2)`` noise per observation.

    .. math::

        \\tilde\\theta = \\arg\\min_\\theta U(\\theta; x, y + Z, w), \\qquad Z_\\ell \\sim N(0, a^2),

    the GLM-FPL estimate (Kveton et al. 2020, eq. 6). The perturbed rewards leave the
    likelihood's support (they are real numbers) and are not clipped; for affine likelihoods the
    potential stays exact there (see :mod:`bayesbandit.inference.bind`).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
    w : array, shape (n,), optional
    key : PRNGKey
        Fresh for each call; the same key gives the same perturbation.
    a : float
        Perturbation scale (``a = 0`` is follow-the-leader).
    init, max_steps, tol : see :func:`bayesbandit.map_estimate`.

    Returns
    -------
    NewtonResult
    """
    if key is None:
        raise TypeError("perturbed_map needs a PRNG key: perturbed_map(model, x, y, w, key, a=...).")
    x = jnp.asarray(x, dtype=jnp.float64)
    y = jnp.asarray(y, dtype=x.dtype)
    w = jnp.ones(y.shape, x.dtype) if w is None else jnp.asarray(w, dtype=x.dtype)
    return map_estimate(model, x, perturb_rewards(key, y, w, a), w, init=init, max_steps=max_steps, tol=tol)
