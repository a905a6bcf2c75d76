"""``ExactIndex``: maximum inner product by one scan over contiguous rows, the honest baseline.

A query is one BLAS matrix-vector product over the live rows (``O(K d)``, memory-bound), then
``argpartition`` for the top ``k`` and a sort of those ``k``. Deletions are swap-removes
(:class:`~bayesbandit.index.store.FeatureStore`), so the rows stay contiguous. Every speed-up of
an approximate index is measured against this scan.
"""

from __future__ import annotations

import os

import numpy as np

from bayesbandit.checkpoint import read_checkpoint, write_checkpoint
from bayesbandit.errors import CheckpointError
from bayesbandit.index.protocol import check_ids, check_known_ids, check_new_ids, check_query, check_vectors
from bayesbandit.index.store import FeatureStore, StoreBacked

__all__ = ["ExactIndex", "top_k"]

_KIND = "bayesbandit.ExactIndex"


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest ``scores``, largest first (ties: the earlier position first)."""
    k = min(k, scores.size)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.lexsort((part, -scores[part]))]


class ExactIndex(StoreBacked):
    """Exact MIPS by a vectorised scan (see the module docstring).

    Parameters
    ----------
    dim : int
        Vector dimension.
    dtype : numpy dtype
        Storage and scan type: float32 (default) halves the memory traffic of the scan; the
        policies rescore their shortlist in float64.

    Examples
    --------
    >>> import numpy as np
    >>> index = ExactIndex(2)
    >>> index.add(np.array([7, 8, 9]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    >>> index.query(np.array([1.0, 0.2]), 2).tolist()
    [9, 7]
    """

    def __init__(self, dim: int, dtype: np.dtype | type = np.float32) -> None:
        self._store = FeatureStore(dim, dtype=dtype)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add new ids with their vectors (validated first: a rejected call changes nothing)."""
        ids = check_ids("ExactIndex.add", ids)
        vectors = check_vectors("ExactIndex.add", vectors, ids.size, self.dim)
        check_new_ids("ExactIndex.add", ids, self.__contains__)
        self._store.add_unchecked(ids, vectors)

    def remove(self, ids: np.ndarray) -> None:
        """Remove held ids (validated first)."""
        ids = check_ids("ExactIndex.remove", ids)
        check_known_ids("ExactIndex.remove", ids, self.__contains__)
        self._store.remove_unchecked(ids)

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        """The ids of the ``min(k, len)`` largest inner products with ``q``, largest first."""
        q, k = check_query("ExactIndex.query", q, k, self.dim, len(self))
        scores = self._store.matrix @ q.astype(self._store.matrix.dtype)
        return self._store.ids[top_k(scores, k)].copy()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the ids and vectors to one checkpoint file, atomically."""
        meta = {"kind": _KIND, "dim": self.dim, "dtype": self._store.matrix.dtype.str}
        write_checkpoint(path, meta, [self._store.ids.copy(), self._store.matrix.copy()])

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ExactIndex:
        """Read an index written by :meth:`save` (no code runs from the file)."""
        meta, arrays = read_checkpoint(path)
        if meta.get("kind") != _KIND or len(arrays) != 2:
            raise CheckpointError(
                f"{os.fspath(path)!r} is not a saved ExactIndex. Fix: pass a file written by ExactIndex.save."
            )
        index = cls(int(meta["dim"]), dtype=np.dtype(meta["dtype"]))
        index._store.add_unchecked(arrays[0], arrays[1])
        return index
