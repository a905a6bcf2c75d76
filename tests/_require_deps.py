"""``BAYESBANDIT_REQUIRE_ALL_DEPS=1``: a test skipped for a dependency that cannot be imported fails instead.

``pytest.importorskip`` skips a test (or, at module level, a whole file) when an optional
dependency is missing: right for a user who installed part of the test extra, silent where every
dependency must be there (CI installs ``.[test]`` and sets the variable). The hooks below are
imported into ``tests/conftest.py``; they turn those skips, and only those, into failures that name
the module and the fix. Skips for missing data (MovieLens, MNIST) are left as they are.
"""

from __future__ import annotations

import os

import pytest

VARIABLE = "BAYESBANDIT_REQUIRE_ALL_DEPS"


def _missing_dependency(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    """The skip message of ``pytest.importorskip`` for a module that could not be imported, else None."""
    if os.environ.get(VARIABLE) != "1" or not report.skipped or not isinstance(report.longrepr, tuple):
        return None
    message = str(report.longrepr[2])
    return message if "could not import" in message else None


def _fail(report: pytest.TestReport | pytest.CollectReport, message: str) -> None:
    report.outcome = "failed"
    report.longrepr = (
        f"{VARIABLE}=1 and a dependency is missing ({message}): install the test extra, pip install '.[test]'"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    report = yield
    message = _missing_dependency(report)
    if message is not None:
        _fail(report, message)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> pytest.CollectReport:
    report = yield
    message = _missing_dependency(report)
    if message is not None:
        _fail(report, message)
    return report
