"""``block_widths`` in tiles against ``x^T V^{-1} x`` from NumPy's inverse, across tile boundaries."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit import _gaussian_linear as gl


@pytest.mark.parametrize("blocks, n, d", [(3, 1, 4), (2, 5_000, 6), (4, 777, 11)])
def test_tiled_widths_equal_the_quadratic_form(blocks, n, d):
    rng = np.random.default_rng(n)
    arms = rng.standard_normal((n, d))
    arms[:3] = 0.0  # zero arms have width 0 (the padding rows are zero too)
    gram = rng.standard_normal((blocks, d, 3 * d))
    precision = np.eye(d) + np.einsum("mdn,men->mde", gram, gram)
    chol = jnp.asarray(np.linalg.cholesky(precision))
    rows = max(8, gl._WIDTH_TILE // (blocks * d))
    assert (n > rows) == (n >= 5_000 or n == 777)  # the larger cases span several tiles, the last one partial
    widths = np.asarray(jax.jit(gl.block_widths)(chol, jnp.asarray(arms)))
    assert widths.shape == (blocks, n)
    expected = np.sqrt(np.einsum("nd,mde,ne->mn", arms, np.linalg.inv(precision), arms))
    np.testing.assert_allclose(widths, expected, rtol=1e-10, atol=1e-300)
    batched = jax.vmap(gl.block_widths, (0, None))(jnp.stack([chol, chol]), jnp.asarray(arms))
    np.testing.assert_allclose(batched[1], widths, rtol=1e-12)
