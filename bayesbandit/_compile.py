"""Programs compiled to run once: XLA's quick compilation instead of its optimised one.

Binding a reward program and building a policy's first state run a handful of programs once
each: the program's inspection (its prior medians, support points and affinity check), the
GLM fast path's detection, the prior-mode check and the initial fit. Their run time is
microseconds; their compile time, with XLA:CPU's defaults, is most of a new user's wait for the
first decision. :func:`jit_once` compiles them with LLVM's optimisation off
(``xla_backend_optimization_level = 0``) and XLA:CPU's loop emitter instead of its fusion
emitters (``xla_cpu_use_fusion_emitters = False``): the same operations, compiled two to three
times sooner and run slower, which a program run once does not notice
(``benchmarks/bench_first_decision.py`` measures both). Programs run again and again (an
Agent's ``select`` and ``update``, :func:`bayesbandit.simulate`'s rounds) keep XLA's defaults.

The options are given per compilation (``jax.jit(..., compiler_options=...)``), so nothing
process-wide changes; a jaxlib whose XLA does not know one of them gets the defaults (checked
once, by compiling a one-line program, at the first call).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import Any

import jax

try:
    from jax._src.core import trace_state_clean
except ImportError:  # a JAX without it: every call is a plain jax.jit
    trace_state_clean = None  # type: ignore[assignment]

__all__ = ["TRACE_LOCK", "jit_once", "one_shot_options", "options_key", "per_policy"]

TRACE_LOCK = threading.RLock()
"""Held while a program is traced and lowered by :class:`~bayesbandit.Agent` and its engines: NumPyro's
effect handlers live on one process-global stack, so two threads tracing reward programs at once
corrupt each other's traces (a duplicated sample site, an escaped tracer). Compilation and compiled
calls do not take it."""

_ONE_SHOT = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}


def options_key(options: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    """XLA compiler options (or None) as a hashable key, in a fixed order: for caches of executables."""
    return tuple(sorted((options or {}).items()))


@functools.cache
def one_shot_options() -> dict[str, Any]:
    """The compiler options of :func:`jit_once`: XLA's quick compilation where this jaxlib has it, else none."""
    try:
        jax.jit(lambda x: x + 1, compiler_options=_ONE_SHOT).lower(0.0).compile()
    except Exception:  # an XLA without these options: INVALID_ARGUMENT "No such compile option"
        return {}
    return dict(_ONE_SHOT)


class jit_once:  # noqa: N801 (used as a decorator, like jax.jit)
    """``jax.jit(fun, **kwargs)`` compiled with :func:`one_shot_options`, decided at the first call.

    Deciding at the first call, not when the function is defined, keeps importing bayesbandit
    free of computation (:mod:`bayesbandit.runtime` settings must come before the first one).

    Called while another function is being traced (``init`` inside :func:`bayesbandit.simulate`'s
    program), it is a plain ``jax.jit`` and becomes part of that program, compiled as it is.
    """

    def __init__(self, fun: Callable[..., Any], **jit_kwargs: Any) -> None:
        self._fun = fun
        self._jit_kwargs = jit_kwargs
        self._jitted: Any = None
        self._nested = jax.jit(fun, **jit_kwargs)
        functools.update_wrapper(self, fun)

    @property
    def jitted(self) -> Any:
        """The jitted function with the quick options (made at first use)."""
        if self._jitted is None:
            self._jitted = jax.jit(self._fun, compiler_options=one_shot_options(), **self._jit_kwargs)
        return self._jitted

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # compiler options belong to a top-level program only
        if trace_state_clean is None or not trace_state_clean():
            return self._nested(*args, **kwargs)
        return self.jitted(*args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self.jitted.lower(*args, **kwargs)


def per_policy(factory: Any, policy: Any, *args: Any) -> Any:
    """``factory(policy, *args)`` from ``factory``'s ``functools.lru_cache``, shared by equal policies.

    A policy with array hyper-parameters is unhashable: for it the factory runs uncached, so its
    compiled functions serve this call (or this agent) alone.
    """
    try:
        return factory(policy, *args)
    except TypeError:  # an unhashable policy (array hyper-parameters)
        return factory.__wrapped__(policy, *args)
