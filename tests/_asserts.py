"""Tree-wise assertions (no chex)."""

import jax
import numpy as np

import bayesbandit as bb

# Jitted entry points shared by the tests: eager calls would recompile Newton's while loop on
# every call; these compile once per (model, shapes) and are reused across test modules.
map_jit = jax.jit(bb.map_estimate, static_argnums=0, static_argnames=("max_steps", "tol"))
laplace_jit = jax.jit(bb.laplace, static_argnums=0, static_argnames=("max_steps", "tol"))


def leaves(tree):
    """The array leaves of a pytree as NumPy arrays (``None`` leaves are skipped by jax)."""
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def assert_trees_equal(a, b):
    """Same structure and bit-identical leaves."""
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(leaves(a), leaves(b), strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype
        assert np.array_equal(x, y, equal_nan=True)


def snapshot(tree):
    """A deep NumPy copy of a pytree's leaves, for before/after comparisons."""
    return [np.array(x, copy=True) for x in leaves(tree)]


def assert_unchanged(before, tree):
    after = leaves(tree)
    assert len(before) == len(after)
    for x, y in zip(before, after, strict=True):
        assert np.array_equal(x, y, equal_nan=True)


def all_finite(tree):
    """Whether every float leaf of a pytree is finite."""
    return all(np.all(np.isfinite(x)) for x in leaves(tree) if np.issubdtype(x.dtype, np.inexact))
