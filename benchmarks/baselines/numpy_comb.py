"""Plain NumPy combinatorial semi-bandit policies (C2UCB, PC2UCB, arm-wise TS, round-wise TS), the baseline of
``bench_comb``: per run, per block, a Cholesky factor, triangular solves for the estimate and the widths, scores,
``argpartition`` per block for the top-k, and the rank-k update. The textbook vectorised implementation a
practitioner writes with NumPy and SciPy, one run at a time."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular


def scores(kind: str, chol: np.ndarray, b: np.ndarray, arms: np.ndarray, rng: np.random.Generator, param: float):
    """``(M, N)`` scores of one run: ``kind`` in {"c2ucb", "pc2ucb", "arm_ts", "round_ts"}."""
    out = np.empty((chol.shape[0], arms.shape[0]))
    for j, factor in enumerate(chol):
        theta = cho_solve((factor, True), b[j])
        mean = arms @ theta
        if kind == "round_ts":
            sample = theta + param * solve_triangular(factor, rng.standard_normal(theta.size), lower=True, trans="T")
            out[j] = arms @ sample
            continue
        width = np.linalg.norm(solve_triangular(factor, arms.T, lower=True), axis=0)
        if kind == "c2ucb":
            out[j] = mean + param * width
        elif kind == "pc2ucb":
            out[j] = mean + (1.0 + rng.random(width.size)) * param * width
        else:
            out[j] = mean + param * width * rng.standard_normal(width.size)
    return out


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Lifted indices ``j N + i`` of each block's ``k`` best."""
    n = scores.shape[1]
    picks = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    return (picks + n * np.arange(scores.shape[0])[:, None]).ravel()


def play_round(kind, precision, b, arms, theta_star, rng, param, k):
    """One round of one run in place: select, observe Gaussian rewards, update ``precision`` and ``b``."""
    chol = np.linalg.cholesky(precision)
    action = top_k(scores(kind, chol, b, arms, rng, param), k)
    block, arm = np.divmod(action, arms.shape[0])
    x = arms[arm]
    reward = np.einsum("ad,ad->a", x, theta_star[block]) + 0.1 * rng.standard_normal(action.size)
    for j in range(precision.shape[0]):
        rows = x[block == j]
        precision[j] += rows.T @ rows
        b[j] += rows.T @ reward[block == j]
