"""``HNSWIndex``: approximate MIPS on hnswlib's hierarchical navigable small-world graphs (optional).

hnswlib (the ``hnsw`` extra: ``pip install "bayesbandit[hnsw]"``) inserts items into a built graph
and marks deleted ones, so no overlay or rebuild is needed; the paper's experiments used HNSW
(Yang et al., sec. 7). Metric ``"ip"`` (distance ``1 - <q, x>``); ``ef`` is the search effort.
The graph must never be asked for more neighbours than it has live items, so the live count is
kept here.

Saving: hnswlib's own file does not hold the state of its level generator (the random level of the
next inserted item), so a graph read back from it would grow differently from the saved one. An
index therefore keeps the log of its changes (every insertion with its vectors, every removal, in
order) and :meth:`HNSWIndex.from_parts` replays it: insertions run in one thread, so the same log
draws the same levels in the same order, and removals are replayed where they happened (a
removed item stops being a neighbour candidate of later insertions). The rebuilt graph is the
saved one, and it goes on growing as the saved one would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesbandit.errors import InvalidInput
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

__all__ = ["HNSWIndex"]


def _hnswlib() -> Any:
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError('HNSWIndex needs hnswlib. Fix: pip install "bayesbandit[hnsw]".') from exc
    return hnswlib


class HNSWIndex(StoreBacked, SavedAsParts):
    """hnswlib graph with incremental adds and mark-deleted removals.

    Parameters
    ----------
    dim : int
    M, ef_construction : int
        Graph degree and build effort.
    ef : int
        Search effort (candidates kept during a query; raised to ``k`` when smaller).
    seed : int
    """

    def __init__(self, dim: int, *, M: int = 16, ef_construction: int = 200, ef: int = 50, seed: int = 0) -> None:
        self._store = FeatureStore(dim)
        self.M, self.ef_construction, self.ef, self.seed = int(M), int(ef_construction), int(ef), int(seed)
        self._graph = _hnswlib().Index(space="ip", dim=dim)
        self._graph.init_index(max_elements=1024, ef_construction=self.ef_construction, M=self.M, random_seed=self.seed)
        self._graph.set_ef(self.ef)
        self._log: list[tuple[np.ndarray, np.ndarray | None]] = []  # (ids, vectors) added or (ids, None) removed

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Insert new ids (ids must be non-negative: they are hnswlib's labels); validated first."""
        ids = check_ids("HNSWIndex.add", ids)
        vectors = check_vectors("HNSWIndex.add", vectors, ids.size, self.dim)
        check_new_ids("HNSWIndex.add", ids, self.held)
        if ids.size and ids.min() < 0:
            raise InvalidInput("HNSWIndex.add: ids must be non-negative (hnswlib labels). Fix: renumber them.")
        self._insert(ids, vectors.copy())
        self._store.add_unchecked(ids, vectors)

    def _insert(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if ids.size == 0:
            return
        needed = self._graph.get_current_count() + ids.size
        if needed > self._graph.get_max_elements():
            self._graph.resize_index(max(2 * self._graph.get_max_elements(), needed))
        self._graph.add_items(vectors, ids.astype(np.uint64), num_threads=1, replace_deleted=False)
        self._log.append((ids, vectors))

    def remove(self, ids: np.ndarray) -> None:
        """Mark held ids deleted; validated first."""
        ids = check_ids("HNSWIndex.remove", ids)
        check_known_ids("HNSWIndex.remove", ids, self.held)
        self._mark_deleted(ids)
        self._store.remove_unchecked(ids)

    def _mark_deleted(self, ids: np.ndarray) -> None:
        if ids.size == 0:
            return
        for item in ids.tolist():
            self._graph.mark_deleted(item)
        self._log.append((ids, None))

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        """Approximately the ids of the ``min(k, len)`` largest inner products, best first."""
        q, k = check_query("HNSWIndex.query", q, k, self.dim, len(self))
        k = min(k, len(self))
        self._graph.set_ef(max(self.ef, k))
        labels, _ = self._graph.knn_query(q[None, :], k=k)
        return labels[0].astype(np.int64)

    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        """Settings, the live ids and vectors, and the log of changes that rebuilds the graph (module docstring)."""
        meta = {"dim": self.dim, "M": self.M, "ef_construction": self.ef_construction, "ef": self.ef, "seed": self.seed}
        sizes = np.array([ids.size if vectors is not None else -ids.size for ids, vectors in self._log], np.int64)
        log_ids = np.concatenate([ids for ids, _ in self._log]) if self._log else np.zeros(0, np.int64)
        added = [vectors for _, vectors in self._log if vectors is not None]
        log_vectors = np.concatenate(added) if added else np.zeros((0, self.dim))
        return meta, [self._store.ids.copy(), self._store.matrix.copy(), sizes, log_ids, log_vectors]

    @classmethod
    def from_parts(cls, meta: dict[str, Any], arrays: list[np.ndarray]) -> HNSWIndex:
        """The index :meth:`parts` describe: its log replayed, so the graph is the saved one and grows as it would."""
        check_parts("HNSWIndex", meta, arrays, {"dim", "M", "ef_construction", "ef", "seed"}, 5)
        ids, vectors, sizes, log_ids, log_vectors = arrays
        index = cls(
            int(meta["dim"]), M=meta["M"], ef_construction=meta["ef_construction"], ef=meta["ef"], seed=meta["seed"]
        )
        start = row = 0
        for size in sizes.tolist():
            changed = log_ids[start : start + abs(size)]
            if size >= 0:
                index._insert(changed, log_vectors[row : row + size])
                row += size
            else:
                index._mark_deleted(changed)
            start += abs(size)
        index._store.add_unchecked(ids, vectors)
        return index
