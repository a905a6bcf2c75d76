"""``ExactIndex``: maximum inner product by one scan over contiguous rows, the honest baseline.

A query is one BLAS matrix-vector product over the live rows (``O(K d)``, memory-bound), then a
top-``k`` selection (:func:`top_k`) that costs a small fraction of the product. Deletions are swap-removes
(:class:`~bayesbandit.index.store.FeatureStore`), so the rows stay contiguous. Every speed-up of
an approximate index is measured against this scan.

The vectors are stored as added (float64: :meth:`ExactIndex.vectors` gives them back); a scan in
float32 (the default) reads a float32 copy of the rows, kept in the same order, which halves its
memory traffic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesbandit.index.protocol import (
    SavedAsParts,
    check_ids,
    check_known_ids,
    check_new_ids,
    check_parts,
    check_query,
    check_vectors,
)
from bayesbandit.index.store import FeatureStore, StoreBacked

__all__ = ["ExactIndex", "top_k"]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest ``scores``, largest first, ties broken by the earlier position.

    Short arrays are sorted. Otherwise a threshold no larger than the ``k``-th largest score is found cheaply, the few scores above it
    are sorted, and the first ``k`` kept. For ``K >> k`` the threshold is the ``k``-th largest of
    ``8k`` block maxima (each is a distinct score, so at least ``k`` scores reach it): a strided
    ``max`` and a comparison, several times faster than ``argpartition`` over all ``K`` scores.
    """
    n = scores.size
    k = min(int(k), n)
    if n <= 256:
        return np.argsort(-scores, kind="stable")[:k]
    blocks = 8 * k
    if n >= 64 * blocks:
        width = n // blocks
        maxima = scores[: blocks * width].reshape(blocks, width).max(axis=1)
        threshold = np.partition(maxima, blocks - k)[blocks - k]
    elif k < n:
        threshold = np.partition(scores, n - k)[n - k]
    else:
        return np.argsort(-scores, kind="stable")
    candidates = np.flatnonzero(scores >= threshold)
    return candidates[np.argsort(-scores[candidates], kind="stable")[:k]]


class ExactIndex(StoreBacked, SavedAsParts):
    """Exact MIPS by a vectorised scan (see the module docstring).

    Parameters
    ----------
    dim : int
        Vector dimension.
    dtype : numpy dtype
        Scan type: float32 (default) halves the memory traffic of the scan; the policies rescore
        their shortlist in float64.

    Examples
    --------
    >>> import numpy as np
    >>> index = ExactIndex(2)
    >>> index.add(np.array([7, 8, 9]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    >>> index.query(np.array([1.0, 0.2]), 2).tolist()
    [9, 7]
    """

    def __init__(self, dim: int, *, dtype: np.dtype | type = np.float32) -> None:
        self._store = FeatureStore(dim)
        self._scan = self._store if np.dtype(dtype) == self._store.matrix.dtype else FeatureStore(dim, dtype=dtype)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add new ids with their vectors (validated first: a rejected call changes nothing)."""
        ids = check_ids("ExactIndex.add", ids)
        vectors = check_vectors("ExactIndex.add", vectors, ids.size, self.dim)
        check_new_ids("ExactIndex.add", ids, self.held)
        self._add_unchecked(ids, vectors)

    def _add_unchecked(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self._store.add_unchecked(ids, vectors)
        if self._scan is not self._store:
            self._scan.add_unchecked(ids, vectors)

    def remove(self, ids: np.ndarray) -> None:
        """Remove held ids (validated first)."""
        ids = check_ids("ExactIndex.remove", ids)
        check_known_ids("ExactIndex.remove", ids, self.held)
        self._store.remove_unchecked(ids)
        if self._scan is not self._store:
            self._scan.remove_unchecked(ids)

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        """The ids of the ``min(k, len)`` largest inner products with ``q``, largest first."""
        q, k = check_query("ExactIndex.query", q, k, self.dim, len(self))
        scores = self._scan.matrix @ q.astype(self._scan.matrix.dtype)
        return self._scan.ids[top_k(scores, k)].copy()

    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The ids and vectors (see :class:`~bayesbandit.index.protocol.SavedAsParts`)."""
        return {"dim": self.dim, "dtype": self._scan.matrix.dtype.str}, [
            self._store.ids.copy(),
            self._store.matrix.copy(),
        ]

    @classmethod
    def from_parts(cls, meta: dict[str, Any], arrays: list[np.ndarray]) -> ExactIndex:
        """The index :meth:`parts` describe."""
        check_parts("ExactIndex", meta, arrays, {"dim", "dtype"}, 2)
        index = cls(int(meta["dim"]), dtype=np.dtype(meta["dtype"]))
        index._add_unchecked(arrays[0], arrays[1])
        return index
