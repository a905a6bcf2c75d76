"""The API reference: which modules are public, what the reference pages list, and re-exported names.

The reference pages (``docs/api/*.rst``) give each public module a section that opens with
``.. automodule:: <module>`` and lists the module's ``__all__`` in ``autosummary`` tables. Every
class and function has one page, under the first public name it has (``bayesbandit.GLMTSL``, not
``bayesbandit.policies.glm.GLMTSL``); the tables of the other modules that export it list that
same name. :func:`reference_entries` reads those sources without Sphinx (``tests/test_docs_reference.py``
compares them with the package), and the Sphinx extension in :func:`setup` resolves a reference
to any exported name (``bayesbandit.policies.GLMTSL``) to the page of the object it names.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

from sphinx.util.nodes import make_refnode

API_DIR = Path(__file__).resolve().parents[1] / "api"

# The library's packages outside bayesbandit/ (installed as bayesbandit.models, bayesbandit.diagnostics).
# bayesbandit.experiments is the command line's registry of runs, documented by the results pages.
_EXTRA_PACKAGES = ("bayesbandit.models", "bayesbandit.diagnostics")

_AUTOMODULE = re.compile(r"^\.\.\s+automodule::\s*([\w.]+)\s*$")
_CURRENTMODULE = re.compile(r"^\.\.\s+currentmodule::\s*([\w.]+)\s*$")
_AUTOSUMMARY = re.compile(r"^\.\.\s+autosummary::\s*$")
_ENTRY = re.compile(r"^\s+~?([A-Za-z_][\w.]*)\s*$")


def public_modules() -> list[str]:
    """Every public module of the library: no path component starts with ``_`` (the experiments, the command
    line's, left out); each declares its names in ``__all__`` (``tests/test_api_rules.py`` checks)."""
    import bayesbandit

    found = ["bayesbandit"]
    found += [info.name for info in pkgutil.walk_packages(bayesbandit.__path__, "bayesbandit.")]
    for package in _EXTRA_PACKAGES:
        found.append(package)
        found += [info.name for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + ".")]
    public = [
        name
        for name in found
        if not any(part.startswith("_") for part in name.split(".")) and not name.startswith("bayesbandit.experiments")
    ]
    # set: installed, the walk of bayesbandit finds models and diagnostics, which are also walked on their own
    return sorted(set(public), key=lambda name: (name != "bayesbandit", name))


def reference_entries(api_dir: Path = API_DIR) -> dict[str, list[str]]:
    """The full names each module's section lists, read from the reference sources.

    Returns
    -------
    dict of str to list of str
        For each module with an ``.. automodule::`` in ``api_dir/*.rst``, the entries of the
        ``autosummary`` tables that follow it (up to the next ``automodule``), as full dotted
        names: an entry is relative to the ``currentmodule`` above it, as autosummary reads it
        (a leading ``~`` is dropped).
    """
    entries: dict[str, list[str]] = {}
    for page in sorted(api_dir.glob("*.rst")):
        module: str | None = None
        current = ""
        in_table = False
        for line in page.read_text().splitlines():
            if match := _AUTOMODULE.match(line):
                module = match.group(1)
                entries.setdefault(module, [])
                current, in_table = module, False
            elif match := _CURRENTMODULE.match(line):
                current, in_table = match.group(1), False
            elif _AUTOSUMMARY.match(line):
                in_table = True
            elif in_table and line.strip() and not line.startswith(" "):
                in_table = False
            elif in_table and module is not None and not line.strip().startswith(":"):
                if match := _ENTRY.match(line):
                    name = match.group(1)
                    entries[module].append(name if name.startswith(current + ".") else f"{current}.{name}")
    return entries


def import_name(full: str) -> Any:
    """The object a full dotted name (``bayesbandit.bai.GSE``) names: the longest importable module, then attributes."""
    parts = full.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(full)


def aliases(entries: dict[str, list[str]]) -> dict[str, str]:
    """Each exported name without a page of its own, mapped to the name whose page documents its object.

    A class or function is documented once (:func:`reference_entries` gives the names); every other
    public module that exports it, by ``__all__``, gets an alias to that page. Constants are
    documented in each module that exports them.
    """
    documented = {
        id(obj): name
        for names in entries.values()
        for name in names
        if callable(obj := import_name(name))  # classes and functions: a constant is documented where it is
    }
    table = {}
    for module in public_modules():
        exported = importlib.import_module(module)
        for name in exported.__all__:
            obj = getattr(exported, name)
            page = documented.get(id(obj)) if callable(obj) else None
            if page is not None and page != f"{module}.{name}":
                table[f"{module}.{name}"] = page
    return table


def _resolve_alias(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """``missing-reference``: a reference to an exported name resolves to its object's page."""
    if node.get("refdomain") != "py":
        return None
    table = app.env.bayesbandit_aliases
    target = node["reftarget"]
    module, cls = node.get("py:module"), node.get("py:class")
    candidates = [target]
    if module:
        candidates.append(f"{module}.{target}")
        if cls:
            candidates.append(f"{module}.{cls}.{target}")
    domain = env.get_domain("py")
    for candidate in candidates:
        parts = candidate.split(".")
        for cut in range(len(parts), 1, -1):
            head = ".".join(parts[:cut])
            if head in table:
                resolved = ".".join([table[head], *parts[cut:]])
                plain = node.deepcopy()
                plain["reftarget"] = resolved
                for key in ("py:module", "py:class", "refspecific"):
                    plain.attributes.pop(key, None)
                return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], resolved, plain, contnode)
    # a name written relative to the module that defines it (``:func:`play_round``` in a docstring
    # of bayesbandit.sim.round), read where another module is current: the one documented object
    # of that name, if there is exactly one
    matches = [
        (name, entry)
        for name, entry in domain.find_obj(env, None, None, target, node["reftype"], 1)
        if not entry.aliased
    ]
    if len(matches) == 1:
        name, entry = matches[0]
        return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)
    return None


def _load_aliases(app: Any) -> None:
    app.env.bayesbandit_aliases = aliases(reference_entries())


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _load_aliases)
    app.connect("missing-reference", _resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
