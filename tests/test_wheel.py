"""The built wheel holds every module of the source tree, under the name the package imports it by.

Packages are found, not listed (``setup.py``); this checks what a user installs. CI builds the
wheel once and names it in ``BAYESBANDIT_WHEEL``; without it, the test builds one from this
checkout (an isolated build: setuptools from the package index).
"""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from test_layering import module_files

ROOT = Path(__file__).resolve().parents[1]


def source_modules() -> set[str]:
    """Every module of the source tree (``test_layering.module_files``: ``package-dir`` applied), as its path in the wheel."""
    return {
        name.replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py")
        for name, path in module_files(ROOT).items()
    }


def wheel(tmp_path: Path) -> Path:
    given = os.environ.get("BAYESBANDIT_WHEEL")
    if given:
        return Path(given)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(ROOT)]
    subprocess.run(command, check=True, timeout=600, capture_output=True)
    return next(tmp_path.glob("bayesbandit-*.whl"))


def test_the_wheel_holds_every_module_of_the_source_tree(tmp_path):
    names = set(zipfile.ZipFile(wheel(tmp_path)).namelist())
    expected = source_modules()
    assert {"bayesbandit/__init__.py", "bayesbandit/scale/__init__.py", "bayesbandit/models/__init__.py"} <= expected
    missing = sorted(expected - names)
    assert not missing, f"modules of the source tree missing from the wheel: {missing}"
    assert "bayesbandit/py.typed" in names
    assert not [n for n in names if n.split("/")[0] in ("tests", "models", "diagnostics", "experiments", "benchmarks")]
