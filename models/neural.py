"""A one-hidden-layer network as a NumPyro reward program (Kveton et al. 2020, Section 5.2).

The weights are ordinary latent sites with Gaussian priors, so :func:`bayesbandit.bind`
flattens them like any other program, a draw from the prior is the network's initialiser, and
the diagnostics can run NUTS on them. The hidden activations are recorded as the deterministic
site ``"embedding"``: neural-linear policies (:class:`bayesbandit.RepGLMFPL`,
:class:`bayesbandit.LastLayerLaplaceTS`) read them to fit a GLM head on a frozen body.

.. math::

    h(x) = \\phi(x W_1 + b_1), \\qquad \\eta(x) = h(x)^T w_2 + b_2, \\qquad
    y \\sim \\mathrm{Bernoulli}(\\sigma(\\eta)) \\ \\text{or}\\ N(\\eta, s^2),

with ``W_1 ~ N(0, s_1^2)``, ``w_2 ~ N(0, s_2^2)`` entrywise (default ``s = 1/sqrt(fan-in)``, the
LeCun-normal initialiser) and biases ``N(0, bias_scale^2)``.

Latent sites rather than a Flax or Equinox module under ``numpyro.contrib.module``: the prior
is part of the program (what NUTS and the Laplace head need), nothing beyond NumPyro is
required, and a network of this size needs no layer library.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["MLP", "mlp"]

_ACTIVATIONS = {"relu": jax.nn.relu, "tanh": jnp.tanh}


@dataclass(frozen=True, kw_only=True)
class MLP:
    """``input -> Dense(hidden, activation) -> Dense(1)`` with a Bernoulli (logit) or Gaussian reward.

    Parameters
    ----------
    hidden : int, >= 1
        Hidden units (the paper: 50).
    activation : {"relu", "tanh"}
    likelihood : {"bernoulli", "gaussian"}
        Bernoulli through the sigmoid of the output, or Gaussian with mean the output.
    prior_scale : float, optional
        Prior standard deviation of every weight; ``None``: ``1/sqrt(fan-in)`` per layer.
    bias_scale : float
        Prior standard deviation of the biases.
    noise_scale : float
        Reward noise of the Gaussian likelihood.
    """

    hidden: int = 50
    activation: str = "relu"
    likelihood: str = "bernoulli"
    prior_scale: float | None = None
    bias_scale: float = 1.0
    noise_scale: float = 1.0

    def __post_init__(self) -> None:
        check_int("mlp", "hidden", self.hidden, low=1)
        check_choice("mlp", "activation", self.activation, tuple(_ACTIVATIONS))
        check_choice("mlp", "likelihood", self.likelihood, ("bernoulli", "gaussian"))
        if self.prior_scale is not None:
            check_scalar("mlp", "prior_scale", self.prior_scale, low=0.0, low_open=True, high_open=True)
        check_scalar("mlp", "bias_scale", self.bias_scale, low=0.0, low_open=True, high_open=True)
        check_scalar("mlp", "noise_scale", self.noise_scale, low=0.0, low_open=True, high_open=True)

    def _scale(self, fan_in: int) -> float:
        return self.prior_scale if self.prior_scale is not None else fan_in**-0.5

    def __call__(self, x: jnp.ndarray, y: jnp.ndarray | None = None) -> None:
        d, hidden = x.shape[-1], self.hidden
        w_hidden = numpyro.sample("w_hidden", dist.Normal(0.0, self._scale(d)).expand([d, hidden]).to_event(2))
        b_hidden = numpyro.sample("b_hidden", dist.Normal(0.0, self.bias_scale).expand([hidden]).to_event(1))
        w_out = numpyro.sample("w_out", dist.Normal(0.0, self._scale(hidden)).expand([hidden]).to_event(1))
        b_out = numpyro.sample("b_out", dist.Normal(0.0, self.bias_scale))
        h = numpyro.deterministic("embedding", _ACTIVATIONS[self.activation](x @ w_hidden + b_hidden))
        eta = h @ w_out + b_out
        likelihood = (
            dist.Bernoulli(logits=eta) if self.likelihood == "bernoulli" else dist.Normal(eta, self.noise_scale)
        )
        with numpyro.plate("data", x.shape[0]):
            numpyro.sample("y", likelihood, obs=y)


def mlp(
    *,
    hidden: int = 50,
    activation: str = "relu",
    likelihood: str = "bernoulli",
    prior_scale: float | None = None,
    bias_scale: float = 1.0,
    noise_scale: float = 1.0,
) -> MLP:
    """The one-hidden-layer reward network of Kveton et al. (2020, Section 5.2) as a NumPyro program.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import mlp
    >>> bound = bb.bind(mlp(hidden=50), jnp.zeros((1, 784)))
    >>> bound.num_params, bound.site_names
    (39301, ('b_hidden', 'b_out', 'w_hidden', 'w_out'))
    """
    return MLP(
        hidden=hidden,
        activation=activation,
        likelihood=likelihood,
        prior_scale=prior_scale,
        bias_scale=bias_scale,
        noise_scale=noise_scale,
    )
