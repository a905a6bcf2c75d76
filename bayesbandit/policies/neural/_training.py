"""What the neural policies share: the network state and its one optimiser step per round.

Kveton et al. (2020, Section 5.2) train the reward network with one Adam step per round on the
mini-batch of the ``B = 32`` most recent observations, with rewards perturbed by fresh noise:

.. math::

    w \\leftarrow w + \\mathrm{Adam}\\Big(\\nabla_w \\frac{1}{|B|} \\sum_{\\ell \\in B}
    -\\log p(Y_\\ell + Z_\\ell \\mid x_\\ell, w)\\Big), \\qquad Z_\\ell \\sim N(0, a^2)
    \\text{ fresh each round}.

The loss is the program's own negative log-likelihood at real-valued targets: for a Bernoulli
reward through a logit ``eta`` it is ``softplus(eta) - (y + z) eta`` (binary cross-entropy from
logits with real targets, never ``log 0``; :meth:`bayesbandit.inference.BoundModel.log_likelihood` takes
any real ``y`` for affine likelihoods). The paper trains without regularisation, so the prior
enters only as the distribution the initial weights are drawn from.

The state carries its own key: the step happens in ``update`` (the network carries every
perturbed step forward; there is no unperturbed fit to return to), and ``update`` takes no key.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.history import RecentRows
from bayesbandit.inference.potential import BoundModel
from bayesbandit.inference.solvers import FirstOrderFit
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = [
    "NetworkState",
    "StepInfo",
    "OPTIMIZERS",
    "check_training",
    "check_program_argument",
    "check_site_name",
    "make_optimizer",
    "batch_loss",
    "init_network",
    "train_step",
]

OPTIMIZERS = ("adam", "adamw", "amsgrad", "yogi", "sgd", "rmsprop", "adagrad")


class NetworkState(NamedTuple):
    """A network trained online: its recent rows, parameters and optimiser state, and its noise key."""

    recent: RecentRows  # the B most recent (x, y)
    fit: FirstOrderFit  # theta (p,) and the optimiser's state
    key: PRNGKey  # the stream of the reward perturbations
    t: Array  # () int32, rounds observed


class StepInfo(NamedTuple):
    """What one training step did."""

    converged: Array  # () bool: recorded, and the step left every parameter finite
    recorded: Array  # () bool: the action indexed the round's arms
    loss: Array  # () mean perturbed negative log-likelihood of the batch before the step
    grad_norm: Array  # () ||gradient|| of that loss


def check_training(owner: str, learning_rate: float, optimizer: str, batch: int, dtype: str) -> None:
    """Validate the training settings every neural policy has."""
    check_scalar(owner, "learning_rate", learning_rate, low=0.0, low_open=True, high_open=True)
    check_choice(owner, "optimizer", optimizer, OPTIMIZERS)
    check_int(owner, "batch", batch, low=1)
    check_choice(owner, "dtype", dtype, ("float32", "float64"))


def check_program_argument(owner: str, name: str, model: Any) -> None:
    """``model`` is a reward program: a callable ``model(x, y=None)`` or a bound one."""
    if not (callable(model) or isinstance(model, BoundModel)):
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be a NumPyro program model(x, y=None). "
            f"Got {type(model).__name__} {model!r} instead. Fix: pass e.g. bayesbandit.models.mlp(hidden=50)."
        )


def check_site_name(owner: str, name: str, value: Any) -> None:
    """``value`` is a site name: a non-empty str."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be the name of a site of the program, a non-empty str. "
            f"Got {value!r} instead. Fix: pass the site's name as a string, e.g. {name}='y'."
        )


def make_optimizer(name: str, learning_rate: Any) -> optax.GradientTransformation:
    """The Optax optimiser ``name`` (one of :data:`OPTIMIZERS`) at ``learning_rate`` (may be traced)."""
    return getattr(optax, name)(learning_rate)


def batch_loss(bound: BoundModel, theta: Array, x: Array, y: Array, w: Array) -> Array:
    """Mean negative log-likelihood of the filled rows (``w > 0``) of a mini-batch."""
    ll = bound.log_likelihood(theta, x, y)
    return -jnp.sum(jnp.where(w > 0, ll, 0.0)) / jnp.maximum(jnp.sum(w), 1.0)


def init_network(
    bound: BoundModel, optimizer: optax.GradientTransformation, batch: int, dtype: Any, key: PRNGKey
) -> NetworkState:
    """Weights drawn from the program's prior (the initialiser), a fresh optimiser, an empty batch."""
    key_weights, key_noise = jax.random.split(key)
    theta = bound.sample_prior(key_weights, dtype)
    recent = RecentRows.create(batch, bound.feature_shape[0], dtype)
    return NetworkState(recent, FirstOrderFit(theta, optimizer.init(theta)), key_noise, jnp.asarray(0, jnp.int32))


def train_step(
    bound: BoundModel,
    optimizer: optax.GradientTransformation,
    state: NetworkState,
    arms: Array,
    action: Array,
    feedback: Array,
    a: Any,
) -> tuple[NetworkState, StepInfo]:
    """Record ``(arms[action], feedback)`` and take one optimiser step on the perturbed recent batch.

    An action outside ``[0, K)`` leaves the state unchanged (``recorded = False``); a step that
    makes a parameter non-finite keeps the previous weights (``converged = False``).
    """
    num_arms = arms.shape[0]
    recorded = (action >= 0) & (action < num_arms)
    recent = state.recent.add(arms[jnp.clip(action, 0, num_arms - 1)], jnp.asarray(feedback, arms.dtype))
    key, key_noise = jax.random.split(state.key)
    x, y, w = recent.rows()
    y_tilde = y + a * jax.random.normal(key_noise, y.shape, y.dtype)
    loss, grad = jax.value_and_grad(lambda t: batch_loss(bound, t, x, y_tilde, w))(state.fit.theta)
    updates, opt_state = optimizer.update(grad, state.fit.opt_state, state.fit.theta)
    fit = FirstOrderFit(optax.apply_updates(state.fit.theta, updates), opt_state)
    healthy = jnp.all(jnp.isfinite(fit.theta))
    fit = jax.tree.map(lambda new, old: jnp.where(healthy, new, old), fit, state.fit)
    new_state = NetworkState(recent, fit, key, state.t + 1)
    new_state = jax.tree.map(lambda new, old: jnp.where(recorded, new, old), new_state, state)
    return new_state, StepInfo(recorded & healthy, recorded, loss, jnp.linalg.norm(grad))
