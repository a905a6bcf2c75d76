"""Reward programs as practitioners write them, one per likelihood: the likelihood matrix.

Plain NumPyro functions ``model(x, y=None)`` over ``d`` features (the linear predictor is
``x @ theta``, ``theta ~ N(0, 1)`` per coordinate), with the latent sites their families need:
a dispersion, a shape, a scale, degrees of freedom, cut-points, a zero-inflation gate, group
effects. ``bayesbandit run likelihoods`` runs every one through the GLM policies on a bandit of its
own family (:class:`bayesbandit.envs.ProgramBandit`) and writes the table in ``README.md``.

==============================================================================  =======================================================================
program                                                                         likelihood (``eta = x @ theta``)
==============================================================================  =======================================================================
:func:`bernoulli_logit`                                                         ``Bernoulli(sigmoid(eta))``
:func:`bernoulli_probit`                                                        ``Bernoulli(Phi(eta))``
:func:`bernoulli_cloglog` ``Bernoulli(1 - exp(-exp(eta)))``
:func:`binomial`                                                                ``Binomial(10, sigmoid(eta))``
:func:`poisson_log`                                                             ``Poisson(exp(eta))``
:func:`negative_binomial` ``NegativeBinomial2(exp(eta), phi)``, latent ``phi``
:func:`gamma`                                                                   ``Gamma(k, k / exp(eta))`` (mean ``exp(eta)``), latent ``k``
:func:`lognormal`                                                               ``LogNormal(eta, sigma)``, latent ``sigma``
:func:`beta`                                                                    ``Beta`` of mean ``sigmoid(eta)``, latent concentration
:func:`normal`                                                                  ``Normal(eta, sigma)``, latent ``sigma``
:func:`student_t`                                                               ``StudentT(nu, eta, sigma)``, latent ``nu`` and ``sigma``
:func:`ordered_logistic`                                                        ``OrderedLogistic(eta, c)``, latent ordered cut-points ``c`` (4 labels)
:func:`zero_inflated`                                                           ``ZeroInflatedPoisson(g, exp(eta))``, latent gate ``g``
:func:`hierarchical`                                                            ``Bernoulli(sigmoid(x @ (mu + tau z)))``, non-centred group effects
:func:`mixture`                                                                 two Gaussian components, an enumerated per-row indicator
:func:`mixture_marginal`                                                        the same mixture, the indicator summed out (``MixtureSameFamily``)
==============================================================================  =======================================================================

Scale-like latents have priors that vanish at 0 (log-normal or gamma): with a half-normal
prior the joint density grows without bound as the scale goes to 0 while the rows can still be
fitted exactly (the first ``d`` rounds), and a MAP-based policy has no mode to follow there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

__all__ = [
    "LIKELIHOODS",
    "bernoulli_logit",
    "bernoulli_probit",
    "bernoulli_cloglog",
    "binomial",
    "poisson_log",
    "negative_binomial",
    "gamma",
    "lognormal",
    "beta",
    "normal",
    "student_t",
    "ordered_logistic",
    "zero_inflated",
    "hierarchical",
    "mixture",
    "mixture_marginal",
]


def _eta(x: jax.Array) -> jax.Array:
    theta = numpyro.sample("theta", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    return x @ theta


def bernoulli_logit(x, y=None):
    eta = _eta(x)
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)


def bernoulli_probit(x, y=None):
    eta = _eta(x)
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(probs=jax.scipy.stats.norm.cdf(eta)), obs=y)


def bernoulli_cloglog(x, y=None):
    probs = -jnp.expm1(-jnp.exp(_eta(x)))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(probs=jnp.clip(probs, 1e-12, 1 - 1e-12)), obs=y)


def binomial(x, y=None):
    eta = _eta(x)
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Binomial(10, logits=eta), obs=y)


def poisson_log(x, y=None):
    eta = _eta(x)
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Poisson(jnp.exp(eta)), obs=y)


def negative_binomial(x, y=None):
    eta = _eta(x)
    phi = numpyro.sample("phi", dist.LogNormal(1.0, 1.0))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.NegativeBinomial2(jnp.exp(eta), phi), obs=y)


def gamma(x, y=None):
    eta = _eta(x)
    shape = numpyro.sample("shape", dist.LogNormal(1.0, 1.0))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Gamma(shape, shape / jnp.exp(eta)), obs=y)


def lognormal(x, y=None):
    eta = _eta(x)
    sigma = numpyro.sample("sigma", dist.LogNormal(-1.0, 0.5))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.LogNormal(eta, sigma), obs=y)


def beta(x, y=None):
    mean = jax.nn.sigmoid(_eta(x))
    concentration = numpyro.sample("concentration", dist.LogNormal(2.0, 1.0))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Beta(mean * concentration, (1 - mean) * concentration), obs=y)


def normal(x, y=None):
    eta = _eta(x)
    sigma = numpyro.sample("sigma", dist.LogNormal(-1.0, 0.5))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Normal(eta, sigma), obs=y)


def student_t(x, y=None):
    eta = _eta(x)
    sigma = numpyro.sample("sigma", dist.LogNormal(-1.0, 0.5))
    nu = numpyro.sample("nu", dist.Gamma(2.0, 0.1))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.StudentT(nu, eta, sigma), obs=y)


def ordered_logistic(x, y=None):
    eta = _eta(x)
    cutpoints = numpyro.sample(
        "cutpoints",
        dist.TransformedDistribution(
            dist.Normal(jnp.array([-1.5, 0.0, 1.5]), 1.0).to_event(1), dist.transforms.OrderedTransform()
        ),
    )
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.OrderedLogistic(eta, cutpoints), obs=y)


def zero_inflated(x, y=None):
    eta = _eta(x)
    gate = numpyro.sample("gate", dist.Beta(2.0, 6.0))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.ZeroInflatedPoisson(gate, jnp.exp(eta)), obs=y)


def hierarchical(x, y=None):
    """Coefficients ``mu + tau z`` sharing a group mean and scale, written non-centred."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    tau = numpyro.sample("tau", dist.LogNormal(-0.5, 0.5))
    z = numpyro.sample("z", dist.Normal(jnp.zeros(x.shape[-1]), 1.0).to_event(1))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ (mu + tau * z)), obs=y)


def mixture(x, y=None):
    """Rewards from one of two Gaussian components per row: a per-row indicator marked for enumeration."""
    eta = _eta(x)
    weight = numpyro.sample("weight", dist.Beta(2.0, 2.0))
    with numpyro.plate("rows", x.shape[0]):
        component = numpyro.sample("component", dist.Bernoulli(weight), infer={"enumerate": "parallel"})
        numpyro.sample("y", dist.Normal(eta + 2.0 * component, 0.5), obs=y)


def mixture_marginal(x, y=None):
    """The same two components with the indicator summed out by the program (``MixtureSameFamily``)."""
    eta = _eta(x)
    weight = numpyro.sample("weight", dist.Beta(2.0, 2.0))
    mixing = dist.Categorical(probs=jnp.stack([1.0 - weight, weight]))
    with numpyro.plate("rows", x.shape[0]):
        components = dist.Normal(jnp.stack([eta, eta + 2.0], axis=-1), 0.5)
        numpyro.sample("y", dist.MixtureSameFamily(mixing, components), obs=y)


LIKELIHOODS = {
    program.__name__: program
    for program in (
        bernoulli_logit,
        bernoulli_probit,
        bernoulli_cloglog,
        binomial,
        poisson_log,
        negative_binomial,
        gamma,
        lognormal,
        beta,
        normal,
        student_t,
        ordered_logistic,
        zero_inflated,
        hierarchical,
        mixture,
        mixture_marginal,
    )
}
"""Every reward program of this module by its name."""
