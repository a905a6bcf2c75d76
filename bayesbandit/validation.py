"""Validation at public boundaries (outside ``jit``), with messages that say how to fix the input.

Every check raises :class:`bayesbandit.errors.InvalidInput` (a ``ValueError``) whose message
names the argument and its owner, what was expected, what was given, and the fix, in
scikit-learn's wording::

    The 'a' parameter of GLMTSL must be a float in the range (0, inf). Got -1 instead.

Callers run every check before touching any state. Checks on hyper-parameters skip JAX tracers,
so a policy built inside ``vmap`` (a sweep over ``a``) still works.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import numpy as np

from bayesbandit.errors import InvalidInput, UnknownArm

__all__ = [
    "check_key",
    "check_scalar",
    "check_int",
    "check_choice",
    "check_names",
    "check_arms",
    "check_action",
    "check_feedback",
    "check_item_ids",
    "support_hull",
    "MAX_ABS",
]

UNCHANGED = "the agent state was not changed"

MAX_ABS = 1e12
"""Largest magnitude of a reward or a feature the Agent accepts.

Not a support check: the range in which a policy's float64 state stays exact enough for its
solver. Sums of a million rewards of this size stay below 1e18 (integers are exact to 9e15, and
relative precision 1e-16 leaves the Newton decrement meaningful), and ``x^T theta`` stays far from
overflow in ``exp`` for any fitted ``theta``. A reward of 1e300 to a Poisson or Gaussian model,
accepted, would leave inf in the state for good; rescale such data instead.
"""


def check_scalar(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Check a real hyper-parameter lies in an interval; tracers pass unchecked.

    ``high = inf`` admits ``inf`` itself unless ``high_open``; NaN never passes.
    """
    if isinstance(value, jax.core.Tracer):
        return
    numeric = isinstance(value, int | float | np.integer | np.floating) or (
        isinstance(value, np.ndarray | jax.Array) and np.ndim(value) == 0
    )
    ok = numeric and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = not math.isnan(v) and (math.isfinite(v) or (v == math.inf and high == math.inf and not high_open))
        ok = ok and low <= v <= high and not (low_open and v == low) and not (high_open and v == high)
    if not ok:
        lo = "(" if low_open else "["
        hi = ")" if high_open or math.isinf(high) else "]"
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be a float in the range {lo}{low:g}, {high:g}{hi}. "
            f"Got {value!r} instead. Fix: pass {name}= a number in that range."
        )


def check_int(owner: str, name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer in ``[low, high]``."""
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    ok = ok and value >= low and (high is None or value <= high)
    if not ok:
        upper = "inf)" if high is None else f"{high}]"
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be an int in the range [{low}, {upper}. Got {value!r} instead. "
            f"Fix: pass {name}= a whole number in that range."
        )
    return int(value)


def check_compiler_options(owner: str, value: Any) -> dict[str, Any] | None:
    """Return ``value``, XLA options for a compiled run (``{"xla_backend_optimization_level": 0}``), as a dict
    with string keys, or None."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidInput(
            f"The 'compiler_options' parameter of {owner} must be a dict of XLA options or None. Got {value!r} "
            "instead. Fix: pass a dict such as {'xla_backend_optimization_level': 0}, or omit it."
        )
    return dict(value)


def check_choice(owner: str, name: str, value: Any, choices: Sequence[Any]) -> Any:
    """Return ``value`` after checking it is one of ``choices``."""
    if isinstance(value, str | int | float | bool | type(None)) and value in choices:
        return value
    options = ", ".join(repr(c) for c in choices)
    raise InvalidInput(
        f"The '{name}' parameter of {owner} must be one of {{{options}}}. Got {value!r} instead. "
        f"Fix: pass {name}= one of those."
    )


def check_names(owner: str, name: str, value: Any, known: Sequence[str]) -> tuple[str, ...]:
    """Return ``value`` as a tuple after checking it is a non-empty list of names from ``known``.

    A bare string is refused rather than read as its characters (``"draws"`` is not
    ``["d", "r", ...]``), and so is an empty list, which would select nothing.
    """
    is_list = isinstance(value, Sequence) and not isinstance(value, str)
    given = tuple(value) if is_list else ()
    if given and all(isinstance(item, str) and item in known for item in given):
        return given
    unknown = [item for item in given if item not in known]
    why = f"{unknown} name nothing" if unknown else "it is not a non-empty list"
    raise InvalidInput(
        f"The '{name}' parameter of {owner} must be a non-empty list of names from {list(known)}. "
        f"Got {value!r} instead ({why}). Fix: pass e.g. {name}=[{known[0]!r}]."
    )


def check_arms(
    arms: Any,
    *,
    name: str = "arms",
    dim: int | None = None,
    dtype: Any = np.float64,
    unchanged: str | None = UNCHANGED,
) -> np.ndarray:
    """Return an arm set as a ``(K, d)`` array after checking rank, dimension, size and finiteness.

    Parameters
    ----------
    arms : array-like, shape (K, d)
    name : str
        The argument's name in messages.
    dim : int, optional
        The feature dimension the caller was set up for.
    dtype : dtype
        Dtype of the returned array.
    unchanged : str, optional
        Appended to messages (what the caller guarantees was not modified).
    """
    tail = "" if unchanged is None else f"; {unchanged}"
    try:
        arr = np.asarray(arms, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"{name} must be a numeric array of shape (K, d); got {type(arms).__name__}. "
            f"Fix: pass one row of numeric features per arm{tail}."
        ) from exc
    if arr.ndim != 2:
        raise InvalidInput(
            f"{name} must have shape (K, d), one row of features per arm; got shape {arr.shape}. "
            f"Fix: pass a 2-d array (use x[None, :] for a single arm){tail}."
        )
    if dim is not None and arr.shape[1] != dim:
        raise InvalidInput(
            f"{name} has feature dimension {arr.shape[1]} but the policy was set up for d={dim}. "
            f"Fix: pass arms of shape (K, {dim}){tail}."
        )
    if 0 in arr.shape:
        raise InvalidInput(f"{name} is an empty arm set (shape {arr.shape}): there is nothing to choose{tail}.")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInput(
            f"{name} contains a non-finite value ({arr[tuple(bad)]}) at index {tuple(int(i) for i in bad)}; "
            f"every feature must be finite{tail}."
        )
    if np.abs(arr).max() > MAX_ABS:
        bad = np.unravel_index(np.argmax(np.abs(arr)), arr.shape)
        raise InvalidInput(
            f"{name} contains {arr[bad]:g} at index {tuple(int(i) for i in bad)}, beyond the numeric range the "
            f"policies represent exactly (|x| <= {MAX_ABS:g}). Fix: rescale the features{tail}."
        )
    return arr


def check_action(
    action: Any,
    num_arms: int,
    *,
    shape: tuple[int, ...] = (),
    count: int | None = None,
    unchanged: str = UNCHANGED,
) -> np.ndarray:
    """Return an action (or ``count`` actions) as an int array after checking shape and range.

    Parameters
    ----------
    action : int or array of int
        An arm index (``shape == ()``) or ``k`` distinct arm indices (``shape == (k,)``); with
        ``count``, an array of ``count`` such actions, shape ``(count, *shape)``.
    num_arms : int
        Size ``K`` of the arm set the action indexes.
    shape : tuple of int
        The shape of the policy's actions.
    count : int, optional
        How many actions ``action`` holds (``Agent.update_many``); ``None`` for one action.
    """
    if count is None and shape == () and isinstance(action, int | np.integer) and not isinstance(action, bool):
        if 0 <= action < num_arms:  # the common case, a plain index (what select returned), checked cheaply
            return np.asarray(action, dtype=np.int64)
    expected = "an integer arm index" if shape == () else f"{shape[0]} distinct integer arm indices"
    if count is not None:
        expected = f"an array of shape {(count, *shape)}, each row {expected}"
    raw = np.asarray(action)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            index = raw.astype(np.int64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInput(f"action must be {expected} in [0, {num_arms}); got {action!r}; {unchanged}.") from exc
    if (
        raw.shape != (shape if count is None else (count, *shape))
        or raw.dtype.kind not in "iuf"
        or not np.array_equal(index, raw)
        or np.any(index < 0)
        or np.any(index >= num_arms)
        or (shape != () and np.any(np.diff(np.sort(index.reshape(-1, shape[0]), axis=1), axis=1) == 0))
    ):
        raise InvalidInput(
            f"action must be {expected} in [0, {num_arms}) (what select returned); got {action!r}; {unchanged}."
        )
    return index


def support_hull(support: Any) -> tuple[float, float]:
    """The smallest interval holding a support: where averages of rewards (per-arm means) may lie.

    ``[0, 1]`` for ``{0, 1}``, ``[lower, upper]`` for interval and integer supports, ``[0, inf)``
    for non-negative ones, the real line otherwise.
    """
    from numpyro.distributions import constraints

    if support is constraints.boolean:
        return 0.0, 1.0
    lower = getattr(support, "lower_bound", -math.inf)
    upper = getattr(support, "upper_bound", math.inf)
    try:
        return float(np.asarray(lower)), float(np.asarray(upper))
    except (TypeError, ValueError):  # bounds that are arrays (per-row): no common hull
        return -math.inf, math.inf


@functools.cache
def _common_supports() -> tuple[Any, Any]:
    """NumPyro's real-line and Boolean constraints (imported on first use, as :func:`support_hull` does)."""
    from numpyro.distributions import constraints

    return constraints.real, constraints.boolean


def _in_support(support: Any, number: float) -> bool:
    """Whether ``support`` (a NumPyro constraint, or None for the real line) holds ``number``."""
    real, boolean = _common_supports()
    if support is None or support is real:
        return True
    if support is boolean:  # the Bernoulli's, the most common: two comparisons, not a constraint call
        return number == 0.0 or number == 1.0
    try:
        return bool(support.check(number))
    except (TypeError, ValueError):  # a constraint that needs an array: the caller's array path decides
        return False


def check_feedback(
    feedback: Any,
    support: Any,
    support_name: str,
    *,
    shape: tuple[int, ...] = (),
    unchanged: str = UNCHANGED,
) -> np.ndarray:
    """Return feedback as a float64 array after checking shape, finiteness and support.

    Parameters
    ----------
    feedback : float or array
        A reward (``shape == ()``) or one reward per arm of a k-subset (``shape == (k,)``).
    support : numpyro constraint or None
        Where rewards may lie (``None``: any real number).
    support_name : str
        Human-readable support, e.g. ``"Bernoulli: {0, 1}"``.
    shape : tuple of int
        The action's shape.
    """
    if shape == () and isinstance(feedback, float | int | np.floating | np.integer):
        # The common case, one number, checked in Python (a constraint's check on a float is
        # arithmetic and comparisons); anything unusual takes the array path below.
        number = float(feedback)
        if math.isfinite(number) and abs(number) <= MAX_ABS and _in_support(support, number):
            return np.asarray(number)
    try:
        value = np.asarray(feedback, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"reward must be a real number; got {feedback!r}; {unchanged}.") from exc
    if value.shape != shape:
        what = "a scalar reward" if shape == () else f"one reward per chosen arm, shape {shape}"
        raise InvalidInput(f"reward must be {what}; got shape {value.shape}; {unchanged}.")
    if not np.isfinite(value).all():
        raise InvalidInput(f"reward {feedback!r} is not finite; pass a finite number; {unchanged}.")
    if np.abs(value).max() > MAX_ABS:
        raise InvalidInput(
            f"reward {feedback!r} is beyond the numeric range the policies represent exactly (|reward| <= "
            f"{MAX_ABS:g}). Fix: rescale the rewards (e.g. to thousands); {unchanged}."
        )
    if support is not None and not bool(np.all(np.asarray(support.check(value)))):
        raise InvalidInput(
            f"reward {feedback!r} lies outside the support of the reward model ({support_name}). "
            f"Fix: pass a reward the model can produce, or use a model whose likelihood has this support; "
            f"{unchanged}."
        )
    return value


def check_item_ids(
    items: Any, held: Callable[[np.ndarray], np.ndarray], *, count: int | None = None, unchanged: str = UNCHANGED
) -> np.ndarray:
    """Return catalogue item ids (one, or ``count`` of them) as int64 after checking type and membership.

    Parameters
    ----------
    items : int or array of int
        An item id (``count is None``) or an array of ``count`` ids, as ``select`` returned them.
    held : callable
        ``held(ids)``: whether each id is in the catalogue now, a boolean array.
    count : int, optional
        How many ids ``items`` holds (``Agent.update_many``); ``None`` for one.

    Raises
    ------
    InvalidInput
        ``items`` is not an integer id (or an array of ``count`` of them).
    UnknownArm
        An id is not in the catalogue (never added, or removed since).
    """
    raw = np.asarray(items)
    shape = () if count is None else (count,)
    if isinstance(items, bool) or raw.shape != shape or raw.dtype.kind not in "iu":
        expected = "an integer item id" if count is None else f"an integer array of {count} item ids"
        raise InvalidInput(f"item must be {expected} (what select returned); got {items!r}; {unchanged}.")
    ids = raw.astype(np.int64)
    missing = ids.reshape(-1)[~held(ids.reshape(-1))]
    if missing.size:
        raise UnknownArm(
            f"items {missing[:5].tolist()} are not in the catalogue (never added, or removed since). Fix: update "
            f"items that select returned and that are still held; {unchanged}."
        )
    return ids


def check_key(owner: str, value: Any) -> None:
    """``value`` (the ``key`` argument of ``owner``) is a JAX PRNG key: a typed key of shape ``()`` or raw ``uint32`` key data (traced keys pass)."""
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    typed = dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) and shape == ()
    raw = dtype == np.uint32 and shape is not None and len(shape) == 1
    if not (isinstance(value, jax.Array | np.ndarray) and (typed or raw)):
        raise InvalidInput(
            f"{owner}: the 'key' argument must be one JAX PRNG key. Got {type(value).__name__} {value!r} instead. "
            "Fix: pass jax.random.key(seed) (or jax.random.PRNGKey(seed))."
        )
