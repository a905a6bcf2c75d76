"""Floating-point precision: 64-bit mode is the user's choice.

Importing bayesbandit changes no global JAX setting. Arrays the toolkit creates use JAX's
default float (``float64`` when 64-bit mode is on, else ``float32``).

What needs float64, and why:

* **Newton's method and the Laplace factor** (:class:`bayesbandit.inference.DenseNewton`, hence
  GLM-TSL, GLM-FPL, GLM-UCB, UCB-GLM and epsilon-greedy with their default solver, and
  :func:`bayesbandit.map_estimate`, :func:`bayesbandit.laplace`,
  :func:`bayesbandit.perturbed_map`). Early in a bandit run the Hessian of the potential is
  nearly singular (few pulls, separable data under a weak prior: condition numbers of 1e8 and
  more), and the Newton decrement is tested against 1e-8 nats, below float32's resolution of a
  log joint of a few thousand nats. These raise :class:`bayesbandit.errors.PrecisionError` when
  64-bit mode is off instead of returning a silently wrong factor.
* **Nothing else.** The ridge policies (LinTS, LinUCB), the environments, the simulation loop and
  first-order solvers (:class:`bayesbandit.inference.FirstOrder`) run in either precision; the
  test suite runs LinTS and LinUCB in float32 and checks that they learn.

Turn 64-bit mode on once, before creating arrays::

    import bayesbandit as bb
    bb.runtime.enable_x64()

(or set the environment variable ``JAX_ENABLE_X64=1``). The ``bayesbandit`` command line does it
for its own process.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.errors import PrecisionError

__all__ = ["x64_enabled", "require_x64", "default_float"]


def x64_enabled() -> bool:
    """Whether JAX's 64-bit mode is on."""
    return bool(jax.config.read("jax_enable_x64"))


def require_x64(who: str) -> None:
    """Raise :class:`~bayesbandit.errors.PrecisionError` unless 64-bit mode is on.

    Parameters
    ----------
    who : str
        What needs float64, for the message (e.g. ``"DenseNewton"``).
    """
    if not x64_enabled():
        raise PrecisionError(
            f"{who} needs float64 (Newton's method and Cholesky factors of nearly singular Hessians), "
            "but JAX's 64-bit mode is off. Fix: call bayesbandit.runtime.enable_x64() (or set JAX_ENABLE_X64=1) "
            "before creating arrays, or use a first-order solver (bayesbandit.inference.FirstOrder) "
            "with a policy that does not need a Hessian."
        )


def default_float() -> np.dtype:
    """JAX's default floating dtype: ``float64`` in 64-bit mode, else ``float32``."""
    return np.dtype(jnp.result_type(float))
