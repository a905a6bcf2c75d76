"""Programs run once compile with XLA's quick options (``bayesbandit._compile``) and compute the same numbers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import jit_once, one_shot_options


def test_a_program_run_once_gets_the_quick_options_where_xla_has_them():
    options = one_shot_options()
    assert options in ({}, {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False})
    once = jit_once(lambda x, n: jnp.cumsum(jnp.sin(x)) * n, static_argnums=1)
    x = jnp.linspace(0.0, 3.0, 7)
    np.testing.assert_allclose(once(x, 2), jax.jit(lambda x: jnp.cumsum(jnp.sin(x)) * 2)(x), rtol=1e-14)
    assert once.lower(x, 2).compile() is not None  # the same jitted function lowers explicitly


def test_called_inside_another_trace_it_becomes_part_of_that_program():
    once = jit_once(lambda x: 2.0 * x)
    np.testing.assert_array_equal(jax.jit(lambda x: once(x) + 1.0)(jnp.arange(3.0)), [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(jax.vmap(once)(jnp.arange(3.0)), [0.0, 2.0, 4.0])
