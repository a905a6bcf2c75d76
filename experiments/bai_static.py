"""Azizi et al. (2022), sec. 8.2, Fig. 1: the static instance (Xu et al. 2018), K = d = 16, B = 320.

One-hot arms, ``theta* = (gap, 0, ..., 0)``, Gaussian noise of variance 10 (the authors' code; the
text does not say), ``gap in {0.01, 0.03, 0.05, 0.1, 0.3}``. The uniform design is G-optimal here,
so every GSE variant is Sequential Halving (an identity the tests check replication by replication).
"""

from __future__ import annotations

from bayesbandit.experiments.bai_algorithms import baselines, gse_linear
from bayesbandit.experiments.bai_grid import Cell, Experiment

from bayesbandit.bai import StaticInstance

DESCRIPTION = "Fixed-budget BAI on the static instance (Azizi et al. 2022, Fig. 1): GSE = SH vs baselines."

GAPS = (0.01, 0.03, 0.05, 0.1, 0.3)


def cells(quick: bool) -> list[Cell]:
    return [Cell("K = d = 16, B = 320", g, StaticInstance(K=16, gap=g), 320) for g in ((0.1, 0.3) if quick else GAPS)]


def algorithms(cell: Cell, quick: bool) -> dict:
    algs = gse_linear() | baselines(16, 16, bayesgap=("exp", 1000.0))
    return {k: algs[k] for k in ("GSE-Lin-FW", "SH", "LinUCB")} if quick else algs


EXPERIMENT = Experiment("Static instance (K = d = 16, B = 320, sigma^2 = 10)", "gap", "GSE-Lin-FW", cells, algorithms)
run = EXPERIMENT.run
