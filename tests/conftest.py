"""Test harness: CPU only, float64 and the loop-free Threefry on (explicitly: importing bayesbandit changes no JAX
setting)."""

import os
import shutil
import sys
import tempfile

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("JAX_ENABLE_X64", "1")
# The suite compiles many small programs and runs each briefly: XLA's backend optimisation
# level 0 cuts CPU compile time about 3x for a ~2x slower run time (override in the environment).
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")
# One XLA:CPU pool thread, as the CLI runs: pytest-xdist already runs one worker per core.
os.environ.setdefault("PJRT_NPROC", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bayesbandit  # noqa: E402

bayesbandit.runtime.enable_x64()
bayesbandit.runtime.enable_fast_rng()  # the same random numbers as JAX's CPU lowering (tests/test_threefry.py)

# One persistent compilation cache per session, shared by the xdist workers (they inherit the
# variable from the controller): modules compile many of the same programs, and each module
# drops its compiled programs when it ends (below), so a later module loads them from disk.
# ``BAYESBANDIT_TEST_JAX_CACHE=off`` compiles everything afresh.
_OWN_CACHE = "BAYESBANDIT_TEST_JAX_CACHE" not in os.environ  # this process made it: it removes it
if _OWN_CACHE:
    os.environ["BAYESBANDIT_TEST_JAX_CACHE"] = tempfile.mkdtemp(prefix="bayesbandit-test-jax-")
if os.environ["BAYESBANDIT_TEST_JAX_CACHE"] != "off":
    bayesbandit.runtime.enable_compilation_cache(os.environ["BAYESBANDIT_TEST_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module. Every live XLA:CPU executable holds about
    three memory mappings; a whole suite's worth (tens of thousands) reaches the kernel's
    ``vm.max_map_count`` (65,530) and the next compilation dies with a segmentation fault."""
    yield
    jax.clear_caches()
    checks = sys.modules.get("bayesbandit.testing")
    if checks is not None:  # its cached experiments count their traces: drop them with the programs
        checks.clear_caches()


@pytest.fixture
def rng():
    """A fresh, seeded NumPy generator for each test."""
    return np.random.default_rng(12345)


def pytest_unconfigure(config):
    if _OWN_CACHE:
        shutil.rmtree(os.environ.pop("BAYESBANDIT_TEST_JAX_CACHE"), ignore_errors=True)


def pytest_configure(config):
    assert jax.config.jax_enable_x64, "the suite needs float64"


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: unknown without it (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (a module's tests share cached experiments and fixtures, so a file runs in
    one worker), except the contract suite, whose checks are grouped by policy: each policy's
    checks share its cached experiment and Agent, and the policies spread over the workers."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndContractPolicies(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path, _, test = nodeid.partition("::")
            if path.endswith("test_policy_contract.py"):  # test_policy_contract[<policy>-<check>]
                return f"{path}::{test.partition('[')[2].rpartition('-')[0]}"
            return path

    return FilesAndContractPolicies(config, log)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only when selected by a marker expression (``-m slow``)."""
    if config.getoption("markexpr") or os.environ.get("BAYESBANDIT_RUN_SLOW"):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow (or BAYESBANDIT_RUN_SLOW=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
