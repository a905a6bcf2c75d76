"""Azizi et al. (2022), App. E.2, Fig. 5(a): the most expensive of K cars (UCI Automobile).

Five features scaled to ``[0, 1]``, the scaled price as mean reward, Gaussian noise of variance 0.1
(:class:`bayesbandit.bai.Automobile`); ``K in {8, 16}``, ``B/K in {10, 20, 50}``. The paper's second
real data set (Electric Motor Temperature) is not available here and is left out.
"""

from __future__ import annotations

from bayesbandit.experiments.bai_algorithms import baselines, gse_linear
from bayesbandit.experiments.bai_grid import Cell, Experiment

from bayesbandit.bai import Automobile

DESCRIPTION = "Fixed-budget BAI on UCI Automobile (Azizi et al. 2022, Fig. 5a): find the most expensive car."


def cells(quick: bool) -> list[Cell]:
    ks, ratios = ([8], [20]) if quick else ([8, 16], [10, 20, 50])
    return [Cell(f"K = {k}", r, Automobile(K=k), r * k) for k in ks for r in ratios]


def algorithms(cell: Cell, quick: bool) -> dict:
    algs = gse_linear(literal=False)
    if quick:
        return {k: algs[k] for k in ("GSE-Lin-FW", "GSE-Lin", "SH")}
    return algs | baselines(cell.env.K, 5, bayesgap=("exp", 1e-6), lingape_greedy=True)


EXPERIMENT = Experiment(
    "UCI Automobile: the most expensive car (sigma^2 = 0.1)", "B/K", "GSE-Lin-FW", cells, algorithms
)
run = EXPERIMENT.run
