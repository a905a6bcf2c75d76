"""Process settings for deciding one round at a time on CPU: lower latency per Agent call.

An :class:`bayesbandit.Agent` makes one compiled call per ``select`` and one per ``update``, on
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
"""

from __future__ import annotations

import os

import jax
from jax._src import xla_bridge

from bayesbandit.errors import ConfigurationError

__all__ = ["enable_low_latency"]

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
            "so its settings cannot take effect in this process. Fix: call bb.enable_low_latency() right after "
            "the imports, before any JAX computation (bb.enable_x64() may come before or after it)."
        )
    flags = os.environ.get("XLA_FLAGS", "")
    if _SCHEDULER_FLAG not in flags.split():
        os.environ["XLA_FLAGS"] = f"{flags} {_SCHEDULER_FLAG}".strip()
    jax.config.update("jax_cpu_enable_async_dispatch", False)
