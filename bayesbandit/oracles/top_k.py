"""``TopK``: the exact oracle of a partition matroid, the ``k`` best arms of each block.

For scores ``s`` of shape ``(M, N)`` (``M`` blocks of the same ``N`` arms; ``M = 1`` is plain
top-k, ``|I| = k``), the super arm maximising ``sum_{(j, i) in I} s_{j,i}`` with exactly ``k`` arms
per block takes each block's ``k`` largest scores, negative ones included (Takemura and Ito,
sec. IV-A; spec sec. 1.4): the blocks do not interact, and within a block any ``k``-set other than
the ``k`` largest can swap a smaller score for a larger one.

Ties decide the clustered experiment (spec sec. 6.1): arms with identical features get identical
scores, and which of them are chosen is the tie rule's choice. In each block let ``v`` be the
``k``-th largest score and ``s = max(1, |v|)``; scores above ``v + tol s`` are in, scores within
``tol s`` of ``v`` are tied, and the free slots go to tied arms by the lowest index (``"index"``,
deterministic) or uniformly at random (``"random"``, an independent permutation per block from
the key). The tolerance makes round-off (``1.0`` against ``1.0 + 1e-13``) a tie, resolved by the
rule, rather than a silent decision. The selection is one ``jax.lax.top_k`` over integer keys
(class, then the tie order), so it is exact, jittable and vmappable. NaN ranks below every
number; infinite ``v`` ties exactly (no tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["TopK", "TIE_RULES", "tie_order", "score_shape"]

TIE_RULES = ("index", "random")
"""The tie rules every oracle takes: ``"index"`` (lowest index first) and ``"random"``."""


def score_shape(owner: str, scores: Any) -> tuple[int, int]:
    """``(M, N)`` of an oracle's scores, after checking they are a non-empty 2-d array (shapes are static
    under ``jit``)."""
    shape = tuple(getattr(scores, "shape", ()))
    if len(shape) != 2 or 0 in shape:
        raise InvalidInput(
            f"{owner}: scores must have shape (M, N) with M, N >= 1, one row per block; got shape {shape}. "
            "Fix: pass scores[None, :] for a single block."
        )
    return int(shape[0]), int(shape[1])


def tie_order(key: PRNGKey, shape: tuple[int, int], rule: str) -> Array:
    """Priority among tied arms, ``(M, N)`` int32, larger first.

    ``"index"``: ``N - 1 - i`` (the lowest index first; ``key`` is unused); ``"random"``: an
    independent uniform permutation of ``0 .. N - 1`` per block.
    """
    blocks, n = shape
    if rule == "index":
        return jnp.broadcast_to(n - 1 - jnp.arange(n, dtype=jnp.int32), shape)
    keys = jax.random.split(key, blocks)
    return jax.vmap(lambda k: jax.random.permutation(k, n).astype(jnp.int32))(keys)


@dataclass(frozen=True, kw_only=True)
class TopK:
    """The ``k`` largest scores of each block (see the module docstring).

    Hashable and without array leaves: a policy closes over it inside ``jax.jit``.

    Parameters
    ----------
    k : int
        Arms per block, ``k >= 1``.
    tie_break : {"index", "random"}
        Which tied arms fill the free slots: the lowest indices, or uniformly at random from the key.
    tol : float
        Relative tolerance under which two scores tie (``0``: only equal scores tie).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> oracle = TopK(k=2)
    >>> oracle(jnp.array([[0.5, 1.0, 1.0, 1.0]]), jax.random.PRNGKey(0)).tolist()
    [1, 2]
    >>> oracle(jnp.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]), jax.random.PRNGKey(0)).tolist()  # lifted j N + i
    [0, 2, 4, 5]
    >>> TopK(k=1)(jnp.array([[1.0, 1.0 + 1e-13, 0.5]]), jax.random.PRNGKey(0)).tolist()  # round-off is a tie
    [0]
    """

    k: int
    tie_break: str = "index"
    tol: float = 1e-9

    def __post_init__(self) -> None:
        check_int("TopK", "k", self.k, low=1)
        check_choice("TopK", "tie_break", self.tie_break, TIE_RULES)
        check_scalar("TopK", "tol", self.tol, low=0.0, high_open=True)

    def check(self, num_blocks: int, num_arms: int) -> None:
        """Raise :class:`~bayesbandit.errors.InvalidInput` if a block has fewer than ``k`` arms."""
        check_int("TopK.check", "num_blocks", num_blocks, low=1)
        check_int("TopK.check", "num_arms", num_arms, low=1)
        if self.k > num_arms:
            raise InvalidInput(
                f"TopK: k = {self.k} arms per block, but there are only N = {num_arms} arms. "
                f"Fix: use k <= {num_arms}, or offer more arms."
            )

    def __call__(self, scores: Array, key: PRNGKey) -> Array:
        """The super arm ``(M k,)`` int32 of lifted indices ``j N + i``, block by block, best first.

        Parameters
        ----------
        scores : array, shape (M, N)
        key : PRNG key
            Used by ``tie_break="random"`` only.
        """
        blocks, n = score_shape("TopK", scores)
        self.check(blocks, n)
        scores = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
        kth = jax.lax.top_k(scores, self.k)[0][:, -1:]
        slack = jnp.where(jnp.isfinite(kth), self.tol * jnp.maximum(1.0, jnp.abs(kth)), 0.0)
        tier = jnp.where(scores > kth + slack, 2, jnp.where(scores >= kth - slack, 1, 0)).astype(jnp.int32)
        order = tie_order(key, (blocks, n), self.tie_break)
        chosen = jax.lax.top_k(tier * n + order, self.k)[1]
        # best first; equal scores keep the tie rule's priority (top_k returns them in that order)
        best_first = jnp.take_along_axis(
            chosen, jnp.argsort(-jnp.take_along_axis(scores, chosen, 1), 1, stable=True), 1
        )
        return (best_first + n * jnp.arange(blocks, dtype=jnp.int32)[:, None]).reshape(-1).astype(jnp.int32)
