"""Generalised linear reward models as NumPyro programs.

Each factory returns a frozen, hashable, picklable program ``model(x, y=None)``, a
:class:`~bayesbandit.inference.glm_program.GLM`, with one latent site ``theta`` of shape ``(d,)``
and one observed site ``y``:

==============================================================  ==========================================  ======================
factory                                                         likelihood                                  mean reward
==============================================================  ==========================================  ======================
:func:`logistic`                                                ``y ~ Bernoulli(sigmoid(x @ theta))``       ``sigmoid(x @ theta)``
:func:`probit`                                                  ``y ~ Bernoulli(Phi(x @ theta))``           ``Phi(x @ theta)``
:func:`poisson`                                                 ``y ~ Poisson(exp(x @ theta))``             ``exp(x @ theta)``
:func:`linear_gaussian` ``y ~ Normal(x @ theta, noise_scale)``  ``x @ theta``
==============================================================  ==========================================  ======================

The prior on ``theta`` is ``Normal(0, prior_scale)`` per coordinate unless a distribution with
event shape ``(d,)`` (or a scalar one, expanded) is passed as ``prior``.
"""

from __future__ import annotations

from typing import Any

from bayesbandit.inference.glm_program import GLM

__all__ = ["GLM", "logistic", "probit", "poisson", "linear_gaussian"]


def logistic(*, prior_scale: float = 1.0, prior: Any | None = None) -> GLM:
    """Logistic reward model: ``y ~ Bernoulli(sigmoid(x^T theta))``, ``theta ~ N(0, prior_scale^2 I)``.

    Examples
    --------
    >>> from bayesbandit.models import logistic
    >>> logistic(prior_scale=2.0).family
    'logistic'
    """
    return GLM(family="logistic", prior_scale=prior_scale, prior=prior)


def probit(*, prior_scale: float = 1.0, prior: Any | None = None) -> GLM:
    """Probit reward model: ``y ~ Bernoulli(Phi(x^T theta))`` with ``Phi`` the standard normal CDF."""
    return GLM(family="probit", prior_scale=prior_scale, prior=prior)


def poisson(*, prior_scale: float = 1.0, prior: Any | None = None) -> GLM:
    """Poisson reward model: ``y ~ Poisson(exp(x^T theta))``."""
    return GLM(family="poisson", prior_scale=prior_scale, prior=prior)


def linear_gaussian(*, noise_scale: float = 1.0, prior_scale: float = 1.0, prior: Any | None = None) -> GLM:
    """Linear-Gaussian reward model with known noise: ``y ~ N(x^T theta, noise_scale^2)``."""
    return GLM(family="linear_gaussian", prior_scale=prior_scale, prior=prior, noise_scale=noise_scale)
