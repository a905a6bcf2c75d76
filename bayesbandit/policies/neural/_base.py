"""The settings and program plumbing every neural policy shares (training itself: ``_training``)."""

from __future__ import annotations

import functools
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal

import jax
import jax.numpy as jnp
import optax

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.policies._explore import init_arms
from bayesbandit.policies._program import ProgramPolicy
from bayesbandit.policies.neural._training import (
    check_program_argument,
    check_site_name,
    check_training,
    make_optimizer,
)
from bayesbandit.validation import check_int

__all__ = ["NeuralPolicy"]


@dataclass(frozen=True)
class NeuralPolicy(ProgramPolicy):
    """Base of the policies on a neural reward program, trained one optimiser step per round.

    Fields shared by every neural policy (keyword-only after ``model``):

    learning_rate : float, > 0
        The optimiser's step size (the paper: Keras' Adam default, 1e-3).
    optimizer : {"adam", "adamw", "amsgrad", "yogi", "sgd", "rmsprop", "adagrad"}
        The Optax optimiser (the paper: Adam; it names Yogi as an alternative).
    batch : int
        The mini-batch: the ``batch`` most recent observations (the paper: 32).
    dtype : {"float32", "float64"}
        The network's precision. float32 by default, whatever JAX's 64-bit mode: a first-order
        step gains nothing from float64, which only halves the speed. GLM heads fitted by
        Newton's method (:class:`RepGLMFPL`, :class:`LastLayerLaplaceTS`) keep JAX's default
        float, which Newton requires to be float64.
    obs_site : str
        Name of the observed reward site.
    """

    kind: ClassVar[Literal["jax"]] = "jax"

    model: Any
    _: KW_ONLY
    learning_rate: float = 1e-3
    optimizer: str = "adam"
    batch: int = 32
    dtype: str = "float32"
    obs_site: str = "y"

    def _check_training(self) -> None:
        owner = type(self).__name__
        check_program_argument(owner, "model", self.model)
        check_training(owner, self.learning_rate, self.optimizer, self.batch, self.dtype)
        check_site_name(owner, "obs_site", self.obs_site)

    def check_program(self, d: int) -> None:
        """Bind the program (raising :class:`~bayesbandit.errors.ModelSpecError` for a broken one).

        No mode check: the network is trained by first-order steps on recent data, not
        Newton's method to a joint mode.
        """
        self.bound(d)

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> Any:
        """The initial state for arms of dimension ``d`` (or that of the fixed set ``arms``).

        The network's weights are drawn from the program's prior with ``key``, its mini-batch is
        empty; a neural-linear policy adds an empty head with room for ``capacity`` rows (the
        others ignore ``capacity``). One compiled program per policy, ``d`` and ``capacity``
        builds the state.
        """
        owner = type(self).__name__
        if arms is None and d is not None:
            d = check_int(f"{owner}.init", "d", d, low=1)
        _, d = init_arms(owner, arms, d)
        if key is None:
            raise InvalidInput(
                f"{owner}.init needs a key: a network's initial weights are drawn from the program's prior. "
                "Fix: init(..., key=jax.random.PRNGKey(seed))."
            )
        return _initial_state(self, d, capacity, key)

    def _init_state(self, d: int, capacity: int | None, key: PRNGKey) -> Any:
        """The state :meth:`init` returns for ``d``-dimensional arms (traceable)."""
        raise NotImplementedError

    def _optimizer(self) -> optax.GradientTransformation:
        return make_optimizer(self.optimizer, self.learning_rate)

    def _cast(self, arms: Any) -> Array:
        return jnp.asarray(arms, dtype=self.dtype)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _initial_state(policy: NeuralPolicy, d: int, capacity: int | None, key: PRNGKey) -> Any:
    """``policy._init_state`` compiled: the policy's numeric hyper-parameters are its pytree leaves."""
    return policy._init_state(d, capacity, key)
