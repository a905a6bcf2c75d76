r"""Gaussian-linear posteriors: ridge statistics in precision or covariance form, and their updates.

Model ``y = x^T theta + noise`` with a Gaussian prior ``theta ~ N(0, lam^{-1} I)`` (noise variance
1; CombLinUCB / CombLinTS scale both). After observations ``(x_l, y_l)`` the posterior is
``N(V^{-1} b, V^{-1})`` with

.. math::  V = \lambda I + \sum_l x_l x_l^T, \qquad b = \sum_l y_l x_l

(Abbasi-Yadkori et al. 2011, eq. (3): the ridge estimate ``theta_hat = V^{-1} b``). It is kept in
one of two forms:

* **precision form** ``(V, b)``: an observation adds ``x x^T`` to ``V`` and ``y x`` to ``b``
  (:func:`observe`; a round of picks over ``M`` independent blocks at once, :func:`observe_blocks`);
  ``select`` factors ``V = L L^T`` (Cholesky) and solves for ``theta_hat`` (:func:`estimate`). The
  widths ``||x||_{V^{-1}} = ||L^{-1} x||`` come from triangular solves (:func:`mahalanobis_norms`)
  or, for many arms and blocks, from ``L^{-1}`` formed once (:func:`block_widths`); a posterior
  draw is ``theta_hat + L^{-T} xi`` (:func:`solve_lower_transpose`).
* **covariance form** ``P = V^{-1}``: an observation updates it by Sherman-Morrison,

  .. math::  (V + x x^T / s)^{-1} = P - \frac{P x x^T P}{s + x^T P x}  \qquad (O(d^2)),

  (:func:`sherman_morrison`, :func:`downdate`), the mean with it by the Kalman gain
  (:func:`kalman_observe`, :func:`kalman_observe_blocks`); ``P`` is started from a Cholesky
  factorisation (:func:`invert`) and read by one matrix product (:func:`inverse_widths`).
  :class:`DesignInverse` keeps the inverse of the unweighted design ``sum x x^T``, singular at
  first.

Forgetting (non-stationary rewards, :mod:`bayesbandit.drift`): an observation is removed exactly by
adding it with weight ``-1`` (:func:`observe`, :func:`observe_blocks`; :func:`kalman_observe` with
the noise variance negated), and the posterior is discounted by the stabilised rule of Kulhavy and
Zarrop (bayesianbandits' ``docs/math/forgetting.rst``): with the prior ``N(mu_0, V_0^{-1})``,

.. math::  \bar V = \gamma V + (1 - \gamma) V_0, \qquad \bar V \bar\mu = \gamma V \mu + (1 - \gamma) V_0 \mu_0,

which multiplies the weight of every observation so far by ``gamma`` and leaves the prior's
(:func:`discount_precision`; in covariance form, :func:`discount_covariance`). Exponential
forgetting, ``bar V = gamma V``, would let ``V`` decay to the singular matrix in every direction
no observation excites; here ``bar V >= V_0`` whenever ``V >= V_0``.

Every function is jittable and vmappable; blocks are leading batch axes. :func:`sherman_morrison`
and :func:`downdate` run on NumPy arrays as well (the same operations), for the host policies'
:class:`HostRidge`. Every LAPACK call goes through :mod:`bayesbandit._linalg`.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._linalg import cho_factor, cho_solve, cholesky, solve_triangular
from bayesbandit._numerics import gershgorin_shift
from bayesbandit._typing import Array

Matrix = TypeVar("Matrix", Array, np.ndarray)  # a JAX or a NumPy array

__all__ = [
    "isotropic",
    "add_outer",
    "observe",
    "observe_blocks",
    "discount_precision",
    "discount_covariance",
    "estimate",
    "mahalanobis_norms",
    "inverse_factors",
    "block_widths",
    "solve_lower_transpose",
    "downdate",
    "sherman_morrison",
    "kalman_observe",
    "kalman_observe_blocks",
    "invert",
    "inverse_widths",
    "DesignInverse",
    "MAX_CONDITION",
    "HostRidge",
]


# --- precision form ---------------------------------------------------------------------------


def isotropic(scale: Any, d: int, batch: tuple[int, ...] = ()) -> tuple[Array, Array]:
    """``(scale I, 0)`` per block, shapes ``(*batch, d, d)`` and ``(*batch, d)``: the prior ``(V_0, b_0) = (lam I, 0)``,
    or ``(Sigma_0, mean_0) = (prior_var I, 0)`` in covariance form."""
    return scale * jnp.broadcast_to(jnp.eye(d), (*batch, d, d)), jnp.zeros((*batch, d))


def add_outer(matrix: Array, x: Array) -> Array:
    """``matrix + x x^T`` (``x``: (d,)), the precision (or design) after one more observation at ``x``."""
    return matrix + jnp.outer(x, x)


def observe(precision: Array, b: Array, x: Array, y: Array, weight: Any = 1.0) -> tuple[Array, Array]:
    """``(V + w x x^T, b + w y x)``: the precision form after observing ``y`` at ``x`` (d,) with weight ``w``.

    ``weight = -1`` removes an observation added before (exactly, up to rounding).
    """
    return precision + weight * jnp.outer(x, x), b + weight * y * x


def observe_blocks(
    precision: Array, b: Array, block: Array, x: Array, y: Array, weight: Any = 1.0
) -> tuple[Array, Array]:
    """``V_j += w sum_{a: block_a = j} x_a x_a^T``, ``b_j += w sum_{a: block_a = j} y_a x_a`` for each of ``M`` blocks.

    ``precision`` (M, d, d), ``b`` (M, d); the picks ``block`` (n,) int in ``[0, M)``, ``x`` (n, d),
    ``y`` (n,), all added at once (one-hot sums, no loop). ``weight = -1`` removes picks added before.
    """
    one_hot = weight * jax.nn.one_hot(block, precision.shape[0], dtype=x.dtype)  # (n, M)
    gram = jnp.einsum("am,ai,aj->mij", one_hot, x, x)
    moment = jnp.einsum("am,a,ai->mi", one_hot, y.astype(x.dtype), x)
    return precision + gram, b + moment


def discount_precision(
    precision: Array, b: Array, gamma: Any, prior_precision: Array, prior_b: Any = 0.0
) -> tuple[Array, Array]:
    """``(gamma V + (1 - gamma) V_0, gamma b + (1 - gamma) b_0)``: the stabilised discount in precision form.

    ``b = V mu`` (``b_0 = V_0 mu_0``; the ridge's ``b = sum y x`` with ``mu_0 = 0``), so the mean
    after it is ``bar V^{-1} bar b`` (:func:`estimate`). Leading axes of ``precision`` and ``b``
    are blocks; ``prior_precision`` (d, d) and ``prior_b`` broadcast against them. Composes:
    discounting by ``gamma_1`` then ``gamma_2`` is discounting by ``gamma_1 gamma_2``.
    """
    return gamma * precision + (1.0 - gamma) * prior_precision, gamma * b + (1.0 - gamma) * prior_b


def estimate(precision: Array, b: Array) -> tuple[Array, Array]:
    """``(L, theta_hat)``: the lower Cholesky factor ``V = L L^T`` and ``theta_hat = V^{-1} b``.

    ``precision`` (..., d, d) and ``b`` (..., d); leading axes are blocks.
    """
    chol = cholesky(precision)
    return chol, cho_solve(chol, b)


def mahalanobis_norms(chol: Array, x: Array) -> Array:
    """Row norms ``||x_i||_{V^{-1}} = ||L^{-1} x_i||`` with ``V = L L^T`` (``chol`` (d, d), ``x`` (K, d)): (K,)."""
    half = solve_triangular(chol, x.T, lower=True)
    return jnp.sqrt(jnp.sum(half**2, axis=0))


def inverse_factors(chol: Array) -> Array:
    """``L_j^{-1}`` for each block's Cholesky factor ``L_j``: ``(M, d, d)``, one triangular solve against ``I``."""
    eye = jnp.eye(chol.shape[-1], dtype=chol.dtype)
    return jax.vmap(lambda c: solve_triangular(c, eye, lower=True))(chol)


_WIDTH_TILE = 1 << 15  # entries of L^{-1} X per tile: 256 KiB in float64, within a core's L2 cache


def block_widths(chol: Array, arms: Array) -> Array:
    """``||x_i||_{V_j^{-1}} = ||L_j^{-1} x_i||`` for every block and arm: ``(M, N)``, ``O(M N d^2)``.

    ``L_j^{-1}`` is formed once (``d x d``, triangular; ``V^{-1}`` itself never is) and applied to
    the arms by matrix products: on CPU a triangular solve against ``N`` right-hand sides is tens
    of times slower. The arms go in tiles of ``C = max(8, 2^15 / (M d))`` rows (``lax.map``; the
    last tile padded with zero rows), so each product ``(M d, C)`` is squared and summed while it
    is still in cache: at ``N = 20,000``, ``M = 10``, ``d = 51`` the untiled ``(M, d, N)`` product
    (82 MB) cost 4 to 7 times as much. Each width is the same sum of squares either way.
    """
    inverse = inverse_factors(chol)
    blocks, d = inverse.shape[0], inverse.shape[-1]
    n = arms.shape[0]

    def norms(tile: Array) -> Array:  # (C, d) -> (M, C)
        return jnp.sqrt(jnp.sum(jnp.einsum("mij,nj->min", inverse, tile) ** 2, axis=1))

    rows = max(8, _WIDTH_TILE // (blocks * d))
    if n <= rows:
        return norms(arms)
    tiles = -(-n // rows)
    padded = jnp.pad(arms, ((0, tiles * rows - n), (0, 0))).reshape(tiles, rows, d)
    return jnp.moveaxis(jax.lax.map(norms, padded), 0, 1).reshape(blocks, tiles * rows)[:, :n]


def solve_lower_transpose(chol: Array, rhs: Array) -> Array:
    """``z`` with ``L^T z = rhs`` for a lower-triangular ``L``: ``L^{-T} xi ~ N(0, (L L^T)^{-1})`` for ``xi ~ N(0, I)``."""
    return solve_triangular(chol, rhs, lower=True, trans="T")


# --- covariance form --------------------------------------------------------------------------


def downdate(inverse: Matrix, g: Matrix, den: Any) -> Matrix:
    """``inverse - g g^T / den``: the Sherman-Morrison step with ``g = P x`` and ``den = s + x^T P x``.

    JAX or NumPy arrays (the same operations as ``jnp.outer`` / ``np.outer``).
    """
    return inverse - g[:, None] * g[None, :] / den


def sherman_morrison(inverse: Matrix, x: Matrix, noise: Any = 1.0) -> tuple[Matrix, Matrix, Any]:
    """``((V + x x^T / s)^{-1}, g, den)`` from ``P = V^{-1}``, with ``g = P x``, ``den = s + x^T P x`` (``s``: ``noise``).

    ``O(d^2)``; JAX or NumPy arrays. ``g`` and ``den`` let a caller update what it derives from ``P``.
    """
    g = inverse @ x
    den = noise + x @ g
    return downdate(inverse, g, den), g, den


def kalman_observe(cov: Array, mean: Array, x: Array, y: Array, noise_var: Any) -> tuple[Array, Array]:
    """The Kalman update of ``N(mean, cov)`` after ``y = x^T theta + N(0, noise_var)`` (Wen et al. 2015, Alg. 2).

    ``k = cov x / (x^T cov x + noise_var)``, ``mean + k (y - x^T mean)``, ``cov - k (cov x)^T``.
    """
    cx = cov @ x
    gain = cx / (x @ cx + noise_var)
    return cov - jnp.outer(gain, cx), mean + gain * (y - x @ mean)


def kalman_observe_blocks(
    cov: Array, mean: Array, block: Array, x: Array, y: Array, noise_var: Any
) -> tuple[Array, Array]:
    """:func:`kalman_observe` of each pick ``(block_a, x_a, y_a)`` in turn, on block ``block_a``.

    ``cov`` (M, d, d), ``mean`` (M, d), ``block`` (n,) int in ``[0, M)``, ``x`` (n, d), ``y`` (n,).
    """

    def step(carry: tuple[Array, Array], pick: tuple[Array, Array, Array]) -> tuple[tuple[Array, Array], None]:
        cov, mean = carry
        j, x_j, y_j = pick
        cov_j, mean_j = kalman_observe(cov[j], mean[j], x_j, y_j, noise_var)
        return (cov.at[j].set(cov_j), mean.at[j].set(mean_j)), None

    (cov, mean), _ = jax.lax.scan(step, (cov, mean), (block, x, y))
    return cov, mean


def discount_covariance(cov: Array, mean: Array, gamma: Any, prior_precision: Any) -> tuple[Array, Array]:
    r"""The stabilised discount of ``N(mean, cov)`` under the prior ``N(0, I / c)`` (``c``: ``prior_precision``), covariance form.

    With ``Lambda = cov^{-1}``, ``bar Lambda = gamma Lambda + (1 - gamma) c I = Lambda A`` for
    ``A = gamma I + (1 - gamma) c cov``, so

    .. math::  \bar\Sigma = A^{-1} \Sigma, \qquad \bar\mu = \bar\Lambda^{-1} \gamma \Lambda \mu = \gamma A^{-1} \mu

    (:func:`discount_precision` with ``mu_0 = 0``, without inverting ``cov``: ``A`` has every
    eigenvalue at least ``gamma``). ``cov`` (..., d, d), ``mean`` (..., d); leading axes are blocks.
    """
    d = cov.shape[-1]
    shift = gamma * jnp.eye(d, dtype=cov.dtype) + (1.0 - gamma) * prior_precision * cov  # symmetric, commutes with cov
    solved = cho_solve(cholesky(shift), jnp.concatenate([cov, gamma * mean[..., None]], axis=-1))
    new_cov, new_mean = solved[..., :d], solved[..., d]
    return 0.5 * (new_cov + jnp.swapaxes(new_cov, -1, -2)), new_mean


def invert(precision: Array) -> tuple[Array, Array]:
    """``(V^{-1}, L)`` of a positive definite ``V`` (d, d): ``L`` from its lower triangle, ``V^{-1}`` by two triangular solves against ``I``."""
    factor = cho_factor(precision)
    return cho_solve(factor, jnp.eye(precision.shape[-1], dtype=precision.dtype)), factor


def inverse_widths(inverse: Array, arms: Array) -> Array:
    """``||x_i||_P = sqrt(x_i^T P x_i)`` for each row of ``arms`` (K, d), from ``P`` (d, d): (K,), one matrix product."""
    return jnp.sqrt(jnp.maximum(jnp.sum((arms @ inverse) * arms, axis=1), 0.0))


MAX_CONDITION = 1e6  # rank-one updates start from an inverse this well conditioned (float64: ~1e-10 error)


class DesignInverse(NamedTuple):
    """``G_t = sum_l x_l x_l^T`` and its inverse ``P_t``, kept by rank-one updates (no ridge).

    ``G_t`` is singular until ``d`` linearly independent ``x`` have been added, and a rank-one
    update cannot start from a singular matrix: its rounding error grows with the condition number
    of the matrix it starts from. Until ``G_t`` is positive definite with condition number below
    :data:`MAX_CONDITION` (estimated as ``||G||_inf ||P||_inf``), ``P`` is recomputed from ``G_t``
    by Gauss-Jordan elimination (of ``G_t`` plus a Gershgorin shift while ``G_t`` is singular;
    plain XLA arithmetic, see :func:`_symmetric_inverse`); from then on it is updated by
    :func:`sherman_morrison` only (adding ``x x^T`` only raises the eigenvalues of ``G_t``, so it
    stays positive definite). Both branches are written with ``lax.cond``: under ``vmap`` that
    computes both, a ``d x d`` inversion per round.
    """

    gram: Array  # (d, d) G_t
    inverse: Array  # (d, d) G_t^{-1} once `exact`, else (G_t + jitter I)^{-1}
    exact: Array  # () bool: G_t is well conditioned and `inverse` is its inverse

    @classmethod
    def create(cls, d: int, dtype: Any = None) -> DesignInverse:
        dtype = dtype or jnp.result_type(float)
        return cls(jnp.zeros((d, d), dtype), jnp.zeros((d, d), dtype), jnp.asarray(False))

    def add(self, x: Array) -> DesignInverse:
        """The design after one more pull of features ``x`` (shape (d,))."""
        gram = add_outer(self.gram, x)

        def rank_one() -> tuple[Array, Array]:
            return sherman_morrison(self.inverse, x)[0], jnp.asarray(True)

        inverse, exact = jax.lax.cond(self.exact, rank_one, lambda: _refactored(gram))
        return DesignInverse(gram, inverse, exact)

    def remove(self, x: Array) -> DesignInverse:
        """The design without one earlier pull of ``x``: ``G - x x^T``, its inverse recomputed (a downdate can
        leave ``G`` singular, where no rank-one formula holds)."""
        gram = self.gram - jnp.outer(x, x)
        return DesignInverse(gram, *_refactored(gram))

    def scale(self, gamma: Any) -> DesignInverse:
        """``gamma G`` and its inverse ``P / gamma`` (every pull's weight times ``gamma``; the condition number is unchanged)."""
        return DesignInverse(gamma * self.gram, self.inverse / gamma, self.exact)

    def widths(self, arms: Array) -> Array:
        """``||x_i||_{G_t^{-1}}`` for each row of ``arms`` (shape (K, d)), shape (K,)."""
        return inverse_widths(self.inverse, arms)


def _refactored(gram: Array) -> tuple[Array, Array]:
    """``(inverse, exact)`` of a design recomputed from scratch (:class:`DesignInverse`'s docstring)."""
    inverse, positive = _symmetric_inverse(gram)
    shifted, _ = _symmetric_inverse(gram + gershgorin_shift(gram) * jnp.eye(gram.shape[0], dtype=gram.dtype))
    inverse = jnp.where(positive, inverse, shifted)
    condition = _inf_norm(gram) * _inf_norm(inverse)
    return inverse, positive & (condition < MAX_CONDITION)


def _symmetric_inverse(matrix: Array) -> tuple[Array, Array]:
    """Gauss-Jordan inverse of a symmetric matrix without pivoting, unrolled over its ``d`` pivots.

    Returns the inverse and whether every pivot was positive and finite (the matrix is positive
    definite: the pivots are ratios of leading principal minors), where elimination without
    pivoting is stable. Plain XLA arithmetic, no LAPACK call: a batched LAPACK factorisation
    here, independent of the Newton solve's in the same round, deadlocked XLA:CPU when
    ``simulate`` split vmapped runs over two host devices (d = 20).
    """
    d = matrix.shape[0]
    reduced, inverse = matrix, jnp.eye(d, dtype=matrix.dtype)
    positive = jnp.asarray(True)
    for k in range(d):
        pivot = reduced[k, k]
        positive = positive & (pivot > 0) & jnp.isfinite(pivot)
        row, inverse_row = reduced[k] / pivot, inverse[k] / pivot
        factor = reduced[:, k].at[k].set(0.0)
        reduced = (reduced - jnp.outer(factor, row)).at[k].set(row)
        inverse = (inverse - jnp.outer(factor, inverse_row)).at[k].set(inverse_row)
    return 0.5 * (inverse + inverse.T), positive & jnp.all(jnp.isfinite(inverse))


def _inf_norm(matrix: Array) -> Array:
    return jnp.max(jnp.sum(jnp.abs(matrix), axis=1))


# --- host (NumPy, float64) --------------------------------------------------------------------


class HostRidge:
    """Covariance form with ``lam = 1`` on the host, for the index-backed policies: ``V^{-1}``, ``b``, ``theta``.

    ``V^{-1}`` is updated by :func:`sherman_morrison` (``O(d^2)`` a round whatever the number of
    arms); ``theta = V^{-1} b`` is recomputed (``O(d^2)``) rather than updated, so rounding errors
    do not accumulate in it. The Cholesky factor of ``V^{-1}`` that :meth:`sample` needs is
    factored (``O(d^3)``) at most once per ``V^{-1}``: on the first sample after an update.
    """

    def __init__(self, d: int) -> None:
        self._v_inv: np.ndarray = np.eye(d)
        self._chol: np.ndarray | None = None  # the Cholesky factor of _v_inv, once computed
        self.b: np.ndarray = np.zeros(d)
        self.theta: np.ndarray = np.zeros(d)
        self.t = 0

    @classmethod
    def from_arrays(cls, v_inv: np.ndarray, b: np.ndarray, t: int) -> HostRidge:
        """The statistics after ``t`` observations with ``V^{-1}`` and ``b`` (copied; ``theta = V^{-1} b``)."""
        stats = cls(b.size)
        stats._v_inv, stats.b, stats.theta, stats.t = v_inv.copy(), b.copy(), v_inv @ b, int(t)
        return stats

    @property
    def d(self) -> int:
        return self.b.shape[0]

    @property
    def v_inv(self) -> np.ndarray:
        """``V^{-1}``, ``(d, d)`` (read-only: :meth:`update` changes it)."""
        return self._v_inv

    def update(self, x: np.ndarray, reward: float) -> None:
        """Add the observation ``(x, reward)``: ``O(d^2)``."""
        self._v_inv = sherman_morrison(self._v_inv, x)[0]
        self._chol = None
        self.b += reward * x
        self.theta = self._v_inv @ self.b
        self.t += 1

    def sample(self, beta: float, xi: np.ndarray) -> np.ndarray:
        """``theta + beta V^{-1/2} xi`` with ``V^{-1/2}`` the Cholesky factor of ``V^{-1}`` (Yang et al., Alg. 4 line 8).

        Any square root of ``V^{-1}`` gives the same distribution; the Cholesky factor is the one
        used by every policy here, so twins draw the same sample from the same ``xi``.
        """
        if self._chol is None:
            self._chol = np.linalg.cholesky(self._v_inv)
        return self.theta + beta * (self._chol @ xi)

    def uncertainty(self, x: np.ndarray) -> np.ndarray:
        """``||x_a||_{V^{-1}}`` for the rows of ``x`` (``O(n d^2)``, one matrix product)."""
        return np.sqrt(np.maximum(np.einsum("ij,ij->i", x @ self.v_inv, x), 0.0))
