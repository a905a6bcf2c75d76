"""``BAYESBANDIT_REQUIRE_ALL_DEPS=1`` fails the tests that ``pytest.importorskip`` would skip (``tests/_require_deps.py``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent

FILES = {
    "conftest.py": "from _require_deps import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401\n",
    "test_in_test.py": (
        "import pytest\n\n"
        "def test_needs_it():\n    pytest.importorskip('bayesbandit_no_such_module')\n\n"
        "def test_data_missing():\n    pytest.skip('MovieLens 100K not found')\n\n"
        "def test_plain():\n    assert True\n"
    ),
    "test_at_module_level.py": "import pytest\n\npytest.importorskip('bayesbandit_no_such_module')\n\ndef test_x():\n    pass\n",
}


def _run(folder: Path, require: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "BAYESBANDIT_REQUIRE_ALL_DEPS"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    if require:
        env["BAYESBANDIT_REQUIRE_ALL_DEPS"] = "1"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rA",
        "-p",
        "no:randomly",
        "-p",
        "no:xdist",
        "-p",
        "no:cacheprovider",
    ]
    command += ["--continue-on-collection-errors", "-c", os.devnull, "--rootdir", str(folder), str(folder)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=folder)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("require_deps")
    for name, text in FILES.items():
        (root / name).write_text(text)
    return root


def test_without_the_variable_a_missing_dependency_skips(folder):
    done = _run(folder, require=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 3 skipped" in done.stdout


def test_with_the_variable_a_missing_dependency_fails_and_other_skips_stay(folder):
    done = _run(folder, require=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED test_in_test.py::test_needs_it" in done.stdout
    assert "ERROR test_at_module_level.py" in done.stdout
    assert "SKIPPED [1] test_in_test.py" in done.stdout  # missing data still skips
    assert "pip install '.[test]'" in done.stdout
