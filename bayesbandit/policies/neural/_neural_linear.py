"""Neural-linear policies: train the network while pulling uniformly, freeze it, run a GLM policy on its embedding.

Riquelme et al. (2018)'s Neural Linear as Kveton et al. (2020, Section 5.2) use it for
repGLM-FPL: for the first ``m`` rounds (``explore_rounds``, the paper's ``m%`` of ``n``) pull
uniformly at random and train the network one optimiser step per round on the recent
mini-batch (:func:`~bayesbandit.policies.neural._training.train_step`, unperturbed); then
remove the output layer, embed every row as ``[h(x), 1]`` (the hidden activations, recorded by
the program as the deterministic site ``embedding_site``, and a bias) with the network frozen,
and hand the whole history to a GLM policy on those features (:meth:`NeuralLinear.head`). Round
``m`` is still uniform (its update hands the rows over and fits the head); the head acts from
round ``m + 1``. The head is fitted by Newton's method, so it needs 64-bit mode.

Under ``vmap`` (``simulate``) both branches of a per-run condition execute, so every round pays
for the network step, the head's refit and the embedding of the ``m`` training rows; the
``Agent`` pays only for the branch it takes.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.history import RowHistory
from bayesbandit.inference.glm_program import GLM
from bayesbandit.policies._explore import DEFAULT_CAPACITY
from bayesbandit.policies.glm._policy import GLMPolicy, GLMState
from bayesbandit.policies.neural._base import NeuralPolicy
from bayesbandit.policies.neural._training import (
    NetworkState,
    check_program_argument,
    check_site_name,
    init_network,
    train_step,
)
from bayesbandit.validation import check_int, check_scalar

__all__ = ["NeuralLinear", "NeuralLinearState", "NeuralLinearInfo", "NeuralLinearUpdateInfo"]


class NeuralLinearState(NamedTuple):
    """The network, the uniform phase's raw rows, and the GLM head on the frozen embedding."""

    network: NetworkState
    explored: RowHistory  # (m, d) the uniform phase's rows, in the network's dtype
    head: GLMState  # the head policy's state over [embedding, 1]
    t: Array  # () int32, rounds observed


class NeuralLinearInfo(NamedTuple):
    """The fields every neural-linear ``select`` reports; each policy reports its own subclass of it.

    A NamedTuple subclass adds no fields, so ``RepGLMFPLInfo`` and ``LastLayerLaplaceTSInfo`` are
    their own types over these two fields (``info_type`` on the policy), defined once here.
    """

    converged: Array  # () bool: the head's selection converged (always true while exploring)
    exploring: Array  # () bool: a uniform pull of the training phase


class NeuralLinearUpdateInfo(NamedTuple):
    """What a neural-linear ``update`` reports."""

    converged: Array  # () bool: recorded, and the network step or the head's fit converged
    recorded: Array  # () bool: the action indexed the round's arms
    exploring: Array  # () bool: a round of the training phase


@dataclass(frozen=True)
class NeuralLinear(NeuralPolicy):
    """Base of :class:`RepGLMFPL` and :class:`LastLayerLaplaceTS` (see the module docstring).

    Fields beyond :class:`~bayesbandit.policies.neural.NeuralPolicy`'s:

    explore_rounds : int, >= 0
        ``m``: uniform pulls while the network trains (the paper: 1% to 20% of the horizon).
    a : float, >= 0
        The head policy's randomisation scale.
    head_model : NumPyro program, optional
        The GLM head on ``[embedding, 1]``; default :func:`bayesbandit.models.logistic` (prior
        ``N(0, 1)``), the paper's logistic GLM-FPL.
    embedding_site : str
        The program's deterministic site holding the embedding (:func:`bayesbandit.models.mlp`
        records ``"embedding"``).
    """

    info_type: ClassVar[type[NeuralLinearInfo]] = NeuralLinearInfo

    _: KW_ONLY
    explore_rounds: int = 100
    a: float = 0.5
    head_model: Any = None
    embedding_site: str = "embedding"

    def _check_neural_linear(self) -> None:
        owner = type(self).__name__
        self._check_training()
        check_int(owner, "explore_rounds", self.explore_rounds, low=0)
        check_scalar(owner, "a", self.a, low=0.0, high_open=True)
        if self.head_model is not None:
            check_program_argument(owner, "head_model", self.head_model)
        check_site_name(owner, "embedding_site", self.embedding_site)

    # ------------------------------------------------------------------------- the head
    def head(self) -> GLMPolicy:
        """The GLM policy that acts on the embedding after the training phase."""
        raise NotImplementedError

    def head_program(self) -> Any:
        """The head's NumPyro program (over ``[embedding, 1]``)."""
        return GLM(family="logistic") if self.head_model is None else self.head_model

    def embed(self, state: NeuralLinearState, x: ArrayLike) -> Array:
        """``[h(x), 1]`` for rows ``x`` under the current network, in JAX's default float (shape (n, H + 1))."""
        x = self._cast(x)
        h = self.bound(x.shape[1]).deterministic(state.network.fit.theta, x, self.embedding_site)
        h = jnp.asarray(h, jnp.result_type(float))
        return jnp.concatenate([h, jnp.ones((h.shape[0], 1), h.dtype)], axis=1)

    def head_rows(self, state: NeuralLinearState) -> tuple[Array, Array, Array]:
        """The head's weighted rows ``(embedding, y, w)``: what the last-layer posterior is fitted to.

        Compare its Laplace and FPL approximations with NUTS by
        ``bayesbandit.diagnostics.compare(policy.head_program(), *policy.head_rows(state))``.
        """
        return _head_history(state).rows()

    def posterior_rows(self, state: NeuralLinearState) -> tuple[Array, Array, Array]:
        """The rows the network was trained on: the uniform phase's ``(x, y, w)``."""
        return state.explored.rows()

    def _hidden(self, d: int) -> int:
        bound = self.bound(d)
        h = bound.deterministic(bound.init_theta(), jnp.zeros((1, d)), self.embedding_site)
        if h.ndim != 2:
            raise InvalidInput(
                f"{type(self).__name__}: the program's site '{self.embedding_site}' must have shape (n, H); got "
                f"{h.shape} for one row."
            )
        return int(h.shape[1])

    # ------------------------------------------------------------------------- Buffered
    def capacity(self, state: NeuralLinearState) -> int | None:
        """The head's row capacity."""
        return self.head().capacity(state.head)

    def filled(self, state: NeuralLinearState) -> int:
        """Rows the head holds, counting the uniform rows it receives at the switch."""
        return max(self.head().filled(state.head), min(int(state.t), self.explore_rounds))

    def reserve(self, state: NeuralLinearState, num_rows: int) -> NeuralLinearState:
        """A state whose head has room for ``num_rows`` more rows (and for the uniform phase's rows)."""
        needed = max(self.filled(state) + num_rows, self.explore_rounds + 1) - self.head().filled(state.head)
        return state._replace(head=self.head().reserve(state.head, needed))

    # ------------------------------------------------------------------------- contract
    def _init_state(self, d: int, capacity: int | None, key: PRNGKey) -> NeuralLinearState:
        """Network weights drawn from the prior with ``key``; an empty head with ``capacity`` rows."""
        capacity = max(capacity or DEFAULT_CAPACITY, self.explore_rounds + 1)
        network = init_network(self.bound(d), self._optimizer(), self.batch, self.dtype, key)
        explored = RowHistory.create(max(self.explore_rounds, 1), d, jnp.dtype(self.dtype))
        head = self.head().init(d=self._hidden(d) + 1, capacity=capacity)
        return NeuralLinearState(network, explored, head, jnp.asarray(0, jnp.int32))

    def select(self, state: NeuralLinearState, arms: ArrayLike, key: PRNGKey) -> tuple[Array, NeuralLinearInfo]:
        """A uniform arm while the network trains, then the head policy's choice on the embedding."""
        arms = self._cast(arms)
        exploring = state.t <= self.explore_rounds  # round m's head receives its rows in round m's update

        def uniform() -> tuple[Array, Array]:
            return jax.random.randint(key, (), 0, arms.shape[0], jnp.int32), jnp.asarray(True)

        def by_head() -> tuple[Array, Array]:
            action, info = self.head().select(state.head, self.embed(state, arms), key)
            return action.astype(jnp.int32), jnp.asarray(info.converged)

        action, converged = jax.lax.cond(exploring, uniform, by_head)
        return action, self.info_type(converged, exploring)

    def update(
        self, state: NeuralLinearState, arms: ArrayLike, action: Array, feedback: Array
    ) -> tuple[NeuralLinearState, NeuralLinearUpdateInfo]:
        """Train the network on the first ``m`` rounds; from round ``m`` on, update the head on the embedding."""
        arms = self._cast(arms)
        recorded = (action >= 0) & (action < arms.shape[0])
        training = state.t < self.explore_rounds

        def train() -> tuple[NeuralLinearState, Array]:
            network, info = train_step(
                self.bound(arms.shape[1]), self._optimizer(), state.network, arms, action, feedback, 0.0
            )
            explored = state.explored.add(
                arms[jnp.clip(action, 0, arms.shape[0] - 1)], jnp.asarray(feedback, arms.dtype)
            )
            return state._replace(network=network, explored=explored), info.converged

        def act() -> tuple[NeuralLinearState, Array]:
            head = jax.lax.cond(
                _head_history(state).size < self.explore_rounds, lambda: self._hand_over(state), lambda: state.head
            )
            head, info = self.head().update(head, self.embed(state, arms), action, feedback)
            return state._replace(head=head), info.converged

        new_state, converged = jax.lax.cond(training, train, act)
        new_state = new_state._replace(t=state.t + 1)
        new_state = jax.tree.map(lambda new, old: jnp.where(recorded, new, old), new_state, state)
        return new_state, NeuralLinearUpdateInfo(converged & recorded, recorded, training)

    def _hand_over(self, state: NeuralLinearState) -> GLMState:
        """The head's history with the ``m`` training rows embedded by the (now frozen) network.

        The head's own ``update`` then adds round ``m``'s row and fits the whole history.
        """
        m = self.explore_rounds
        history = _head_history(state)
        history = RowHistory(
            history.x.at[:m].set(self.embed(state, state.explored.x[:m])),
            history.y.at[:m].set(state.explored.y[:m].astype(history.y.dtype)),
            history.w.at[:m].set(1.0),
            jnp.asarray(m, jnp.int32),
        )
        return state.head._replace(history=history, t=jnp.asarray(m, jnp.int32))


def _head_history(state: NeuralLinearState) -> RowHistory:
    """The head's history: a :class:`RowHistory`, the form ``init`` gives it (arm sets change every round)."""
    return cast(RowHistory, state.head.history)


def uniform_fraction(fraction: float, horizon: int) -> int:
    """``explore_rounds`` for the paper's ``m%`` of a horizon of ``n`` rounds: ``round(fraction * n)``."""
    return int(np.round(fraction * horizon))
