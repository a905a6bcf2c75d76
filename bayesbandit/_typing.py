"""Type aliases shared across bayesbandit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import jax

Array = jax.Array
ArrayLike = jax.typing.ArrayLike
PRNGKey = jax.Array
PyTree = Any
Model = Callable[..., None]
"""A NumPyro program ``model(x, y=None)`` (see :func:`bayesbandit.bind`)."""

__all__ = ["Array", "ArrayLike", "PRNGKey", "PyTree", "Model", "Optional"]
