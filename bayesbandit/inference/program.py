"""Running a NumPyro reward program at a flat unconstrained parameter vector.

:func:`run_program` substitutes constrained latent values (and records the log-Jacobians of
their transforms) and the whole support of each per-row site marked for enumeration, runs the
program once, and returns the log prior, the observed site's trace entry (with the enumerated
sites summed out: :mod:`bayesbandit.inference.enumeration`) and the latent values. :func:`log_prob` evaluates the observed site's log-probability with
derivatives that are right at every parameter value, and a discrete distribution's rewards as
integers; :func:`expected_reward` its mean. :func:`trace_program` runs the program as
its author wrote it, turning any exception into a :class:`~bayesbandit.errors.ModelSpecError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import gammaln
from numpyro import handlers
from numpyro.distributions import biject_to
from numpyro.distributions.util import sum_rightmost

from bayesbandit._typing import Array, ArrayLike, Model
from bayesbandit.errors import ModelSpecError
from bayesbandit.inference.enumeration import EnumeratedMarginal, enumerated_value, is_enumerated

__all__ = [
    "ProgramRun",
    "expected_reward",
    "log_prob",
    "run_program",
    "deterministic_value",
    "trace_at",
    "trace_program",
]


class ProgramRun(NamedTuple):
    """One run of a reward program at a flat unconstrained ``theta`` (:func:`run_program`)."""

    log_prior: Array  # () log density of the latent sites, their transforms' log-Jacobians and the factors
    obs: dict  # the observed site's trace entry: distribution obs["fn"] (batch (n,)), scale obs["scale"] (None: 1)
    values: dict[str, Array]  # constrained latent values by site name


def log_prob(fn: Any, value: Array) -> Array:
    """``fn.log_prob(value)``, with derivatives that are right at every parameter value.

    NumPyro evaluates Bernoulli and Binomial log-probabilities with logits through
    ``clip(x, 0) + log1p(exp(-|x|)) - x y``, whose autodiff derivative at exactly ``x = 0`` is
    wrong (``clip`` and ``abs`` have zero derivative at their kinks: ``-y`` instead of
    ``1/2 - y``, and a zero second derivative). The prior mode ``theta = 0`` puts every logit
    there, so Newton's first step from it would see a wrong gradient and Hessian. These two
    families use ``softplus`` instead (same values, smooth derivatives).
    """
    if isinstance(fn, dist.BernoulliLogits):
        return value * fn.logits - jax.nn.softplus(fn.logits)
    if isinstance(fn, dist.BinomialLogits):
        n = fn.total_count
        log_binom = gammaln(n + 1) - gammaln(value + 1) - gammaln(n - value + 1)
        return log_binom + value * fn.logits - n * jax.nn.softplus(fn.logits)
    if fn.support.is_discrete and jnp.issubdtype(jnp.result_type(value), jnp.floating):
        # Rewards are stored as floats; a discrete distribution gets them as the integers they are
        # (an ordinal or categorical reward indexes its probabilities).
        value = jnp.round(value).astype(jnp.result_type(int))
    return fn.log_prob(value)


def expected_reward(fn: Any) -> Array:
    """The mean of the observed distribution ``fn``, per row: ``fn.mean``, and for a categorical or
    ordinal reward (labels ``0, ..., C - 1``, whose ``.mean`` NumPyro leaves undefined) ``sum_c c p_c``;
    with enumerated sites summed out, the mixture of its components' expected rewards."""
    if isinstance(fn, EnumeratedMarginal):
        return fn.mix_mean(expected_reward(fn.component))
    if isinstance(fn, dist.CategoricalProbs | dist.CategoricalLogits):
        probs = fn.probs
        return probs @ jnp.arange(probs.shape[-1], dtype=probs.dtype)
    return fn.mean


def trace_at(model: Model, unravel: Callable[[Array], dict[str, Array]], theta: Array, x: Array) -> tuple[Any, Array]:
    """The program's trace at unconstrained ``theta``, and the sum of the log-Jacobians of its transforms.

    Each site marked for enumeration takes its whole support, on its own dimension left of the rows'.
    """
    unconstrained = unravel(theta)
    log_dets: list[Array] = []
    enumerated: list[str] = []

    def constrain(site):
        name = site["name"]
        if is_enumerated(site):
            enumerated.append(name)
            return enumerated_value(site["fn"], len(enumerated) - 1)
        if site["type"] != "sample" or site["is_observed"] or name not in unconstrained:
            return None
        u = unconstrained[name]
        transform = biject_to(site["fn"].support)
        value = transform(u)
        log_det = transform.log_abs_det_jacobian(u, value)
        log_dets.append(
            jnp.sum(sum_rightmost(log_det, jnp.ndim(log_det) - jnp.ndim(value) + len(site["fn"].event_shape)))
        )
        return value

    # The fill only makes the reward site observed; its log-probability is computed elsewhere.
    y_fill = jnp.zeros(x.shape[:1], dtype=x.dtype)
    with numpyro.validation_enabled(False), handlers.trace() as tr, handlers.substitute(substitute_fn=constrain):
        model(x, y_fill)
    return tr, sum(log_dets, jnp.zeros((), dtype=x.dtype))


def run_program(
    model: Model, obs_site: str, unravel: Callable[[Array], dict[str, Array]], theta: Array, x: Array
) -> ProgramRun:
    """Trace the program at unconstrained ``theta``.

    Returns the log prior plus Jacobian and factor terms (every sample site except the observed
    one and the enumerated ones), the observed site's trace entry, and the constrained latent
    values. With enumerated sites, the entry's distribution is an :class:`EnumeratedMarginal`:
    the reward's distribution with them summed out.
    """
    tr, log_prior = trace_at(model, unravel, theta, x)
    values = {}
    log_weights, enum_ndim = None, 0
    for name, site in tr.items():
        if site["type"] != "sample" or name == obs_site:
            continue
        if is_enumerated(site):
            lp = site["fn"].log_prob(site["value"])
            log_weights = lp if log_weights is None else log_weights + lp
            enum_ndim += 1
            continue
        lp = jnp.sum(site["fn"].log_prob(site["value"]))
        if site["scale"] is not None:
            lp = lp * site["scale"]
        log_prior = log_prior + lp
        if not site["is_observed"]:
            values[name] = site["value"]
    obs = tr[obs_site]
    if log_weights is not None:
        obs = {**obs, "fn": EnumeratedMarginal(log_weights, obs["fn"], enum_ndim)}
    return ProgramRun(log_prior, obs, values)


def deterministic_value(
    model: Model, unravel: Callable[[Array], dict[str, Array]], theta: Array, x: Array, name: str
) -> Array:
    """The value of the program's deterministic site ``name`` for rows ``x`` at unconstrained ``theta``."""
    tr, _ = trace_at(model, unravel, theta, x)
    if name not in tr or tr[name]["type"] != "deterministic":
        found = [k for k, site in tr.items() if site["type"] == "deterministic"]
        raise ModelSpecError(
            f"the reward program has no deterministic site named '{name}' (deterministic sites: {found}). Fix: "
            f"record it in the program, e.g. numpyro.deterministic('{name}', h)."
        )
    return tr[name]["value"]


def trace_program(model: Model, x: ArrayLike, y: Any, seed: int) -> dict:
    """The program's trace on rows ``x`` and rewards ``y`` (None: sampled), seeded with ``seed``.

    Raises
    ------
    ModelSpecError
        The program failed, or cannot be traced (the policies compile it with ``jax.jit``).
    """
    try:
        with numpyro.validation_enabled(False):
            return handlers.trace(handlers.seed(model, rng_seed=seed)).get_trace(x, y)
    except Exception as exc:  # the user's program failed: say so, keep the cause
        raise ModelSpecError(
            f"the reward program failed when called as model(x, y) with x of shape {np.shape(x)}: "
            f"{type(exc).__name__}: {exc}\nThe policies compile the program with jax.jit, so it must be traceable: "
            "no Python branch or float() on a sampled value (use jnp.where)."
        ) from exc
