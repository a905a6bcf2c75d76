"""A fingerprint of what a bound reward program computes, to tell one program from another across processes.

A checkpoint records it (:class:`bayesbandit.Agent`), so loading with another program than the
one that produced the state is refused, while the same program built anew in another process is
accepted.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from typing import TYPE_CHECKING

import jax
import numpy as np

from bayesbandit._typing import Array
from bayesbandit.errors import PrecisionError

if TYPE_CHECKING:
    from bayesbandit.inference.potential import BoundModel

__all__ = ["program_fingerprint"]


def program_fingerprint(bound: BoundModel) -> str:
    """Hex SHA-256 identifying what a bound reward program computes, not which Python object it is.

    Two separately constructed programs that define the same model give the same fingerprint (so
    a checkpoint saved in one process can be checked against the program of another), and
    programs that differ in their prior, likelihood, sites or feature shape give different ones.

    The fingerprint hashes a JSON document with the binding's structure (``feature_shape``,
    ``obs_site``, ``site_names``, ``site_shapes``, ``support_name``, ``num_params``) and the
    program's numbers at fixed inputs: with ``numpy.random.default_rng(0)``, three parameter
    vectors ``theta ~ N(0, 0.5^2 I)`` (one ``(3, num_params)`` draw), then features ``x`` of shape
    ``(4, *feature_shape)`` uniform on [-1, 1], and rewards alternating between the two reference
    rewards; for each ``theta`` the potential ``U(theta; x, y)`` and the four mean rewards. The
    numbers are evaluated in float64 and rounded to 9 significant digits, so floating-point
    differences in the last bits (another machine, another XLA version) do not change the
    fingerprint; non-finite values are recorded as ``"nan"``, ``"inf"`` or ``"-inf"``.

    Parameters
    ----------
    bound : BoundModel
        A bound program, from :func:`bayesbandit.bind`.

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    PrecisionError
        If JAX's 64-bit mode is off: float32 numbers would give another fingerprint.

    Examples
    --------
    >>> import jax
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.inference.fingerprint import program_fingerprint
    >>> from bayesbandit.models import logistic
    >>> jax.config.update("jax_enable_x64", True)  # or bb.runtime.enable_x64()
    >>> a = program_fingerprint(bb.bind(logistic(prior_scale=2.0), np.zeros((2, 3))))
    >>> a == program_fingerprint(bb.bind(logistic(prior_scale=2.0), np.zeros((2, 3))))
    True
    >>> a == program_fingerprint(bb.bind(logistic(prior_scale=3.0), np.zeros((2, 3))))
    False
    """
    if not jax.config.read("jax_enable_x64"):
        raise PrecisionError(
            "program_fingerprint needs JAX's 64-bit mode (it evaluates the program in float64), but it is off. "
            "Fix: call bayesbandit.runtime.enable_x64() or jax.config.update('jax_enable_x64', True) (or set "
            "JAX_ENABLE_X64=1) first."
        )
    feature_shape = tuple(int(s) for s in bound.feature_shape)
    num_params = int(bound.num_params)
    rng = np.random.default_rng(0)
    thetas = rng.normal(0.0, 0.5, size=(3, num_params))
    x = rng.uniform(-1.0, 1.0, size=(4, *feature_shape))
    y0, y1 = (float(r) for r in bound.reference_rewards)
    y = np.array([y0, y1, y0, y1], dtype=np.float64)

    potentials: list[str] = []
    means: list[list[str]] = []
    for theta in thetas:
        potential, mean = (np.asarray(v, dtype=np.float64) for v in _numbers(bound, theta, x, y))
        potentials.append(_number(float(potential)))
        means.append([_number(float(v)) for v in np.broadcast_to(mean, (4,))])

    document = {
        "feature_shape": list(feature_shape),
        "mean_reward": means,
        "num_params": num_params,
        "obs_site": str(bound.obs_site),
        "potential": potentials,
        "site_names": [str(n) for n in bound.site_names],
        "site_shapes": {str(k): [int(s) for s in v] for k, v in bound.site_shapes.items()},
        "support_name": str(bound.support_name),
    }
    text = json.dumps(document, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@functools.partial(jax.jit, static_argnums=0)
def _numbers(bound: BoundModel, theta: Array, x: Array, y: Array) -> tuple[Array, Array]:
    """The potential ``U(theta; x, y)`` and the mean rewards at ``x``: one compiled program per binding."""
    return bound.potential(theta, x, y), bound.mean_reward(theta, x)


def _number(v: float) -> str:
    """``v`` to 9 significant digits; ``"nan"``, ``"inf"``, ``"-inf"`` if not finite; no ``-0``."""
    return f"{v + 0.0:.9g}" if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
