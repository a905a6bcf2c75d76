"""``bayesbandit.testing`` imports pytest only inside ``parametrize_with_checks``, and the core never imports it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bayesbandit"


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_pytest_is_imported_lazily():
    for path in (PACKAGE / "testing").glob("*.py"):
        top = ast.parse(path.read_text())
        module_level = _imports(ast.Module([n for n in top.body if not isinstance(n, ast.FunctionDef)], []))
        assert not {name for name in module_level if name.split(".")[0] == "pytest"}, path.name


def test_the_core_does_not_import_the_testing_package():
    for path in PACKAGE.rglob("*.py"):
        if "testing" in path.relative_to(PACKAGE).parts:
            continue
        used = {name for name in _imports(ast.parse(path.read_text())) if name.startswith("bayesbandit.testing")}
        assert not used, f"{path.relative_to(PACKAGE)} imports {used}"
