"""Process settings: what a bayesbandit process turns on, once, before it computes.

Importing bayesbandit changes no global JAX setting. These four functions each change one, and
the ``bayesbandit`` command calls the ones it needs for its own process; scripts, notebooks and
services call them once, after the imports:

* :func:`enable_x64`: JAX's 64-bit mode, which Newton-based inference needs
  (:mod:`bayesbandit.precision` says what needs float64 and why).
* :func:`enable_fast_rng`: JAX's Threefry hash compiled on CPU as straight-line code, the same
  bits sooner (:mod:`bayesbandit.threefry`).
* :func:`enable_low_latency`: an Agent's one-round calls run in the calling thread, kernel after
  kernel (below).
* :func:`enable_compilation_cache`: compiled programs kept on disk for the next process (below).

Low latency
-----------
An :class:`bayesbandit.Agent` makes one compiled call per round on a fixed arm set (``update`` also selects for the next round), one per ``select`` and one per ``update`` otherwise, on
arrays of a few hundred bytes. Their cost is XLA:CPU's execution machinery, not arithmetic, and
two of JAX's process-wide defaults are made for large programs:

* asynchronous dispatch: a call is queued to a worker thread and the caller then waits for its
  result. Between two decisions the worker goes to sleep, so each call pays a thread hand-off
  and a wake-up, as much as the call's own work. ``jax_cpu_enable_async_dispatch = False`` runs
  each call in the calling thread.
* XLA:CPU's concurrency-optimised (breadth-first) HLO schedule, meant to let the runtime run
  independent parts of a program on its thread pool at once. For an Agent's small programs the
  memory-optimised depth-first schedule (``--xla_cpu_enable_concurrency_optimized_scheduler=false``)
  is faster: GLM-TSL's online ``update`` took 46-59 us a call with it and 112-121 us without
  (an update that also returned its design matrix: 38 us against 108). Given per compilation
  (``jax.jit(..., compiler_options=...)``) the flag changes the schedule but not the time; only
  the process-wide flag does, so it is set for the process.

:func:`enable_low_latency` sets both. They change no number (``tests/test_latency.py``: the same
decisions and state, bit for bit); ``benchmarks/results/bench_agent.md`` measures the latency
with and without. Vectorised runs (:func:`bayesbandit.simulate`) lose 0-20% under them, so the
``bayesbandit`` command leaves them off. Both are read when JAX creates its CPU backend, at the
first computation of the process: call :func:`enable_low_latency` before any.

The compilation cache
---------------------
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
from jax._src import xla_bridge
from jax.extend.random import threefry2x32_p
from jax.interpreters import mlir

from bayesbandit._compile import TRACE_LOCK
from bayesbandit.errors import ConfigurationError, InvalidInput
from bayesbandit.threefry import threefry2x32

__all__ = [
    "enable_x64",
    "enable_fast_rng",
    "fast_rng_enabled",
    "enable_low_latency",
    "enable_compilation_cache",
    "default_cache_dir",
    "CACHE_MIN_COMPILE_SECONDS",
    "trace_lock",
]


trace_lock = TRACE_LOCK
"""The lock held while bayesbandit traces a reward program for an :class:`~bayesbandit.Agent` (a re-entrant
``threading.RLock``). NumPyro's effect handlers live on one process-global stack, so two threads tracing
NumPyro programs at once corrupt each other's traces; an agent traces in background threads when it compiles
ahead. Code of your own that traces a NumPyro program (``jax.jit`` of a policy's ``select``, a NUTS run) in
another thread while agents serve should hold it: ``with bb.runtime.trace_lock: ...``."""


def enable_x64(*, use_x64: bool = True) -> None:
    """Turn JAX's 64-bit mode on (or off), as :func:`numpyro.enable_x64` does.

    Call it before creating arrays: arrays made before keep their dtype.
    """
    jax.config.update("jax_enable_x64", bool(use_x64))


_registered = False


def enable_fast_rng() -> None:
    """Compile JAX's Threefry hash on CPU as straight-line code (same bits; see the module docstring).

    Idempotent. Other backends are untouched (GPU already compiles it this way).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.runtime.enable_fast_rng()
    """
    global _registered
    if not _registered:
        rule = mlir.lower_fun(threefry2x32, multiple_results=True)
        mlir.register_lowering(threefry2x32_p, rule, platform="cpu", inline=False)
        _registered = True


def fast_rng_enabled() -> bool:
    """Whether :func:`enable_fast_rng` was called in this process."""
    return _registered


_SCHEDULER_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler=false"


def enable_low_latency() -> None:
    """Run this process's compiled calls in the calling thread, kernel after kernel (module docstring).

    Raises
    ------
    ConfigurationError
        JAX's backend already exists (a computation has run): the settings could no longer
        take effect. Call this first, after the imports.
    """
    if xla_bridge.backends_are_initialized():
        raise ConfigurationError(
            "enable_low_latency() was called after JAX created its backend (a computation has already run), "
            "so its settings cannot take effect in this process. Fix: call bb.runtime.enable_low_latency() right after "
            "the imports, before any JAX computation (bb.runtime.enable_x64() may come before or after it)."
        )
    flags = os.environ.get("XLA_FLAGS", "")
    if _SCHEDULER_FLAG not in flags.split():
        os.environ["XLA_FLAGS"] = f"{flags} {_SCHEDULER_FLAG}".strip()
    jax.config.update("jax_cpu_enable_async_dispatch", False)


CACHE_MIN_COMPILE_SECONDS = 0.02
"""Compile time from which :func:`enable_compilation_cache` stores a program, in seconds."""


def default_cache_dir() -> Path:
    """``$BAYESBANDIT_JAX_CACHE`` if set, else ``~/.cache/bayesbandit/jax``."""
    return Path(os.environ.get("BAYESBANDIT_JAX_CACHE") or Path.home() / ".cache" / "bayesbandit" / "jax")


def enable_compilation_cache(path: str | os.PathLike[str] | None = None) -> Path:
    """Store compiled XLA programs in ``path`` (default :func:`default_cache_dir`) and reuse them.

    Every program that takes ``CACHE_MIN_COMPILE_SECONDS`` (0.02 s) or more to compile is stored
    (JAX's own threshold, 1 s, leaves out most of a reward program's: a new process would compile
    them again; at 0.1 s, the small programs left took 0.4 s of a warm first decision), and
    operations run one by one, which compile in milliseconds, are not.

    Returns the folder. Raises :class:`~bayesbandit.errors.InvalidInput` if it cannot be a
    folder (a file of that name exists, or it cannot be created).

    Examples
    --------
    >>> import bayesbandit as bb
    >>> bb.runtime.enable_compilation_cache()  # doctest: +SKIP
    PosixPath('/home/user/.cache/bayesbandit/jax')
    """
    if path is not None and not str(path):
        raise InvalidInput(
            "enable_compilation_cache: the cache folder is an empty string, which would store the programs in the "
            "current directory. Fix: pass a folder, or nothing for the default one."
        )
    folder = Path(path) if path is not None else default_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(
            f"enable_compilation_cache: cannot use {str(folder)!r} as the cache folder ({exc.strerror or exc}). "
            "Fix: pass a folder you can write."
        ) from exc
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", CACHE_MIN_COMPILE_SECONDS)
    return folder
