"""Generalised linear reward models as NumPyro programs.

Each factory returns a frozen, hashable, picklable program ``model(x, y=None)`` with one latent
site ``theta`` of shape ``(d,)`` and one observed site ``y``:

=====================  ==========================================  ===================
factory                likelihood                                  mean reward
=====================  ==========================================  ===================
:func:`logistic`       ``y ~ Bernoulli(sigmoid(x @ theta))``         ``sigmoid(x @ theta)``
:func:`probit`         ``y ~ Bernoulli(Phi(x @ theta))``             ``Phi(x @ theta)``
:func:`poisson`        ``y ~ Poisson(exp(x @ theta))``               ``exp(x @ theta)``
:func:`linear_gaussian` ``y ~ Normal(x @ theta, noise_scale)``       ``x @ theta``
=====================  ==========================================  ===================

The prior on ``theta`` is ``Normal(0, prior_scale)`` per coordinate unless a distribution with
event shape ``(d,)`` (or a scalar one, expanded) is passed as ``prior``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.stats import norm

from bayesbandit.validation import check_choice, check_scalar

__all__ = ["GLM", "logistic", "probit", "poisson", "linear_gaussian"]

_FAMILIES = ("logistic", "probit", "poisson", "linear_gaussian")


@dataclass(frozen=True)
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


def logistic(prior_scale: float = 1.0, *, prior: Any | None = None) -> GLM:
    """Logistic reward model: ``y ~ Bernoulli(sigmoid(x^T theta))``, ``theta ~ N(0, prior_scale^2 I)``.

    Examples
    --------
    >>> from bayesbandit.models import logistic
    >>> logistic(prior_scale=2.0).family
    'logistic'
    """
    return GLM("logistic", prior_scale, prior)


def probit(prior_scale: float = 1.0, *, prior: Any | None = None) -> GLM:
    """Probit reward model: ``y ~ Bernoulli(Phi(x^T theta))`` with ``Phi`` the standard normal CDF."""
    return GLM("probit", prior_scale, prior)


def poisson(prior_scale: float = 1.0, *, prior: Any | None = None) -> GLM:
    """Poisson reward model: ``y ~ Poisson(exp(x^T theta))``."""
    return GLM("poisson", prior_scale, prior)


def linear_gaussian(noise_scale: float = 1.0, prior_scale: float = 1.0, *, prior: Any | None = None) -> GLM:
    """Linear-Gaussian reward model with known noise: ``y ~ N(x^T theta, noise_scale^2)``."""
    return GLM("linear_gaussian", prior_scale, prior, noise_scale)
