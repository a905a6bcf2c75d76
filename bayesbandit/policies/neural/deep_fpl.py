"""DeepFPL and DeepFL: a reward network trained on perturbed recent rewards (Kveton et al. 2020, Section 5.2)."""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY
from typing import ClassVar, Literal, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._numerics import random_argmax
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import register_policy
from bayesbandit.policies.neural._base import NeuralPolicy
from bayesbandit.policies.neural._training import NetworkState, StepInfo, init_network, train_step
from bayesbandit.validation import check_int, check_scalar

__all__ = ["DeepFPL", "DeepFL", "DeepFPLInfo", "DeepFLInfo"]


class DeepFPLInfo(NamedTuple):
    """What :class:`DeepFPL`'s ``select`` reports."""

    converged: Array  # () bool: every score is finite
    scores: Array  # (K,) mean rewards under the current network
    exploring: Array  # () bool: a uniform initial pull


@register_policy(data_fields=["a", "learning_rate"])
class DeepFPL(NeuralPolicy):
    """Follow the perturbed leader with a neural reward program (Kveton et al. 2020, Section 5.2).

    Each round, after observing ``Y_t`` for ``x_{I_t}``: one optimiser step on the ``batch``
    most recent observations with rewards ``Y_l + Z_l``, ``Z_l ~ N(0, a^2)`` drawn afresh
    (``bayesbandit.policies.neural._training``); then ``I_{t+1} = argmax_i mu(x_i; w)``
    with ties broken at random. The first ``num_explore`` pulls are uniform. The paper puts the
    step at the start of round ``t`` on the rows before it, which is the same sequence of
    networks.

    Parameters
    ----------
    model : NumPyro program
        The reward network, e.g. :func:`bayesbandit.models.mlp`; its prior draws the initial
        weights (``init`` needs a key).
    a : float, >= 0
        Perturbation scale (the paper: 1). ``a = 0`` is :class:`DeepFL`.
    num_explore : int, optional
        Uniform initial pulls; ``None``: ``batch`` (until a full mini-batch exists).
    learning_rate, optimizer, batch, dtype, obs_site
        See :class:`bayesbandit.policies.neural.NeuralPolicy`.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import mlp
    >>> policy = bb.DeepFPL(mlp(hidden=16), a=1.0)
    >>> state = policy.init(d=8, key=jax.random.PRNGKey(0))
    >>> arms = jax.random.uniform(jax.random.PRNGKey(1), (10, 8))
    >>> select, update = jax.jit(policy.select), jax.jit(policy.update)  # compiled once per shape
    >>> arm, info = select(state, arms, jax.random.PRNGKey(2))
    >>> state, update_info = update(state, arms, arm, 1.0)
    >>> int(state.t), bool(update_info.converged)
    (1, True)
    """

    info_type: ClassVar[type[DeepFPLInfo]] = DeepFPLInfo

    _: KW_ONLY
    a: float = 1.0
    num_explore: int | None = None

    def __post_init__(self) -> None:
        self._check_training()
        check_scalar(type(self).__name__, "a", self.a, low=0.0, high_open=True)
        if self.num_explore is not None:
            check_int(type(self).__name__, "num_explore", self.num_explore, low=0)

    def initial_exploration(self, d: int) -> tuple[Literal["design", "uniform"], int]:
        """``("uniform", rounds)``: the first ``num_explore`` pulls (``batch`` by default) are uniform."""
        return "uniform", self.batch if self.num_explore is None else self.num_explore

    def without_initial_exploration(self) -> DeepFPL:
        """This policy with ``num_explore=0``."""
        return dataclasses.replace(self, num_explore=0)

    def _init_state(self, d: int, capacity: int | None, key: PRNGKey) -> NetworkState:
        """Weights drawn from the prior with ``key``, an empty mini-batch (``capacity`` is unused)."""
        return init_network(self.bound(d), self._optimizer(), self.batch, self.dtype, key)

    def select(self, state: NetworkState, arms: ArrayLike, key: PRNGKey) -> tuple[Array, DeepFPLInfo]:
        """The arm with the highest mean reward under the network (uniform while exploring)."""
        arms = self._cast(arms)
        key_uniform, key_ties = jax.random.split(key)
        scores = self.bound(arms.shape[1]).mean_reward(state.fit.theta, arms)
        num_explore = self.batch if self.num_explore is None else self.num_explore
        exploring = state.t < num_explore
        uniform = jax.random.randint(key_uniform, (), 0, arms.shape[0], jnp.int32)
        action = jnp.where(exploring, uniform, random_argmax(key_ties, scores))
        return action, self.info_type(jnp.all(jnp.isfinite(scores)), scores, exploring)

    def update(
        self, state: NetworkState, arms: ArrayLike, action: Array, feedback: Array
    ) -> tuple[NetworkState, StepInfo]:
        """Record the reward and take one step on the perturbed recent batch."""
        arms = self._cast(arms)
        return train_step(self.bound(arms.shape[1]), self._optimizer(), state, arms, action, feedback, self.a)

    def posterior_rows(self, state: NetworkState) -> tuple[Array, Array, Array]:
        """The rows the next step trains on: the recent mini-batch ``(x, y, w)``."""
        return state.recent.rows()


class DeepFLInfo(DeepFPLInfo):
    """What :class:`DeepFL`'s ``select`` reports: :class:`DeepFPLInfo`'s fields, the network unperturbed."""

    __slots__ = ()


@register_policy(data_fields=["a", "learning_rate"])
class DeepFL(DeepFPL):
    """DeepFPL with ``a = 0``: follow the leader, no exploration beyond the initial pulls (the paper's ablation)."""

    info_type: ClassVar[type[DeepFPLInfo]] = DeepFLInfo

    _: KW_ONLY
    a: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_scalar("DeepFL", "a", self.a, low=0.0, high=0.0)  # follow the leader; DeepFPL(a=...) perturbs
