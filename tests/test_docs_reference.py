"""The API reference (docs/api/*.rst) lists every public name, and nothing that no longer exists.

The sources are read as text (``docs/_ext/reference.py``, the reader the Sphinx build uses for its
aliases); Sphinx does not run here.
"""

import importlib
import importlib.util
import inspect
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _reference_module() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "_ext" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _reference_module()
ENTRIES = reference.reference_entries(ROOT / "docs" / "api")
MODULES = reference.public_modules()


def _package(module: str) -> str | None:
    """The public package a submodule's section may leave its package's names to."""
    parent = module.rpartition(".")[0]
    return parent if parent in ENTRIES and hasattr(importlib.import_module(parent), "__path__") else None


def test_public_modules_are_found() -> None:
    # the walk reaches the subpackages, the families, their modules and the packages outside bayesbandit/
    for name in ("bayesbandit", "bayesbandit.policies.glm", "bayesbandit.bai.gse", "bayesbandit.models"):
        assert name in MODULES
    assert not any("._" in name or name.startswith("bayesbandit.experiments") for name in MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_every_exported_name_is_listed(module: str) -> None:
    """Each name in ``module.__all__`` is an entry of its section (or of its package's), naming the same object."""
    assert module in ENTRIES, f"docs/api has no '.. automodule:: {module}' section for a public module"
    exported = importlib.import_module(module)
    listed = ENTRIES[module] + ENTRIES.get(_package(module) or "", [])
    objects = {id(reference.import_name(entry)): entry for entry in listed}
    by_name = {entry.rsplit(".", 1)[-1]: entry for entry in listed}
    missing = []
    for name in exported.__all__:
        obj = getattr(exported, name)
        if callable(obj) or inspect.ismodule(obj):
            found = id(obj) in objects and objects[id(obj)].rsplit(".", 1)[-1] == name
        else:  # a constant: listed under this module's own name
            found = name in by_name and by_name[name] in (f"{module}.{name}", f"{_package(module)}.{name}")
        if not found:
            missing.append(name)
    assert not missing, f"{module}.__all__ names missing from docs/api: {missing}"


def test_no_entry_names_what_no_longer_exists() -> None:
    """Every entry imports, belongs to its section's module, and is documented on one page only."""
    stale, foreign = [], []
    pages: dict[int, list[str]] = {}
    for module, names in ENTRIES.items():
        exported = importlib.import_module(module)
        for entry in names:
            try:
                obj = reference.import_name(entry)
            except (ImportError, AttributeError):
                stale.append(entry)
                continue
            if entry.rsplit(".", 1)[-1] not in exported.__all__:
                foreign.append(f"{module}: {entry}")
            if callable(obj) and not inspect.ismodule(obj):
                pages.setdefault(id(obj), []).append(entry)
    assert not stale, f"docs/api lists names that do not exist: {stale}"
    assert not foreign, f"docs/api lists names outside their module's __all__: {foreign}"
    twice = [names for names in pages.values() if len(set(names)) > 1]
    assert not twice, f"one object under several page names (a class or function has one page): {twice}"


def test_sections_cover_only_public_modules() -> None:
    assert set(ENTRIES) == set(MODULES), set(ENTRIES) ^ set(MODULES)
