"""Atomic replacement of a file: a locked temporary file, ``fsync``, then a rename onto the target.

:func:`write_atomically` writes a temporary file ``.{name}.partial-{random hex}`` in the target's
folder, flushes it to disk (``os.fsync``), then renames it onto the target with
:func:`os.replace` (and ``fsync``-s the folder, so the rename itself is durable). A reader sees
either the old or the new file, never a mix, and a crash mid-save leaves the previous file
intact. The temporary file is locked (POSIX advisory lock) while it is written, which tells a
live writer's temporary file from one a killed process left behind;
:func:`remove_stale_partials` removes only the latter.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Sequence

from bayesbandit.errors import InvalidInput

try:  # POSIX advisory locks tell a live writer's temporary file from a stale one.
    import fcntl
except ImportError:  # pragma: no cover - Windows: an open file cannot be deleted there anyway.
    fcntl = None  # type: ignore[assignment]

__all__ = ["as_path", "write_atomically", "remove_stale_partials", "fsync_folder"]

_PARTIAL_INFIX = ".partial-"


def as_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a ``str``; :class:`~bayesbandit.errors.InvalidInput` if it is not a path."""
    if not isinstance(path, str | bytes | os.PathLike):
        raise InvalidInput(f"path must be a str or path-like object; got {type(path).__name__}.")
    return os.fsdecode(os.fspath(path))


def write_atomically(target: str, chunks: Sequence[bytes | memoryview]) -> None:
    """Replace the file ``target`` by the concatenated ``chunks``, atomically (module docstring).

    Temporary files of the same target left by a process killed mid-save are removed first;
    those of a save still in progress (locked, on POSIX) are kept. The file's permissions follow
    the umask, like any newly created file. If writing fails (:class:`OSError`), the previous
    file at ``target``, if any, is left as it was and no temporary file remains.
    """
    remove_stale_partials(target)
    folder, name = os.path.split(os.path.abspath(target))
    fd, partial = _open_partial(folder, name)
    try:
        f = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        os.unlink(partial)
        raise
    try:
        for chunk in chunks:
            f.write(chunk)
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
    fsync_folder(folder)


def remove_stale_partials(target: str) -> None:
    """Remove the temporary files ``.{name}.partial-*`` next to ``target`` left by saves that never finished.

    A file whose lock is held belongs to a save still running (in this or another process) and
    is kept. Failures are ignored: a leftover temporary file never prevents a save or a load.
    """
    folder, name = os.path.split(os.path.abspath(target))
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


def fsync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (POSIX); best effort."""
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
