"""The package's layering: no import cycles, and the core never imports the layers above it.

Every import statement of every module counts: at module level, inside functions (lazy imports)
and under ``if TYPE_CHECKING:``. Modules are found from ``pyproject.toml``'s
``[tool.setuptools] package-dir``, so the model zoo (``models/``), the diagnostics and the
experiments count as the ``bayesbandit.*`` subpackages they are installed as. An import names one
module: ``from a.b import c`` is an import of ``a.b.c`` when that is a module, else of ``a.b``
(grimp's and import-linter's reading); the parent packages a module's import runs implicitly are
not counted, or every module would import the package root.

Layers, lowest first; each may import itself and the layers listed for it:

=================  =====================================================================
layer              may import
=================  =====================================================================
core               core (every ``bayesbandit`` module not listed below)
models             core (the model zoo, ``bayesbandit.models``)
testing            core, models (``bayesbandit.testing``)
diagnostics        core, models (``bayesbandit.diagnostics``)
experiments        core, models, testing, diagnostics (``bayesbandit.experiments``)
=================  =====================================================================
"""

from __future__ import annotations

import ast
import shutil
import tomllib
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LAYERS: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "models": frozenset({"core", "models"}),
    "testing": frozenset({"core", "models", "testing"}),
    "diagnostics": frozenset({"core", "models", "diagnostics"}),
    "experiments": frozenset({"core", "models", "testing", "diagnostics", "experiments"}),
}
"""What each layer may import (module docstring)."""

Imports = dict[str, dict[str, int]]  # module -> {imported module: line of its first import}


def layer_of(module: str) -> str:
    """The layer of a ``bayesbandit`` module: its subpackage's name if that is a layer, else ``"core"``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "core"


def module_files(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name, from ``pyproject.toml``'s ``package-dir``."""
    package_dir = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    files: dict[str, Path] = {}
    for package, folder in package_dir.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join((package, *parts[: -1 if parts[-1] == "__init__" else None]))
            files.setdefault(name, path)  # a mapped subpackage's own folder wins over a stray one
    return files


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The package's modules one import statement names (module docstring)."""

    def innermost(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        targets = [innermost(alias.name) for alias in node.names]
    else:
        if node.level:
            package = module.split(".")[: None if is_package else -1]
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        targets = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else innermost(base) for alias in node.names
        ]
    return [t for t in targets if t is not None and t != module]


def import_graph(root: Path) -> tuple[Imports, dict[str, Path]]:
    """Who imports whom among the package's modules (every import statement counts)."""
    files = module_files(root)
    known = set(files)
    graph: Imports = {}
    for module, path in files.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _imported(node, module, path.name == "__init__.py", known):
                    edges[target] = min(edges.get(target, node.lineno), node.lineno)
        graph[module] = edges
    return graph, files


def strongly_connected(graph: Imports) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components)


def shortest_cycle(graph: Imports, component: list[str]) -> list[str]:
    """A shortest import cycle through the component's first module (breadth-first), closed: first == last."""
    first, members = component[0], set(component)
    parent: dict[str, str] = {}
    queue = deque([first])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor == first:
                path = [node]
                while path[-1] != first:
                    path.append(parent[path[-1]])
                return [first, *reversed(path[:-1]), first] if node != first else [first, first]
            if successor in members and successor not in parent:
                parent[successor] = node
                queue.append(successor)
    raise AssertionError(f"no cycle through {first}")


def layering_problems(root: Path) -> list[str]:
    """Every import cycle and every import of a higher layer in the package under ``root``, one line each."""
    graph, files = import_graph(root)

    def where(module: str, target: str) -> str:
        return f"{files[module].relative_to(root)}:{graph[module][target]}"

    problems = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            if layer_of(target) not in LAYERS[layer_of(module)]:
                problems.append(
                    f"layer violation: {module} ({layer_of(module)}) imports {target} ({layer_of(target)}) at "
                    f"{where(module, target)}; {layer_of(module)} may import only {', '.join(sorted(LAYERS[layer_of(module)]))}"
                )
    for component in strongly_connected(graph):
        cycle = shortest_cycle(graph, component)
        steps = ", ".join(where(a, b) for a, b in zip(cycle, cycle[1:]))
        problems.append(
            f"import cycle among {len(component)} modules: {' -> '.join(cycle)} ({steps}); members: {', '.join(component)}"
        )
    return problems


def _copy_of_the_package(tmp_path: Path) -> Path:
    """A scratch copy of the package's sources and ``pyproject.toml``."""
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values()
    for folder in set(folders):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def _plant(root: Path, relative: str, line: str) -> None:
    """Append ``line`` to a module of the copy under ``root``."""
    path = root / relative
    path.write_text(path.read_text() + line + "\n")


def test_the_package_has_no_cycles_and_no_imports_of_higher_layers():
    problems = layering_problems(ROOT)
    assert not problems, "\n".join(problems)


def test_the_modules_come_from_package_dir():
    files = module_files(ROOT)
    assert files["bayesbandit.models.glm"] == ROOT / "models" / "glm.py"
    assert files["bayesbandit.experiments"] == ROOT / "experiments" / "__init__.py"
    assert files["bayesbandit.inference.potential"] == ROOT / "bayesbandit" / "inference" / "potential.py"
    assert layer_of("bayesbandit.diagnostics._compare") == "diagnostics" and layer_of("bayesbandit.agent") == "core"


def test_a_lazy_import_of_the_model_zoo_from_the_core_is_reported(tmp_path):
    root = _copy_of_the_package(tmp_path)
    relative = "bayesbandit/policies/neural/_neural_linear.py"
    lines = (root / relative).read_text().count("\n")
    _plant(
        root, relative, "\n\ndef _default_head():\n    from bayesbandit.models import logistic\n\n    return logistic()"
    )
    assert layering_problems(root) == [
        "layer violation: bayesbandit.policies.neural._neural_linear (core) imports bayesbandit.models (models) at "
        f"{relative}:{lines + 4}; core may import only core"
    ]


def test_a_cycle_through_type_checking_imports_is_reported(tmp_path):
    root = _copy_of_the_package(tmp_path)
    relative = "bayesbandit/inference/online_laplace.py"
    lines = (root / relative).read_text().count("\n")
    _plant(root, relative, "if TYPE_CHECKING:\n    from bayesbandit import BoundModel")
    (problem,) = layering_problems(root)
    assert problem.startswith("import cycle among ")
    assert " -> bayesbandit.inference.online_laplace -> bayesbandit (" in problem
    assert f"{relative}:{lines + 2}" in problem


def test_relative_and_function_level_imports_count(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools]\npackage-dir = { "pkg" = "src", "pkg.top" = "top" }\n')
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "top").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("")
    (tmp_path / "src" / "sub" / "__init__.py").write_text("from . import a\n")
    (tmp_path / "src" / "sub" / "a.py").write_text("def f():\n    from ..sub import b\n")
    (tmp_path / "src" / "sub" / "b.py").write_text("import pkg.sub.a as a\n")
    (tmp_path / "top" / "__init__.py").write_text("import json\nfrom pkg.sub.a import f\n")
    graph, _ = import_graph(tmp_path)
    assert graph == {
        "pkg": {},
        "pkg.sub": {"pkg.sub.a": 1},
        "pkg.sub.a": {"pkg.sub.b": 2},
        "pkg.sub.b": {"pkg.sub.a": 1},
        "pkg.top": {"pkg.sub.a": 2},
    }
    assert strongly_connected(graph) == [["pkg.sub.a", "pkg.sub.b"]]
    assert shortest_cycle(graph, ["pkg.sub.a", "pkg.sub.b"]) == ["pkg.sub.a", "pkg.sub.b", "pkg.sub.a"]
