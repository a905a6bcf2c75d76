"""The checkpoint file format: a JSON header and raw numeric arrays behind a SHA-256 checksum.

Layout of a checkpoint file (all integers little-endian)::

    8 bytes   magic  b"BBCKPT\\x00\\x00"
    8 bytes   header length L, unsigned
    L bytes   header: UTF-8 JSON object with sorted keys
                {"arrays": [{"dtype": "<f8", "nbytes": 32, "offset": 0, "shape": [4]}, ...],
                 "format_version": 1,
                 "meta": {...the caller's JSON-serialisable dict...}}
    payload   the arrays' raw bytes (C order, little-endian), concatenated at the recorded offsets
    32 bytes  SHA-256 digest of every preceding byte of the file

:func:`encode` validates the data and returns the file's bytes; :func:`decode` checks the digest
before parsing anything, then reads the header and rebuilds each array with
:func:`numpy.frombuffer` from a whitelisted numeric dtype, checking every length and offset
against the file's size (so a damaged or hostile header can neither read outside the payload nor
produce anything but dicts, lists, strings, numbers and numeric arrays).
:func:`array_fingerprint` hashes an array's values in the same canonical byte order.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Sequence
from typing import Any, BinaryIO, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from bayesbandit.errors import CheckpointError, InvalidInput

__all__ = ["FORMAT_VERSION", "READ_CAP", "encode", "decode", "read", "array_fingerprint"]

FORMAT_VERSION: int = 1
"""Version of the layout :func:`encode` writes (the only one :func:`decode` reads)."""

_MAGIC = b"BBCKPT\x00\x00"
_LENGTH = struct.Struct("<Q")
_DIGEST_SIZE = hashlib.sha256().digest_size
_FIXED_SIZE = len(_MAGIC) + _LENGTH.size + _DIGEST_SIZE
READ_CAP: int = 64 * 2**20
"""Bytes :func:`read` reads at most from a file whose header does not declare its size."""
_ARRAY_KEYS = frozenset({"dtype", "shape", "offset", "nbytes"})
_HEADER_KEYS = frozenset({"arrays", "format_version", "meta"})

# Dtypes a checkpoint may hold, as little-endian ``dtype.str``: bool, integers, IEEE floats and
# complex numbers of fixed, platform-independent width (no long double, objects, strings or records).
_DTYPES: dict[str, np.dtype] = {
    np.dtype(t).newbyteorder("<").str: np.dtype(t).newbyteorder("<")
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
}


def _little_endian(dtype: np.dtype) -> np.dtype:
    """``dtype`` in little-endian byte order (dtypes without a byte order unchanged)."""
    return dtype.newbyteorder("<") if dtype.byteorder != "|" else dtype


def _raw_bytes(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``array``'s values as ``dtype``, C order, viewed as flat ``uint8``."""
    return np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8)


def encode(meta: dict[str, Any], arrays: Sequence[np.ndarray]) -> list[bytes | memoryview]:
    """The bytes of a checkpoint holding ``meta`` and ``arrays``, in order (module docstring).

    The arrays' bytes are views, not copies. ``meta`` and ``arrays`` are as in
    :func:`bayesbandit.checkpoint.write_checkpoint`, which lists the :class:`InvalidInput` raised.
    """
    if not isinstance(meta, dict):
        raise InvalidInput(f"meta must be a dict of JSON data; got {type(meta).__name__}.")
    problem = _json_problem(meta)
    if problem is not None:
        raise InvalidInput(f"meta is not JSON-serialisable: {problem}.")
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, Sequence) or isinstance(arrays, str | bytes):
        raise InvalidInput(
            f"arrays must be a sequence (list or tuple) of numpy arrays; got {type(arrays).__name__}. "
            "Wrap a single array in a list: [array]."
        )

    table: list[dict[str, Any]] = []
    blocks: list[memoryview] = []
    offset = 0
    for i, raw in enumerate(arrays):
        array = np.asarray(raw)
        dtype = _little_endian(array.dtype)
        if dtype.str not in _DTYPES:
            raise InvalidInput(
                f"arrays[{i}] has dtype {array.dtype} ({array.dtype.str}), which a checkpoint cannot hold: "
                "use bool, (unsigned) integer, float16/32/64 or complex64/128 arrays "
                "(convert object or string data into meta instead)."
            )
        data = _raw_bytes(array, dtype)
        table.append(
            {"dtype": dtype.str, "shape": [int(s) for s in array.shape], "offset": offset, "nbytes": data.size}
        )
        blocks.append(data.data)
        offset += data.size

    document = {"arrays": table, "format_version": FORMAT_VERSION, "meta": meta}
    try:
        text = json.dumps(document, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except RecursionError:
        raise InvalidInput("meta is not JSON-serialisable: it is nested too deeply.") from None
    header = text.encode("utf-8")
    chunks: list[bytes | memoryview] = [_MAGIC, _LENGTH.pack(len(header)), header, *blocks]
    hasher = hashlib.sha256()
    for chunk in chunks:
        hasher.update(chunk)
    return [*chunks, hasher.digest()]


def _json_problem(value: Any, where: str = "meta", parents: tuple[int, ...] = ()) -> str | None:
    """Describe the first part of ``value`` that does not survive a JSON round trip, or None."""
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value!r}, which JSON cannot represent"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{where} is a string that is not valid Unicode (it contains a lone surrogate)"
        return None
    if isinstance(value, dict | list | tuple):
        if id(value) in parents:
            return f"{where} contains itself (a circular reference)"
        if len(parents) > 200:
            return f"{where} is nested too deeply (more than 200 levels)"
        inner = (*parents, id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    return f"{where} has key {key!r} of type {type(key).__name__}; JSON object keys must be str"
                problem = _json_problem(item, f"{where}[{key!r}]", inner)
                if problem is not None:
                    return problem
        else:
            for i, item in enumerate(value):
                problem = _json_problem(item, f"{where}[{i}]", inner)
                if problem is not None:
                    return problem
        return None
    hint = " (convert it with .item() or .tolist())" if isinstance(value, np.generic | np.ndarray) else ""
    return f"{where} is of type {type(value).__name__}{hint}; use str, int, float, bool, None, list or dict"


def read(f: BinaryIO, size: int, source: str) -> tuple[dict[str, Any], list[np.ndarray]]:
    """:func:`decode` the checkpoint in the open regular file ``f`` of ``size`` bytes, reading at
    most the size its header declares (or :data:`READ_CAP`, whichever is more).

    The header is read first (it is not trusted yet: the checksum is checked on the whole file
    afterwards); a file larger than the size it declares, or than :data:`READ_CAP` when that is
    more or the header declares none (another signature, a length past the end, JSON that does
    not parse), is refused before its payload is read, so neither a huge (sparse) file nor a
    damaged header makes a load read without bound.
    """
    head = f.read(len(_MAGIC) + _LENGTH.size)
    if len(head) >= len(_MAGIC) and head[: len(_MAGIC)] != _MAGIC:
        decode(head, source)  # raises: not a checkpoint
    declared = _declared_size(f, head, size)
    limit = READ_CAP if declared is None else max(declared, READ_CAP)
    if size > limit:
        what = "does not declare a size that fits the file" if declared is None else f"declares {declared} bytes"
        raise CheckpointError(
            f"checkpoint {source!r} is corrupted or not a checkpoint: it has {size} bytes and its header {what}; "
            "it is not read past that. Restore it from a backup or re-create it with write_checkpoint."
        )
    f.seek(0)
    data = f.read(size)
    return decode(data, source)


def _declared_size(f: BinaryIO, head: bytes, size: int) -> int | None:
    """The file size the (unverified) header declares, or None if it declares none that can be read."""
    if len(head) < len(_MAGIC) + _LENGTH.size:
        return None
    (header_size,) = _LENGTH.unpack_from(head, len(_MAGIC))
    if header_size > min(READ_CAP, size - _FIXED_SIZE):
        return None
    try:
        header = json.loads(f.read(header_size).decode("utf-8"))
        payload = sum(entry["nbytes"] for entry in header["arrays"])
    except Exception:  # anything malformed: decode explains it from the bytes it reads
        return None
    return _FIXED_SIZE + header_size + payload if type(payload) is int and payload >= 0 else None


def decode(data: bytes, source: str) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The ``meta`` dict and the arrays (fresh native-byte-order copies) of a checkpoint's bytes ``data``.

    Raises :class:`~bayesbandit.errors.CheckpointError`, naming ``source`` (the file), for any
    departure from the layout (module docstring): another signature, a truncated file, a checksum
    that does not match, another format version, a malformed header or array table.
    """

    def fail(what: str, todo: str = "Re-create it with write_checkpoint, or restore it from a backup.") -> NoReturn:
        raise CheckpointError(f"checkpoint {source!r} {what}. {todo}")

    if len(data) >= len(_MAGIC) and data[: len(_MAGIC)] != _MAGIC:
        fail(
            "is not a bayesbandit checkpoint: it does not start with the checkpoint signature",
            "Check the path; only files written by bayesbandit.checkpoint.write_checkpoint can be read "
            "(pickles and other formats are refused on purpose).",
        )
    if len(data) < _FIXED_SIZE:
        fail(
            f"is truncated: it has {len(data)} bytes, fewer than the {_FIXED_SIZE} of an empty checkpoint",
            "It was probably cut short by an interrupted copy or download; restore it from a backup or re-create it.",
        )

    view = memoryview(data)
    body, digest = view[:-_DIGEST_SIZE], view[-_DIGEST_SIZE:]
    if hashlib.sha256(body).digest() != digest:
        fail(
            "is corrupted: its SHA-256 checksum does not match its contents, so the file was modified or "
            f"damaged after it was written{_size_hint(data)}",
            "Restore it from a backup or re-create it; do not edit checkpoint files by hand.",
        )

    (header_size,) = _LENGTH.unpack_from(data, len(_MAGIC))
    header_start = len(_MAGIC) + _LENGTH.size
    payload_start = header_start + header_size
    if payload_start > len(body):
        fail(f"is malformed: its header length ({header_size} bytes) runs past the end of the file")
    try:
        header = json.loads(bytes(body[header_start:payload_start]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        fail(f"is malformed: its header is not valid UTF-8 JSON ({type(exc).__name__}: {exc})")
    if not isinstance(header, dict):
        fail(f"is malformed: its header is a JSON {type(header).__name__}, not an object")

    version = header.get("format_version")
    if type(version) is not int:
        fail(f"is malformed: its header has no integer format_version (found {version!r})")
    if version != FORMAT_VERSION:
        todo = (
            "Upgrade bayesbandit to a version that reads it, or re-create the checkpoint with this one."
            if version > FORMAT_VERSION
            else "Re-create the checkpoint with this bayesbandit."
        )
        fail(f"was written by format version {version}; this bayesbandit reads version {FORMAT_VERSION}", todo)
    if set(header) != _HEADER_KEYS:
        fail(f"is malformed: its header has keys {sorted(header)}, expected {sorted(_HEADER_KEYS)}")
    meta, table = header["meta"], header["arrays"]
    if not isinstance(meta, dict):
        fail(f"is malformed: its meta is a JSON {type(meta).__name__}, not an object")
    if not isinstance(table, list):
        fail(f"is malformed: its array table is a JSON {type(table).__name__}, not a list")

    payload = body[payload_start:]
    arrays: list[np.ndarray] = []
    end = 0
    for i, entry in enumerate(table):
        problem = _array_problem(entry, end, len(payload))
        if problem is not None:
            fail(f"is malformed: array {i} of its array table {problem}")
        dtype = _DTYPES[entry["dtype"]]
        try:
            flat = np.frombuffer(payload, dtype=dtype, count=entry["nbytes"] // dtype.itemsize, offset=entry["offset"])
            array = flat.reshape(entry["shape"]).astype(dtype.newbyteorder("="), copy=True)
        except (ValueError, TypeError, OverflowError) as exc:
            fail(f"is malformed: array {i} of its array table cannot be rebuilt ({exc})")
        arrays.append(array)
        end = entry["offset"] + entry["nbytes"]
    if end != len(payload):
        fail(f"is malformed: its payload has {len(payload) - end} bytes after the last array")
    return meta, arrays


def _array_problem(entry: Any, expected_offset: int, payload_size: int) -> str | None:
    """Why an entry of the array table is unusable, or None. Arrays must tile the payload in order."""
    if not isinstance(entry, dict) or set(entry) != _ARRAY_KEYS:
        return f"is not an object with keys {sorted(_ARRAY_KEYS)}: {entry!r:.200}"
    dtype, shape, offset, nbytes = entry["dtype"], entry["shape"], entry["offset"], entry["nbytes"]
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        return f"has dtype {dtype!r:.50}, not one of the numeric dtypes {sorted(_DTYPES)}"
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape) or len(shape) > 32:
        return f"has shape {shape!r:.200}, not a list of at most 32 non-negative integers"
    if type(offset) is not int or type(nbytes) is not int or offset < 0 or nbytes < 0:
        return f"has offset {offset!r:.50} and nbytes {nbytes!r:.50}, not non-negative integers"
    if offset + nbytes > payload_size:
        return f"points outside the payload: bytes {offset} to {offset + nbytes} of a {payload_size}-byte payload"
    if offset != expected_offset:
        return f"starts at byte {offset} of the payload, not right after the previous array (byte {expected_offset})"
    if nbytes != math.prod(shape) * _DTYPES[dtype].itemsize:
        return f"says {nbytes} bytes, but shape {shape} of {dtype} needs {math.prod(shape) * _DTYPES[dtype].itemsize}"
    return None


def _size_hint(data: bytes) -> str:
    """Best-effort: compare the file's size with the one its (unverified) header declares."""
    size = len(data)
    try:
        (header_size,) = _LENGTH.unpack_from(data, len(_MAGIC))
        start = len(_MAGIC) + _LENGTH.size
        if start + header_size + _DIGEST_SIZE > size:
            return " (it is shorter than its header declares: it looks truncated)"
        header = json.loads(data[start : start + header_size].decode("utf-8"))
        expected = start + header_size + sum(entry["nbytes"] for entry in header["arrays"]) + _DIGEST_SIZE
    except Exception:
        return ""
    if isinstance(expected, int) and expected > size:
        return f" (it has {size} bytes where its header declares {expected}: it looks truncated)"
    if isinstance(expected, int) and expected < size:
        return f" (it has {size} bytes where its header declares {expected}: bytes were appended)"
    return ""


def array_fingerprint(array: ArrayLike) -> str:
    """Hex SHA-256 of an array's dtype, shape and C-order bytes.

    Arrays with equal values, dtype and shape get equal fingerprints (whatever their memory
    layout or byte order); changing any value, the dtype (even with the same bytes) or the shape
    changes it.

    Parameters
    ----------
    array : array_like
        A bool, integer, float or complex array.

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    InvalidInput
        For an array of object, string or structured dtype, whose bytes are not its values.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesbandit.checkpoint import array_fingerprint
    >>> array_fingerprint(np.zeros(4)) == array_fingerprint(np.zeros((2, 2)))
    False
    """
    a = np.asarray(array)
    if a.dtype.kind not in "biufc":
        raise InvalidInput(f"array_fingerprint needs a bool or numeric array; got dtype {a.dtype}.")
    dtype = _little_endian(a.dtype)
    data = _raw_bytes(a, dtype)
    hasher = hashlib.sha256(json.dumps({"dtype": dtype.str, "shape": [int(s) for s in a.shape]}).encode("ascii"))
    hasher.update(b"\n")  # compact JSON has no raw newline: the description ends unambiguously here
    hasher.update(data.data)
    return hasher.hexdigest()
