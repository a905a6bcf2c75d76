"""One stage ``Psi_s`` of Sub-Elim: Yang et al.'s heap-augmented arm set (Alg. 2).

A stage holds the arms whose uncertainty ``u_a = beta ||x_a||_{V^{-1}}`` was below ``2^{-s}`` when
they were placed, with

* their features (a :class:`~bayesbandit.index.FeatureStore`: exact scans and uniform draws);
* a MIPS index over the lifted points ``vec(x x^T)`` in the symmetric packing (``d (d + 1) / 2``
  coordinates, ``x_i x_j sqrt(2)`` for ``i < j``), queried with the packed ``V^{-1}``, so that
  ``<pack(x x^T), pack(V^{-1})> = x^T V^{-1} x`` (the square of the uncertainty: the paper's
  sec. 5.2 drops the square);
* a min-heap of frozen upper confidence bounds ``(key, id)``, and each held arm's current key; a
  popped entry that is not its arm's current key (the arm left the stage, or was placed in it
  again with a new key by a re-bucketing) is stale and skipped (lazy deletion).
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable

import numpy as np

from bayesbandit.index import FeatureStore, MIPSIndex

__all__ = ["Stage", "pack_outer", "pack_matrix"]


@functools.cache
def _packing(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, columns and weights of the packing in dimension ``d`` (computed once per ``d``)."""
    rows, cols = np.triu_indices(d)
    weight = np.where(rows == cols, 1.0, np.sqrt(2.0))
    for part in (rows, cols, weight):
        part.flags.writeable = False
    return rows, cols, weight


def pack_outer(x: np.ndarray) -> np.ndarray:
    """``pack(x x^T)`` for the rows of ``x`` ``(n, d)``: ``(n, d (d + 1) / 2)``.

    >>> import numpy as np
    >>> x, a = np.array([[1.0, 2.0]]), np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> float(pack_outer(x)[0] @ pack_matrix(a)), float(x[0] @ a @ x[0])
    (8.0, 8.0)
    """
    rows, cols, weight = _packing(x.shape[1])
    return x[:, rows] * x[:, cols] * weight


def pack_matrix(a: np.ndarray) -> np.ndarray:
    """``pack(A)`` of a symmetric ``(d, d)`` matrix (the query side of :func:`pack_outer`)."""
    rows, cols, weight = _packing(a.shape[0])
    return a[rows, cols] * weight


class Stage:
    """``Psi_s``: features, an optional lifted index and a heap of frozen UCBs (module docstring)."""

    def __init__(self, s: int, d: int, index: MIPSIndex | None) -> None:
        self.s = s
        self.store = FeatureStore(d)
        self.index = index
        self.heap: list[tuple[float, int]] = []
        self.keys: dict[int, float] = {}  # the current key of each arm held

    def __len__(self) -> int:
        return len(self.store)

    def add(self, ids: np.ndarray, features: np.ndarray, keys: np.ndarray) -> None:
        """Alg. 2 ``Add``: the arms, their lifted points, and ``(key, id)`` on the heap."""
        self.store.add_unchecked(ids, features)
        if self.index is not None:
            self.index.add(ids, pack_outer(features))
        self.rekey(ids, keys)

    def rekey(self, ids: np.ndarray, keys: np.ndarray) -> None:
        """``(key, id)`` on the heap as each arm's current key (an arm held already: its old entry goes stale)."""
        for key, item in zip(keys.tolist(), ids.tolist(), strict=True):
            heapq.heappush(self.heap, (key, item))
            self.keys[item] = key

    def remove(self, ids: np.ndarray) -> None:
        """Take arms out (re-bucketed or eliminated); their heap entries go stale."""
        self.store.remove_unchecked(ids)
        if self.index is not None:
            self.index.remove(ids)
        for item in ids.tolist():
            del self.keys[item]

    def current_heap(self) -> list[tuple[float, int]]:
        """The heap without stale entries (what a checkpoint keeps), in heap order."""
        heap = [entry for entry in self.heap if self.keys.get(entry[1]) == entry[0]]
        heapq.heapify(heap)
        return heap

    def restore(self, heap: list[tuple[float, int]]) -> None:
        """The heap of :meth:`current_heap`, back (the arms are in the store already)."""
        self.heap = list(heap)
        self.keys = {item: key for key, item in heap}

    def eliminate(self, r_low: float, keep: Callable[[int], bool]) -> list[int]:
        """Alg. 2 ``Eliminate``: pop every arm with key ``< r_low`` except those ``keep`` protects."""
        gone: list[int] = []
        kept: list[tuple[float, int]] = []
        while self.heap and self.heap[0][0] < r_low:
            entry = heapq.heappop(self.heap)
            key, item = entry
            if self.keys.get(item) != key:
                continue  # stale: the arm left the stage, or has a newer key
            if keep(item):
                kept.append(entry)
            else:
                gone.append(item)
        for entry in kept:
            heapq.heappush(self.heap, entry)
        if gone:
            self.remove(np.asarray(gone, dtype=np.int64))
        return gone
