"""``AnnoyIndex``: approximate MIPS over a catalogue that changes, on Annoy's random-projection forests.

Annoy (Spotify) builds a forest of random-projection trees once and cannot add items afterwards.
Here the index is three parts:

* a built **forest** (Annoy, metric ``"dot"``) over the ids present at the last build;
* an **overlay**: the ids added since the build, scanned exactly (one matrix-vector product);
* **tombstones**: forest ids removed since the build, dropped from the forest's answers.

A query asks the forest for enough neighbours that ``k`` live ones survive the tombstones (about
``k / (1 - f)`` with a fraction ``f`` tombstoned, asking again for more in the rare case too few
survive), merges them with the overlay's exact top ``k``, and ranks the union by exact inner
products. When the overlay and the tombstones together pass
``rebuild_fraction`` of the index (and at least ``min_changes``), the next change rebuilds the
forest over the live vectors: the cost of a build is spread over that many changes, and no call
rebuilds for a single change.

Annoy's own search effort, ``search_k`` (tree nodes inspected; default ``n_trees * n``), is a
setting of its own: a longer shortlist from a shallow search does not find items the search never
reached. Builds are seeded, so the same changes give the same forest. The forest also depends on
how many threads build it (Annoy seeds each thread's projections by its index and splits the trees
among them), so the thread count is a fixed setting, ``n_jobs = 2`` by default, and never "all
cores": a machine with another core count would grow another forest and answer differently.

A saved index is one checkpoint file (:mod:`bayesbandit.checkpoint`: atomic, checksummed, no
pickle) holding the vectors, the bookkeeping and the forest as Annoy's own file, which a load
memory-maps from a private temporary copy.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from bayesbandit.index.exact import top_k
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
from bayesbandit.validation import check_int, check_scalar

__all__ = ["AnnoyIndex"]


def _annoy(dim: int) -> Any:
    import annoy

    return annoy.AnnoyIndex(dim, "dot")


class AnnoyIndex(StoreBacked, SavedAsParts):
    """Annoy forest + exact overlay + tombstones (see the module docstring).

    Parameters
    ----------
    dim : int
        Vector dimension.
    n_trees : int
        Trees in the forest (more: better recall, slower builds, more memory).
    search_k : int, optional
        Tree nodes inspected per query (Annoy's ``search_k``; ``None``: ``n_trees * n``).
    rebuild_fraction : float
        Rebuild once overlay + tombstones exceed this fraction of the index...
    min_changes : int
        ...and at least this many.
    seed : int
        Seed of the forest's random projections.
    n_jobs : int
        Build threads (at least 1). Part of the forest's seed: the same ``seed`` and ``n_jobs`` give the
        same forest on every machine, another ``n_jobs`` another forest. Saved with the index, so a
        loaded index rebuilds as the saved one would.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> index = AnnoyIndex(8, n_trees=8)
    >>> index.add(np.arange(1000), rng.standard_normal((1000, 8)))
    >>> index.add(np.array([5000]), 10 * np.ones((1, 8)))  # into the overlay
    >>> int(index.query(np.ones(8), 3)[0]), index.num_builds
    (5000, 1)
    """

    def __init__(
        self,
        dim: int,
        *,
        n_trees: int = 16,
        search_k: int | None = None,
        rebuild_fraction: float = 0.1,
        min_changes: int = 256,
        seed: int = 0,
        n_jobs: int = 2,
    ) -> None:
        self._dim = check_int("AnnoyIndex", "dim", dim, low=1)
        self.n_trees = check_int("AnnoyIndex", "n_trees", n_trees, low=1)
        self.search_k = None if search_k is None else check_int("AnnoyIndex", "search_k", search_k, low=1)
        check_scalar("AnnoyIndex", "rebuild_fraction", rebuild_fraction, low=0.0)
        self.rebuild_fraction = float(rebuild_fraction)
        self.min_changes = check_int("AnnoyIndex", "min_changes", min_changes, low=0)
        self.seed = check_int("AnnoyIndex", "seed", seed, low=0)
        self.n_jobs = check_int("AnnoyIndex", "n_jobs", n_jobs, low=1)
        self._store = FeatureStore(self._dim)
        self._overlay = FeatureStore(self._dim)
        self._tombstones: set[int] = set()
        self._forest: Any = None
        self._forest_ids = np.zeros(0, dtype=np.int64)
        self.num_builds = 0
        self.build_seconds = 0.0

    @property
    def pending(self) -> int:
        """Changes since the last build (overlay size plus tombstones)."""
        return len(self._overlay) + len(self._tombstones)

    # ------------------------------------------------------------------------------ changes
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add new ids (to the overlay, or by a build); validated first, so a rejected call changes nothing."""
        ids = check_ids("AnnoyIndex.add", ids)
        vectors = check_vectors("AnnoyIndex.add", vectors, ids.size, self._dim)
        check_new_ids("AnnoyIndex.add", ids, self.held)
        self._store.add_unchecked(ids, vectors)
        self._overlay.add_unchecked(ids, vectors)
        self._maybe_rebuild()

    def remove(self, ids: np.ndarray) -> None:
        """Remove held ids (tombstones for forest ids); validated first."""
        ids = check_ids("AnnoyIndex.remove", ids)
        check_known_ids("AnnoyIndex.remove", ids, self.held)
        self._store.remove_unchecked(ids)
        in_overlay = self._overlay.held(ids)
        self._overlay.remove_unchecked(ids[in_overlay])
        self._tombstones.update(ids[~in_overlay].tolist())
        self._maybe_rebuild()

    def _maybe_rebuild(self) -> None:
        if self.pending > max(self.rebuild_fraction * len(self), self.min_changes):
            self.rebuild()

    def rebuild(self) -> None:
        """Build a new forest over every live vector; the overlay and tombstones empty."""
        t0 = time.perf_counter()
        ids, vectors = self._store.ids.copy(), self._store.matrix
        forest = None
        if ids.size:
            forest = _annoy(self._dim)
            forest.set_seed(self.seed)
            for item, vector in enumerate(vectors.tolist()):
                forest.add_item(item, vector)
            forest.build(self.n_trees, n_jobs=self.n_jobs)
        self._install(forest, ids)
        self._overlay = FeatureStore(self._dim)
        self._tombstones = set()
        self.num_builds += 1
        self.build_seconds += time.perf_counter() - t0

    def _install(self, forest: Any, forest_ids: np.ndarray) -> None:
        self._forest = forest
        self._forest_ids = forest_ids

    # ------------------------------------------------------------------------------ queries
    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        """Approximately the ids of the ``min(k, len)`` largest inner products with ``q``, best first."""
        q, k = check_query("AnnoyIndex.query", q, k, self._dim, len(self))
        parts = []
        if self._forest is not None and self._forest_ids.size:
            parts.append(self._query_forest(q, k))
        if len(self._overlay):
            parts.append(self._overlay.ids[top_k(self._overlay.matrix @ q, k)])
        candidates = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        if candidates.size == 0:
            return candidates
        scores = self._store.get(candidates) @ q
        return candidates[top_k(scores, k)]

    def _query_forest(self, q: np.ndarray, k: int) -> np.ndarray:
        """The forest's live neighbours of ``q``: at least ``k`` of them when the forest holds that many.

        With a fraction ``f`` of the forest tombstoned, about ``k / (1 - f)`` answers leave ``k``
        live ones, so that many (plus a margin of two standard deviations) are asked for, and the
        request doubles in the rare case too few survive: the search effort tracks the live
        catalogue, not the number of tombstones.
        """
        size, dead = self._forest_ids.size, len(self._tombstones)
        live = size - dead
        wanted = min(k, live)
        if wanted == 0:
            return np.zeros(0, np.int64)
        fraction = dead / size
        n = min(size, math.ceil((k + 2.0 * math.sqrt(k * fraction) + 1) / (1.0 - fraction))) if dead else k
        query = q.tolist()
        while True:
            items = self._forest.get_nns_by_vector(query, n, search_k=-1 if self.search_k is None else self.search_k)
            found = self._forest_ids[np.asarray(items, dtype=np.int64)]
            if dead:
                found = found[[i not in self._tombstones for i in found.tolist()]]
            if found.size >= wanted or n == size:
                return found
            n = min(size, 2 * n)

    # ------------------------------------------------------------------------------ files
    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        """Settings, vectors, overlay and tombstones, and the forest as Annoy's file."""
        meta = {
            "dim": self._dim,
            "settings": {
                "n_trees": self.n_trees,
                "search_k": self.search_k,
                "rebuild_fraction": self.rebuild_fraction,
                "min_changes": self.min_changes,
                "seed": self.seed,
                "n_jobs": self.n_jobs,
            },
            "num_builds": self.num_builds,
            "build_seconds": self.build_seconds,
        }
        arrays = [
            self._store.ids.copy(),
            self._store.matrix.copy(),
            self._forest_ids.copy(),
            self._overlay.ids.copy(),
            np.asarray(sorted(self._tombstones), dtype=np.int64),
            np.zeros(0, np.uint8) if self._forest is None else native_file_bytes(self._forest.save),
        ]
        return meta, arrays

    @classmethod
    def from_parts(cls, meta: dict[str, Any], arrays: list[np.ndarray]) -> AnnoyIndex:
        """The index :meth:`parts` describe: the same forest (memory-mapped), so every query answers as before."""
        check_parts("AnnoyIndex", meta, arrays, {"dim", "settings", "num_builds", "build_seconds"}, 6)
        index = cls(int(meta["dim"]), **meta["settings"])
        ids, vectors, forest_ids, overlay_ids, tombstones, forest_file = arrays
        index._store.add_unchecked(ids, vectors)
        index._overlay.add_unchecked(overlay_ids, index._store.get(overlay_ids))
        index._tombstones = set(tombstones.tolist())
        forest = None
        if forest_file.size:
            forest = _annoy(index._dim)
            load_native_file(forest_file, forest.load)
        index._install(forest, forest_ids)
        index.num_builds = int(meta["num_builds"])
        index.build_seconds = float(meta["build_seconds"])
        return index
