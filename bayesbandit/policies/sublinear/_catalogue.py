"""What the index-backed policies share: the catalogue argument, host random numbers, index engines.

A catalogue is the arm set as ids and features, ``Catalogue(ids (K,), features (K, d))``. The
policies accept it, or a plain ``(K, d)`` array (ids ``0 .. K-1``), so they also run on the
contract's fixed-arm environments. Arms come and go with ``add_arms`` / ``remove_arms``.

The policies run on the host: ``select``'s ``key`` may be a :class:`numpy.random.Generator` (the
catalogue runner passes one per run, so twins draw the same numbers) or a JAX key (converted to
a generator seeded by its key data).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from bayesbandit.errors import InvalidInput
from bayesbandit.index import AnnoyIndex, ExactIndex, HNSWIndex, MIPSIndex
from bayesbandit.index.protocol import Catalogue, check_ids, check_vectors

__all__ = ["Catalogue", "as_catalogue", "host_rng", "make_index", "pack_indexes", "unpack_indexes", "INDEX_KINDS"]

INDEX_KINDS = ("annoy", "exact", "hnsw")


def as_catalogue(where: str, arms: Any, d: int | None = None) -> Catalogue:
    """Validate ``arms`` (a :class:`Catalogue`, an ``(ids, features)`` pair or a ``(K, d)`` array; ``None``: an
    empty catalogue of dimension ``d``)."""
    if arms is None:
        if d is None:
            raise InvalidInput(f"{where}: pass the arms (a Catalogue or a (K, d) array) or their dimension d.")
        arms = Catalogue(np.zeros(0, np.int64), np.zeros((0, d)))
    if isinstance(arms, tuple) and len(arms) == 2:
        ids = check_ids(where, arms[0], name="arms.ids")
        features = np.asarray(arms[1], dtype=np.float64)
    else:
        features = np.asarray(arms, dtype=np.float64)
        if features.ndim != 2:
            raise InvalidInput(
                f"{where}: 'arms' must be a Catalogue(ids, features) or a (K, d) array. Got shape {features.shape}. "
                "Fix: pass bayesbandit.policies.sublinear.Catalogue(ids, features)."
            )
        ids = np.arange(features.shape[0], dtype=np.int64)
    dim = features.shape[1] if features.ndim == 2 else d
    if d is not None and dim != d:
        raise InvalidInput(
            f"{where}: the arms have dimension {dim}, the policy {d}. Fix: pass {d}-dimensional features."
        )
    features = check_vectors(where, features, ids.size, int(dim or 0), name="arms.features")
    return Catalogue(ids, features)


def host_rng(key: Any) -> np.random.Generator:
    """A NumPy generator from ``key``: returned as is if it is one, else seeded by a JAX key's data."""
    if isinstance(key, np.random.Generator):
        return key
    data = np.asarray(jax.random.key_data(key)) if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    return np.random.default_rng(np.asarray(data, dtype=np.uint32).ravel().tolist())


def pack_indexes(
    meta: dict[str, Any], arrays: list[np.ndarray], indexes: dict[str, MIPSIndex]
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """A host state's ``(meta, arrays)`` with its indexes' parts appended (see :func:`unpack_indexes`)."""
    layout, tail = [], []
    for name, index in indexes.items():
        index_meta, index_arrays = index.parts()
        layout.append({"name": name, "meta": index_meta, "arrays": len(index_arrays)})
        tail += index_arrays
    return {"state": meta, "own_arrays": len(arrays), "indexes": layout}, [*arrays, *tail]


def unpack_indexes(
    kind: str, meta: dict[str, Any], arrays: list[np.ndarray]
) -> tuple[dict[str, Any], list[np.ndarray], dict[str, MIPSIndex]]:
    """The inverse of :func:`pack_indexes`: ``(meta, arrays, indexes by name)``, each index a ``kind`` engine."""
    engine: Any = {"exact": ExactIndex, "annoy": AnnoyIndex, "hnsw": HNSWIndex}[kind]
    own = int(meta["own_arrays"])
    indexes: dict[str, MIPSIndex] = {}
    start = own
    for entry in meta["indexes"]:
        stop = start + int(entry["arrays"])
        indexes[str(entry["name"])] = engine.from_parts(entry["meta"], arrays[start:stop])
        start = stop
    return meta["state"], arrays[:own], indexes


def make_index(kind: str, dim: int, *, n_trees: int, search_k: int | None, seed: int) -> MIPSIndex:
    """A fresh index of ``kind`` (``"annoy"``, ``"exact"`` or ``"hnsw"``)."""
    if kind == "exact":
        return ExactIndex(dim)
    if kind == "annoy":
        return AnnoyIndex(dim, n_trees=n_trees, search_k=search_k, seed=seed)
    if kind == "hnsw":
        return HNSWIndex(dim, seed=seed)
    raise InvalidInput(f"unknown index kind {kind!r}; expected one of {INDEX_KINDS}.")
