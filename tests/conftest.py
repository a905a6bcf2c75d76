"""Test harness: CPU only, float64 and the loop-free Threefry on (explicitly: importing bayesbandit changes no JAX
setting)."""

import gc
import os
import shutil
import subprocess
import sys
import tempfile

from _fresh import LOOP_EMITTER_FLAG, Children  # imports no JAX
from _require_deps import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401 (hooks)

os.environ["JAX_PLATFORMS"] = "cpu"
SUITE_XLA_FLAGS = "--xla_backend_optimization_level=0"
os.environ.setdefault("JAX_ENABLE_X64", "1")


def _xla_accepts(flags: str) -> bool:
    """Whether this jaxlib's XLA starts with ``flags`` (it aborts the process on a flag it does not know)."""
    probe = "import jax.numpy as jnp; jnp.zeros(2).block_until_ready()"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": flags}
    try:
        return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, timeout=120).returncode == 0
    except subprocess.TimeoutExpired:
        return False


# The suite compiles many small programs and runs each briefly. XLA's backend optimisation level 0
# cuts CPU compile time about 3x for a ~2x slower run time; XLA:CPU's loop emitter in place of its
# fusion emitters halves it again. Both change the last bits of some results, so the checks that
# results are equal bit for bit across programs (devices, sweeps) run in children with XLA's own
# emitters (``tests/_fresh.py``). The xdist workers inherit the flags; set XLA_FLAGS to override.
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = SUITE_XLA_FLAGS
    if _xla_accepts(f"{SUITE_XLA_FLAGS} {LOOP_EMITTER_FLAG}"):
        os.environ["XLA_FLAGS"] += f" {LOOP_EMITTER_FLAG}"
# One XLA:CPU pool thread, as the CLI runs: pytest-xdist already runs one worker per core.
os.environ.setdefault("PJRT_NPROC", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bayesbandit  # noqa: E402

# CI runs the suite against the installed wheel (--import-mode=importlib, the checkout not on the path):
# make sure the package under test is that one, not the source tree beside the tests.
# The child processes tests start (``python -c``, ``python -m``) inherit PYTHONSAFEPATH: the checkout, their
# working folder, does not come before the installed package on their path either.
if os.environ.get("BAYESBANDIT_TEST_INSTALLED") == "1":
    assert "site-packages" in bayesbandit.__file__, f"testing {bayesbandit.__file__}, not the installed package"
    os.environ["PYTHONSAFEPATH"] = "1"

bayesbandit.runtime.enable_x64()
bayesbandit.runtime.enable_fast_rng()  # the same random numbers as JAX's CPU lowering (tests/test_threefry.py)

# One persistent compilation cache per session, shared by the xdist workers (they inherit the
# variable from the controller): after a worker drops its compiled programs (below), it loads
# them from disk instead of compiling them again. The child processes tests start (they inherit the
# environment) use it too, through JAX's own variables. ``BAYESBANDIT_TEST_JAX_CACHE=off`` compiles
# everything afresh.
_OWN_CACHE = "BAYESBANDIT_TEST_JAX_CACHE" not in os.environ  # this process made it: it removes it
if _OWN_CACHE:
    os.environ["BAYESBANDIT_TEST_JAX_CACHE"] = tempfile.mkdtemp(prefix="bayesbandit-test-jax-")
if os.environ["BAYESBANDIT_TEST_JAX_CACHE"] != "off":
    bayesbandit.runtime.enable_compilation_cache(os.environ["BAYESBANDIT_TEST_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = os.environ["BAYESBANDIT_TEST_JAX_CACHE"]
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0.2"


def _memory_mappings() -> int:
    """The number of memory mappings this process holds (lines of ``/proc/self/maps``; 0 where there is none)."""
    try:
        with open("/proc/self/maps", "rb") as maps:
            return maps.read().count(b"\n")
    except OSError:
        return 0


def _mapping_limit() -> int:
    """Half the kernel's ``vm.max_map_count`` (65,530 by default): the other half is headroom for one test."""
    try:
        with open("/proc/sys/vm/max_map_count") as limit:
            return int(limit.read()) // 2
    except (OSError, ValueError):
        return 32_765


class _CompiledProgramGuard:
    """Keep JAX's compiled programs across tests, and drop them only when their memory mappings near the limit.

    Tests and doctests compile many of the same programs, so the programs stay alive for the whole
    session. Every live XLA:CPU executable holds about three memory mappings; a whole suite's worth
    (tens of thousands) would reach the kernel's ``vm.max_map_count`` and the next compilation would
    die with a segmentation fault. After every test (doctests included: the guard is a plugin, not a
    fixture of ``tests/``), a process past half the limit drops its compiled programs and the
    experiments cached beside them; it loads them back from the persistent cache when needed.
    """

    def __init__(self) -> None:
        self.limit = _mapping_limit()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        if _memory_mappings() < self.limit:
            return
        jax.clear_caches()
        checks = sys.modules.get("bayesbandit.testing")
        if checks is not None:  # its cached experiments count their traces: drop them with the programs
            checks.clear_caches()
        gc.collect()  # the executables go with the last reference to them


@pytest.fixture(scope="session")
def fresh_process(tmp_path_factory):
    """The children with other process settings (``tests/_fresh.py``), one per setting, shared by the xdist workers."""
    root = tmp_path_factory.getbasetemp()
    children = Children(root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root)
    yield children
    children.close()


@pytest.fixture
def rng():
    """A fresh, seeded NumPy generator for each test."""
    return np.random.default_rng(12345)


def pytest_unconfigure(config):
    if _OWN_CACHE:
        shutil.rmtree(os.environ.pop("BAYESBANDIT_TEST_JAX_CACHE"), ignore_errors=True)


def pytest_configure(config):
    assert jax.config.jax_enable_x64, "the suite needs float64"
    config.pluginmanager.register(_CompiledProgramGuard(), "bayesbandit-compiled-program-guard")


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
