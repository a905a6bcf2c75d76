"""``bayesbandit._fastmath``: float64 log and log1p as straight-line arithmetic, and the rewrite that uses them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit import _fastmath

RNG = np.random.default_rng(0)
# Every binade a float64 can reach, the reduced range's edges, and the softplus range (0, 1] densely.
NORMAL = np.concatenate(
    [
        np.exp(RNG.uniform(-700.0, 709.0, 200_000)),
        RNG.uniform(0.0, 1.0, 200_000),
        RNG.uniform(0.28, 0.45, 100_000),
        RNG.uniform(1.0, 4.0, 100_000),
        [2.0**53, 2.0**53 + 2.0, 1e308, 2.0**60 + 1.0, 1.0, 2.0, 0.5],
    ]
)


def _ulps(got: np.ndarray, expected: np.ndarray) -> float:
    keep = expected != 0.0
    return float(np.max(np.abs(got[keep] - expected[keep]) / np.spacing(np.abs(expected[keep]))))


def test_log1p_within_two_ulp_of_the_c_library():
    x = np.concatenate([NORMAL, -RNG.uniform(0.0, 1.0, 200_000), -1.0 + 10.0 ** RNG.uniform(-15.0, -1.0, 10_000)])
    x = x[(x > -1.0) & (np.abs(x) > 1e-300)]
    got = np.asarray(jax.jit(_fastmath.log1p)(x))
    assert _ulps(got, np.log1p(x)) <= 2.0


def test_log_within_one_ulp_of_the_c_library():
    got = np.asarray(jax.jit(_fastmath.log)(NORMAL))
    assert _ulps(got, np.log(NORMAL)) <= 1.0


@pytest.mark.parametrize("name", ["log", "log1p"])
def test_special_values_as_xla_computes_them(name):
    x = jnp.asarray([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, 1.0])
    got = np.asarray(jax.jit(getattr(_fastmath, name))(x))
    expected = np.asarray(jax.jit(getattr(jnp, name))(x))
    np.testing.assert_array_equal(got, expected)  # NaNs equal, and -0.0 vs 0.0 by its sign below
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_log1p_of_a_subnormal_is_itself_as_in_the_c_library():
    x = np.array([1e-320, -1e-320, 5e-324])
    np.testing.assert_array_equal(np.asarray(jax.jit(_fastmath.log1p)(x)), np.log1p(x))


def _potential(theta, x, y):
    predictor = x @ theta
    return 0.5 * theta @ theta - jnp.sum(y * predictor - jax.nn.softplus(predictor)) + jnp.log1p(theta @ theta)


def test_rewrite_replaces_every_log_even_in_nested_calls_and_keeps_the_value():
    x = jnp.asarray(RNG.uniform(-1.0, 1.0, (50, 4)))
    y = jnp.asarray(RNG.integers(0, 2, 50).astype(float))
    thetas = jnp.asarray(RNG.normal(size=(6, 4)))
    plain = jax.jit(jax.vmap(lambda t: _potential(t, x, y)))
    fast = jax.jit(jax.vmap(_fastmath.fast_logs(lambda t: _potential(t, x, y))))
    np.testing.assert_allclose(np.asarray(fast(thetas)), np.asarray(plain(thetas)), rtol=1e-15)
    text = fast.lower(thetas).compile().as_text()  # softplus is a jit of a custom_jvp: both were entered
    assert "log-plus-one" not in text and " log(" not in text
    assert "log-plus-one" in plain.lower(thetas).compile().as_text()


def test_rewrite_of_a_derivative_pass_keeps_its_derivatives():
    x = jnp.asarray(RNG.uniform(-1.0, 1.0, (30, 3)))
    y = jnp.asarray(RNG.integers(0, 2, 30).astype(float))
    theta = jnp.asarray(RNG.normal(size=3))
    pass_ = jax.value_and_grad(lambda t: _potential(t, x, y))  # differentiated first, then rewritten
    value, grad = jax.jit(_fastmath.fast_logs(pass_))(theta)
    expected_value, expected_grad = pass_(theta)
    np.testing.assert_allclose(value, expected_value, rtol=1e-15)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-14)


def test_float32_and_accelerator_lowering_keep_the_library_logs():
    f = _fastmath.fast_logs(jnp.log1p)
    text32 = jax.jit(f).lower(jnp.ones(3, jnp.float32)).compile().as_text()
    assert "log-plus-one" in text32  # only float64 is rewritten
    exported = jax.export.export(jax.jit(f), platforms=("cuda",))(jax.ShapeDtypeStruct((3,), jnp.float64))
    assert "log_plus_one" in exported.mlir_module()
