"""Checks that need a fresh interpreter with other process settings: one child process per setting.

Starting Python, JAX and bayesbandit and compiling the first programs costs a child several
seconds, so the checks that need the same settings (device count, 64-bit mode, the Threefry
lowering, low latency) run in one child, one after another. Each check is a function of a test
module returning a dict of arrays; the child saves each check's arrays (or its traceback) as soon
as it returns, so a failing check fails only the tests that read it, under its own name. A check
that runs past its time limit makes the child print every thread's stack and exit; the checks
before it keep their results and the rest report that they never ran.

Under pytest-xdist the workers share one child per setting: the first to ask runs it (holding a
lock beside the results), the others wait on the lock and read the results.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import IO

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parent


@dataclass(frozen=True)
class Setting:
    """The process settings of one child and the checks it runs, in order.

    ``env`` is added to the suite's environment, ``prelude`` runs right after ``import bayesbandit
    as bb``, before any check; a check is ``"path/of/test_module.py:function"`` (relative to
    ``tests/``) with at most ``limit`` seconds to run. Checks that results are equal bit for bit
    across compiled programs (one device or two, a sweep or ``simulate``) run with ``own_emitters``:
    the suite's loop emitter (``conftest.py``) can round the same operation differently in two
    programs, XLA's fusion emitters (the default) do not.
    """

    prelude: str
    checks: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    limit: float = 300.0
    own_emitters: bool = False  # XLA:CPU's fusion emitters, as users run, in place of the suite's loop emitter


# The suite's XLA:CPU flag for its loop emitter, which compiles faster than the fusion emitters (``conftest.py``).
LOOP_EMITTER_FLAG = "--xla_cpu_use_fusion_emitters=false"
HOST_DEVICES_FLAG = "--xla_force_host_platform_device_count"  # what the CLI sets, one device per core
# The suite's own settings are 64-bit mode, the loop-free Threefry and one device (``conftest.py``).
SUITE = "bb.runtime.enable_x64(); bb.runtime.enable_fast_rng()"
TWO_DEVICES = {"JAX_NUM_CPU_DEVICES": "2"}  # two CPU devices, the suite's XLA flags unchanged
SETTINGS = {
    "one_device": Setting(
        prelude=SUITE,
        own_emitters=True,
        checks=(
            "test_sharding.py:play",
            "test_grid_sweep.py:sweep_and_simulate",
            "test_distributed.py:reference",
            "test_scale.py:blocks_and_whole",
            "test_latency.py:play",
        ),
    ),
    "two_devices": Setting(
        prelude=SUITE,
        env=TWO_DEVICES,
        own_emitters=True,
        checks=("test_sharding.py:play", "test_linalg.py:batch_safe_svd_on_two_devices"),
    ),
    "two_devices_jaxlib_svd": Setting(  # the hazard itself: a child of its own, which never finishes
        prelude=SUITE,
        env=TWO_DEVICES,
        checks=("test_linalg.py:jaxlib_svd_on_two_devices",),
    ),
    "jax_threefry": Setting(  # 64-bit, JAX's own Threefry lowering (enable_fast_rng never called)
        prelude="bb.runtime.enable_x64()",
        checks=(
            "test_threefry.py:draws",
            "inference/test_large_batches.py:simulate_100_runs_at_d_20",
            "test_process.py:agents_across_processes",
        ),
    ),
    "low_latency": Setting(
        prelude=f"bb.runtime.enable_low_latency(); {SUITE}",
        own_emitters=True,
        checks=("test_latency.py:play",),
    ),
}

# Imports and settings at the top level, so a worker spawned by a check (which imports this script
# as ``__mp_main__``) has them too; the checks only in the main process.
CHILD = textwrap.dedent(
    """
    import faulthandler, importlib, pathlib, sys, traceback
    import numpy as np
    import bayesbandit as bb

    {prelude}
    if __name__ == "__main__":
        tests, out, limit = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), float(sys.argv[3])
        for check in sys.argv[4:]:
            path, function = check.split(":")
            file = tests / path
            sys.path.insert(0, str(file.parent))  # as pytest imports it: a spawned worker finds it by name
            name = out / check.replace("/", ".")
            print("check", check, flush=True)
            faulthandler.dump_traceback_later(limit, exit=True)
            try:
                arrays = getattr(importlib.import_module(file.stem), function)()
            except BaseException:
                name.with_suffix(".err").write_text(traceback.format_exc())
            else:
                np.savez(name.with_suffix(".npz"), **arrays)
            faulthandler.cancel_dump_traceback_later()
    """
)


class Children:
    """The session's children, one per setting, with their results under ``root`` (shared by xdist workers)."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        self._running: dict[str, tuple[subprocess.Popen[str], IO[str]]] = {}

    def start(self, setting: str) -> None:
        """Start the setting's child unless its results exist or another worker runs it (then :meth:`result` waits)."""
        folder = self.root / f"fresh-{setting}"
        if setting in self._running or (folder / "done").exists():
            return
        lock = open(self.root / f"fresh-{setting}.lock", "w")  # noqa: SIM115 (held until the child ends)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return
        if (folder / "done").exists():
            lock.close()
            return
        folder.mkdir(exist_ok=True)
        spec = SETTINGS[setting]
        script = folder / "child.py"
        script.write_text(CHILD.format(prelude=spec.prelude))
        env = {**os.environ, "JAX_PLATFORMS": "cpu", **spec.env}
        # The device count is the setting's (a test may have added host devices to this process's flags).
        flags = [flag for flag in env.get("XLA_FLAGS", "").split() if not flag.startswith(HOST_DEVICES_FLAG)]
        env["XLA_FLAGS"] = " ".join(flag for flag in flags if not (spec.own_emitters and flag == LOOP_EMITTER_FLAG))
        command = [sys.executable, str(script), str(TESTS), str(folder), str(spec.limit), *spec.checks]
        log = open(folder / "log.txt", "w")  # noqa: SIM115 (closed when the child ends)
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, text=True)
        self._running[setting] = (proc, lock)
        log.close()

    def close(self) -> None:
        """Wait for (or, past their time limit, end) the children this process started."""
        for setting in list(self._running):
            self._finish(setting)

    def _finish(self, setting: str) -> None:
        proc, lock = self._running.pop(setting)
        spec = SETTINGS[setting]
        try:
            code = proc.wait(timeout=60 + spec.limit * len(spec.checks))
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        (self.root / f"fresh-{setting}" / "done").write_text(str(code))
        lock.close()

    def result(self, setting: str, check: str) -> dict[str, np.ndarray]:
        """The arrays ``check`` returned in the setting's child (started now if it was not).

        Raises ``AssertionError`` naming the check, with its traceback or the child's output, if
        the check raised or never finished.
        """
        folder = self.root / f"fresh-{setting}"
        while not (folder / "done").exists():
            self.start(setting)
            if setting in self._running:
                self._finish(setting)
            else:  # another worker runs it: wait for its lock (if it died first, the next turn runs the child)
                with open(self.root / f"fresh-{setting}.lock", "w") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
        name = folder / check.replace("/", ".")
        if name.with_suffix(".npz").exists():
            with np.load(name.with_suffix(".npz")) as arrays:
                return dict(arrays)
        if name.with_suffix(".err").exists():
            raise AssertionError(f"{check} raised in the {setting!r} child:\n{name.with_suffix('.err').read_text()}")
        log = (folder / "log.txt").read_text()
        raise AssertionError(f"{check} never finished in the {setting!r} child:\n{log[-6000:]}")
