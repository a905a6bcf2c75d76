"""A pickle-free, tamper-evident file format for saving a bandit agent's state.

Layout of a checkpoint file (all integers little-endian)::

    8 bytes   magic  b"BBCKPT\\x00\\x00"
    8 bytes   header length L, unsigned
    L bytes   header: UTF-8 JSON object with sorted keys
                {"arrays": [{"dtype": "<f8", "nbytes": 32, "offset": 0, "shape": [4]}, ...],
                 "format_version": 1,
                 "meta": {...the caller's JSON-serialisable dict...}}
    payload   the arrays' raw bytes (C order, little-endian), concatenated at the recorded offsets
    32 bytes  SHA-256 digest of every preceding byte of the file

Why this design:

* **No pickle, no eval.** Unpickling a file runs code chosen by whoever wrote it, so a shared or
  downloaded pickle checkpoint is an arbitrary-code-execution hazard. Here the header is plain JSON
  and each array is rebuilt with :func:`numpy.frombuffer` from a whitelisted numeric dtype: reading a
  checkpoint can only ever produce dicts, lists, strings, numbers and numeric arrays.
* **Whole-file checksum.** The digest covers every byte before it and is checked before anything is
  parsed, so any damage (a flipped bit, a truncated copy, a hand edit) is reported as such, instead
  of surfacing later as a wrong posterior or an obscure parsing error. It detects accidents, not
  forgery: anyone can recompute it, so it is not a signature.
* **Atomic replace.** :func:`write_checkpoint` writes a temporary file
  ``.{name}.partial-{random hex}`` in the target's folder, flushes it to disk (``os.fsync``), then
  renames it onto the target with :func:`os.replace`. A crash mid-save leaves the previous checkpoint
  intact; the next save or load removes the temporary files such a crash leaves behind.

Every problem found when reading raises :class:`~bayesbandit.errors.CheckpointError` (a
``ValueError``) whose message names the file, what is wrong and what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from bayesbandit.errors import CheckpointError, InvalidInput, PrecisionError

if TYPE_CHECKING:
    from bayesbandit import BoundModel

try:  # POSIX advisory locks tell a live writer's temporary file from a stale one.
    import fcntl
except ImportError:  # pragma: no cover - Windows: an open file cannot be deleted there anyway.
    fcntl = None  # type: ignore[assignment]

__all__ = ["FORMAT_VERSION", "write_checkpoint", "read_checkpoint", "array_fingerprint", "program_fingerprint"]

FORMAT_VERSION: int = 1
"""Version of the checkpoint layout written by :func:`write_checkpoint` (the only one it reads)."""

_MAGIC = b"BBCKPT\x00\x00"
_LENGTH = struct.Struct("<Q")
_DIGEST_SIZE = hashlib.sha256().digest_size
_FIXED_SIZE = len(_MAGIC) + _LENGTH.size + _DIGEST_SIZE
_PARTIAL_INFIX = ".partial-"
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


# --------------------------------------------------------------------------------------- writing
def write_checkpoint(path: str | os.PathLike[str], meta: dict[str, Any], arrays: Sequence[np.ndarray]) -> None:
    """Save a JSON-serialisable dict and a list of numeric arrays to ``path``, atomically.

    Parameters
    ----------
    path : str or path-like
        The checkpoint file to create or replace. Its folder must exist.
    meta : dict
        JSON data (str keys; values str, int, float, bool, None, lists, tuples and dicts of
        those). Tuples come back as lists. Floats must be finite.
    arrays : sequence of numpy.ndarray
        Arrays of bool, (unsigned) integer, float16/32/64 or complex64/128 dtype, of any shape
        (0-d and empty included). They are stored little-endian in C order.

    Raises
    ------
    InvalidInput
        If ``meta`` is not JSON-serialisable (the message names the offending key) or an array
        has an unsupported dtype (object, string, structured, long double...). Nothing is
        written then.
    OSError
        If the file cannot be written; the previous checkpoint at ``path``, if any, is left as
        it was and no temporary file remains.

    Notes
    -----
    The data go to a temporary file ``.{name}.partial-{random hex}`` next to ``path``, which is
    flushed, ``fsync``-ed and then renamed onto ``path`` (:func:`os.replace`), so a reader sees
    either the old or the new checkpoint, never a mix. The file's permissions follow the umask,
    like any newly created file. Temporary files of the same target left by a process killed
    mid-save are removed first; those of a save still in progress (locked, on POSIX) are kept.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from bayesbandit.checkpoint import read_checkpoint, write_checkpoint
    >>> path = os.path.join(tempfile.mkdtemp(), "agent.bbckpt")
    >>> write_checkpoint(path, {"policy": "GLMTSL", "t": 3}, [np.arange(3.0), np.eye(2, dtype=np.int32)])
    >>> meta, (a, b) = read_checkpoint(path)
    >>> meta, a, b.dtype
    ({'policy': 'GLMTSL', 't': 3}, array([0., 1., 2.]), dtype('int32'))
    >>> import shutil; shutil.rmtree(os.path.dirname(path))
    """
    target = _as_path(path)
    header, blocks = _encode(meta, arrays)
    folder, name = os.path.split(os.path.abspath(target))
    _remove_stale_partials(folder, name)

    fd, partial = _open_partial(folder, name)
    try:
        f = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        os.unlink(partial)
        raise
    try:
        hasher = hashlib.sha256()
        chunks: list[bytes | memoryview] = [_MAGIC, _LENGTH.pack(len(header)), header, *blocks]
        for chunk in chunks:
            hasher.update(chunk)
            f.write(chunk)
        f.write(hasher.digest())
        f.flush()
        os.fsync(f.fileno())
        if os.name == "nt":  # Windows cannot rename an open file
            f.close()
        # Elsewhere rename while the file is open, hence locked: no cleaner can take it for stale.
        os.replace(partial, target)
        f.close()
    except BaseException:
        with contextlib.suppress(OSError):
            f.close()
        with contextlib.suppress(OSError):
            os.unlink(partial)  # after a successful rename there is nothing left to remove
        raise
    _fsync_folder(folder)


def _encode(meta: dict[str, Any], arrays: Sequence[np.ndarray]) -> tuple[bytes, list[memoryview]]:
    """Validate the inputs; return the header's bytes and each array's raw bytes."""
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
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder != "|" else array.dtype
        if dtype.str not in _DTYPES:
            raise InvalidInput(
                f"arrays[{i}] has dtype {array.dtype} ({array.dtype.str}), which a checkpoint cannot hold: "
                "use bool, (unsigned) integer, float16/32/64 or complex64/128 arrays "
                "(convert object or string data into meta instead)."
            )
        data = np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8)
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
    return text.encode("utf-8"), blocks


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


def _open_partial(folder: str, name: str) -> tuple[int, str]:
    """Create and lock a new temporary file for ``name`` in ``folder``; return its fd and path.

    ``os.open`` with mode 0o666 lets the umask set the permissions, as for any new file
    (:func:`tempfile.mkstemp` would force 0o600).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        partial = os.path.join(folder, f".{name}{_PARTIAL_INFIX}{secrets.token_hex(8)}")
        try:
            fd = os.open(partial, flags, 0o666)
        except FileExistsError:
            continue
        if _lock(fd, blocking=True) and not _is_same_file(fd, partial):
            # A concurrent cleaner took it for stale and removed it before we locked it: start over.
            os.close(fd)
            continue
        return fd, partial
    raise FileExistsError(f"could not create a temporary file next to {os.path.join(folder, name)}")


def _lock(fd: int, *, blocking: bool) -> bool:
    """Take an exclusive advisory lock on ``fd``; False if held elsewhere or locks are unsupported."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # e.g. a file system without locks: behave as if there were none
        return False
    return True


def _is_same_file(fd: int, path: str) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); best effort."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_stale_partials(folder: str, name: str) -> None:
    """Remove ``.{name}.partial-*`` files in ``folder`` left by a save that never finished.

    A file whose lock is held belongs to a save still running (in this or another process) and
    is kept. Failures are ignored: a leftover temporary file never prevents a save or a load.
    """
    prefix = f".{name}{_PARTIAL_INFIX}"
    try:
        entries = [entry.path for entry in os.scandir(folder) if entry.name.startswith(prefix)]
    except OSError:
        return
    for partial in entries:
        try:
            fd = os.open(partial, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            continue
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live writer holds it
                except OSError:
                    pass  # no locking on this file system: treat it as stale
            if _is_same_file(fd, partial):
                os.unlink(partial)
        except OSError:
            pass
        finally:
            os.close(fd)


# --------------------------------------------------------------------------------------- reading
def read_checkpoint(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[np.ndarray]]:
    """Load a checkpoint written by :func:`write_checkpoint`.

    Nothing in the file is executed: the header is parsed as JSON and each array is copied out of
    the payload with a whitelisted numeric dtype.

    Parameters
    ----------
    path : str or path-like
        The checkpoint file.

    Returns
    -------
    meta : dict
        The ``meta`` dict given to :func:`write_checkpoint` (tuples come back as lists).
    arrays : list of numpy.ndarray
        Fresh, writable, native-byte-order copies of the saved arrays, same dtypes and shapes.

    Raises
    ------
    CheckpointError
        If there is no file at ``path`` or it cannot be read; if it is not a bayesbandit
        checkpoint, is truncated or corrupted (its SHA-256 checksum does not match: any damage,
        down to one flipped bit, is detected); if it was written by another format version; or if
        its header is malformed.

    Notes
    -----
    Temporary files ``.{name}.partial-*`` left next to ``path`` by a save that was killed midway
    are removed.
    """
    source = _as_path(path)
    folder, name = os.path.split(os.path.abspath(source))
    _remove_stale_partials(folder, name)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise CheckpointError(
            f"no checkpoint at {source!r}: the file does not exist. Check the path (and the working "
            "directory), or save a checkpoint there first."
        ) from None
    except OSError as exc:
        raise CheckpointError(
            f"cannot read checkpoint {source!r}: {exc.strerror or exc}. Check that the path names a readable file."
        ) from exc
    return _decode(data, source)


def _decode(data: bytes, source: str) -> tuple[dict[str, Any], list[np.ndarray]]:
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
    try:
        (header_size,) = _LENGTH.unpack_from(data, len(_MAGIC))
        start = len(_MAGIC) + _LENGTH.size
        if start + header_size + _DIGEST_SIZE > len(data):
            return " (it is shorter than its header declares: it looks truncated)"
        header = json.loads(data[start : start + header_size].decode("utf-8"))
        expected = start + header_size + sum(entry["nbytes"] for entry in header["arrays"]) + _DIGEST_SIZE
    except Exception:
        return ""
    if isinstance(expected, int) and expected > len(data):
        return f" (it has {len(data)} bytes where its header declares {expected}: it looks truncated)"
    if isinstance(expected, int) and expected < len(data):
        return f" (it has {len(data)} bytes where its header declares {expected}: bytes were appended)"
    return ""


def _as_path(path: str | os.PathLike[str]) -> str:
    if not isinstance(path, str | bytes | os.PathLike):
        raise InvalidInput(f"path must be a str or path-like object; got {type(path).__name__}.")
    return os.fsdecode(os.fspath(path))


# ----------------------------------------------------------------------------------- fingerprints
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
    dtype = a.dtype.newbyteorder("<") if a.dtype.byteorder != "|" else a.dtype
    data = np.ascontiguousarray(a, dtype=dtype).reshape(-1).view(np.uint8)
    hasher = hashlib.sha256(json.dumps({"dtype": dtype.str, "shape": [int(s) for s in a.shape]}).encode("ascii"))
    hasher.update(b"\n")  # compact JSON has no raw newline: the description ends unambiguously here
    hasher.update(data.data)
    return hasher.hexdigest()


def program_fingerprint(bound: BoundModel) -> str:
    """Hex SHA-256 identifying what a bound reward program computes, not which Python object it is.

    Two separately constructed programs that define the same model give the same fingerprint (so
    a checkpoint saved in one process can be checked against the program of another), and
    programs that differ in their prior, likelihood, sites or feature shape give different ones.

    The fingerprint hashes a JSON document with the binding's structure (``feature_shape``,
    ``obs_site``, ``site_names``, ``site_shapes``, ``support_name``, ``num_params``) and the
    program's numbers at fixed inputs: with ``numpy.random.default_rng(0)``, three parameter
    vectors ``theta ~ N(0, 0.5^2 I)`` (one ``(3, num_params)`` draw), then features ``x`` of shape
    ``(4, *feature_shape)`` uniform on [-1, 1], and rewards alternating between the two reference
    rewards; for each ``theta`` the potential ``U(theta; x, y)`` and the four mean rewards. The
    numbers are evaluated in float64 and rounded to 9 significant digits, so floating-point
    differences in the last bits (another machine, another XLA version) do not change the
    fingerprint; non-finite values are recorded as ``"nan"``, ``"inf"`` or ``"-inf"``.

    Parameters
    ----------
    bound : BoundModel
        A bound program, from :func:`bayesbandit.bind`.

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    PrecisionError
        If JAX's 64-bit mode is off: float32 numbers would give another fingerprint.

    Examples
    --------
    >>> import jax
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.checkpoint import program_fingerprint
    >>> from bayesbandit.models import logistic
    >>> jax.config.update("jax_enable_x64", True)  # or bb.enable_x64()
    >>> a = program_fingerprint(bb.bind(logistic(prior_scale=2.0), np.zeros((2, 3))))
    >>> a == program_fingerprint(bb.bind(logistic(prior_scale=2.0), np.zeros((2, 3))))
    True
    >>> a == program_fingerprint(bb.bind(logistic(prior_scale=3.0), np.zeros((2, 3))))
    False
    """
    import jax

    if not jax.config.read("jax_enable_x64"):
        raise PrecisionError(
            "program_fingerprint needs JAX's 64-bit mode (it evaluates the program in float64), but it is off. "
            "Fix: call bayesbandit.enable_x64() or jax.config.update('jax_enable_x64', True) (or set "
            "JAX_ENABLE_X64=1) first."
        )
    feature_shape = tuple(int(s) for s in bound.feature_shape)
    num_params = int(bound.num_params)
    rng = np.random.default_rng(0)
    thetas = rng.normal(0.0, 0.5, size=(3, num_params))
    x = rng.uniform(-1.0, 1.0, size=(4, *feature_shape))
    y0, y1 = (float(r) for r in bound.reference_rewards)
    y = np.array([y0, y1, y0, y1], dtype=np.float64)

    potentials: list[str] = []
    means: list[list[str]] = []
    for theta in thetas:
        potential = np.asarray(bound.potential(np.asarray(theta, dtype=np.float64), x, y), dtype=np.float64)
        mean = np.asarray(bound.mean_reward(np.asarray(theta, dtype=np.float64), x), dtype=np.float64)
        potentials.append(_number(float(potential)))
        means.append([_number(float(v)) for v in np.broadcast_to(mean, (4,))])

    document = {
        "feature_shape": list(feature_shape),
        "mean_reward": means,
        "num_params": num_params,
        "obs_site": str(bound.obs_site),
        "potential": potentials,
        "site_names": [str(n) for n in bound.site_names],
        "site_shapes": {str(k): [int(s) for s in v] for k, v in bound.site_shapes.items()},
        "support_name": str(bound.support_name),
    }
    text = json.dumps(document, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _number(v: float) -> str:
    """``v`` to 9 significant digits; ``"nan"``, ``"inf"``, ``"-inf"`` if not finite; no ``-0``."""
    return f"{v + 0.0:.9g}" if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
