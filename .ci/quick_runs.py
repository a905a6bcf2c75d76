"""Every experiment's quick run, as a user starts it, each in a subprocess under a time limit.

``bayesbandit run NAME --quick`` with the CLI's defaults (one host device per core) and a cold
compilation cache; the data sets come from ``$BAYESBANDIT_DATA`` or ``../shared/data`` (an
experiment whose data is in neither is skipped, saying so). A run that has not finished after
``--limit`` seconds (900) fails the check and is reported with its native stacks (gdb, when
installed) and its Python stacks (faulthandler, on SIGABRT), so a deadlock shows where every
thread waits instead of using up CI's time.

    python .ci/quick_runs.py                         # every experiment once
    python .ci/quick_runs.py bai-adaptive --repeat 20
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def experiment_names() -> list[str]:
    from bayesbandit.experiments import EXPERIMENTS

    return list(EXPERIMENTS)


def native_stacks(pid: int) -> str:
    gdb = shutil.which("gdb")
    if gdb is None:
        return "(gdb not installed: no native stacks)"
    try:
        out = subprocess.run(
            [gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return "(gdb did not answer within 120 s)"
    return out.stdout + out.stderr


def run_once(name: str, env: dict[str, str], folder: pathlib.Path, limit: float) -> tuple[bool, float, str]:
    """(finished with status 0, seconds, log) of one run into the new ``folder`` (an experiment skips the
    results a folder already holds); a run past ``limit`` is stopped after its stacks are taken."""
    folder.mkdir()
    log_path = folder / "run.log"
    command = ["bayesbandit", "run", name, "--quick", "--no-progress", "--out", str(folder / "results")]
    start = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            stacks = native_stacks(proc.pid)
            proc.send_signal(signal.SIGABRT)  # faulthandler writes every thread's Python stack to the log
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            seconds = time.perf_counter() - start
            text = log_path.read_text(errors="replace")
            return False, seconds, f"{text}\n--- did not finish in {limit:.0f} s; native stacks:\n{stacks}"
    seconds = time.perf_counter() - start
    return code == 0, seconds, log_path.read_text(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="experiments (default: every one `bayesbandit list` shows)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each experiment, one after another")
    parser.add_argument("--limit", type=float, default=900.0, help="seconds a run may take (default 900)")
    args = parser.parse_args(argv)
    names = args.names or experiment_names()
    env = {**os.environ, "PYTHONFAULTHANDLER": "1", "PYTHONUNBUFFERED": "1"}
    data = ROOT.parent / "shared" / "data"
    if not env.get("BAYESBANDIT_DATA") and data.is_dir():
        env["BAYESBANDIT_DATA"] = str(data)
    failures = []
    with tempfile.TemporaryDirectory(prefix="bayesbandit-quick-") as tmp:
        for name in names:
            for attempt in range(1, args.repeat + 1):
                folder = pathlib.Path(tmp) / f"{name}-{attempt}"  # nothing stored, cold cache: as for a new user
                cold = {**env, "BAYESBANDIT_JAX_CACHE": str(folder / "jax-cache")}
                ok, seconds, log = run_once(name, cold, folder, args.limit)
                label = f"{name} ({attempt}/{args.repeat})" if args.repeat > 1 else name
                if not ok and "BAYESBANDIT_DATA" not in env and "set BAYESBANDIT_DATA" in log:
                    print(f"skip {label}: needs a data set (set BAYESBANDIT_DATA)", flush=True)
                    continue
                print(f"{'ok  ' if ok else 'FAIL'} {label}: {seconds:.0f} s", flush=True)
                if not ok:
                    failures.append(label)
                    print(log[-20000:], flush=True)
    print(f"quick runs: {len(failures)} failed of {len(names) * args.repeat}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
