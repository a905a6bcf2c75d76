"""JAX's persistent compilation cache, for a user's second run of the same experiment.

XLA compilation is most of the start-up time of a compiled bandit run (seconds per policy
structure). :func:`enable_compilation_cache` points JAX's persistent cache at a folder, so a
later process that compiles the same programs loads them instead (tracing and lowering still
run). The ``bayesbandit`` command turns it on for its own process; a library call does not
change JAX's global settings unless asked, so scripts and notebooks call this once.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax

from bayesbandit.errors import InvalidInput

__all__ = ["enable_compilation_cache", "default_cache_dir"]


def default_cache_dir() -> Path:
    """``$BAYESBANDIT_JAX_CACHE`` if set, else ``~/.cache/bayesbandit/jax``."""
    return Path(os.environ.get("BAYESBANDIT_JAX_CACHE") or Path.home() / ".cache" / "bayesbandit" / "jax")


def enable_compilation_cache(path: str | os.PathLike[str] | None = None) -> Path:
    """Store compiled XLA programs in ``path`` (default :func:`default_cache_dir`) and reuse them.

    Returns the folder. Raises :class:`~bayesbandit.errors.InvalidInput` if it cannot be a
    folder (a file of that name exists, or it cannot be created).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.enable_compilation_cache()  # doctest: +SKIP
    PosixPath('/home/user/.cache/bayesbandit/jax')
    """
    folder = Path(path) if path is not None else default_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(
            f"enable_compilation_cache: cannot use {str(folder)!r} as the cache folder ({exc.strerror or exc}). "
            "Fix: pass a folder you can write."
        ) from exc
    jax.config.update("jax_compilation_cache_dir", str(folder))
    return folder
