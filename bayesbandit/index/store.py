"""``FeatureStore``: vectors under integer ids in one contiguous array, with O(1) add and remove.

Rows ``0 .. n-1`` of :attr:`FeatureStore.matrix` are the live vectors, so a scan over them is one
BLAS matrix-vector product. Removing an id moves the last row into its slot (swap-remove), so
removal is ``O(dim)`` and the rows stay contiguous; the capacity doubles when full, so ``n`` adds
cost ``O(n dim)`` amortised.
"""

from __future__ import annotations

import numpy as np

from bayesbandit.index.protocol import check_ids, check_known_ids, check_new_ids, check_vectors

__all__ = ["FeatureStore", "StoreBacked"]


class FeatureStore:
    """Vectors of dimension ``dim`` under unique int64 ids, rows contiguous (see the module docstring).

    Parameters
    ----------
    dim : int
        Vector dimension.
    dtype : numpy dtype
        Storage type (float64 by default; float32 halves the memory and the scan's bandwidth).
    capacity : int
        Initial number of rows allocated.

    Examples
    --------
    >>> import numpy as np
    >>> store = FeatureStore(2)
    >>> store.add(np.array([10, 20, 30]), np.eye(3, 2))
    >>> store.remove(np.array([10]))
    >>> store.ids.tolist(), store.get(np.array([30, 20])).tolist()
    ([30, 20], [[0.0, 0.0], [0.0, 1.0]])
    """

    def __init__(self, dim: int, dtype: np.dtype | type = np.float64, capacity: int = 1024) -> None:
        self.dim = int(dim)
        self._matrix = np.empty((max(int(capacity), 1), self.dim), dtype=dtype)
        self._ids = np.empty(self._matrix.shape[0], dtype=np.int64)
        self._row: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row

    @property
    def matrix(self) -> np.ndarray:
        """The live vectors, ``(len, dim)``, a view (row ``r`` holds id ``ids[r]``)."""
        return self._matrix[: len(self._row)]

    @property
    def ids(self) -> np.ndarray:
        """The live ids in row order, ``(len,)``, a view."""
        return self._ids[: len(self._row)]

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """Row positions of ``ids`` (all held)."""
        return np.fromiter((self._row[int(i)] for i in ids), dtype=np.int64, count=len(ids))

    def get(self, ids: np.ndarray) -> np.ndarray:
        """The vectors of ``ids`` (all held), a copy ``(len(ids), dim)``."""
        return self._matrix[self.rows(ids)]

    def add(self, ids: np.ndarray, vectors: np.ndarray, *, where: str = "FeatureStore.add") -> None:
        """Append new ids with their vectors; validates first, so a rejected call changes nothing."""
        ids = check_ids(where, ids)
        vectors = check_vectors(where, vectors, ids.size, self.dim)
        check_new_ids(where, ids, self.__contains__)
        self.add_unchecked(ids, vectors)

    def add_unchecked(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """:meth:`add` for ids and vectors already validated by the caller."""
        n, m = len(self._row), ids.size
        if n + m > self._matrix.shape[0]:
            capacity = max(2 * self._matrix.shape[0], n + m)
            matrix = np.empty((capacity, self.dim), dtype=self._matrix.dtype)
            matrix[:n] = self._matrix[:n]
            id_col = np.empty(capacity, dtype=np.int64)
            id_col[:n] = self._ids[:n]
            self._matrix, self._ids = matrix, id_col
        self._matrix[n : n + m] = vectors
        self._ids[n : n + m] = ids
        self._row.update(zip(ids.tolist(), range(n, n + m), strict=True))

    def remove(self, ids: np.ndarray, *, where: str = "FeatureStore.remove") -> None:
        """Remove held ids (swap-remove); validates first, so a rejected call changes nothing."""
        ids = check_ids(where, ids)
        check_known_ids(where, ids, self.__contains__)
        self.remove_unchecked(ids)

    def remove_unchecked(self, ids: np.ndarray) -> None:
        """:meth:`remove` for ids already validated by the caller."""
        for item in ids.tolist():
            row = self._row.pop(item)
            last = len(self._row)
            if row != last:
                moved = int(self._ids[last])
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._row[moved] = row


class StoreBacked:
    """Base of indexes whose live vectors are a :class:`FeatureStore` ``_store``: ``dim``, ``len``, ``in``."""

    _store: FeatureStore

    @property
    def dim(self) -> int:
        return self._store.dim

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._store
