"""The generalised linear reward program :class:`GLM`, the one reward program the core builds itself.

The model zoo's GLM factories (:func:`bayesbandit.models.logistic`, ``probit``, ``poisson``,
``linear_gaussian``) return it, and the neural-linear policies use ``GLM(family="logistic")`` as their
default head: the same program, whichever way it is built.

.. math::

    \\theta \\sim \\text{prior}, \\qquad y_i \\mid x_i, \\theta \\sim F(\\mu(x_i^T \\theta)),

with ``F(mu)`` Bernoulli with logit ``eta`` (logistic), Bernoulli with probability ``Phi(eta)``
(probit), Poisson with rate ``exp(eta)``, or Normal with mean ``eta`` and a known scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.stats import norm

from bayesbandit.validation import check_choice, check_scalar

__all__ = ["GLM"]

_FAMILIES = ("logistic", "probit", "poisson", "linear_gaussian")


@dataclass(frozen=True, kw_only=True)
class GLM:
    """A generalised linear reward model ``y | x ~ F(mu(x^T theta))`` with a prior on ``theta``.

    Parameters
    ----------
    family : {"logistic", "probit", "poisson", "linear_gaussian"}
    prior_scale : float
        Standard deviation of the default ``Normal(0, prior_scale)`` prior per coordinate.
    prior : numpyro Distribution, optional
        Prior on ``theta``; scalar (expanded to ``(d,)``) or with event shape ``(d,)``.
    noise_scale : float
        Known reward noise (``linear_gaussian`` only).
    """

    family: str
    prior_scale: float = 1.0
    prior: Any | None = None
    noise_scale: float = 1.0

    def __post_init__(self) -> None:
        check_choice("GLM", "family", self.family, _FAMILIES)
        check_scalar(self.family, "prior_scale", self.prior_scale, low=0.0, low_open=True, high_open=True)
        check_scalar(self.family, "noise_scale", self.noise_scale, low=0.0, low_open=True, high_open=True)

    def _prior(self, d: int) -> dist.Distribution:
        if self.prior is None:
            return dist.Normal(0.0, self.prior_scale).expand([d]).to_event(1)
        if self.prior.event_shape == ():
            return self.prior.expand([d]).to_event(1)
        return self.prior

    def __call__(self, x: jnp.ndarray, y: jnp.ndarray | None = None) -> None:
        theta = numpyro.sample("theta", self._prior(x.shape[-1]))
        eta = x @ theta
        with numpyro.plate("data", x.shape[0]):
            numpyro.sample("y", self._likelihood(eta), obs=y)

    def _likelihood(self, eta: jnp.ndarray) -> dist.Distribution:
        if self.family == "logistic":
            return dist.Bernoulli(logits=eta)
        if self.family == "probit":
            # logit(Phi(eta)) computed in log space stays finite for large |eta|.
            return dist.Bernoulli(logits=norm.logcdf(eta) - norm.logcdf(-eta))
        if self.family == "poisson":
            return dist.Poisson(jnp.exp(eta))
        return dist.Normal(eta, self.noise_scale)
