"""The MIPS index contract, and the validation every engine shares.

An index holds vectors under integer ids and answers maximum-inner-product queries::

    index.add(ids, vectors)        # ids: (n,) int64, new; vectors: (n, dim) finite
    index.remove(ids)              # ids present in the index
    top = index.query(q, k)        # (min(k, len(index)),) int64 ids, best first (approximately)
    len(index), index.dim, item in index, index.held(ids)  # membership, one id or a boolean per id
    index.ids, index.vectors(ids)  # the held ids (in storage order) and their vectors, float64 as added
    meta, arrays = index.parts(); Engine.from_parts(meta, arrays)  # the whole index, as JSON and arrays
    index.save(path); Engine.load(path)                              # the same parts, in one checkpoint file

An index is the one store of its vectors: :meth:`~MIPSIndex.vectors` gives them back exactly as
added (float64), so a policy that rescores a shortlist or learns from a played arm keeps no copy
of its own.

Ids are the caller's (catalogue item ids), not positions: removing an item never renumbers the
others. Every public method validates its input before touching any state, so a rejected call
leaves the index as it was (:class:`~bayesbandit.errors.InvalidInput` naming the argument, what was
expected, what was given and the fix; :class:`~bayesbandit.errors.UnknownArm` for ids the index
does not hold). ``query`` on an empty index raises too: no answer is a question the caller must
handle, not an empty array to fall through.

An index's :meth:`~MIPSIndex.parts` are everything it holds (vectors, bookkeeping, and the
engine's own structure: the bytes of its native file, or the log of changes that rebuilds it), so
an index rebuilt from them answers every later query exactly as the original would: an :class:`~bayesbandit.Agent` checkpoint of an
index-backed policy embeds them, and ``save`` / ``load`` write and read them as one
:mod:`bayesbandit.checkpoint` file (atomic, checksummed, no pickle).

Approximate engines may return ids whose inner product is below the true top-k; policies therefore
retrieve a shortlist of ``p`` candidates and rescore them exactly in float64.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Protocol, Self, runtime_checkable

import numpy as np

from bayesbandit.checkpoint import read_checkpoint, write_checkpoint
from bayesbandit.errors import CheckpointError, InvalidInput, UnknownArm

__all__ = [
    "Catalogue",
    "MIPSIndex",
    "SavedAsParts",
    "check_parts",
    "native_file_bytes",
    "load_native_file",
    "check_ids",
    "check_vectors",
    "check_query",
    "check_new_ids",
    "check_known_ids",
]


class Catalogue(NamedTuple):
    """Arms as ids and features: what index-backed policies and catalogue environments exchange."""

    ids: np.ndarray  # (K,) int64, unique
    features: np.ndarray  # (K, d) float64, finite


@runtime_checkable
class MIPSIndex(Protocol):
    """A maximum-inner-product index over vectors with integer ids (see the module docstring)."""

    @property
    def dim(self) -> int: ...

    def __len__(self) -> int: ...

    def __contains__(self, item_id: object) -> bool: ...

    def held(self, ids: np.ndarray) -> np.ndarray: ...

    @property
    def ids(self) -> np.ndarray: ...

    def vectors(self, ids: np.ndarray) -> np.ndarray: ...

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None: ...

    def remove(self, ids: np.ndarray) -> None: ...

    def query(self, q: np.ndarray, k: int) -> np.ndarray: ...

    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]: ...

    def save(self, path: str | os.PathLike[str]) -> None: ...


class SavedAsParts:
    """``save`` and ``load`` of an index as one checkpoint file holding its ``parts``.

    A subclass defines ``parts() -> (meta, arrays)`` (JSON-serialisable meta) and the classmethod
    ``from_parts(meta, arrays)``, which raises :class:`~bayesbandit.errors.CheckpointError` for
    parts it did not write.
    """

    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        raise NotImplementedError

    @classmethod
    def from_parts(cls, meta: dict[str, Any], arrays: list[np.ndarray]) -> Self:
        raise NotImplementedError

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to one checkpoint file, atomically (:func:`~bayesbandit.checkpoint.write_checkpoint`)."""
        meta, arrays = self.parts()
        write_checkpoint(path, {"kind": f"bayesbandit.{type(self).__name__}", "index": meta}, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read an index written by :meth:`save` (no code runs from the file)."""
        meta, arrays = read_checkpoint(path)
        if meta.get("kind") != f"bayesbandit.{cls.__name__}":
            raise CheckpointError(
                f"{os.fspath(path)!r} is not a saved {cls.__name__} (it holds {meta.get('kind')!r}). "
                f"Fix: pass a file written by {cls.__name__}.save."
            )
        return cls.from_parts(meta["index"], arrays)


def check_parts(engine: str, meta: dict[str, Any], arrays: list[np.ndarray], keys: set[str], count: int) -> None:
    """Raise :class:`CheckpointError` unless ``meta`` has ``keys`` and there are ``count`` arrays."""
    if not isinstance(meta, dict) or not keys <= set(meta) or len(arrays) != count:
        raise CheckpointError(
            f"the saved parts are not a {engine}'s (expected {count} arrays and meta keys {sorted(keys)}; got "
            f"{len(arrays)} arrays and {sorted(meta) if isinstance(meta, dict) else meta!r}). Fix: load it with "
            "the engine that saved it."
        )


@contextlib.contextmanager
def _scratch_file(name: str) -> Iterator[str]:
    """A file name a native library can write and read, that nothing outlives.

    On Linux an anonymous in-memory file (``memfd_create``) named by ``/proc/self/fd/N``: it
    vanishes with its last descriptor or mapping, so a process killed mid-save or mid-load leaves
    nothing behind. Elsewhere a file in a private temporary folder, removed on return.
    """
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create(f"bayesbandit-{name}")
        try:
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    folder = tempfile.mkdtemp(prefix="bayesbandit-index-")
    try:
        yield os.path.join(folder, name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, name))
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def native_file_bytes(write: Callable[[str], Any]) -> np.ndarray:
    """The bytes a native library writes with ``write(filename)``, as a uint8 array (via ``_scratch_file``)."""
    with _scratch_file("save") as name:
        write(name)
        with open(name, "rb") as f:
            return np.frombuffer(f.read(), dtype=np.uint8).copy()


def load_native_file(data: np.ndarray, read: Callable[[str], Any]) -> None:
    """Hand ``data`` (from :func:`native_file_bytes`) to a native library's ``read(filename)``.

    The scratch file (``_scratch_file``) is released as soon as ``read`` returns: a library
    that memory-maps it (Annoy) keeps the mapping, which outlives the file's name and descriptor.
    """
    with _scratch_file("load") as name:
        with open(name, "wb") as f:
            f.write(np.ascontiguousarray(data, dtype=np.uint8).tobytes())
        read(name)


def check_ids(where: str, ids: object, *, name: str = "ids") -> np.ndarray:
    """``ids`` as a 1-D int64 array without repeats."""
    arr = np.asarray(ids)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise InvalidInput(
            f"{where}: the {name!r} argument must be a 1-D array of integer ids. Got shape {arr.shape} and "
            f"dtype {arr.dtype}. Fix: pass e.g. np.array([3, 7, 12])."
        )
    arr = arr.astype(np.int64, copy=False)
    if arr.size != np.unique(arr).size:
        values, counts = np.unique(arr, return_counts=True)
        raise InvalidInput(
            f"{where}: the {name!r} argument repeats ids {values[counts > 1][:5].tolist()}. Fix: pass each id once."
        )
    return arr


def check_vectors(where: str, vectors: object, n: int, dim: int, *, name: str = "vectors") -> np.ndarray:
    """``vectors`` as a finite float64 ``(n, dim)`` array."""
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.shape != (n, dim):
        raise InvalidInput(
            f"{where}: the {name!r} argument must have shape ({n}, {dim}) (one row of dimension {dim} per id). "
            f"Got shape {arr.shape}. Fix: pass one {dim}-dimensional row per id."
        )
    if not np.all(np.isfinite(arr)):
        rows = np.flatnonzero(~np.all(np.isfinite(arr), axis=1))
        raise InvalidInput(
            f"{where}: the {name!r} argument has NaN or infinite entries in rows {rows[:5].tolist()}. "
            "Fix: remove or impute them before adding."
        )
    return arr


def check_query(where: str, q: object, k: object, dim: int, size: int) -> tuple[np.ndarray, int]:
    """A finite ``(dim,)`` query and a positive int ``k``; the index must not be empty."""
    arr = np.asarray(q, dtype=np.float64)
    if arr.shape != (dim,):
        raise InvalidInput(
            f"{where}: the query 'q' must have shape ({dim},). Got shape {arr.shape}. "
            "Fix: pass one vector of the index's dimension."
        )
    if not np.isfinite(arr).all():
        raise InvalidInput(f"{where}: the query 'q' has NaN or infinite entries. Fix: pass a finite vector.")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InvalidInput(f"{where}: 'k' must be a positive int. Got {k!r}. Fix: pass e.g. k=30.")
    if size == 0:
        raise InvalidInput(f"{where}: the index is empty. Fix: add vectors before querying.")
    return arr, int(k)


def check_new_ids(where: str, ids: np.ndarray, held: Callable[[np.ndarray], np.ndarray]) -> None:
    """Raise if any of ``ids`` is already held (``held(ids)``: a boolean per id)."""
    already = ids[held(ids)] if ids.size else ids
    if already.size:
        raise InvalidInput(
            f"{where}: ids {already[:5].tolist()} are already in the index. Fix: remove them first, or use new ids."
        )


def check_known_ids(where: str, ids: np.ndarray, held: Callable[[np.ndarray], np.ndarray]) -> None:
    """Raise :class:`UnknownArm` if any of ``ids`` is not held (``held(ids)``: a boolean per id)."""
    unknown = ids[~held(ids)] if ids.size else ids
    if unknown.size:
        raise UnknownArm(
            f"{where}: ids {unknown[:5].tolist()} are not in the index. Fix: pass ids that were added and not yet removed."
        )
