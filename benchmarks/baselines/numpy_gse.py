"""GSE (Azizi, Kveton and Ghavamzadeh 2022, Alg. 1) in plain NumPy, written the way a researcher would.

One replication is a Python loop over ``s = ceil(log2 K)`` stages; the replications are a Python
loop too (:func:`run`). Stage ``t`` (``A_1`` = all arms, stage budgets ``floor(B/s)`` with the
``B mod s`` leftover pulls one each to the last stages, as ``bayesbandit.bai.GSE``):

1. shuffles the survivors (so ties in the design and the rounding go at random) and projects them
   onto their span: SVD ``X = U S V^T``, ``r = #{s_j > 1e-10 s_max}``, ``Z = X V[:, :r]``;
2. computes the G-optimal design of ``Z`` by Frank-Wolfe with Wolfe-Atwood away steps on the
   D-criterion from the uniform design, with ``np.linalg.inv(V(pi))`` each iteration, until
   ``g = max_i z_i^T V^{-1} z_i <= 1.01 r`` (:func:`fw_away`);
3. rounds it to exactly the stage budget by efficient apportionment (Pukelsheim and Rieder 1992,
   :func:`efficient_rounding`, the rules of ``bayesbandit.design.efficient_rounding``);
4. draws one Gaussian reward per pull (``mu_arm + sqrt(noise_var) N(0, 1)``, one vectorised
   ``rng.standard_normal`` call per stage) and fits OLS on this stage's rows by
   ``np.linalg.lstsq`` (the minimum-norm solution when a stage leaves directions unobserved);
5. keeps the ``ceil(|A_t|/2)`` arms of largest estimate, ties broken at random.

The other allocations of ``bayesbandit.bai.GSE`` are not here: this is the baseline of the default
``GSE(allocation="g-optimal")``. The random numbers are NumPy's, so runs agree with bayesbandit's in
distribution (accuracy), not draw by draw.
"""

from __future__ import annotations

import numpy as np

__all__ = ["project", "fw_away", "efficient_rounding", "identify", "run"]


def project(x: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Coordinates of the arms ``x`` (k, d) in an orthonormal basis of their span, shape (k, rank)."""
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    rank = int(np.sum(s > rtol * s[0]))
    return x @ vt[:rank].T


def fw_away(z: np.ndarray, tol: float = 0.01, max_iter: int = 100_000) -> tuple[np.ndarray, int]:
    """G-optimal design of ``z`` (k, d) spanning ``R^d``: (weights, iterations).

    Each iteration: ``g_i = z_i^T V(pi)^{-1} z_i``; the toward step to ``j+ = argmax g`` with
    ``gamma = (g+/d - 1)/(g+ - 1)``, or, when the support arm ``j-`` of smallest ``g`` lies further
    below ``d`` than ``g+`` lies above it, the away step from ``j-`` with
    ``gamma = min((1 - g-/d)/(g- - 1), pi-/(1 - pi-))`` (Todd and Yildirim 2007).
    """
    k, d = z.shape
    w = np.full(k, 1.0 / k)
    for it in range(max_iter + 1):
        g = np.sum((z @ np.linalg.inv((z.T * w) @ z)) * z, axis=1)
        j_plus = int(np.argmax(g))
        g_plus = g[j_plus]
        if g_plus <= (1.0 + tol) * d or it == max_iter:
            return w, it
        g_support = np.where(w > 0, g, np.inf)
        j_minus = int(np.argmin(g_support))
        g_minus, pi_minus = g_support[j_minus], w[j_minus]
        if d - g_minus > g_plus - d and pi_minus < 1.0:
            gamma = min((1.0 - g_minus / d) / max(g_minus - 1.0, 1e-12), pi_minus / (1.0 - pi_minus))
            w = (1.0 + max(gamma, 0.0)) * w
            w[j_minus] -= max(gamma, 0.0)
            w[w < 1e-15] = 0.0
        else:
            gamma = max((g_plus / d - 1.0) / (g_plus - 1.0), 0.0)
            w = (1.0 - gamma) * w
            w[j_plus] += gamma
        w /= w.sum()
    raise AssertionError("unreachable")


def efficient_rounding(w: np.ndarray, n: int, trim: float = 1e-6) -> np.ndarray:
    """Integer counts summing to ``n``: ``ceil((n - p/2) w_i)`` on the support, then one-at-a-time fixes.

    Too few: ``+1`` to the first ``argmin m_i / w_i``; too many: ``-1`` to the last
    ``argmax (m_i - 1) / w_i`` among ``m_i >= 1`` (Pukelsheim and Rieder 1992).
    """
    w = np.where(w < trim, 0.0, w)
    w = w / w.sum()
    support = w > 0
    safe_w = np.where(support, w, 1.0)
    counts = np.where(support, np.maximum(np.ceil((n - support.sum() / 2.0) * w), 0.0), 0.0)
    while (total := counts.sum()) != n:
        if total < n:
            counts[np.argmin(np.where(support, counts / safe_w, np.inf))] += 1
        else:
            down = np.where(support & (counts >= 1), (counts - 1.0) / safe_w, -np.inf)
            counts[len(w) - 1 - np.argmax(down[::-1])] -= 1
    return counts.astype(np.int64)


def identify(arms: np.ndarray, means: np.ndarray, budget: int, noise_var: float, rng: np.random.Generator) -> int:
    """One replication of GSE(allocation="g-optimal") on arms (K, d) with true ``means`` (K,); returns the chosen arm."""
    num_arms = arms.shape[0]
    sizes = [num_arms]
    while sizes[-1] > 2:
        sizes.append(-(-sizes[-1] // 2))
    stages = len(sizes)
    base, rest = divmod(budget, stages)
    sigma = np.sqrt(noise_var)
    alive = np.arange(num_arms)
    for t in range(stages):
        n = base + (t >= stages - rest)
        alive = alive[rng.permutation(alive.size)]
        z = project(arms[alive])
        counts = efficient_rounding(fw_away(z)[0], n)
        rows = np.repeat(np.arange(alive.size), counts)
        rewards = means[alive[rows]] + sigma * rng.standard_normal(rows.size)
        theta = np.linalg.lstsq(z[rows], rewards, rcond=None)[0]
        scores = z @ theta
        keep = -(-alive.size // 2)
        alive = alive[np.lexsort((rng.random(alive.size), -scores))[:keep]]
    return int(alive[0])


def run(arms: np.ndarray, means: np.ndarray, budget: int, noise_var: float, seed: int = 0) -> np.ndarray:
    """Replications ``r = 0..R-1`` of :func:`identify` on instances ``arms`` (R, K, d), ``means`` (R, K).

    Replication ``r`` uses ``np.random.default_rng([seed, r])``. Returns the chosen arms, shape (R,).
    """
    return np.array(
        [identify(arms[r], means[r], budget, noise_var, np.random.default_rng([seed, r])) for r in range(arms.shape[0])]
    )
