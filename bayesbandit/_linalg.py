"""Dense linear algebra whose batched LAPACK calls never wait on XLA:CPU's thread pool.

On CPU, JAX runs ``cholesky``, triangular solves, ``svd``, ``eigh``, ``qr`` and LU as LAPACK
kernels (jaxlib's ``lapack_*_ffi`` custom calls), one call for a whole batch of matrices. jaxlib
0.10 splits a batch whose work estimate ``batch * cost_per_matrix`` reaches ``200,000`` into
pieces, queues them on XLA's intra-op thread pool and *blocks the calling thread* until they are
done (``ParallelBatchMap``). XLA:CPU also runs independent kernels of a program on that same
pool. When every pool thread is inside such a kernel, each waits for pieces that no free thread
is left to run, and the program never ends: ``bayesbandit run bai-adaptive --quick`` stopped
this way on 2 cores (both pool threads in ``dgesdd``, the replications split over two host
devices that share the pool), and so did 100 vmapped Newton solves at ``d = 20`` on one device.

Every function here computes exactly what its ``jax.numpy`` / ``jax.scipy`` namesake computes
(the same LAPACK routine on every matrix, so the same bits), but a batch (from ``vmap`` or
leading axes) whose work reaches jaxlib's threshold is cut into consecutive pieces below it
(``lax.map`` over pieces, each one batched call). A piece runs entirely in the thread that
calls it, so no thread ever waits on the pool, whatever the device count, pool size or
schedule. Below the threshold (the usual case: 100 Cholesky factors of 10 x 10) the program is
the one a plain ``vmap`` gives. The pieces are the CPU lowering only
(:func:`jax.lax.platform_dependent`): on a GPU the whole batch is one call, as with ``vmap``
(pieces there would run one after another: 10,000 runs' factors in 17 sequential calls). On
accelerators, Cholesky factors and triangular solves of size ``n <= SMALL_ON_ACCELERATORS``
are not library calls at all but array expressions over the batch, column by column and row by
row, which XLA fuses into a few kernels: on an H200 x1.1-1.6 faster per simulated round than
cuSOLVER's and cuBLAS's batched calls (``benchmarks/results/bench_runs_gpu.md``), equal to them
to rounding (``tests/test_linalg.py``).

How: each function is a :func:`jax.custom_batching.custom_vmap` whose batching rule moves the
batch axis to the front and calls the function again, so nested ``vmap`` s reach the
unbatched definition with every batch axis leading, where the whole batch is cut once. The
cost formulas are jaxlib's (``jaxlib/cpu/lapack_kernels.cc``), per LAPACK call inside the
function. Reverse-mode derivatives (needed by Peace's design gradient) are defined by
:func:`jax.custom_vjp` with a backward pass that is itself cut the same way; forward-mode
derivatives of these functions are not defined (nothing here needs them).

A reward program that calls LAPACK itself (a ``MultivariateNormal`` prior's triangular solve) is
not covered; its per-matrix work is a triangular solve of one vector, ``d^2``, so it reaches the
threshold only past ``200,000 / d^2`` runs on one device (2,000 at ``d = 10``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from bayesbandit._typing import Array

__all__ = [
    "FAN_OUT_WORK",
    "cholesky",
    "cho_factor",
    "cho_solve",
    "solve_triangular",
    "solve",
    "svd",
    "eigh",
    "pinv_hermitian",
    "qr_complete",
    "lstsq",
    "piece_size",
]

FAN_OUT_WORK = 200_000
"""jaxlib's ``kMinWorkPerTask``: a LAPACK call of smaller total work runs in its calling thread."""

Cost = Callable[..., int]


def piece_size(cost_per_matrix: int) -> int:
    """The largest batch of matrices of this cost that one LAPACK call runs without the pool."""
    return max(1, (FAN_OUT_WORK - 1) // max(1, int(cost_per_matrix)))


SMALL_ON_ACCELERATORS = 16
"""Largest ``n`` whose Cholesky factors and triangular solves run unrolled on accelerators (module docstring)."""


def _in_pieces(raw: Callable, core_ndims: Sequence[int], cost: Cost, args: tuple, small: Callable | None) -> Any:
    """``raw`` (defined on unbatched arrays) over the leading batch axes of ``args``, in pieces on CPU.

    ``small`` (batched over leading axes) replaces it off CPU for ``n <= SMALL_ON_ACCELERATORS``.
    """
    if small is not None and args[0].shape[-1] <= SMALL_ON_ACCELERATORS:
        return jax.lax.platform_dependent(
            *args, cpu=lambda *xs: _in_pieces(raw, core_ndims, cost, xs, None), default=small
        )
    batch_shape = args[0].shape[: args[0].ndim - core_ndims[0]]
    if not batch_shape:
        return raw(*args)
    n = math.prod(batch_shape)
    flat = tuple(a.reshape((n, *a.shape[len(batch_shape) :])) for a in args)
    size = piece_size(cost(*(a.shape[1:] for a in flat)))
    if n <= size:
        out = jax.vmap(raw)(*flat)
    else:  # the pieces on CPU only: accelerators have no such pool, and run the whole batch at once
        out = jax.lax.platform_dependent(
            *flat,
            cpu=lambda *xs: jax.lax.map(lambda x: raw(*x), xs, batch_size=size),
            default=lambda *xs: jax.vmap(raw)(*xs),
        )
    return jax.tree.map(lambda o: o.reshape((*batch_shape, *o.shape[1:])), out)


def _batch_safe(raw: Callable, core_ndims: Sequence[int], cost: Cost, small: Callable | None = None) -> Callable:
    """``raw`` as a function whose batches (vmap or leading axes) stay below :data:`FAN_OUT_WORK`."""

    @custom_vmap
    def op(*args: Array) -> Any:
        return _in_pieces(raw, core_ndims, cost, args, small)

    @op.def_vmap
    def _rule(axis_size: int, in_batched: Sequence[bool], *args: Array) -> tuple[Any, Any]:
        leading = tuple(a if b else jnp.broadcast_to(a, (axis_size, *a.shape)) for a, b in zip(args, in_batched))
        out = op(*leading)
        return out, jax.tree.map(lambda _: True, out)

    return op


def _small_cholesky(a: Array) -> Array:
    """Lower Cholesky factor of ``(a + a^T) / 2`` (as ``jnp.linalg.cholesky``), column by column as array
    expressions over the leading axes: a batch of small factors in a few fused kernels on an accelerator."""
    n = a.shape[-1]
    a = 0.5 * (a + jnp.swapaxes(a, -1, -2))
    below = jnp.arange(n)
    factor = jnp.zeros_like(a)
    for j in range(n):
        column = a[..., :, j]
        if j:
            column = column - jnp.einsum("...ik,...k->...i", factor[..., :, :j], factor[..., j, :j])
        column = column / jnp.sqrt(column[..., j : j + 1])
        factor = factor.at[..., :, j].set(jnp.where(below >= j, column, 0.0))
    return factor


def _small_triangular(a: Array, b: Array, *, lower: bool, trans: str = "N") -> Array:
    """``solve_triangular`` by substitution as array expressions over the leading axes (see above)."""
    m = jnp.swapaxes(a, -1, -2) if trans == "T" else a
    forward = lower != (trans == "T")  # the matrix solved with is lower triangular
    n = a.shape[-1]
    vector = b.ndim == a.ndim - 1
    rhs = b[..., None] if vector else b
    x: list[Any] = [None] * n
    for i in range(n) if forward else range(n - 1, -1, -1):
        r = rhs[..., i, :]
        for j in range(i) if forward else range(i + 1, n):
            r = r - m[..., i, j, None] * x[j]
        x[i] = r / m[..., i, i, None]
    out = jnp.stack(x, axis=-2)
    return out[..., 0] if vector else out


def _differentiable(
    raw: Callable,
    core_ndims: Sequence[int],
    out_ndim: int,
    cost: Cost,
    *,
    backward_cost: Cost,
    small: Callable | None = None,
) -> Callable:
    """:func:`_batch_safe` of a one-output ``raw``, with a reverse-mode derivative cut the same way.

    The backward pass is ``raw``'s own vector-Jacobian product (JAX's rules), evaluated per matrix
    and batched like the forward pass; ``backward_cost`` bounds each LAPACK call in it (``raw``
    again, then triangular solves: Cholesky's derivative solves with an (n, n) right-hand side).
    """
    forward = _batch_safe(raw, core_ndims, cost, small)
    backward = _batch_safe(
        lambda *args_and_cotangent: jax.vjp(raw, *args_and_cotangent[:-1])[1](args_and_cotangent[-1]),
        (*core_ndims, out_ndim),
        lambda *shapes: max(cost(*shapes[:-1]), backward_cost(*shapes[:-1])),
    )

    @jax.custom_vjp
    def op(*args: Array) -> Array:
        return forward(*args)

    def fwd(*args: Array) -> tuple[Array, tuple]:
        return forward(*args), args

    def bwd(args: tuple, cotangent: Array) -> tuple:
        return tuple(backward(*args, cotangent))

    op.defvjp(fwd, bwd)
    return op


# --- jaxlib 0.10's cost estimates (lapack_kernels.cc), one per LAPACK routine ----------------


def _potrf(a: tuple[int, ...]) -> int:
    return a[-1] ** 3 // 3


def _trsm(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    rows = a[-1]
    cols = b[-1] if len(b) == 2 else 1
    return rows * cols * rows


def _gesdd(x: tuple[int, ...]) -> int:
    return 10 * x[-2] * x[-1] * min(x[-2], x[-1])


def _syevd(a: tuple[int, ...]) -> int:
    return 5 * a[-1] ** 3


def _getrf(a: tuple[int, ...]) -> int:
    return a[-2] * a[-1] * min(a[-2], a[-1])


def _qr(x: tuple[int, ...]) -> int:
    m, n = x[-2], x[-1]
    return max(2 * m * n * min(m, n), 4 * m * m * min(m, n))  # geqrf, then orgqr of the m x m factor


# --- the functions ----------------------------------------------------------------------------


# Cholesky's derivative solves with the factor and an (n, n) right-hand side.
_cholesky = _differentiable(
    jnp.linalg.cholesky, (2,), 2, _potrf, backward_cost=lambda a: _trsm(a, a), small=_small_cholesky
)


def cholesky(a: Array) -> Array:
    """Lower Cholesky factor of ``a`` (shape (..., n, n)): ``jnp.linalg.cholesky``, batch-safe."""
    return _cholesky(a)


_cho_factor = _batch_safe(lambda a: jax.scipy.linalg.cho_factor(a, lower=True)[0], (2,), _potrf)


def cho_factor(a: Array) -> Array:
    """Lower Cholesky factor of ``a`` read from its lower triangle, not symmetrised first
    (``jax.scipy.linalg.cho_factor(a, lower=True)[0]``), batch-safe."""
    return _cho_factor(a)


def _rhs_ndim(a: Array, b: Array) -> int:
    """1 for a vector right-hand side, 2 for a matrix (``a`` and ``b`` have the same leading axes)."""
    return 1 if jnp.ndim(b) == jnp.ndim(a) - 1 else 2


@cache
def _triangular(lower: bool, trans: str, rhs_ndim: int) -> Callable:
    raw = partial(jax.scipy.linalg.solve_triangular, lower=lower, trans=trans)
    small = partial(_small_triangular, lower=lower, trans=trans)
    return _differentiable(raw, (2, rhs_ndim), rhs_ndim, _trsm, backward_cost=_trsm, small=small)


def solve_triangular(a: Array, b: Array, *, lower: bool, trans: str = "N") -> Array:
    """``x`` with ``a x = b`` (``trans="T"``: ``a^T x = b``) for triangular ``a`` (n, n), ``b`` (n,) or (n, k).

    ``jax.scipy.linalg.solve_triangular``, batch-safe; leading axes of ``a`` and ``b`` are batch axes.
    """
    return _triangular(bool(lower), trans, _rhs_ndim(a, b))(a, b)


def _small_cho_solve(c: Array, b: Array) -> Array:
    return _small_triangular(c, _small_triangular(c, b, lower=True), lower=True, trans="T")


_CHO_SOLVE = {
    ndim: _batch_safe(lambda c, b: jax.scipy.linalg.cho_solve((c, True), b), (2, ndim), _trsm, _small_cho_solve)
    for ndim in (1, 2)
}


def cho_solve(chol: Array, b: Array) -> Array:
    """``x`` with ``(L L^T) x = b`` for a lower Cholesky factor ``L``: two triangular solves, batch-safe."""
    return _CHO_SOLVE[_rhs_ndim(chol, b)](chol, b)


_SOLVE = {ndim: _batch_safe(jnp.linalg.solve, (2, ndim), lambda a, b: max(_getrf(a), _trsm(a, b))) for ndim in (1, 2)}


def solve(a: Array, b: Array) -> Array:
    """``x`` with ``a x = b`` for a square ``a`` (LU with partial pivoting): ``jnp.linalg.solve``, batch-safe."""
    return _SOLVE[_rhs_ndim(a, b)](a, b)


_SVD = _batch_safe(lambda x: tuple(jnp.linalg.svd(x, full_matrices=False)), (2,), _gesdd)


def svd(x: Array) -> tuple[Array, Array, Array]:
    """Thin SVD ``(u, s, vt)`` of ``x`` (shape (..., m, n)): ``jnp.linalg.svd(full_matrices=False)``, batch-safe."""
    return _SVD(x)


_EIGH = _batch_safe(lambda a: tuple(jnp.linalg.eigh(a)), (2,), _syevd)


def eigh(a: Array) -> tuple[Array, Array]:
    """Eigenvalues (ascending) and eigenvectors of a symmetric ``a``: ``jnp.linalg.eigh``, batch-safe."""
    return _EIGH(a)


_PINV = _batch_safe(partial(jnp.linalg.pinv, hermitian=True), (2,), _syevd)


def pinv_hermitian(a: Array) -> Array:
    """Moore-Penrose pseudo-inverse of a symmetric ``a`` (by ``eigh``): ``jnp.linalg.pinv(hermitian=True)``, batch-safe."""
    return _PINV(a)


_QR = _batch_safe(lambda x: jnp.linalg.qr(x, mode="complete")[0], (2,), _qr)


def qr_complete(x: Array) -> Array:
    """The square orthogonal factor ``q`` of ``x = q r`` (``mode="complete"``), batch-safe."""
    return _QR(x)


_LSTSQ = _batch_safe(lambda x, y: jnp.linalg.lstsq(x, y)[0], (2, 1), lambda x, y: _gesdd(x))


def lstsq(x: Array, y: Array) -> Array:
    """Least-squares solution of ``x theta = y`` (``y`` a vector, by SVD): ``jnp.linalg.lstsq(x, y)[0]``, batch-safe."""
    return _LSTSQ(x, y)
