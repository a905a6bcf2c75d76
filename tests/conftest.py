"""Test harness: CPU only, float64 on, deterministic NumPy seeds per test."""

import os

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("JAX_ENABLE_X64", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bayesbandit  # noqa: E402,F401  (importing it turns x64 on)

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def rng():
    """A fresh, seeded NumPy generator for each test."""
    return np.random.default_rng(12345)


def pytest_configure(config):
    assert jax.config.jax_enable_x64, "the suite needs float64"
