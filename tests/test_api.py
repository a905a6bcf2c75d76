"""Every public name is importable and is what it says; the package's layout rules hold."""

import importlib
import inspect
import pkgutil
import subprocess
import sys

import bayesbandit.models as models
import pytest

import bayesbandit as bb


@pytest.mark.parametrize("module, names", [(bb, bb.__all__), (models, models.__all__)], ids=["bayesbandit", "models"])
def test_all_names_import(module, names):
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(module, name) is not None, name
        exec(f"from {module.__name__} import {name}", {})


def _modules(package):
    yield package
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        yield importlib.import_module(info.name)


def test_subpackage_all_names_import():
    for module in _modules(bb):
        for name in getattr(module, "__all__", ()):
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_no_module_shares_its_name_with_a_function_it_exports():
    """``import bayesbandit.x.y as m`` must give the module, never a function of the same name."""
    for module in _modules(bb):
        short = module.__name__.rsplit(".", 1)[-1]
        exported = getattr(module, short, None)
        assert exported is None or inspect.ismodule(exported), module.__name__
        parent = sys.modules[module.__name__.rsplit(".", 1)[0]] if "." in module.__name__ else None
        if parent is not None:
            assert inspect.ismodule(getattr(parent, short)), f"{parent.__name__}.{short} is not the module"


def _fresh_python(code):
    env = {"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def test_import_changes_no_jax_setting_starts_no_backend_and_loads_no_diagnostics_or_experiments():
    out = _fresh_python(
        "import sys, jax; import bayesbandit\n"
        "from jax._src import xla_bridge\n"
        "print(jax.config.jax_enable_x64, xla_bridge.backends_are_initialized())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('bayesbandit.diagnostics', 'bayesbandit.experiments',"
        " 'arviz'))))"
    )
    assert out.splitlines() == ["False False", "[]"]  # no backend yet: process settings may follow the imports


def test_core_source_never_imports_diagnostics_or_experiments():
    for module in _modules(bb):
        if module.__name__.startswith(("bayesbandit.diagnostics", "bayesbandit.experiments")):
            continue
        for line in inspect.getsource(module).splitlines():
            if line.lstrip().startswith(("import ", "from ")):
                assert "diagnostics" not in line and "experiments" not in line, (module.__name__, line)


def test_errors_subclass_the_natural_builtins():
    e = bb.errors
    for cls in (e.InvalidInput, e.ModelSpecError, e.NotConverged, e.CheckpointError, e.PrecisionError):
        assert issubclass(cls, e.BayesBanditError)
    assert issubclass(e.InvalidInput, ValueError) and issubclass(e.ModelSpecError, ValueError)
    assert issubclass(e.CheckpointError, ValueError) and issubclass(e.NotConverged, RuntimeError)
    assert issubclass(e.PrecisionError, RuntimeError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: bb.GLMTSL(models.logistic(), 1.0),
        lambda: bb.GLMFPL(models.logistic(), 0.5),
        lambda: bb.LinTS(1.0, 0.5),
        lambda: bb.LinUCB(1.0),
        lambda: bb.inference.DenseNewton(3),
    ],
)
def test_hyper_parameters_are_keyword_only(make):
    with pytest.raises(TypeError):
        make()


def test_policy_classes_with_the_same_fields_have_different_tree_structures():
    """A jit cache keyed on the policy's tree structure must never serve one class another's program."""
    import jax
    from bayesbandit.models import logistic

    from bayesbandit.drift import Discounted, SlidingWindow

    model = logistic()
    policies = [
        bb.GLMTSL(model, a=1.0),
        bb.GLMUCB(model, rho=1.0),
        bb.UCBGLM(model, alpha=1.0),
        bb.LinTS(v=1.0),
        bb.LinUCB(alpha=1.0),
        Discounted(bb.LinTS(v=1.0), gamma=0.9),
        SlidingWindow(bb.LinTS(v=1.0), window=10),
    ]
    structures = [jax.tree.structure(p) for p in policies]
    for i, a in enumerate(structures):
        for j, b in enumerate(structures):
            assert (a == b) == (i == j), (policies[i], policies[j])
    name = jax.jit(lambda p: jax.numpy.zeros(len(type(p).__name__)))
    assert [int(name(p).shape[0]) for p in policies] == [len(type(p).__name__) for p in policies]
