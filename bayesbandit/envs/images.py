"""The deep contextual bandit of Kveton et al. (2020, Section 5.2): pick the image of the target class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.datasets.images import ImageData
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int, check_scalar

__all__ = ["ImageClassBandit", "ImageInstance"]


class ImageInstance(NamedTuple):
    """One instance: the target class and the key of its stream of arm sets."""

    target: Array  # () int32
    key: PRNGKey  # round t's arms are drawn from fold_in(key, t)


@dataclass(frozen=True, eq=False, kw_only=True)
class ImageClassBandit:
    """Each round ``K`` images drawn uniformly with replacement; reward ``Ber(p_target)`` for the target class.

    An instance fixes a target class ``c`` (drawn uniformly by ``reset``). Pulling an image of
    class ``c`` gives ``Bernoulli(p_target)``, any other ``Bernoulli(p_other)`` (the paper:
    0.75 and 0.25, ``K = 10``). The oracle knows the labels: the best expected reward of a
    round is ``p_target`` if one of its images has class ``c``, else ``p_other``. Averaged over
    rounds it is ``p_other q + p_target (1 - q)``, ``q = (1 - 1/C)^K`` for ``C`` balanced
    classes: 0.5757 for the paper's setting (its printed ``(1/K)^K`` is a typo).

    Rewards use common random numbers: the ``K`` arms of a round share one uniform draw each from
    the round's key, so two policies see the same reward for the same image.

    Parameters
    ----------
    data : ImageData
        From :func:`bayesbandit.datasets.load_mnist` or :func:`~bayesbandit.datasets.load_digits`.
    K : int
        Images per round.
    p_target, p_other : float in [0, 1]
    """

    data: ImageData = field(repr=False)
    K: int = 10
    p_target: float = 0.75
    p_other: float = 0.25

    fixed_arms: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if not isinstance(self.data, ImageData):
            raise InvalidInput(
                f"The 'data' parameter of ImageClassBandit must be an ImageData (load_mnist, load_digits). "
                f"Got {type(self.data).__name__} instead."
            )
        check_int("ImageClassBandit", "K", self.K, low=1)
        check_scalar("ImageClassBandit", "p_target", self.p_target, low=0.0, high=1.0)
        check_scalar("ImageClassBandit", "p_other", self.p_other, low=0.0, high=1.0)
        object.__setattr__(self, "_images", jnp.asarray(self.data.images))
        object.__setattr__(self, "_labels", jnp.asarray(self.data.labels))

    @property
    def d(self) -> int:
        """Pixels per image."""
        return int(self.data.images.shape[1])

    @property
    def source(self) -> str:
        return self.data.source

    def optimum(self, target: int | None = None) -> float:
        """Expected reward per round of the oracle: for one class, or averaged over classes drawn uniformly."""
        counts = np.bincount(self.data.labels, minlength=self.data.num_classes) / self.data.labels.size
        miss = (1.0 - counts) ** self.K
        per_class = self.p_other * miss + self.p_target * (1.0 - miss)
        return float(per_class.mean() if target is None else per_class[target])

    def reset(self, key: PRNGKey) -> ImageInstance:
        """Draw one instance: a target class, uniformly, and the key of its arm stream."""
        key_target, key_arms = jax.random.split(key)
        target = jax.random.randint(key_target, (), 0, self.data.num_classes, jnp.int32)
        return ImageInstance(target, key_arms)

    def _indices(self, env_state: ImageInstance, t: ArrayLike) -> Array:
        key = jax.random.fold_in(env_state.key, t)
        return jax.random.randint(key, (self.K,), 0, self.data.images.shape[0])

    def arms(self, env_state: ImageInstance, t: ArrayLike) -> Array:
        """Round ``t``'s images, shape (K, pixels)."""
        images: Any = self._images  # type: ignore[attr-defined]
        return images[self._indices(env_state, t)]

    def pull(self, env_state: ImageInstance, action: Array, key: PRNGKey, t: ArrayLike) -> tuple[Array, Outcome]:
        """The reward of image ``action`` of round ``t`` and the round's Outcome (means from the labels)."""
        labels: Any = self._labels  # type: ignore[attr-defined]
        hit = labels[self._indices(env_state, t)] == env_state.target
        means = jnp.where(hit, self.p_target, self.p_other)
        rewards = (jax.random.uniform(key, means.shape) < means).astype(float)
        return rewards[action], Outcome(means[action], jnp.max(means))
