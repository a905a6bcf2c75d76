"""A pickle-free, tamper-evident file format for saving a bandit agent's state, written atomically.

A checkpoint holds a JSON-serialisable dict and a list of numeric arrays
(:func:`write_checkpoint`, :func:`read_checkpoint`). Two modules do the work:

============  ======================================================================
module        job
============  ======================================================================
``format``    the bytes: layout, header schema, checksum, bounded decoding
``atomic``    the file: a locked temporary file, ``fsync``, rename, stale-file cleanup
============  ======================================================================

Why this design:

* **No pickle, no eval.** Unpickling a file runs code chosen by whoever wrote it, so a shared or
  downloaded pickle checkpoint is an arbitrary-code-execution hazard. Here the header is plain JSON
  and each array is rebuilt with :func:`numpy.frombuffer` from a whitelisted numeric dtype: reading a
  checkpoint can only ever produce dicts, lists, strings, numbers and numeric arrays
  (:mod:`bayesbandit.checkpoint.format`).
* **Whole-file checksum.** The digest covers every byte before it and is checked before anything is
  parsed, so any damage (a flipped bit, a truncated copy, a hand edit) is reported as such, instead
  of surfacing later as a wrong posterior or an obscure parsing error. It detects accidents, not
  forgery: anyone can recompute it, so it is not a signature.
* **Atomic replace.** :func:`write_checkpoint` writes a temporary file
  ``.{name}.partial-{random hex}`` in the target's folder, flushes it to disk (``os.fsync``), then
  renames it onto the target with :func:`os.replace`. A crash mid-save leaves the previous checkpoint
  intact; the next save or load removes the temporary files such a crash leaves behind
  (:mod:`bayesbandit.checkpoint.atomic`).

Every problem found when reading raises :class:`~bayesbandit.errors.CheckpointError` (a
``ValueError``) whose message names the file, what is wrong and what to do.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import Any

import numpy as np

from bayesbandit.checkpoint.atomic import as_path, remove_stale_partials, write_atomically
from bayesbandit.checkpoint.format import FORMAT_VERSION, array_fingerprint, encode, read
from bayesbandit.errors import CheckpointError

__all__ = ["FORMAT_VERSION", "write_checkpoint", "read_checkpoint", "array_fingerprint"]


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
    write_atomically(as_path(path), encode(meta, arrays))


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
    source = as_path(path)
    remove_stale_partials(source)
    fd = _open_regular_file(source)
    with os.fdopen(fd, "rb") as f:
        try:
            return read(f, os.fstat(fd).st_size, source)
        except OSError as exc:
            raise CheckpointError(
                f"cannot read checkpoint {source!r}: {exc.strerror or exc}. Check that the path names a readable file."
            ) from exc


_KINDS = {
    stat.S_ISDIR: "a folder",
    stat.S_ISFIFO: "a FIFO (named pipe)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def _open_regular_file(source: str) -> int:
    """A read-only descriptor of ``source`` if it is a regular file; :class:`CheckpointError` at once otherwise.

    The path is opened without blocking (a FIFO would otherwise wait for a writer) and the open
    descriptor's kind is checked before a byte is read (a device such as ``/dev/zero`` never ends),
    so a path swapped for another kind of file between a check and the open is refused too.
    """
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise CheckpointError(
            f"no checkpoint at {source!r}: the file does not exist. Check the path (and the working "
            "directory), or save a checkpoint there first."
        ) from None
    except OSError as exc:
        raise CheckpointError(
            f"cannot read checkpoint {source!r}: {exc.strerror or exc}. Check that the path names a readable file."
        ) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS.items() if test(mode)), "not a regular file")
        raise CheckpointError(
            f"cannot read checkpoint {source!r}: it is {kind}, not a regular file. Check that the path names "
            "a checkpoint file written by save."
        )
    return fd
