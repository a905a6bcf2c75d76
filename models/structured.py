"""Structured reward programs as practitioners write them: hierarchies, shrinkage, exposures, correlated priors.

Each factory returns a plain NumPyro program ``model(x, y=None)`` (the reward-program contract of
:func:`bayesbandit.bind`: one observed site ``"y"`` in a plate over the rows of ``x``). Where a
column of ``x`` is not a feature it comes first: a group or arm index (an integer-valued float) or
a log exposure; the remaining ``d - 1`` columns are the features ``f``, with slopes ``beta``.
Hierarchical scales are written non-centred (``effect = scale * z``, ``z ~ N(0, 1)``): written
centred (``effect ~ N(mu, tau)``) the log density grows without bound as ``tau -> 0`` and the
MAP-based policies refuse the program, naming the site
(:mod:`bayesbandit.inference.prior_check`).

=================================================  ==================================================================
program                                            likelihood
=================================================  ==================================================================
:func:`hierarchical_logistic`                      ``Bernoulli(sigmoid(mu + tau z[g] + f @ beta))``, ``g = x[:, 0]``
:func:`horseshoe_logistic`                         ``Bernoulli(sigmoid(alpha + f @ beta))``, ``beta = tau lambda z``
:func:`regularised_horseshoe_logistic`             the same with the slab-regularised local scales
:func:`poisson_exposure`                           ``Poisson(exp(x[:, 0] + f @ beta))``
:func:`negative_binomial_exposure`                 ``NegativeBinomial2(exp(x[:, 0] + f @ beta), phi)`` (Gamma-Poisson)
:func:`correlated_gaussian`                        ``Normal(x @ beta, sigma)``, ``beta ~ MultivariateNormal(0, cov)``
:func:`arm_random_effect_logistic`                 ``Bernoulli(sigmoid(f @ beta + sigma z[a]))``, ``a = x[:, 0]``
=================================================  ==================================================================

``bayesbandit run programs`` runs every one through the GLM policies on bandits of its own family
with arm features that suit it (:class:`bayesbandit.envs.ProgramBandit` with ``arms=``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int, check_scalar

__all__ = [
    "hierarchical_logistic",
    "horseshoe_logistic",
    "regularised_horseshoe_logistic",
    "poisson_exposure",
    "negative_binomial_exposure",
    "correlated_gaussian",
    "arm_random_effect_logistic",
]

Program = Callable[..., None]


def _split(owner: str, what: str, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``x``'s first column (``what``) and its features; the feature count is static, so this check runs once."""
    if x.shape[-1] < 2:
        raise InvalidInput(
            f"The 'x' rows of {owner} must hold {what} in column 0 and at least one feature after it. Got "
            f"{x.shape[-1]} column(s) instead. Fix: pass arms of shape (K, d) with d >= 2."
        )
    return x[:, 0], x[:, 1:]


def _slopes(features: jax.Array, scale: float = 1.0) -> jax.Array:
    """``f @ beta`` with ``beta ~ N(0, scale^2)`` per feature."""
    beta = numpyro.sample("beta", dist.Normal(0.0, scale).expand([features.shape[-1]]).to_event(1))
    return features @ beta


def _indexed_effect(name: str, index: jax.Array, count: int, scale: jax.Array) -> jax.Array:
    """Non-centred effects ``scale * z[index]``, ``z ~ N(0, 1)`` over ``count`` levels (site ``name``)."""
    with numpyro.plate(f"{name}_levels", count):
        z = numpyro.sample(name, dist.Normal(0.0, 1.0))
    return scale * z[jnp.clip(index.astype(jnp.int32), 0, count - 1)]


def hierarchical_logistic(*, num_groups: int = 5) -> Program:
    """Partial pooling across groups: group intercepts around a shared mean, shared slopes, a Bernoulli reward.

    .. math::

        \\mu \\sim N(0, 1), \\quad \\tau \\sim \\mathrm{HalfNormal}(1), \\quad z_g \\sim N(0, 1), \\quad
        \\beta \\sim N(0, I), \\qquad y_i \\sim \\mathrm{Bernoulli}(\\sigma(\\mu + \\tau z_{g_i} + f_i^T \\beta)),

    with ``g_i = x[i, 0]`` the row's group (an integer-valued float in ``0 .. num_groups - 1``) and
    ``f_i = x[i, 1:]`` its features. The group intercept ``mu + tau z_g`` is written non-centred.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import hierarchical_logistic
    >>> bb.bind(hierarchical_logistic(num_groups=3), jnp.zeros((1, 4))).site_shapes
    {'beta': (3,), 'mu': (), 'tau': (), 'z': (3,)}
    """
    num_groups = check_int("hierarchical_logistic", "num_groups", num_groups, low=1)

    def model(x, y=None):
        group, features = _split("hierarchical_logistic", "the group index", x)
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        tau = numpyro.sample("tau", dist.HalfNormal(1.0))
        eta = mu + _indexed_effect("z", group, num_groups, tau) + _slopes(features)
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)

    return model


def _horseshoe_slopes(features: jax.Array, global_scale: float, slab: tuple[float, float] | None) -> jax.Array:
    """``f @ beta`` with ``beta = tau * lambda * z`` (non-centred), the local scales slab-regularised when ``slab``."""
    d = features.shape[-1]
    tau = numpyro.sample("tau", dist.HalfCauchy(global_scale))
    lam = numpyro.sample("lambda", dist.HalfCauchy(jnp.ones(d)).to_event(1))
    if slab is not None:
        slab_scale, slab_df = slab
        c2 = numpyro.sample("c2", dist.InverseGamma(slab_df / 2.0, slab_df * slab_scale**2 / 2.0))
        lam = jnp.sqrt(c2 * lam**2 / (c2 + tau**2 * lam**2))
    z = numpyro.sample("z", dist.Normal(jnp.zeros(d), 1.0).to_event(1))
    return features @ (tau * lam * z)


def horseshoe_logistic(*, global_scale: float = 1.0) -> Program:
    """A Bernoulli reward over many features with the horseshoe's shrinkage (Carvalho, Polson and Scott 2010).

    .. math::

        \\alpha \\sim N(0, 1), \\quad \\tau \\sim C^+(0, \\tau_0), \\quad \\lambda_j \\sim C^+(0, 1), \\quad
        z_j \\sim N(0, 1), \\quad \\beta_j = \\tau \\lambda_j z_j, \\qquad
        y_i \\sim \\mathrm{Bernoulli}(\\sigma(\\alpha + x_i^T \\beta)),

    with ``tau_0 = global_scale``; every column of ``x`` is a feature. Written non-centred.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import horseshoe_logistic
    >>> bb.bind(horseshoe_logistic(), jnp.zeros((1, 8))).num_params
    18
    """
    check_scalar("horseshoe_logistic", "global_scale", global_scale, low=0.0, low_open=True, high_open=True)

    def model(x, y=None):
        alpha = numpyro.sample("alpha", dist.Normal(0.0, 1.0))
        eta = alpha + _horseshoe_slopes(x, global_scale, None)
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)

    return model


def regularised_horseshoe_logistic(
    *, global_scale: float = 1.0, slab_scale: float = 2.0, slab_df: float = 4.0
) -> Program:
    """The horseshoe with a slab: large coefficients are shrunk like ``N(0, c^2)`` (Piironen and Vehtari 2017).

    .. math::

        c^2 \\sim \\mathrm{InvGamma}(\\nu / 2, \\nu s^2 / 2), \\qquad
        \\tilde\\lambda_j^2 = \\frac{c^2 \\lambda_j^2}{c^2 + \\tau^2 \\lambda_j^2}, \\qquad
        \\beta_j = \\tau \\tilde\\lambda_j z_j,

    the rest as :func:`horseshoe_logistic`: ``s = slab_scale``, ``nu = slab_df``. Far below the slab
    (``tau lambda_j << c``) it is the horseshoe; far above, ``beta_j ~ N(0, c^2)``
    (Piironen and Vehtari, *Sparsity information and regularization in the horseshoe and other
    shrinkage priors*, Electronic Journal of Statistics 11, 2017).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import regularised_horseshoe_logistic
    >>> bb.bind(regularised_horseshoe_logistic(slab_scale=1.0), jnp.zeros((1, 8))).site_names
    ('alpha', 'c2', 'lambda', 'tau', 'z')
    """
    owner = "regularised_horseshoe_logistic"
    for name, value in (("global_scale", global_scale), ("slab_scale", slab_scale), ("slab_df", slab_df)):
        check_scalar(owner, name, value, low=0.0, low_open=True, high_open=True)

    def model(x, y=None):
        alpha = numpyro.sample("alpha", dist.Normal(0.0, 1.0))
        eta = alpha + _horseshoe_slopes(x, global_scale, (slab_scale, slab_df))
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)

    return model


def _exposure_rate(owner: str, x: jax.Array, prior_scale: float) -> jax.Array:
    """``exp(log_exposure + f @ beta)``: the expected count of a row with exposure ``exp(x[:, 0])``."""
    log_exposure, features = _split(owner, "the log exposure", x)
    return jnp.exp(log_exposure + _slopes(features, prior_scale))


def poisson_exposure(*, prior_scale: float = 1.0) -> Program:
    """Poisson counts over an exposure: a rate per unit of exposure, an offset ``log E`` in the linear predictor.

    .. math::

        \\beta \\sim N(0, s^2 I), \\qquad y_i \\sim \\mathrm{Poisson}(E_i \\exp(f_i^T \\beta)),

    with ``log E_i = x[i, 0]`` (the offset, no coefficient), ``f_i = x[i, 1:]`` and ``s = prior_scale``.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import poisson_exposure
    >>> bound = bb.bind(poisson_exposure(), jnp.zeros((1, 3)))
    >>> x = jnp.array([[jnp.log(5.0), 0.0, 0.0]])
    >>> float(bound.mean_reward(jnp.zeros(bound.num_params), x)[0])  # the exposure times a rate of 1
    5.0
    """
    check_scalar("poisson_exposure", "prior_scale", prior_scale, low=0.0, low_open=True, high_open=True)

    def model(x, y=None):
        rate = _exposure_rate("poisson_exposure", x, prior_scale)
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Poisson(rate), obs=y)

    return model


def negative_binomial_exposure(*, prior_scale: float = 1.0, concentration_rate: float = 0.1) -> Program:
    """Overdispersed counts over an exposure: a Gamma-Poisson (negative binomial) with a latent concentration.

    .. math::

        \\beta \\sim N(0, s^2 I), \\quad \\phi \\sim \\mathrm{Exponential}(r), \\qquad
        y_i \\sim \\mathrm{NegativeBinomial2}(m_i, \\phi), \\quad m_i = E_i \\exp(f_i^T \\beta),

    the mean ``m_i`` and variance ``m_i + m_i^2 / phi`` (a Poisson whose rate is Gamma-distributed
    with shape ``phi`` and mean ``m_i``); ``log E_i = x[i, 0]``, ``s = prior_scale``,
    ``r = concentration_rate`` (prior mean of ``phi``: ``1 / r``).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import negative_binomial_exposure
    >>> bb.bind(negative_binomial_exposure(), jnp.zeros((1, 3))).site_names
    ('beta', 'phi')
    """
    owner = "negative_binomial_exposure"
    check_scalar(owner, "prior_scale", prior_scale, low=0.0, low_open=True, high_open=True)
    check_scalar(owner, "concentration_rate", concentration_rate, low=0.0, low_open=True, high_open=True)

    def model(x, y=None):
        mean = _exposure_rate(owner, x, prior_scale)
        phi = numpyro.sample("phi", dist.Exponential(concentration_rate))
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.NegativeBinomial2(mean, phi), obs=y)

    return model


def correlated_gaussian(*, cov: np.ndarray, noise_scale: float = 1.0) -> Program:
    """A Gaussian reward with correlated coefficients: a fixed-covariance prior and an unknown noise scale.

    .. math::

        \\beta \\sim N(0, \\Sigma), \\quad \\sigma \\sim \\mathrm{HalfNormal}(s), \\qquad
        y_i \\sim N(x_i^T \\beta, \\sigma^2),

    with ``Sigma = cov`` (symmetric positive definite, ``d x d``: its size fixes ``d``) and
    ``s = noise_scale``.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import correlated_gaussian
    >>> bb.bind(correlated_gaussian(cov=[[1.0, 0.5], [0.5, 1.0]]), jnp.zeros((1, 2))).site_shapes
    {'beta': (2,), 'sigma': ()}
    """
    owner = "correlated_gaussian"
    check_scalar(owner, "noise_scale", noise_scale, low=0.0, low_open=True, high_open=True)
    sigma_beta = _covariance(owner, cov)
    scale_tril = np.linalg.cholesky(sigma_beta)

    def model(x, y=None):
        if x.shape[-1] != scale_tril.shape[0]:
            raise InvalidInput(
                f"The 'x' rows of {owner} must have {scale_tril.shape[0]} features, the size of 'cov'. Got "
                f"{x.shape[-1]} instead. Fix: pass a covariance of shape (d, d) for arms of d features."
            )
        beta = numpyro.sample("beta", dist.MultivariateNormal(jnp.zeros(scale_tril.shape[0]), scale_tril=scale_tril))
        sigma = numpyro.sample("sigma", dist.HalfNormal(noise_scale))
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Normal(x @ beta, sigma), obs=y)

    return model


def _covariance(owner: str, cov: object) -> np.ndarray:
    """``cov`` as a float64 symmetric positive definite matrix, or :class:`InvalidInput` naming the problem."""
    try:
        matrix = np.array(cov, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"The 'cov' parameter of {owner} must be a square numeric matrix. Got {type(cov).__name__} instead. "
            "Fix: pass a (d, d) array."
        ) from exc
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise InvalidInput(
            f"The 'cov' parameter of {owner} must be a square (d, d) matrix. Got shape {matrix.shape} instead. "
            "Fix: pass one row and one column per feature."
        )
    if not np.all(np.isfinite(matrix)) or not np.allclose(matrix, matrix.T):
        raise InvalidInput(
            f"The 'cov' parameter of {owner} must be finite and symmetric. Got {matrix.tolist()} instead. "
            "Fix: pass (cov + cov.T) / 2 of a finite matrix."
        )
    smallest = float(np.linalg.eigvalsh(matrix)[0])
    if smallest <= 0.0:
        raise InvalidInput(
            f"The 'cov' parameter of {owner} must be positive definite. Got a smallest eigenvalue of {smallest:.3g} "
            "instead. Fix: add a multiple of the identity (a ridge) to it."
        )
    return matrix


def arm_random_effect_logistic(*, num_arms: int) -> Program:
    """A random effect per arm on top of shared slopes: what the features do not explain about an arm.

    .. math::

        \\sigma \\sim \\mathrm{HalfNormal}(1), \\quad z_a \\sim N(0, 1), \\quad \\beta \\sim N(0, I), \\qquad
        y_i \\sim \\mathrm{Bernoulli}(\\sigma(f_i^T \\beta + \\sigma z_{a_i})),

    with ``a_i = x[i, 0]`` the row's arm id (an integer-valued float in ``0 .. num_arms - 1``) and
    ``f_i = x[i, 1:]`` its features. Written non-centred.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import arm_random_effect_logistic
    >>> bb.bind(arm_random_effect_logistic(num_arms=10), jnp.zeros((1, 4))).num_params
    14
    """
    num_arms = check_int("arm_random_effect_logistic", "num_arms", num_arms, low=1)

    def model(x, y=None):
        arm, features = _split("arm_random_effect_logistic", "the arm id", x)
        sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
        eta = _slopes(features) + _indexed_effect("z", arm, num_arms, sigma)
        with numpyro.plate("rows", x.shape[0]):
            numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)

    return model
