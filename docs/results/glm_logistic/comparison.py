"""Write the table of ``comparison.md``: a Figure 1 run against the committed one.

Usage, from the repository root, after ``bayesbandit run glm-logistic --out OUT``::

    python docs/results/glm_logistic/comparison.py OUT [REVISION]

For every (d, policy) curve it reads the final regret, its standard error and the run time from
``OUT/glm_logistic.md`` and from the committed ``glm_logistic.md`` at git ``REVISION`` (default
``HEAD``), and prints a markdown table with the difference and ``z = difference / sqrt(se1^2 +
se2^2)`` (the committed run's per-run data is not kept, so the two runs are not paired), then the
largest ``|z|``, the count beyond 2, and the run time per ``d``.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

COMMITTED = ("docs/results/glm_logistic/glm_logistic.md", "docs/results/glm_logistic.md")  # now, and before 2026-11-29


def curves(summary: str) -> dict[tuple[int, str], dict[str, float]]:
    """``(d, policy) -> {"regret", "se", "run_s"}`` from the per-``d`` tables of a ``glm_logistic.md``."""
    out: dict[tuple[int, str], dict[str, float]] = {}
    d = None
    for line in summary.splitlines():
        if match := re.match(r"## d = (\d+)", line):
            d = int(match.group(1))
            continue
        cells = [c.strip().replace(",", "") for c in line.strip().strip("|").split("|")]
        if d is None or len(cells) < 9 or cells[0] == "policy" or cells[0].startswith("---"):
            continue
        out[(d, cells[0])] = {"regret": float(cells[2]), "se": float(cells[3]), "run_s": float(cells[5])}
    return out


def main(argv: list[str]) -> None:
    out_dir, revision = Path(argv[0]), argv[1] if len(argv) > 1 else "HEAD"
    shown = [
        subprocess.run(["git", "show", f"{revision}:{path}"], capture_output=True, text=True) for path in COMMITTED
    ]
    committed_text = next(out.stdout for out in shown if out.returncode == 0)
    old, new = curves(committed_text), curves((out_dir / "glm_logistic.md").read_text())
    print(
        "| d | policy | committed R(n) | this run R(n) | difference | z (combined se) | committed run s | this run s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    zs = []
    for key, o in old.items():
        n = new[key]
        z = (n["regret"] - o["regret"]) / math.hypot(o["se"], n["se"])
        zs.append(z)
        print(
            f"| {key[0]} | {key[1]} | {o['regret']:,.1f} ± {o['se']:.1f} | {n['regret']:,.1f} ± {n['se']:.1f} | "
            f"{n['regret'] - o['regret']:+.1f} | {z:+.2f} | {o['run_s']:.1f} | {n['run_s']:.1f} |"
        )
    beyond = sum(abs(z) > 2 for z in zs)
    print(f"\n|z| max {max(map(abs, zs)):.2f}; |z| > 2: {beyond} of {len(zs)}; mean z {sum(zs) / len(zs):+.2f}")
    for d in sorted({k[0] for k in old}):
        run_old = sum(v["run_s"] for k, v in old.items() if k[0] == d)
        run_new = sum(v["run_s"] for k, v in new.items() if k[0] == d)
        print(f"d = {d}: run time {run_old:,.1f} s committed, {run_new:,.1f} s this run")


if __name__ == "__main__":
    main(sys.argv[1:])
