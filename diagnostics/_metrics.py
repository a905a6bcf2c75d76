"""Distances between an approximate posterior and the NUTS reference, on arrays.

All functions work on flat *unconstrained* draws of shape ``(num_draws, p)`` (chains pooled):
the space in which Laplace is Gaussian and NUTS samples. ArviZ 0.23 (what Python 3.11 installs)
has no ``kl_divergence`` / ``wasserstein`` (those live in arviz-stats for ArviZ 1.x), so they are
written here in the same array-first style.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.stats

from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_scalar

__all__ = ["fit_gaussian", "gaussian_kl", "marginal_w1", "interval_coverage"]


def _draws(owner: str, name: str, draws: Any, *, min_draws: int = 1, p: int | None = None) -> np.ndarray:
    """``draws`` as a finite float64 array of shape ``(num_draws, p)`` with at least ``min_draws`` rows."""
    try:
        arr = np.asarray(draws, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"{owner}: '{name}' must be a numeric array of shape (num_draws, p). Got {type(draws).__name__}. "
            "Fix: pass the draws as a float array."
        ) from exc
    if arr.ndim != 2 or arr.shape[0] < min_draws or arr.shape[1] == 0 or (p is not None and arr.shape[1] != p):
        want = "p" if p is None else str(p)
        raise InvalidInput(
            f"{owner}: '{name}' must have shape (num_draws, {want}) with num_draws >= {min_draws}. Got shape "
            f"{arr.shape}. Fix: pool the chains, draws.reshape(-1, p), and pass at least {min_draws} draws."
        )
    if not np.all(np.isfinite(arr)):
        row = int(np.argwhere(~np.isfinite(arr))[0][0])
        raise InvalidInput(
            f"{owner}: '{name}' must be finite. Got a non-finite value in draw {row}. Fix: drop the draws of "
            "failed fits (NaN or inf) first."
        )
    return arr


def moments(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and unbiased covariance of ``(num_draws, p)`` draws, unchecked (NaN when they are not finite)."""
    draws = np.asarray(draws, dtype=np.float64)
    return draws.mean(axis=0), np.atleast_2d(np.cov(draws, rowvar=False, ddof=1))


def fit_gaussian(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Moment-matched Gaussian ``N(m, S)`` of a sample.

    Parameters
    ----------
    draws : array, shape (num_draws, p)

    Returns
    -------
    mean : array, shape (p,)
    cov : array, shape (p, p)
        Unbiased sample covariance (``ddof=1``).

    Raises
    ------
    InvalidInput
        ``draws`` is not a finite array of shape ``(num_draws, p)`` with at least two draws.
    """
    return moments(_draws("fit_gaussian", "draws", draws, min_draws=2))


def gaussian_kl(mean0: np.ndarray, cov0: np.ndarray, mean1: np.ndarray, cov1: np.ndarray) -> float:
    """KL divergence between two Gaussians, ``KL(N(m0, S0) || N(m1, S1))``.

    .. math::

        \\mathrm{KL} = \\tfrac12 \\left[ \\operatorname{tr}(S_1^{-1} S_0)
            + (m_1 - m_0)^\\top S_1^{-1} (m_1 - m_0) - p
            + \\log\\det S_1 - \\log\\det S_0 \\right],

    computed with Cholesky factors (no explicit inverse). Returns ``inf`` when ``S0`` or ``S1``
    is not positive definite (a Gaussian without density in some direction).

    Parameters
    ----------
    mean0, mean1 : array, shape (p,)
    cov0, cov1 : array, shape (p, p)

    Raises
    ------
    InvalidInput
        The shapes disagree, or an input is not finite.
    """
    arrays = []
    for name, value in (("mean0", mean0), ("cov0", cov0), ("mean1", mean1), ("cov1", cov1)):
        try:
            arrays.append(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise InvalidInput(
                f"gaussian_kl: '{name}' must be a numeric array. Got {type(value).__name__}. Fix: pass floats."
            ) from exc
    m0, s0, m1, s1 = arrays
    p = m0.shape[0] if m0.ndim == 1 else -1
    shapes = {"mean0": m0.shape, "cov0": s0.shape, "mean1": m1.shape, "cov1": s1.shape}
    if p < 1 or m1.shape != (p,) or s0.shape != (p, p) or s1.shape != (p, p):
        raise InvalidInput(
            f"gaussian_kl: the means must have shape (p,) and the covariances (p, p) for one p >= 1. Got {shapes}. "
            "Fix: pass the two Gaussians in the same p parameters."
        )
    for name, arr in zip(shapes, arrays, strict=True):
        if not np.all(np.isfinite(arr)):
            raise InvalidInput(
                f"gaussian_kl: '{name}' must be finite. Got NaN or inf. Fix: summarise finite draws only "
                "(fit_gaussian refuses non-finite ones)."
            )
    try:
        l1 = scipy.linalg.cholesky(s1, lower=True)
        l0 = scipy.linalg.cholesky(s0, lower=True)
    except np.linalg.LinAlgError:
        return float("inf")
    a = scipy.linalg.solve_triangular(l1, l0, lower=True)  # L1^-1 L0: tr(S1^-1 S0) = ||A||_F^2
    b = scipy.linalg.solve_triangular(l1, m1 - m0, lower=True)
    logdet = 2.0 * (np.sum(np.log(np.diag(l1))) - np.sum(np.log(np.diag(l0))))
    return float(0.5 * (np.sum(a**2) + np.sum(b**2) - p + logdet))


def marginal_w1(reference: np.ndarray, approx: np.ndarray) -> np.ndarray:
    """Wasserstein-1 distance between the empirical marginals of two samples, per parameter.

    ``W1(P_j, Q_j) = int |F_j(t) - G_j(t)| dt`` (:func:`scipy.stats.wasserstein_distance`), in
    the units of parameter ``j``.

    Parameters
    ----------
    reference : array, shape (n0, p)
    approx : array, shape (n1, p)

    Returns
    -------
    array, shape (p,)

    Raises
    ------
    InvalidInput
        A sample is not a finite ``(n, p)`` array, or the two differ in ``p``.
    """
    reference = _draws("marginal_w1", "reference", reference)
    approx = _draws("marginal_w1", "approx", approx, p=reference.shape[1])
    return np.array(
        [scipy.stats.wasserstein_distance(reference[:, j], approx[:, j]) for j in range(reference.shape[1])]
    )


def interval_coverage(reference: np.ndarray, approx: np.ndarray, *, prob: float = 0.9) -> np.ndarray:
    """Fraction of reference draws inside the approximation's central ``prob`` interval, per parameter.

    The interval of parameter ``j`` is ``[q_j((1 - prob)/2), q_j((1 + prob)/2)]``, the empirical
    quantiles of ``approx[:, j]``. A calibrated approximation covers ``prob`` of the reference
    draws; less means too narrow (or shifted) intervals, more means too wide.

    Parameters
    ----------
    reference : array, shape (n0, p)
    approx : array, shape (n1, p)
    prob : float in (0, 1)

    Returns
    -------
    array, shape (p,)

    Raises
    ------
    InvalidInput
        A sample is not a finite ``(n, p)`` array, the two differ in ``p``, or ``prob`` is not in ``(0, 1)``.
    """
    check_scalar("interval_coverage", "prob", prob, low=0.0, high=1.0, low_open=True, high_open=True)
    reference = _draws("interval_coverage", "reference", reference)
    approx = _draws("interval_coverage", "approx", approx, p=reference.shape[1])
    lo, hi = np.quantile(approx, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return np.mean((reference >= lo) & (reference <= hi), axis=0)
