"""Sub-TS (Annoy) against Linear TS (an exact BLAS scan) at K = 10^4, 10^5, 10^6, d = 16.

The measurement is the ``mips-scaling`` experiment (``experiments/mips_scaling.py``): both policies
in one process on common random numbers, 10 runs per size, per-round time without builds, the
initial build and the rebuilds apart, the speed-up with the build amortised over 20,000 rounds,
and the regret of each. Targets (the issue): per-round time sublinear in K; at K = 10^6, >= 20x per
round and >= 5x with the builds amortised; regret within the run-to-run noise of the exact twin.

Usage, from the repository root: ``python -m benchmarks.bench_mips_scaling [--quick] [--out-dir DIR]``.
Stored sizes in ``DIR/sizes`` are reused; the table goes to ``benchmarks/results/bench_mips_scaling.md``
with the machine's load average (a shared machine slows the memory-bound scan more than Sub-TS).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys

os.environ.setdefault("PJRT_NPROC", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="K / 100 and 1,000 rounds")
    parser.add_argument("--out-dir", type=pathlib.Path, default=pathlib.Path("docs/results/mips_scaling"))
    args = parser.parse_args(argv)
    from bayesbandit.experiments import mips_scaling

    paths = mips_scaling.run(args.out_dir, quick=args.quick, progress=True)
    target = (
        pathlib.Path(__file__).parent
        / "results"
        / ("bench_mips_scaling_quick.md" if args.quick else "bench_mips_scaling.md")
    )
    shutil.copyfile(paths["summary"], target)
    with open(target, "a") as f:
        f.write(f"\nLoad average when the table was written: {os.getloadavg()[0]:.1f} (2 cores).\n")
    print(target.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
