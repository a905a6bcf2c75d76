"""Every public name is importable and is what it says."""

import importlib

import bayesbandit.models as models
import pytest

import bayesbandit as bb


@pytest.mark.parametrize("module, names", [(bb, bb.__all__), (models, models.__all__)], ids=["bayesbandit", "models"])
def test_all_names_import(module, names):
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(module, name) is not None, name
        exec(f"from {module.__name__} import {name}", {})


def test_subpackage_all_names_import():
    for mod in ("bayesbandit.inference", "bayesbandit.policies", "bayesbandit.errors", "bayesbandit.history"):
        module = importlib.import_module(mod)
        for name in module.__all__:
            assert hasattr(module, name), f"{mod}.{name}"


def test_errors_subclass_the_natural_builtins():
    e = bb.errors
    for cls in (e.InvalidInput, e.ModelSpecError, e.NotConverged, e.CheckpointError):
        assert issubclass(cls, e.BayesBanditError)
    assert issubclass(e.InvalidInput, ValueError) and issubclass(e.ModelSpecError, ValueError)
    assert issubclass(e.CheckpointError, ValueError) and issubclass(e.NotConverged, RuntimeError)


def test_x64_is_enabled_by_import():
    import jax
    import jax.numpy as jnp

    assert jax.config.jax_enable_x64 and jnp.zeros(1).dtype == jnp.float64
