"""``HNSWIndex``: approximate MIPS on hnswlib's hierarchical navigable small-world graphs (optional).

hnswlib (the ``hnsw`` extra: ``pip install "bayesbandit[hnsw]"``) inserts items into a built graph
and marks deleted ones, so no overlay or rebuild is needed; the paper's experiments used HNSW
(Yang et al., sec. 7). Metric ``"ip"`` (distance ``1 - <q, x>``); ``ef`` is the search effort.
The graph must never be asked for more neighbours than it has live items, so the live count is
kept here.
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
    load_native_file,
    native_file_bytes,
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

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Insert new ids (ids must be non-negative: they are hnswlib's labels); validated first."""
        ids = check_ids("HNSWIndex.add", ids)
        vectors = check_vectors("HNSWIndex.add", vectors, ids.size, self.dim)
        check_new_ids("HNSWIndex.add", ids, self.held)
        if ids.size and ids.min() < 0:
            raise InvalidInput("HNSWIndex.add: ids must be non-negative (hnswlib labels). Fix: renumber them.")
        needed = self._graph.get_current_count() + ids.size
        if needed > self._graph.get_max_elements():
            self._graph.resize_index(max(2 * self._graph.get_max_elements(), needed))
        self._graph.add_items(vectors, ids.astype(np.uint64), replace_deleted=False)
        self._store.add_unchecked(ids, vectors)

    def remove(self, ids: np.ndarray) -> None:
        """Mark held ids deleted; validated first."""
        ids = check_ids("HNSWIndex.remove", ids)
        check_known_ids("HNSWIndex.remove", ids, self.held)
        for item in ids.tolist():
            self._graph.mark_deleted(item)
        self._store.remove_unchecked(ids)

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        """Approximately the ids of the ``min(k, len)`` largest inner products, best first."""
        q, k = check_query("HNSWIndex.query", q, k, self.dim, len(self))
        k = min(k, len(self))
        self._graph.set_ef(max(self.ef, k))
        labels, _ = self._graph.knn_query(q[None, :], k=k)
        return labels[0].astype(np.int64)

    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        """Settings, ids, vectors and the graph as hnswlib's file (deletion marks included)."""
        meta = {"dim": self.dim, "M": self.M, "ef_construction": self.ef_construction, "ef": self.ef, "seed": self.seed}
        graph = native_file_bytes(self._graph.save_index)
        return meta, [self._store.ids.copy(), self._store.matrix.copy(), graph]

    @classmethod
    def from_parts(cls, meta: dict[str, Any], arrays: list[np.ndarray]) -> HNSWIndex:
        """The index :meth:`parts` describe: the same graph, so every query answers as before."""
        check_parts("HNSWIndex", meta, arrays, {"dim", "M", "ef_construction", "ef", "seed"}, 3)
        ids, vectors, graph = arrays
        index = cls(
            int(meta["dim"]), M=meta["M"], ef_construction=meta["ef_construction"], ef=meta["ef"], seed=meta["seed"]
        )
        load_native_file(graph, lambda name: index._graph.load_index(name, max_elements=max(1024, ids.size)))
        index._graph.set_ef(index.ef)
        index._store.add_unchecked(ids, vectors)
        return index
