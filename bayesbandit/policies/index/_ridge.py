"""Host-side ridge statistics for the index-backed linear bandits (NumPy, float64).

With ridge 1 (Yang et al., eq. (1)): ``V_t = I + sum_{s<t} x_s x_s^T``, ``b_t = sum_{s<t} r_s x_s``,
``theta_t = V_t^{-1} b_t``. ``V_t^{-1}`` is kept directly and updated by Sherman-Morrison,

.. math::  (V + x x^T)^{-1} = V^{-1} - \\frac{V^{-1} x x^T V^{-1}}{1 + x^T V^{-1} x},

so a round costs ``O(d^2)`` whatever the number of arms; ``theta`` is recomputed as
``V^{-1} b`` (``O(d^2)``) rather than updated, so rounding errors do not accumulate in it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["RidgeStats", "confidence_radius"]


def confidence_radius(d: int, horizon: int, delta: float) -> float:
    """``beta(delta) = 1 + sqrt(2 log(1/delta) + d log(1 + T/d))`` (Abbasi-Yadkori et al. 2011, Thm. 2).

    The radius of Yang et al. (sec. 5, Lemma B.2) for ``||theta* || <= 1`` and 1-sub-Gaussian noise.
    Sub-Elim uses ``beta(delta / 2)``, Sub-TS ``beta(delta / (4 T))`` (Alg. 3 line 3, Alg. 4 line 2).

    >>> round(confidence_radius(16, 20_000, 0.05), 2)
    11.96
    """
    return 1.0 + math.sqrt(2.0 * math.log(1.0 / delta) + d * math.log(1.0 + horizon / d))


class RidgeStats:
    """``V^{-1}``, ``b`` and ``theta = V^{-1} b`` of ridge regression with ``lambda = 1``."""

    def __init__(self, d: int) -> None:
        self.v_inv = np.eye(d)
        self.b = np.zeros(d)
        self.theta = np.zeros(d)
        self.t = 0

    @property
    def d(self) -> int:
        return self.b.shape[0]

    def update(self, x: np.ndarray, reward: float) -> None:
        """Add the observation ``(x, reward)``: ``O(d^2)``."""
        vx = self.v_inv @ x
        self.v_inv -= np.outer(vx, vx) / (1.0 + x @ vx)
        self.b += reward * x
        self.theta = self.v_inv @ self.b
        self.t += 1

    def sample(self, beta: float, xi: np.ndarray) -> np.ndarray:
        """``theta + beta V^{-1/2} xi`` with ``V^{-1/2}`` the Cholesky factor of ``V^{-1}`` (Alg. 4 line 8).

        Any square root of ``V^{-1}`` gives the same distribution; the Cholesky factor is the one
        used by every policy here, so twins draw the same sample from the same ``xi``.
        """
        return self.theta + beta * (np.linalg.cholesky(self.v_inv) @ xi)

    def uncertainty(self, x: np.ndarray) -> np.ndarray:
        """``||x_a||_{V^{-1}}`` for the rows of ``x`` (``O(n d^2)``, one matrix product)."""
        return np.sqrt(np.maximum(np.einsum("ij,ij->i", x @ self.v_inv, x), 0.0))
