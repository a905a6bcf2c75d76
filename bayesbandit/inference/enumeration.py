"""Summing out per-row discrete sites marked for enumeration.

A reward program may draw, for each row, a discrete latent ``z_i`` (a mixture component, a
zero-inflation indicator) and mark it ``infer={"enumerate": "parallel"}``, as NumPyro's own NUTS
expects. The reward's likelihood is then the marginal

.. math::

    p(y_i \\mid x_i, \\theta) = \\sum_{k} p(z_i = k \\mid \\theta)\\, p(y_i \\mid x_i, z_i = k, \\theta),

a finite sum that is computed exactly, the way NumPyro's parallel enumeration does: the site's
value is replaced by its whole support (``enumerate_support(expand=False)``), placed on a new
dimension to the left of the rows' dimension (the ``j``-th enumerated site of a run on dimension
``-(j + 2)``), so every downstream distribution carries one slice per value; the log-probabilities
of the enumerated sites are added and the reward's is reduced with ``logsumexp`` over those
dimensions (:class:`EnumeratedMarginal`). Several per-row sites (a chain ``z -> z' -> y``
included) are summed out jointly.

Only per-row sites are summed out (the site's batch shape is the rows', ``(n,)``): there the
marginal is a product over rows and the policies' per-row likelihood (weights, masks, row
compression) is exact. A discrete site shared by all rows couples them, and a continuous site
that depends on an enumerated one has no single value per run; the binding refuses both
(:func:`bayesbandit.inference.structure.inspect_program`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp
from numpyro.distributions import Distribution

from bayesbandit._typing import Array, PRNGKey

__all__ = ["EnumeratedMarginal", "is_enumerated", "enumerated_value"]


def is_enumerated(site: dict) -> bool:
    """Whether a trace entry is a latent discrete site marked ``infer={"enumerate": "parallel"}``."""
    return (
        site["type"] == "sample"
        and not site["is_observed"]
        and site["fn"].support.is_discrete
        and (site.get("infer") or {}).get("enumerate") == "parallel"
    )


def enumerated_value(fn: Distribution, position: int) -> Array:
    """The whole support of ``fn``, on enumeration dimension ``-(position + 2)``: shape ``(K,) + (1,) * (position + 1)``."""
    support = fn.enumerate_support(expand=False)
    return jnp.reshape(support, (support.shape[0],) + (1,) * (position + 1))


class EnumeratedMarginal(Distribution):
    """The reward's distribution with per-row enumerated sites summed out (a finite mixture per row).

    Parameters
    ----------
    log_weights : array, shape ``(K_m, ..., K_1, n)`` (broadcastable)
        ``log p(z_i = k | theta)``: the sum of the enumerated sites' log-probabilities at every
        combination of their values (normalised over the leading ``enum_ndim`` dimensions).
    component : Distribution
        The reward's distribution given each combination, batch shape broadcastable to
        ``log_weights``'s.
    enum_ndim : int
        Number of enumeration dimensions ``m`` (the leading ones).
    """

    arg_constraints: dict = {}
    pytree_data_fields = ("log_weights", "component")
    pytree_aux_fields = ("enum_ndim",)

    def __init__(self, log_weights: Array, component: Distribution, enum_ndim: int):
        self.enum_ndim = enum_ndim
        shape = jnp.broadcast_shapes(jnp.shape(log_weights), tuple(component.batch_shape))
        self.log_weights = jnp.broadcast_to(log_weights, shape)
        self.component = component.expand(shape) if tuple(component.batch_shape) != shape else component
        super().__init__(batch_shape=shape[enum_ndim:], event_shape=(), validate_args=False)

    @property
    def support(self) -> Any:
        return self.component.support

    @property
    def _enum_axes(self) -> tuple[int, ...]:
        return tuple(range(self.enum_ndim))

    def mix_log_prob(self, component_log_prob: Array) -> Array:
        """``log sum_k p(z = k) p(y | z = k)`` from the component's log-probabilities, per row."""
        return logsumexp(self.log_weights + component_log_prob, axis=self._enum_axes)

    def mix_mean(self, component_mean: Array) -> Array:
        """``sum_k p(z = k) E[y | z = k]`` from the component's means, per row."""
        weights = jax.nn.softmax(self.log_weights, axis=self._enum_axes)
        return jnp.sum(weights * component_mean, axis=self._enum_axes)

    def log_prob(self, value: Array) -> Array:
        return self.mix_log_prob(self.component.log_prob(value))

    @property
    def mean(self) -> Array:
        return self.mix_mean(self.component.mean)

    def sample(self, key: PRNGKey, sample_shape: tuple[int, ...] = ()) -> Array:
        """Draw a combination of the enumerated values per row (Gumbel-max), then the reward given it."""
        key_component, key_choice = jax.random.split(key)
        full = tuple(sample_shape) + self.log_weights.shape
        draws = self.component.sample(key_component, tuple(sample_shape))
        scores = self.log_weights + jax.random.gumbel(key_choice, full, self.log_weights.dtype)
        flat_shape = tuple(sample_shape) + (-1,) + self.batch_shape
        choice = jnp.argmax(jnp.reshape(scores, flat_shape), axis=len(sample_shape))
        picked = jnp.take_along_axis(
            jnp.reshape(draws, flat_shape), jnp.expand_dims(choice, len(sample_shape)), axis=len(sample_shape)
        )
        return jnp.squeeze(picked, axis=len(sample_shape))
