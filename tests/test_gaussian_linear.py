"""The Gaussian-linear posterior module against NumPy references, and that it and the random-tie argmax are the only ones."""

import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit import _gaussian_linear as gl

D, N, M = 4, 30, 3


@pytest.fixture(scope="module")
def data():
    bb.runtime.enable_x64()
    rng = np.random.default_rng(0)
    return rng.normal(size=(N, D)), rng.normal(size=N), rng.integers(0, M, N)


def _ridge(x, y, lam):
    """NumPy reference: ``V = lam I + X^T X``, ``b = X^T y``."""
    return lam * np.eye(x.shape[1]) + x.T @ x, x.T @ y


def test_precision_form_rank_one_and_block_updates_match_numpy(data):
    x, y, block = data
    lam = 0.7
    precision, b = gl.isotropic(lam, D)
    for xi, yi in zip(x, y):
        precision, b = gl.observe(precision, b, jnp.asarray(xi), jnp.asarray(yi))
    v_ref, b_ref = _ridge(x, y, lam)
    np.testing.assert_allclose(precision, v_ref, rtol=1e-12)
    np.testing.assert_allclose(b, b_ref, rtol=1e-12, atol=1e-12)
    chol, theta = gl.estimate(precision, b)
    np.testing.assert_allclose(chol @ chol.T, v_ref, rtol=1e-12)
    np.testing.assert_allclose(theta, np.linalg.solve(v_ref, b_ref), rtol=1e-10)

    blocks_v, blocks_b = gl.isotropic(lam, D, (M,))
    blocks_v, blocks_b = gl.observe_blocks(blocks_v, blocks_b, jnp.asarray(block), jnp.asarray(x), jnp.asarray(y))
    for j in range(M):
        v_j, b_j = _ridge(x[block == j], y[block == j], lam)
        np.testing.assert_allclose(blocks_v[j], v_j, rtol=1e-12)
        np.testing.assert_allclose(blocks_b[j], b_j, rtol=1e-12, atol=1e-12)


def test_vmapped_blocks_equal_leading_axes_and_numpy(data):
    x, y, block = data
    precision, b = gl.observe_blocks(*gl.isotropic(1.0, D, (M,)), jnp.asarray(block), jnp.asarray(x), jnp.asarray(y))
    chol, theta = gl.estimate(precision, b)
    chol_v, theta_v = jax.vmap(gl.estimate)(precision, b)
    np.testing.assert_array_equal(chol, chol_v)
    np.testing.assert_array_equal(theta, theta_v)
    arms = jnp.asarray(x[:7])
    widths = gl.block_widths(chol, arms)
    for j in range(M):
        v_inv = np.linalg.inv(np.asarray(precision[j]))
        np.testing.assert_allclose(theta[j], v_inv @ np.asarray(b[j]), rtol=1e-10)
        reference = np.sqrt(np.einsum("ij,jk,ik->i", x[:7], v_inv, x[:7]))
        np.testing.assert_allclose(widths[j], reference, rtol=1e-10)
        np.testing.assert_allclose(gl.mahalanobis_norms(chol[j], arms), reference, rtol=1e-10)
        np.testing.assert_allclose(gl.inverse_widths(jnp.asarray(v_inv), arms), reference, rtol=1e-10)
    xi = jnp.ones(D)
    offset = jax.vmap(gl.solve_lower_transpose, (0, None))(chol, xi)
    for j in range(M):
        np.testing.assert_allclose(np.asarray(chol[j]).T @ offset[j], xi, rtol=1e-10)


def test_sherman_morrison_matches_the_cholesky_inverse_and_numpy(data):
    x, y, _ = data
    lam = 0.5
    inverse, factor = gl.invert(jnp.asarray(lam * np.eye(D)))
    np.testing.assert_allclose(factor, np.sqrt(lam) * np.eye(D), rtol=1e-14)
    b = jnp.zeros(D)
    for xi, yi in zip(x, y):
        inverse, g, den = gl.sherman_morrison(inverse, jnp.asarray(xi))
        b = b + yi * xi
    v_ref, b_ref = _ridge(x, y, lam)
    np.testing.assert_allclose(inverse, np.linalg.inv(v_ref), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(inverse @ b, gl.estimate(jnp.asarray(v_ref), b)[1], rtol=1e-9)
    np.testing.assert_allclose(gl.invert(jnp.asarray(v_ref))[0], np.linalg.inv(v_ref), rtol=1e-10, atol=1e-13)
    # with a noise scale s: (V + x x^T / s)^{-1}
    p = np.linalg.inv(v_ref)
    new, _, den = gl.sherman_morrison(jnp.asarray(p), jnp.asarray(x[0]), 2.0)
    np.testing.assert_allclose(new, np.linalg.inv(v_ref + np.outer(x[0], x[0]) / 2.0), rtol=1e-10)
    np.testing.assert_allclose(den, 2.0 + x[0] @ p @ x[0], rtol=1e-14)


def test_sherman_morrison_on_numpy_arrays_is_the_numpy_formula(data):
    x, _, _ = data
    p = np.linalg.inv(_ridge(x, x[:, 0], 1.0)[0])
    new, g, den = gl.sherman_morrison(p, x[1])
    assert isinstance(new, np.ndarray)
    vx = p @ x[1]
    np.testing.assert_array_equal(new, p - np.outer(vx, vx) / (1.0 + x[1] @ vx))
    host = gl.HostRidge(D)
    for xi, yi in zip(x, x[:, 0]):
        host.update(xi, yi)
    np.testing.assert_allclose(host.v_inv, p, rtol=1e-9)
    np.testing.assert_allclose(host.theta, p @ (x.T @ x[:, 0]), rtol=1e-9)
    np.testing.assert_allclose(host.uncertainty(x[:3]), np.sqrt(np.einsum("ij,jk,ik->i", x[:3], p, x[:3])), rtol=1e-9)


def test_kalman_covariance_form_equals_the_precision_form(data):
    x, y, block = data
    prior_var, noise_var = 2.0, 0.25
    cov, mean = gl.isotropic(prior_var, D, (M,))
    cov, mean = gl.kalman_observe_blocks(cov, mean, jnp.asarray(block), jnp.asarray(x), jnp.asarray(y), noise_var)
    for j in range(M):
        v_j, b_j = _ridge(x[block == j], y[block == j], noise_var / prior_var)
        np.testing.assert_allclose(cov[j], noise_var * np.linalg.inv(v_j), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(mean[j], np.linalg.solve(v_j, b_j), rtol=1e-9, atol=1e-12)


# --- one implementation of each -------------------------------------------------------------

PACKAGE = pathlib.Path(gl.__file__).parent
SECOND_IMPLEMENTATIONS = {
    # a rank-one update of a Gram, precision or inverse matrix: M + x x^T, M - g g^T / den
    "_gaussian_linear.py": [
        re.compile(r"[+-]\s*(jnp|np)\.outer\(\s*([\w.\[\], ]+?)\s*,\s*\2\s*\)"),
        re.compile(r"\b(\w+)\[:, None\]\s*\*\s*\1\[None, :\]"),
    ],
    # an argmax among the maxima by random noise, or the j-th tie by a prefix count
    "_numerics.py": [
        re.compile(r"argmax\(\s*jnp\.where\("),
        re.compile(r"argmax\(\s*jnp\.cumsum\("),
        re.compile(r"lexsort\(.*\)\[0\]"),
    ],
}


@pytest.mark.parametrize("home", sorted(SECOND_IMPLEMENTATIONS))
def test_no_second_ridge_update_or_random_argmax(home):
    """The ridge updates live in ``_gaussian_linear``, the random-tie argmax in ``_numerics``: grep finds no other."""
    hits: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            for pattern in SECOND_IMPLEMENTATIONS[home]:
                if pattern.search(code):
                    hits.setdefault(str(path.relative_to(PACKAGE)), []).append(f"{number}: {line.strip()}")
    assert home in hits, f"the patterns no longer match {home} itself: update them"
    others = {path: lines for path, lines in hits.items() if path != home}
    assert not others, others
