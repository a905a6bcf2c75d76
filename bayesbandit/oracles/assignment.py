"""``ExclusiveAssignment``: ``k`` arms per block, each arm in at most one block (the promotion problem).

Takemura and Ito's promotion problem (sec. VII-A2) sends each of ``M`` promotions to ``k`` users,
and a user receives at most one promotion. For scores ``s`` of shape ``(M, N)`` the oracle solves

    max sum_{j, i} s_{j,i} z_{j,i}   s.t.   sum_i z_{j,i} = k (every block),  sum_j z_{j,i} <= 1 (every arm),

a transportation problem whose constraint matrix is totally unimodular; the per-block top-k
(:class:`~bayesbandit.oracles.TopK`) is its relaxation without the second constraint, and greedy
over sorted pairs is not exact (spec sec. 6.2).

It is solved exactly on the host:

1. If the blocks' top-k sets are disjoint, they are optimal (they attain the relaxation's value).
2. Otherwise only each block's ``M k`` best arms can be in an optimal solution (if arm ``i`` were
   assigned to block ``j`` from outside ``j``'s top ``M k``, at most ``M k - 1`` other arms are
   assigned anywhere, so one of ``j``'s top ``M k`` is free and swapping it in does not lose);
   the union of those lists (the candidates) against ``M k`` slots (block ``j`` repeated ``k``
   times) is a rectangular assignment problem, solved by :func:`scipy.optimize.linear_sum_assignment`.

Ties: scores are first rounded to multiples of ``tol max(1, max |s|)`` (round-off is a tie, never a
silent decision), then the solver meets the candidates in index order (``"index"``) or in a random
order from the key (``"random"``). Inside ``jax.jit`` and ``jax.vmap`` the call goes through
``jax.pure_callback`` (sequentially over a batch). Cost: one argpartition per block, plus the
assignment when the top-k sets collide: milliseconds at ``M k = 200`` over a thousand arms,
seconds at ``M k = 2000`` over tens of thousands.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import linear_sum_assignment

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles.top_k import TIE_RULES
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["ExclusiveAssignment", "exclusive_assignment"]


def _top(scores: np.ndarray, count: int) -> np.ndarray:
    """Per row, the positions of the ``count`` largest scores (ties: the lowest position)."""
    return np.argsort(-scores, axis=1, kind="stable")[:, :count]


def exclusive_assignment(scores: np.ndarray, k: int, order: np.ndarray) -> np.ndarray:
    """The optimal assignment of the module docstring on the host: ``(M, k)`` arm positions per block.

    ``order`` is a permutation of the ``N`` arms: ties go to arms earlier in it.
    """
    blocks, n = scores.shape
    permuted = scores[:, order]
    top = _top(permuted, k)
    if np.unique(top).size == blocks * k:
        chosen = top
    else:
        candidates = np.unique(_top(permuted, min(n, blocks * k)))
        slots = np.repeat(permuted[:, candidates], k, axis=0)  # (M k, C): block j's k slots
        rows, cols = linear_sum_assignment(slots, maximize=True)
        chosen = np.empty((blocks, k), dtype=np.int64)
        chosen[rows // k, rows % k] = candidates[cols]
    picked = np.take_along_axis(permuted, chosen, 1)
    chosen = np.take_along_axis(chosen, np.argsort(-picked, axis=1, kind="stable"), 1)  # best first
    return order[chosen]


@dataclass(frozen=True)
class ExclusiveAssignment:
    """``k`` arms per block, each arm in at most one block, maximising the total score (module docstring).

    Parameters
    ----------
    k : int
        Arms per block.
    tie_break : {"index", "random"}
    tol : float
        Relative resolution below which scores tie.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> oracle = ExclusiveAssignment(1)
    >>> scores = jnp.array([[5.0, 4.0, 0.0], [5.0, 1.0, 0.0]])  # both blocks want arm 0
    >>> oracle(scores, jax.random.PRNGKey(0)).tolist()  # block 0 takes arm 1, block 1 arm 0 (lifted 3 + 0)
    [1, 3]
    """

    k: int
    tie_break: str = "index"
    tol: float = 1e-9

    def __post_init__(self) -> None:
        check_int("ExclusiveAssignment", "k", self.k, low=1)
        check_choice("ExclusiveAssignment", "tie_break", self.tie_break, TIE_RULES)
        check_scalar("ExclusiveAssignment", "tol", self.tol, low=0.0)

    def check(self, num_blocks: int, num_arms: int) -> None:
        """Raise :class:`~bayesbandit.errors.InvalidInput` unless ``M k <= N`` (each arm in one block at most)."""
        if num_blocks * self.k > num_arms:
            raise InvalidInput(
                f"ExclusiveAssignment: M k = {num_blocks} x {self.k} = {num_blocks * self.k} distinct arms are "
                f"needed, but there are only N = {num_arms}. Fix: use k <= {num_arms // num_blocks}, offer more "
                "arms, or drop exclusivity (bayesbandit.oracles.TopK)."
            )

    def solve(self, scores: np.ndarray, seed: int | np.ndarray) -> np.ndarray:
        """Host version of ``__call__``: ``(M k,)`` lifted indices for ``(M, N)`` NumPy scores."""
        scores = np.asarray(scores, dtype=np.float64)
        blocks, n = scores.shape
        resolution = self.tol * max(1.0, float(np.max(np.abs(scores))))
        rounded = np.round(scores / resolution) * resolution if resolution > 0 else scores
        if self.tie_break == "index":
            order = np.arange(n)
        else:
            order = np.random.default_rng(np.asarray(seed, dtype=np.uint32).ravel().tolist()).permutation(n)
        chosen = exclusive_assignment(rounded, self.k, order)
        return (chosen + n * np.arange(blocks)[:, None]).reshape(-1).astype(np.int32)

    def __call__(self, scores: Array, key: PRNGKey) -> Array:
        """The super arm ``(M k,)`` int32 of lifted indices ``j N + i``, block by block, best first."""
        blocks, _ = scores.shape
        seed = jax.random.randint(key, (2,), 0, jnp.iinfo(jnp.int32).max)
        shape = jax.ShapeDtypeStruct((blocks * self.k,), jnp.int32)
        return jax.pure_callback(self.solve, shape, scores, seed, vmap_method="sequential")
