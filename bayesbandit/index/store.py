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

    Ids in ``[0, 2^24)`` (item numbers, the usual case) find their row in a dense table, one
    gather per lookup; other ids go through a dict.

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

    DENSE_IDS = 1 << 24

    def __init__(self, dim: int, *, dtype: np.dtype | type = np.float64, capacity: int = 1024) -> None:
        self.dim = int(dim)
        self._matrix = np.empty((max(int(capacity), 1), self.dim), dtype=dtype)
        self._ids = np.empty(self._matrix.shape[0], dtype=np.int64)
        self._n = 0
        self._table = np.full(0, -1, dtype=np.int32)  # id -> row for dense ids, -1: absent
        self._sparse: dict[int, int] = {}  # id -> row for the other ids

    def __len__(self) -> int:
        return self._n

    def __contains__(self, item_id: object) -> bool:
        if not isinstance(item_id, int | np.integer):
            return False
        item = int(item_id)
        if 0 <= item < self._table.size:
            return bool(self._table[item] >= 0)
        return item in self._sparse

    @property
    def matrix(self) -> np.ndarray:
        """The live vectors, ``(len, dim)``, a view (row ``r`` holds id ``ids[r]``)."""
        return self._matrix[: self._n]

    @property
    def ids(self) -> np.ndarray:
        """The live ids in row order, ``(len,)``, a view."""
        return self._ids[: self._n]

    def _lookup(self, ids: np.ndarray) -> np.ndarray:
        """Rows of ``ids``, -1 for ids not held."""
        ids = np.asarray(ids, dtype=np.int64)
        dense = (ids >= 0) & (ids < self._table.size)
        if dense.all():
            return self._table[ids].astype(np.int64)
        rows = np.full(ids.size, -1, dtype=np.int64)
        rows[dense] = self._table[ids[dense]]
        rows[~dense] = [self._sparse.get(i, -1) for i in ids[~dense].tolist()]
        return rows

    def held(self, ids: np.ndarray) -> np.ndarray:
        """Whether each of ``ids`` is held, a boolean array."""
        return self._lookup(ids) >= 0

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """Row positions of ``ids`` (all held: the caller has checked)."""
        return self._lookup(ids) if self._sparse else self._table[ids]

    def get(self, ids: np.ndarray) -> np.ndarray:
        """The vectors of ``ids`` (all held), a copy ``(len(ids), dim)``."""
        return self._matrix[self.rows(ids)]

    def vector(self, item: int) -> np.ndarray:
        """The vector of one held id, a view ``(dim,)``."""
        row = self._table[item] if 0 <= item < self._table.size else self._sparse[item]
        return self._matrix[row]

    def add(self, ids: np.ndarray, vectors: np.ndarray, *, where: str = "FeatureStore.add") -> None:
        """Append new ids with their vectors; validates first, so a rejected call changes nothing."""
        ids = check_ids(where, ids)
        vectors = check_vectors(where, vectors, ids.size, self.dim)
        check_new_ids(where, ids, self.held)
        self.add_unchecked(ids, vectors)

    def add_unchecked(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """:meth:`add` for ids and vectors already validated by the caller."""
        n, m = self._n, ids.size
        if n + m > self._matrix.shape[0]:
            capacity = max(2 * self._matrix.shape[0], n + m)
            matrix = np.empty((capacity, self.dim), dtype=self._matrix.dtype)
            matrix[:n] = self._matrix[:n]
            id_col = np.empty(capacity, dtype=np.int64)
            id_col[:n] = self._ids[:n]
            self._matrix, self._ids = matrix, id_col
        self._matrix[n : n + m] = vectors
        self._ids[n : n + m] = ids
        self._set_rows(ids, np.arange(n, n + m))
        self._n = n + m

    def _set_rows(self, ids: np.ndarray, rows: np.ndarray) -> None:
        dense = (ids >= 0) & (ids < self.DENSE_IDS)
        if dense.any():
            top = int(ids[dense].max())
            if top >= self._table.size:
                table = np.full(max(2 * self._table.size, top + 1, 1024), -1, dtype=np.int32)
                table[: self._table.size] = self._table
                self._table = table
            self._table[ids[dense]] = rows[dense]
        if not dense.all():
            self._sparse.update(zip(ids[~dense].tolist(), rows[~dense].tolist(), strict=True))

    def remove(self, ids: np.ndarray, *, where: str = "FeatureStore.remove") -> None:
        """Remove held ids (swap-remove); validates first, so a rejected call changes nothing."""
        ids = check_ids(where, ids)
        check_known_ids(where, ids, self.held)
        self.remove_unchecked(ids)

    def remove_unchecked(self, ids: np.ndarray) -> None:
        """:meth:`remove` for ids already validated by the caller."""
        for item in ids.tolist():
            dense = 0 <= item < self._table.size
            row = int(self._table[item]) if dense else self._sparse[item]
            if dense:
                self._table[item] = -1
            else:
                del self._sparse[item]
            last = self._n - 1
            if row != last:
                moved = int(self._ids[last])
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                if 0 <= moved < self._table.size:
                    self._table[moved] = row
                else:
                    self._sparse[moved] = row
            self._n = last


class StoreBacked:
    """Base of indexes whose live vectors are a float64 :class:`FeatureStore` ``_store``: ``dim``, ``len``, ``in``,
    ``held``, ``ids``, ``vectors``."""

    _store: FeatureStore

    @property
    def dim(self) -> int:
        return self._store.dim

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._store

    def held(self, ids: np.ndarray) -> np.ndarray:
        """Whether each of ``ids`` is held, a boolean array."""
        return self._store.held(ids)

    @property
    def ids(self) -> np.ndarray:
        """The held ids in storage order, a view."""
        return self._store.ids

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        """The vectors of held ``ids`` (the caller has checked), float64 as added, ``(len(ids), dim)``."""
        return self._store.get(ids)
