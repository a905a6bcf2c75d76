"""Azizi et al. (2022), sec. 8.3 (Fig. 3) and App. E.3 (Figs. 6, 7): randomised linear instances.

* Fig. 3: ``K`` arms uniform on the unit sphere of ``R^10``, ``theta*`` next to the closest pair,
  noise variance 10; ``K in {8, ..., 128}``, ``B/K in {20, 50}`` (the authors' grid).
* Fig. 6: the same instances with noise variance 1, total budgets ``B in {100, 200, 500}``,
  ``K in {8, 16, 32, 64}``: GSE against OD-LinBAI.
* Fig. 7: the corner case of Yang and Tan (``d = 2``), ``K = 3..24``, ``B = 25``: GSE against OD-LinBAI.
"""

from __future__ import annotations

from bayesbandit.experiments.bai_algorithms import baselines, gse_linear
from bayesbandit.experiments.bai_grid import Cell, Experiment

from bayesbandit.bai import CornerInstance, ODLinBAI, SphereInstance

DESCRIPTION = "Fixed-budget BAI on random unit-sphere instances and the OD-LinBAI comparisons (Figs. 3, 6, 7)."


def cells(quick: bool) -> list[Cell]:
    if quick:
        return [
            Cell("Fig. 3: B/K = 20", 16, SphereInstance(K=16, d=10), 320),
            Cell("Fig. 7: corner, B = 25", 8, CornerInstance(K=8), 25),
        ]
    fig3 = [
        Cell(f"Fig. 3: B/K = {r}", k, SphereInstance(K=k, d=10), r * k) for r in (20, 50) for k in (8, 16, 32, 64, 128)
    ]
    fig6 = [
        Cell(f"Fig. 6: sigma^2 = 1, B = {b}", k, SphereInstance(K=k, d=10, noise_var=1.0), b)
        for b in (100, 200, 500)
        for k in (8, 16, 32, 64)
        if b >= k
    ]
    fig7 = [Cell("Fig. 7: corner, B = 25", k, CornerInstance(K=k), 25) for k in range(3, 25)]
    return fig3 + fig6 + fig7


def algorithms(cell: Cell, quick: bool) -> dict:
    gse = gse_linear(literal=False)
    if not cell.panel.startswith("Fig. 3"):
        return {"GSE-Lin-FW": gse["GSE-Lin-FW"], "OD-LinBAI": ODLinBAI()}
    if quick:
        return {k: gse[k] for k in ("GSE-Lin-FW", "GSE-Lin")}
    gse = {k: gse[k] for k in ("GSE-Lin-FW", "GSE-Lin-Wynn", "GSE-Lin-Greedy", "GSE-Lin")}
    return gse | baselines(int(cell.x), 10, bayesgap=("matern", 10.0), budget=cell.budget)


EXPERIMENT = Experiment(
    "Random unit-sphere instances (d = 10) and the corner case", "K", "GSE-Lin-FW", cells, algorithms
)
run = EXPERIMENT.run
