"""Azizi et al. (2022), sec. 8.1, Fig. 2: the adaptive hard instance (Soare et al. 2014), d = K - 1.

Arms ``e_1..e_d`` and ``(cos 0.1, sin 0.1, 0, ...)``, ``theta* = e_1``, Gaussian noise of variance
10; ``K in {8, 16, 32, 64, 128}`` and ``B/K in {10, 20, 50}``. Peace only for ``K <= 16``, as in the
paper.
"""

from __future__ import annotations

from bayesbandit.experiments.bai_algorithms import baselines, gse_linear
from bayesbandit.experiments.bai_grid import Cell, Experiment

from bayesbandit.bai import AdaptiveInstance

DESCRIPTION = "Fixed-budget BAI on the adaptive hard instance (Azizi et al. 2022, Fig. 2): GSE vs baselines."


def cells(quick: bool) -> list[Cell]:
    ks, ratios = ([8], [20]) if quick else ([8, 16, 32, 64, 128], [10, 20, 50])
    return [Cell(f"B/K = {r}", k, AdaptiveInstance(K=k), r * k) for r in ratios for k in ks]


def algorithms(cell: Cell, quick: bool) -> dict:
    if quick:
        return {k: v for k, v in gse_linear().items() if k in ("GSE-Lin-FW", "GSE-Lin", "SH")}
    k = int(cell.x)
    return gse_linear() | baselines(k, k - 1, bayesgap=("exp", 1e-3), budget=cell.budget)


EXPERIMENT = Experiment("Adaptive instance (d = K - 1, sigma^2 = 10)", "K", "GSE-Lin-FW", cells, algorithms)
run = EXPERIMENT.run
