"""Float64 ``log`` and ``log1p`` as straight-line arithmetic on CPU, for the values of a potential.

XLA:CPU evaluates a float64 ``exp`` as vectorised arithmetic but ``log`` and ``log1p`` by a scalar
library call per element: on this project's 2-core machine 1.1 ns an element for ``exp``, 5.4 ns
for ``log`` and 8-10 ns for ``log1p``. A Bernoulli likelihood's value is a softplus,
``max(A, 0) + log1p(exp(-|A|))``, so the line-search trials of a full-history GLM refit, one
softplus per arm and run, spent most of their time in ``log1p``.

:func:`fast_logs` rewrites a function so that, on CPU, every float64 ``log`` and ``log1p`` in its
computation (nested ``jit`` and ``custom_jvp`` calls included) is :func:`log1p` / :func:`log` below:
fdlibm's method (``e_log.c``, ``s_log1p.c``), written with array operations XLA vectorises. The
argument is split as ``2^k (1 + f)`` with ``sqrt(2)/2 <= 1 + f < sqrt(2)`` (exponent and mantissa
read from the bits), ``s = f / (2 + f)`` and

.. math::  \\log(1 + f) = 2\\,\\operatorname{atanh}(s) = f - \\big(h - s (h + R(s^2))\\big),
           \\quad h = f^2 / 2,

with fdlibm's minimax polynomial ``R`` of degree 7 in ``s^2`` (approximation error below ``2^-58.45``);
``log1p`` takes ``f = x`` exactly when ``1 + x`` is already in the reduced range and splits the
rounded ``1 + x`` otherwise (fdlibm adds that rounding error back; without it the result is still
within 2 ulp, and XLA's simplifier would fold the correction to zero anyway). Within 2 ulp of the C
library over the whole range (``tests/test_fastmath.py``); a softplus costs about half. On other
platforms the rewritten function calls the platform's own ``log`` and ``log1p`` (``lax.platform_dependent``).

The rewrite is for evaluation: it inlines ``custom_jvp`` functions (their custom derivatives are
dropped) and reads bits, so the rewritten function must not be differentiated; differentiate
first (a derivative pass traced by ``jax.grad`` inside ``fn`` is rewritten like any other code).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal, primitives

from bayesbandit._typing import Array

__all__ = ["fast_logs", "log", "log1p"]

_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10
_SQRT2 = 1.4142135623730951
# fdlibm's minimax R(z) = Lg1 z + Lg2 z^2 + ... + Lg7 z^7 on 0 <= z = s^2 <= 0.1716^2
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)
_FRACTION = np.int64(0x000FFFFFFFFFFFFF)
_ONE_BITS = np.int64(0x3FF0000000000000)


def _split(u: Array) -> tuple[Array, Array]:
    """``(k, m)`` with ``u = 2^k m``, ``sqrt(2)/2 <= m < sqrt(2)``, for positive normal ``u`` (from its bits)."""
    bits = lax.bitcast_convert_type(u, jnp.int64)
    k = (bits >> 52) - 1023
    m = lax.bitcast_convert_type((bits & _FRACTION) | _ONE_BITS, jnp.float64)  # [1, 2)
    big = m >= _SQRT2
    return jnp.where(big, k + 1, k).astype(jnp.float64), jnp.where(big, 0.5 * m, m)


def _log_reduced(k: Array, f: Array, c: Array) -> Array:
    """``k ln 2 + log(1 + f) + c`` for ``sqrt(2)/2 <= 1 + f < sqrt(2)`` and a small correction ``c``."""
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
    t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
    half_square = 0.5 * f * f
    return k * _LN2_HI - ((half_square - (s * (half_square + t1 + t2) + (k * _LN2_LO + c))) - f)


def log1p(x: Array) -> Array:
    """``log(1 + x)`` for float64 ``x`` by straight-line arithmetic (module docstring); IEEE special values as ``log1p``."""
    x = jnp.asarray(x, jnp.float64)
    reduced = (x > 0.5 * _SQRT2 - 1.0) & (x < _SQRT2 - 1.0)  # 1 + x in [sqrt(2)/2, sqrt(2)): f = x, no rounding
    u = 1.0 + x
    k, m = _split(jnp.where(reduced | ~(u > 0.0) | (u == jnp.inf), 1.0, u))
    f = jnp.where(reduced, x, m - 1.0)
    k = jnp.where(reduced, 0.0, k)
    out = _log_reduced(k, f, jnp.zeros_like(x))
    out = jnp.where(x == 0.0, x, out)  # -0.0 stays -0.0
    out = jnp.where(x == jnp.inf, jnp.inf, out)
    out = jnp.where(x == -1.0, -jnp.inf, out)
    return jnp.where((x < -1.0) | jnp.isnan(x), jnp.nan, out)


def log(x: Array) -> Array:
    """``log(x)`` for float64 ``x`` by straight-line arithmetic (module docstring); IEEE special values as ``log``."""
    x = jnp.asarray(x, jnp.float64)
    k, m = _split(jnp.where((x > 0.0) & (x < jnp.inf), x, 1.0))
    out = _log_reduced(k, m - 1.0, jnp.zeros_like(x))
    out = jnp.where(x == jnp.inf, jnp.inf, out)
    out = jnp.where(x == 0.0, -jnp.inf, out)
    return jnp.where((x < 0.0) | jnp.isnan(x), jnp.nan, out)


_JIT = getattr(primitives, "jit_p", None) or getattr(primitives, "pjit_p", None)  # renamed in jax 0.7
_REPLACEMENTS: dict[Any, Callable[[Array], Array]] = {primitives.log1p_p: log1p, primitives.log_p: log}


def _replace(primitive: Any, x: Array, params: dict[str, Any]) -> Array:
    """The primitive on ``x`` as the straight-line form on CPU, the primitive itself elsewhere."""
    return lax.platform_dependent(x, cpu=_REPLACEMENTS[primitive], default=lambda v: primitive.bind(v, **params))


def _evaluate(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` on the current trace, float64 ``log``/``log1p`` replaced (inside calls too)."""
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        inputs = [read(v) for v in eqn.invars]
        primitive = eqn.primitive
        if (
            primitive in _REPLACEMENTS
            and getattr(eqn.outvars[0].aval, "dtype", None) == jnp.float64
            and eqn.params.get("accuracy") is None
        ):
            outputs = [_replace(primitive, inputs[0], eqn.params)]
        elif primitive is _JIT:
            closed: ClosedJaxpr = eqn.params["jaxpr"]
            outputs = _evaluate(closed.jaxpr, closed.consts, inputs)
        elif primitive is primitives.custom_jvp_call_p:
            closed = eqn.params["call_jaxpr"]
            outputs = _evaluate(closed.jaxpr, closed.consts, inputs)
        else:
            bind = primitive.get_bind_params(eqn.params)  # (subfunctions, params) before jax 0.7, params after
            subfuns, params = bind if isinstance(bind, tuple) else ((), bind)
            with eqn.ctx.manager:
                result = primitive.bind(*subfuns, *inputs, **params)
            outputs = result if primitive.multiple_results else [result]
        for var, value in zip(eqn.outvars, outputs, strict=True):
            env[var] = value
    return [read(v) for v in jaxpr.outvars]


def fast_logs(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its float64 ``log`` and ``log1p`` evaluated by :func:`log` / :func:`log1p` on CPU.

    The same function to within 2 ulp per logarithm; for evaluation only (module docstring): the
    result must not be differentiated. Traced anew at every call (a trace-time cost only).
    """

    @functools.wraps(fn)
    def rewritten(*args: Any) -> Any:
        closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
        outputs = _evaluate(closed.jaxpr, closed.consts, jax.tree.leaves(args))
        return jax.tree.unflatten(jax.tree.structure(shapes), outputs)

    return rewritten
