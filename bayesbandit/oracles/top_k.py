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
rule, rather than a silent decision. NaN ranks below every number; infinite ``v`` ties exactly
(no tolerance). Within a block the picks come best first, equal scores in the tie rule's order.

**Computation.** XLA:CPU has a fast ``top_k`` for float32 only: float64 and integer keys go
through a full sort, about 40 times slower at ``N = 20,000``. So the selection works on a pool of
``P = min(N, 2 k + 16)`` candidates per block:

1. ``lax.top_k`` of the scores rounded to float32, ``P`` of them, the smallest ``w``;
2. on the candidates' exact scores (two small sorts): ``v``, the classes and the picks;
3. the check ``w < fl32(v - tol s)``.

Rounding to float32 is monotone (``a <= b`` implies ``fl32(a) <= fl32(b)``, overflow and
flushed subnormals included), so an arm outside the pool has ``fl32(x) <= w``; when the check
holds, ``x >= v - tol s`` would give ``fl32(x) >= fl32(v - tol s) > w``: every arm outside the
pool is below the tie band. Then the pool holds every arm in or above the band (at least ``k``),
its ``k``-th largest score is ``v`` and its picks are exactly the full selection's. The check fails
only when more than ``P - k`` arms round to within one float32 step of the band (for example many
exact ties at the boundary) or ``v = -inf`` (fewer than ``k`` finite scores); ``"random"`` also needs the
random permutation when the band has more arms than free slots or two picks have equal scores
(the pool's order is the index). In those cases, and only then, the selection is recomputed on
all ``N`` arms: float64 ``top_k`` for ``v`` and one integer ``top_k`` over the keys (class, then
the tie order). The fallback sits in a ``lax.while_loop`` that runs at most once, so under
``vmap`` it costs nothing unless some member of the batch needs it. Float32 scores take the same
path (the rounding is the identity); integer scores take the full path.
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
        if not jnp.issubdtype(scores.dtype, jnp.floating):
            return self._full(scores, key)
        action, fallback = self._pooled(scores)

        def full(carry: tuple[Array, Array]) -> tuple[Array, Array]:
            # the barrier ties the inputs to the loop's state: XLA must not hoist the full selection out of the loop
            inputs, key_in, _ = jax.lax.optimization_barrier((scores, key, carry[1]))
            return self._full(inputs, key_in), jnp.asarray(False)

        # at most one pass, and none unless the pool's check failed (under vmap: for some member of the batch)
        return jax.lax.while_loop(lambda carry: carry[1], full, (action, fallback))[0]

    def pool_size(self, num_arms: int) -> int:
        """``P = min(N, 2 k + 16)``: the candidates per block that the float32 ``top_k`` keeps."""
        return min(num_arms, 2 * self.k + 16)

    def _classes(self, scores: Array, kth: Array) -> tuple[Array, Array]:
        """Each score's class (2 above the band, 1 in it, 0 below) and the band's lower edge ``v - tol s``."""
        slack = jnp.where(jnp.isfinite(kth), self.tol * jnp.maximum(1.0, jnp.abs(kth)), 0.0)
        tier = jnp.where(scores > kth + slack, 2, jnp.where(scores >= kth - slack, 1, 0)).astype(jnp.int32)
        return tier, kth - slack

    def _lift(self, best_first: Array, n: int) -> Array:
        blocks = best_first.shape[0]
        return (best_first + n * jnp.arange(blocks, dtype=jnp.int32)[:, None]).reshape(-1).astype(jnp.int32)

    def _pooled(self, scores: Array) -> tuple[Array, Array]:
        """Steps 1-3 of the module docstring: the picks from the pool, and whether the full selection is needed."""
        n = scores.shape[1]
        pool = self.pool_size(n)
        rounded, index = jax.lax.top_k(scores.astype(jnp.float32), pool)
        # the pool best first, equal scores by index (the "index" rule's order)
        neg, index = jax.lax.sort((-jnp.take_along_axis(scores, index, 1), index.astype(jnp.int32)), num_keys=2)
        kth = -neg[:, self.k - 1 : self.k]
        tier, low = self._classes(-neg, kth)
        _, index, neg = jax.lax.sort((-tier, index, neg), num_keys=2)  # the classes, then the lowest index
        neg, best_first = jax.lax.sort((neg[:, : self.k], index[:, : self.k]), num_keys=2)
        fallback = jnp.asarray(False)
        if pool < n:
            # w by a reduction: a slice of top_k's values would stop XLA matching its fast TopK kernel
            fallback = ~jnp.all(jnp.min(rounded, axis=1, keepdims=True) < low.astype(jnp.float32))
        if self.tie_break == "random":
            free = self.k - jnp.sum(tier == 2, axis=1)
            fallback |= jnp.any(jnp.sum(tier == 1, axis=1) > free) | jnp.any(neg[:, 1:] == neg[:, :-1])
        return self._lift(best_first, n), fallback

    def _full(self, scores: Array, key: PRNGKey) -> Array:
        """The selection on all ``N`` arms: float64 ``top_k`` for ``v``, one integer ``top_k`` over the keys."""
        blocks, n = scores.shape
        kth = jax.lax.top_k(scores, self.k)[0][:, -1:]
        tier, _ = self._classes(scores, kth)
        order = tie_order(key, (blocks, n), self.tie_break)
        chosen = jax.lax.top_k(tier * n + order, self.k)[1]
        # best first; equal scores keep the tie rule's priority (top_k returns them in that order)
        best_first = jnp.take_along_axis(
            chosen, jnp.argsort(-jnp.take_along_axis(scores, chosen, 1), 1, stable=True), 1
        )
        return self._lift(best_first, n)
