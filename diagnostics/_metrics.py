"""Distances between an approximate posterior and the NUTS reference, on arrays.

All functions work on flat *unconstrained* draws of shape ``(num_draws, p)`` (chains pooled):
the space in which Laplace is Gaussian and NUTS samples. ArviZ 0.23 (what Python 3.11 installs)
has no ``kl_divergence`` / ``wasserstein`` (those live in arviz-stats for ArviZ 1.x), so they are
written here in the same array-first style.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.stats

__all__ = ["fit_gaussian", "gaussian_kl", "marginal_w1", "interval_coverage"]


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
    """
    draws = np.asarray(draws, dtype=np.float64)
    mean = draws.mean(axis=0)
    cov = np.atleast_2d(np.cov(draws, rowvar=False, ddof=1))
    return mean, cov


def gaussian_kl(mean0: np.ndarray, cov0: np.ndarray, mean1: np.ndarray, cov1: np.ndarray) -> float:
    """KL divergence between two Gaussians, ``KL(N(m0, S0) || N(m1, S1))``.

    .. math::

        \\mathrm{KL} = \\tfrac12 \\left[ \\operatorname{tr}(S_1^{-1} S_0)
            + (m_1 - m_0)^\\top S_1^{-1} (m_1 - m_0) - p
            + \\log\\det S_1 - \\log\\det S_0 \\right],

    computed with Cholesky factors (no explicit inverse). Returns ``inf`` when ``S1`` is not
    positive definite and ``nan`` when an input is not finite.

    Parameters
    ----------
    mean0, mean1 : array, shape (p,)
    cov0, cov1 : array, shape (p, p)
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in (mean0, cov0, mean1, cov1)]
    if not all(np.all(np.isfinite(a)) for a in arrays):
        return float("nan")
    m0, s0, m1, s1 = arrays
    p = m0.shape[0]
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
    """
    reference, approx = np.asarray(reference), np.asarray(approx)
    return np.array(
        [scipy.stats.wasserstein_distance(reference[:, j], approx[:, j]) for j in range(reference.shape[1])]
    )


def interval_coverage(reference: np.ndarray, approx: np.ndarray, prob: float = 0.9) -> np.ndarray:
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
    """
    lo, hi = np.quantile(np.asarray(approx), [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    reference = np.asarray(reference)
    return np.mean((reference >= lo) & (reference <= hi), axis=0)
