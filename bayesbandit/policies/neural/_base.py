"""The settings and program plumbing every neural policy shares (training itself: ``_training``)."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal

import jax.numpy as jnp
import optax

from bayesbandit._typing import Array
from bayesbandit.errors import InvalidInput
from bayesbandit.policies._program import ProgramPolicy
from bayesbandit.policies.neural._training import check_training, make_optimizer

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
        check_training(type(self).__name__, self.learning_rate, self.optimizer, self.batch, self.dtype)
        if not isinstance(self.obs_site, str):
            raise InvalidInput(
                f"The 'obs_site' parameter of {type(self).__name__} must be a str. Got {self.obs_site!r} instead."
            )

    def check_program(self, d: int) -> None:
        """Bind the program (raising :class:`~bayesbandit.errors.ModelSpecError` for a broken one).

        No mode check: the network is trained by first-order steps on recent data, not
        Newton's method to a joint mode.
        """
        self.bound(d)

    def _optimizer(self) -> optax.GradientTransformation:
        return make_optimizer(self.optimizer, self.learning_rate)

    def _cast(self, arms: Any) -> Array:
        return jnp.asarray(arms, dtype=self.dtype)
