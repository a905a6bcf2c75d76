"""The first ``diagnostics.compare`` call of a new Python process, with default settings.

A small logistic program (d = 3, n = 100 rows), ``compare(logistic(), x, y)`` with its defaults
(Laplace with 1,000 draws, an FPL ensemble of 1,000, NUTS 4 chains x (1,000 warm-up + 1,000
draws), dense mass matrix), each time in a fresh process: imports apart, then the first call
(which compiles), then a second call on new data of the same shape (which reuses the compiled
programs), and where the first call's time went: each method's fit (compile + run), the rest
(binding, ArviZ conversion and summaries), and JAX's tracing, lowering and XLA compilation
(JAX's monitoring events; :data:`bayesbandit.experiments.likelihoods._TIMED_CHILD`). Target:
the first call within 10 s on 2 cores.

``--before COMMIT`` measures the ``diagnostics`` package of that commit too (``git archive``
into a temporary folder, loaded as ``bayesbandit.diagnostics`` over the same core library), in
alternating fresh processes, so both are timed under the same machine load.

Usage, from the repository root: ``python -m benchmarks.bench_compare_first_call [--before COMMIT] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

from bayesbandit.experiments.likelihoods import _TIMED_CHILD

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import machine_info, md_table, write_results  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 10.0

# argv[1]: a folder holding a diagnostics/ package to load instead of the installed one ("" for none);
# argv[2]: a persistent compilation cache folder ("" for none).
CHILD = _TIMED_CHILD + textwrap.dedent(
    """
    import importlib.util
    import bayesbandit as bb
    if sys.argv[1]:
        folder = sys.argv[1] + "/diagnostics"
        spec = importlib.util.spec_from_file_location(
            "bayesbandit.diagnostics", folder + "/__init__.py", submodule_search_locations=[folder])
        module = importlib.util.module_from_spec(spec)
        sys.modules["bayesbandit.diagnostics"] = module
        spec.loader.exec_module(module)
    from bayesbandit.diagnostics import compare
    from bayesbandit.models import logistic
    bb.runtime.enable_x64()
    if sys.argv[2]:
        bb.runtime.enable_compilation_cache(sys.argv[2])
    imported = time.perf_counter()
    rng = np.random.default_rng(0)
    def data():
        x = rng.normal(size=(100, 3))
        return x, (rng.random(100) < 1 / (1 + np.exp(-x @ np.array([1.0, -0.5, 0.2])))).astype(float)
    x, y = data()
    listening = True
    t0 = time.perf_counter()
    c = compare(logistic(), x, y)
    first = time.perf_counter() - t0
    listening = False
    x, y = data()
    t0 = time.perf_counter()
    compare(logistic(), x, y, seed=1)
    second = time.perf_counter() - t0
    fits = {m: float(c.idata[m].attrs["time_s"]) for m in c.idata}
    print(json.dumps({"import_s": imported - start, "first_s": first, "second_s": second, **fits,
                      "rest_s": first - sum(fits.values()), "flags": len(c.flags), **spent}))
    """
)


def one_process(folder: str, cache: str = "") -> dict[str, float]:
    """One fresh process; ``folder``: where a diagnostics/ package to time lies ("" for the installed one);
    ``cache``: a persistent compilation cache folder ("" for none)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, folder, cache], capture_output=True, text=True, timeout=600, check=True, cwd=ROOT
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="", help="a commit whose diagnostics package to time too")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per version")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "status", "--porcelain", "diagnostics"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
    )
    info = machine_info()
    versions = {f"working tree (HEAD {head[:10]}{', diagnostics/ modified' if dirty else ''})": ""}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            archive = subprocess.run(
                ["git", "archive", args.before, "diagnostics"], capture_output=True, check=True, cwd=ROOT
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            versions = {f"diagnostics/ of {args.before}": tmp, **versions}
        cached = "working tree, persistent compilation cache filled by an earlier process"
        runs: dict[str, list[dict]] = {name: [] for name in (*versions, cached)}
        for i in range(args.repeat):  # alternating, so every version sees the same load
            for name, folder in versions.items():
                runs[name].append(one_process(folder))
                print(name, json.dumps(runs[name][-1]), flush=True)
            cache = os.path.join(tmp, f"cache{i}")
            one_process("", cache)  # fills it
            runs[cached].append(one_process("", cache))
            print(cached, json.dumps(runs[cached][-1]), flush=True)

    def med(name: str, key: str) -> float:
        return statistics.median(r.get(key, 0.0) for r in runs[name])

    rows = [
        [
            name,
            " / ".join(f"{r['first_s']:.2f}" for r in runs[name]),
            f"{med(name, 'first_s'):.2f}",
            f"{med(name, 'laplace'):.2f} / {med(name, 'fpl'):.2f} / {med(name, 'nuts'):.2f} / {med(name, 'rest_s'):.2f}",
            f"{med(name, 'trace_s'):.2f} / {med(name, 'lower_s'):.2f} / {med(name, 'xla_s'):.2f} "
            f"({med(name, 'compilations'):.0f})",
            f"{med(name, 'second_s'):.2f}",
            f"{med(name, 'import_s'):.2f}",
            "yes" if med(name, "first_s") <= TARGET_S else "no",
        ]
        for name in runs
    ]
    command = "python -m benchmarks.bench_compare_first_call" + (f" --before {args.before}" if args.before else "")
    command += f" --repeat {args.repeat}"
    text = f"""# bench_compare_first_call: the first `diagnostics.compare` call of a fresh process

- command: `{command}`
- `git rev-parse HEAD`: {head}
{info}

`compare(logistic(), x, y)` with default settings (Laplace 1,000 draws, FPL ensemble of 1,000,
NUTS 4 chains x (1,000 warm-up + 1,000 draws), dense mass matrix) on d = 3 features, n = 100
rows, in a fresh Python process each time ({args.repeat} per version, versions alternating);
imports timed apart; the second call is on new data of the same shape. Per method: its fit,
compile included; rest: binding, ArviZ conversion and summaries; trace / lower / XLA: JAX's
monitoring events during the first call (number of compiled programs). Medians over processes.
The last row: a process whose `bb.runtime.enable_compilation_cache(folder)` finds the programs a
previous process compiled (what a user who enables the cache sees from the second session on).
Target: the first call within {TARGET_S:.0f} s on 2 cores.

{
        md_table(
            [
                "version",
                "first call, each process (s)",
                "median (s)",
                "Laplace / FPL / NUTS / rest (s)",
                "trace / lower / XLA (s, programs)",
                "second call (s)",
                "import (s)",
                "within target",
            ],
            rows,
        )
    }
"""
    print(write_results("bench_compare_first_call", False, text))


if __name__ == "__main__":
    main()
