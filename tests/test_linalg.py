"""Batch-safe linear algebra: the same bits as JAX's, and no LAPACK call large enough to wait on the pool.

jaxlib 0.10 splits a LAPACK call whose work ``batch * cost`` reaches 200,000 over XLA's thread
pool and blocks until the pieces are done; with every pool thread blocked so, a program never
ends (``bayesbandit run bai-adaptive --quick`` on 2 cores). ``lapack_calls`` reads each LAPACK
custom call and its operand shapes out of a lowered program and applies jaxlib's cost formulas,
so the tests below check the property itself, on any machine, for the library's own programs.
"""

from __future__ import annotations

import faulthandler
import math
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit import _linalg as linalg

_CALL = re.compile(r"custom_call @(lapack_\w+)\(.*?\)\s*\{(.*?)\}\s*:\s*\((.*?)\)\s*->")
_TENSOR = re.compile(r"tensor<([0-9x]+)x[a-z]+[0-9]*>")


def _shapes(types: str) -> list[tuple[int, ...]]:
    return [tuple(int(n) for n in dims.split("x")) for dims in _TENSOR.findall(types)]


def _cost(target: str, attributes: str, shapes: list[tuple[int, ...]]) -> int:
    """jaxlib 0.10's ``cost_per_matrix`` (``jaxlib/cpu/lapack_kernels.cc``) for one custom call."""
    routine = target.removeprefix("lapack_")[1:].removesuffix("_ffi")
    *_, m, n = shapes[0]
    if routine == "potrf":
        return n**3 // 3
    if routine == "trsm":
        rows, cols = shapes[1][-2:]
        left = "side = 76" in attributes  # 'L'
        return rows * cols * (rows if left else cols)
    if routine == "gesdd":
        return 10 * m * n * min(m, n)
    if routine == "syevd":
        return 5 * n**3
    if routine == "getrf":
        return m * n * min(m, n)
    if routine == "geqrf":
        k = min(m, n)
        return 2 * m * n * k - 2 * k**3 // 3
    if routine == "orgqr":
        k = shapes[1][-1]
        return 4 * m * n * k - 2 * k * k * (m + n) + 4 * k**3 // 3
    raise AssertionError(f"no cost formula for {target}")


def lapack_calls(fn, *args) -> list[tuple[str, int]]:
    """``(routine, batch * cost_per_matrix)`` for every LAPACK call in ``jit(fn)(*args)``'s program."""
    text = jax.jit(fn).lower(*args).as_text()
    calls = []
    for target, attributes, types in _CALL.findall(text):
        shapes = _shapes(types)
        operand = shapes[1] if "trsm" in target else shapes[0]
        calls.append((target, math.prod(operand[:-2]) * _cost(target, attributes, shapes)))
    return calls


def assert_no_fan_out(fn, *args, expect: set[str] | None = None) -> list[tuple[str, int]]:
    calls = lapack_calls(fn, *args)
    assert calls, "the program has no LAPACK call: the check would be vacuous"
    too_big = [(target, work) for target, work in calls if work >= linalg.FAN_OUT_WORK]
    assert not too_big, f"LAPACK calls that would wait on XLA's thread pool: {too_big}"
    if expect is not None:
        assert expect <= {target for target, _ in calls}, calls
    return calls


def _spd(key, shape):
    x = jax.random.normal(key, shape)
    return x @ jnp.swapaxes(x, -1, -2) + shape[-1] * jnp.eye(shape[-1])


KEY = jax.random.PRNGKey(0)
A = _spd(KEY, (2, 300, 20, 20))  # 300 factors of 20 x 20: 2,666 flops each, 800,000 in one call
B = jax.random.normal(KEY, (2, 300, 20, 7))
TALL = jax.random.normal(KEY, (400, 8, 7))
GRAM = jnp.swapaxes(TALL, -1, -2) @ TALL

CASES = {
    "cholesky": (jnp.linalg.cholesky, linalg.cholesky, (A,)),
    "cho_factor": (lambda a: jax.scipy.linalg.cho_factor(a, lower=True)[0], linalg.cho_factor, (A,)),
    "solve_triangular": (
        lambda c, b: jax.scipy.linalg.solve_triangular(c, b, lower=True),
        lambda c, b: linalg.solve_triangular(c, b, lower=True),
        (jnp.linalg.cholesky(A), B),
    ),
    "solve_triangular_vector_T": (
        lambda c, b: jax.scipy.linalg.solve_triangular(c, b, lower=True, trans="T"),
        lambda c, b: linalg.solve_triangular(c, b, lower=True, trans="T"),
        (jnp.linalg.cholesky(A), B[..., 0]),
    ),
    "cho_solve": (
        lambda c, b: jax.scipy.linalg.cho_solve((c, True), b),
        linalg.cho_solve,
        (jnp.linalg.cholesky(A), B),
    ),
    "solve": (jnp.linalg.solve, linalg.solve, (A, B[..., 0])),
    "svd": (lambda x: tuple(jnp.linalg.svd(x, full_matrices=False)), linalg.svd, (TALL,)),
    "eigh": (lambda a: tuple(jnp.linalg.eigh(a)), linalg.eigh, (GRAM,)),
    "pinv_hermitian": (lambda a: jnp.linalg.pinv(a, hermitian=True), linalg.pinv_hermitian, (GRAM,)),
    "qr_complete": (lambda x: jnp.linalg.qr(x, mode="complete")[0], linalg.qr_complete, (TALL,)),
    "lstsq": (lambda x, y: jnp.linalg.lstsq(x, y)[0], linalg.lstsq, (TALL, TALL[..., 0])),
}


def _vmapped(fn, args):
    """``fn`` vmapped over every leading axis of its (unbatched-core) arguments."""
    depth = args[0].ndim - 2
    for _ in range(depth):
        fn = jax.vmap(fn)
    return fn


@pytest.mark.parametrize("name", list(CASES))
def test_same_bits_as_jax_under_vmap_and_no_call_reaches_the_threshold(name):
    reference, safe, args = CASES[name]
    expected = jax.jit(_vmapped(reference, args))(*args)
    got = jax.jit(_vmapped(safe, args))(*args)
    for e, g in zip(jax.tree.leaves(expected), jax.tree.leaves(got), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
    assert any(work >= linalg.FAN_OUT_WORK for _, work in lapack_calls(_vmapped(reference, args), *args))
    assert_no_fan_out(_vmapped(safe, args), *args)


def test_a_small_batch_is_the_plain_batched_call():
    """Below the threshold nothing is cut: the program is the one ``vmap`` of JAX's function gives."""
    a = A[0, :50]
    plain = jax.jit(jax.vmap(jnp.linalg.cholesky)).lower(a).as_text()
    safe = jax.jit(jax.vmap(linalg.cholesky)).lower(a).as_text()
    assert "while" not in safe and safe.count("lapack_dpotrf") == plain.count("lapack_dpotrf") == 1


def test_leading_axes_and_unbatched_right_hand_sides():
    chol = jnp.linalg.cholesky(A[0])
    np.testing.assert_array_equal(linalg.cholesky(A[0]), chol)  # leading axis, no vmap
    rhs = B[0, 0, :, 0]  # one vector shared by every factor
    expected = jax.vmap(lambda c: jax.scipy.linalg.cho_solve((c, True), rhs))(chol)
    np.testing.assert_array_equal(jax.vmap(lambda c: linalg.cho_solve(c, rhs))(chol), expected)
    assert linalg.piece_size(10**9) == 1 and linalg.piece_size(1) == linalg.FAN_OUT_WORK - 1


def test_reverse_mode_derivatives_equal_jax_and_stay_below_the_threshold():
    """Peace differentiates through a Cholesky factor and a triangular solve, vmapped over replications."""

    def loss(chol_fn, solve_fn, a, b):
        return jnp.sum(solve_fn(chol_fn(a), b) ** 2)

    plain = jax.vmap(
        jax.grad(
            lambda a, b: loss(
                jnp.linalg.cholesky, lambda c, r: jax.scipy.linalg.solve_triangular(c, r, lower=True), a, b
            )
        )
    )
    safe = jax.vmap(
        jax.grad(lambda a, b: loss(linalg.cholesky, lambda c, r: linalg.solve_triangular(c, r, lower=True), a, b))
    )
    a, b = A[0], B[0]
    np.testing.assert_allclose(safe(a, b), plain(a, b), rtol=1e-12, atol=1e-12)
    assert_no_fan_out(safe, a, b, expect={"lapack_dpotrf_ffi", "lapack_dtrsm_ffi"})


def test_no_module_calls_lapack_except_through_the_safe_functions():
    """Every LAPACK-backed call of the package goes through ``bayesbandit._linalg``."""
    root = pathlib.Path(linalg.__file__).parent
    pattern = re.compile(
        r"jnp\.linalg\.(cholesky|svd|eigh|eig|qr|solve|inv|pinv|lstsq|det|slogdet)\b|jax\.scipy\.linalg|lax\.linalg"
    )
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        if path.name != "_linalg.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line.split("#")[0])
    ]
    assert not offenders, offenders


# --- the library's own programs, at the batch sizes the runners use ----------------------------


def test_gse_replications_never_fan_out():
    """The program that stopped ``bai-adaptive --quick``: 125 GSE replications (one device's share)."""
    from bayesbandit.bai import GSE, AdaptiveInstance
    from bayesbandit.bai.evaluation import _runner, replication_keys

    env = AdaptiveInstance(K=8)
    instance_keys, run_keys = replication_keys(0, 125)
    instances = jax.vmap(env.reset)(instance_keys)
    assert_no_fan_out(_runner(GSE(), env, 160), instances, run_keys, expect={"lapack_dgesdd_ffi"})


def test_peace_design_gradient_never_fans_out():
    from bayesbandit.bai.peace import width_design

    z = jax.random.normal(KEY, (200, 16, 8))
    xi = jax.random.normal(KEY, (50, 8))
    assert_no_fan_out(jax.vmap(lambda z: width_design(z, xi, num_steps=2)), z, expect={"lapack_dpotrf_ffi"})


def test_glm_tsl_runs_never_fan_out():
    """100 vmapped GLM-TSL runs at d = 20 (the size that once deadlocked on one device)."""
    from bayesbandit.models import logistic

    import bayesbandit as bb

    policy = bb.GLMTSL(logistic(), a=1.0)
    arms = jax.random.uniform(KEY, (50, 20), minval=-1, maxval=1)

    def run(key):
        def step(state, key):
            arm, _ = policy.select(state, arms, key)
            state, _ = policy.update(state, arms, arm, jnp.asarray(1.0))
            return state, arm

        return jax.lax.scan(step, policy.init(arms), jax.random.split(key, 4))[1]

    assert_no_fan_out(jax.vmap(run), jax.random.split(KEY, 100), expect={"lapack_dpotrf_ffi"})


# Two host devices on 2 cores share a 2-thread pool. In each device's program the large product is
# split over the pool, the program resumes on the pool thread that finishes it, and that thread runs
# the SVD: 125 matrices of 8 x 7 (490,000 flops) fan out over the pool and wait. With both devices
# there, both pool threads wait: with jnp.linalg.svd it stopped within 2 s in 9 runs of 9.
def _sharded_svd_calls(svd) -> dict[str, np.ndarray]:
    """2,000 calls of ``svd`` on 250 matrices of 8 x 7, sharded over this process's two devices beside a large
    product; a call that takes 20 s (one takes about a millisecond) makes the process print its stacks and exit."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2,), ("runs",))
    f = jax.jit(jax.shard_map(lambda x, b: (svd(x), b * 2), mesh=mesh, in_specs=P("runs"), out_specs=P("runs")))
    x = jax.device_put(jax.random.normal(jax.random.key(0), (250, 8, 7)), NamedSharding(mesh, P("runs")))
    b = jax.device_put(jnp.ones((250, 64, 64)), NamedSharding(mesh, P("runs")))
    for _ in range(2000):
        faulthandler.dump_traceback_later(20, exit=True)
        jax.block_until_ready(f(x, b))
    faulthandler.cancel_dump_traceback_later()
    return {"calls": np.array(2000), "devices": np.array(len(jax.devices()))}


def batch_safe_svd_on_two_devices() -> dict[str, np.ndarray]:
    """The program above with ``bayesbandit._linalg.svd`` (run in the two-device child of ``tests/_fresh.py``)."""
    return _sharded_svd_calls(lambda x: linalg.svd(x)[1])


def jaxlib_svd_on_two_devices() -> dict[str, np.ndarray]:
    """The program above with ``jnp.linalg.svd``."""
    return _sharded_svd_calls(lambda x: jnp.linalg.svd(x, compute_uv=False))


def test_vmapped_svd_under_two_host_devices_finishes(fresh_process):
    """Regression: the program above, with the batch-safe SVD, runs its 2,000 calls."""
    out = fresh_process.result("two_devices", "test_linalg.py:batch_safe_svd_on_two_devices")
    assert int(out["calls"]) == 2000 and int(out["devices"]) == 2


@pytest.mark.slow
def test_jaxlib_batched_svd_under_two_host_devices_deadlocks(fresh_process):
    """The hazard itself (jaxlib 0.10), in the same process settings: the same program with ``jnp.linalg.svd``
    stops. If this starts passing, jaxlib no longer blocks on its pool and ``bayesbandit._linalg`` can go."""
    with pytest.raises(AssertionError, match="never finished") as stopped:
        fresh_process.result("two_devices_jaxlib_svd", "test_linalg.py:jaxlib_svd_on_two_devices")
    assert "Timeout" in str(stopped.value)


def test_small_factors_and_solves_equal_lapack():
    """The unrolled forms used on accelerators compute what JAX's LAPACK calls compute, to rounding."""
    rng = np.random.default_rng(3)
    for n in (1, 4, 10):
        m = rng.normal(size=(6, n, n))
        spd = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
        chol = np.linalg.cholesky(spd)
        np.testing.assert_allclose(linalg._small_cholesky(jnp.asarray(spd)), chol, rtol=1e-12, atol=1e-12)
        for lower in (True, False):
            tri = chol if lower else np.swapaxes(chol, -1, -2)
            for trans in ("N", "T"):
                for rhs in (rng.normal(size=(6, n)), rng.normal(size=(6, n, 3))):
                    expected = jax.vmap(
                        lambda a, b, lower=lower, trans=trans: jax.scipy.linalg.solve_triangular(
                            a, b, lower=lower, trans=trans
                        )
                    )(tri, rhs)
                    got = linalg._small_triangular(jnp.asarray(tri), jnp.asarray(rhs), lower=lower, trans=trans)
                    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    assert np.isnan(linalg._small_cholesky(-jnp.eye(3))).any()  # not positive definite: NaN, as LAPACK's


@pytest.mark.parametrize("platform, library_calls", [("cuda", 0), ("cpu", 1)])
def test_small_batches_on_accelerators_are_unrolled(platform, library_calls):
    """Lowered for a GPU, 5,000 factors and solves of 10 x 10 make no library call and no loop (pieces or
    cuSOLVER's per-matrix kernels); lowered for the CPU they are LAPACK calls, cut in pieces."""
    spd = jnp.broadcast_to(2.0 * jnp.eye(10), (5_000, 10, 10))

    def factor_and_solve(a):
        c = linalg.cholesky(a)
        return linalg.cho_solve(c, a[:, 0]), linalg.solve_triangular(c, a[:, 1], lower=True, trans="T")

    text = jax.export.export(jax.jit(jax.vmap(factor_and_solve)), platforms=[platform])(spd).mlir_module()
    assert ("custom_call" in text) == bool(library_calls)
    assert ("while" in text) == bool(library_calls)
