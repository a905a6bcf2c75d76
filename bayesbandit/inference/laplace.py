"""Laplace approximation: a Gaussian at the MAP with the Hessian of the potential as precision."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._numerics import cho_solve, solve_lower_transpose
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.inference.newton import NewtonInfo, map_estimate

__all__ = ["Laplace", "laplace"]


class Laplace(NamedTuple):
    """Gaussian ``N(mean, (L L^T)^{-1})`` over the unconstrained parameters.

    ``L`` is the lower Cholesky factor of the precision ``H = nabla^2 U(mean)``; sampling uses a
    triangular solve, ``theta = mean + a L^{-T} xi`` with ``xi ~ N(0, I)``, never an inverse.
    """

    mean: Array  # (p,)
    chol: Array  # (p, p) lower Cholesky factor of the precision
    info: NewtonInfo

    def sample(self, key: PRNGKey, sample_shape: tuple[int, ...] = (), *, a: ArrayLike = 1.0) -> Array:
        """Draw ``theta ~ N(mean, a^2 H^{-1})``; returns shape ``sample_shape + (p,)``."""
        xi = jax.random.normal(key, (*sample_shape, self.mean.shape[0]), dtype=self.mean.dtype)
        offsets = solve_lower_transpose(self.chol, xi.reshape(-1, self.mean.shape[0]).T).T
        return self.mean + a * offsets.reshape(xi.shape)

    def covariance(self) -> Array:
        """The covariance ``H^{-1}``, shape ``(p, p)`` (for inspection; sampling never forms it)."""
        return cho_solve(self.chol, jnp.eye(self.mean.shape[0], dtype=self.mean.dtype))


def laplace(
    model,
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike | None = None,
    *,
    init: ArrayLike | None = None,
    max_steps: int = 50,
    tol: float = 1e-12,
) -> Laplace:
    """Laplace approximation of a reward model's posterior (in unconstrained space).

    .. math::

        p(\\theta \\mid D) \\approx N(\\bar\\theta, H^{-1}), \\quad
        \\bar\\theta = \\arg\\min U(\\theta), \\quad H = \\nabla^2 U(\\bar\\theta),

    which is what GLM-TSL samples from (Kveton et al. 2020, eqs. 4-5, with ``a = 1``).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
    w : array, shape (n,), optional
    init, max_steps, tol : see :func:`bayesbandit.map_estimate`.

    Returns
    -------
    Laplace

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> x = jax.random.normal(jax.random.PRNGKey(0), (50, 2))
    >>> post = bb.laplace(logistic(), x, (x[:, 0] > 0).astype(float))
    >>> post.sample(jax.random.PRNGKey(1), (4,)).shape
    (4, 2)
    """
    fit = map_estimate(model, x, y, w, init=init, max_steps=max_steps, tol=tol)
    return Laplace(fit.theta, fit.chol, fit.info)
