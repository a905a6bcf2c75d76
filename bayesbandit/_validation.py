"""Validation at public boundaries (outside jit), with messages that name the input.

Each check raises :class:`bayesbandit.errors.InvalidInput` saying what is wrong, which argument,
what was expected and what was got. Callers run every check before touching any state.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

from bayesbandit.errors import InvalidInput

_UNCHANGED = "the agent state was not changed."


def is_concrete(value: Any) -> bool:
    """Whether ``value`` is a concrete number (not a JAX tracer or a pytree placeholder)."""
    if isinstance(value, jax.core.Tracer):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def check_scalar(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> None:
    """Check a hyper-parameter lies in an interval; skip tracers so policies still vmap.

    The message follows one shape: ``The 'a' parameter of GLMTSL must be a float in the range
    (0, inf). Got -1 instead.``
    """
    if not is_concrete(value):
        return
    v = float(value)
    bad = not math.isfinite(v) and not (math.isinf(high) and v == math.inf and not high_open)
    bad = bad or v < low or v > high or (low_open and v == low) or (high_open and v == high)
    bad = bad or (integer and v != int(v))
    if bad:
        kind = "an int" if integer else "a float"
        lo = "(" if low_open else "["
        hi = ")" if high_open or math.isinf(high) else "]"
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be {kind} in the range {lo}{low}, {high}{hi}. Got {value!r} instead."
        )


def check_features(x: Any, name: str, *, ndim: int, dim: int | None = None, allow_empty: bool = False) -> np.ndarray:
    """Return ``x`` as a float64 array after checking rank, trailing dimension and finiteness."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be a numeric array; got {type(x).__name__}; {_UNCHANGED}") from exc
    if arr.ndim != ndim:
        shape = "(d,)" if ndim == 1 else "(K, d)"
        raise InvalidInput(f"{name} must have shape {shape}; got shape {arr.shape}; {_UNCHANGED}")
    if dim is not None and arr.shape[-1] != dim:
        raise InvalidInput(
            f"{name} has feature dimension {arr.shape[-1]} but the policy was set up for d={dim}; {_UNCHANGED}"
        )
    if ndim == 2 and arr.shape[0] == 0 and not allow_empty:
        raise InvalidInput(f"{name} is an empty arm set (shape {arr.shape}): there is nothing to choose; {_UNCHANGED}")
    if not np.isfinite(arr.sum()):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInput(
            f"{name} contains a non-finite value ({arr[tuple(bad)]}) at index {tuple(int(i) for i in bad)}; {_UNCHANGED}"
        )
    return arr


def check_arm(arm: Any, num_arms: int) -> int:
    """Return ``arm`` as an int in ``[0, num_arms)``."""
    try:
        index = int(np.asarray(arm))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"arm must be an integer index; got {arm!r}; {_UNCHANGED}") from exc
    if np.asarray(arm).ndim != 0 or index != np.asarray(arm) or not 0 <= index < num_arms:
        raise InvalidInput(f"arm {arm!r} is not an arm index: expected an integer in [0, {num_arms}); {_UNCHANGED}")
    return index


def check_reward(reward: Any, support: Any, support_name: str, obs_site: str, arm: Any = None) -> float:
    """Return ``reward`` as a float after checking it is finite and inside the observed site's support."""
    try:
        value = float(np.asarray(reward, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"reward must be a real number; got {reward!r}; {_UNCHANGED}") from exc
    where = "" if arm is None else f" for arm {arm}"
    if not math.isfinite(value):
        raise InvalidInput(f"reward {value}{where} is not finite; {_UNCHANGED}")
    if support is not None and not bool(np.asarray(support.check(np.asarray(value)))):
        raise InvalidInput(
            f"reward {value:g}{where} lies outside the support of observed site '{obs_site}' "
            f"({support_name}); {_UNCHANGED}"
        )
    return value
