"""Azizi et al. (2022), sec. 8.4, Fig. 4: the logistic bandit, K = 8, d in {5, 7, 10, 12}.

Arms uniform on ``[-0.5, 0.5]^d``, ``theta* ~ N(0, (3/d) I)`` (a covariance, as printed; the
authors' code uses ``3/d`` as the standard deviation), Bernoulli rewards; ``B/K in {10, 20, 50}``.
GSE-Log fits the MAP of a logistic reward program with a ``N(0, 10^2 I)`` prior each stage; the
linear GSE is run too (misspecified), with UCB-GLM. For ``d >= 8`` the first stage is
rank-deficient and GSE works in the arms' span.
"""

from __future__ import annotations

from bayesbandit.experiments.bai_algorithms import gse_logistic
from bayesbandit.experiments.bai_grid import Cell, Experiment

from bayesbandit.bai import GLMInstance

DESCRIPTION = "Fixed-budget BAI on logistic bandits (Azizi et al. 2022, Fig. 4): GSE-Log vs GSE-Lin, UCB-GLM."


def cells(quick: bool) -> list[Cell]:
    dims, ratios = ([5], [20]) if quick else ([5, 7, 10, 12], [10, 20, 50])
    return [Cell(f"B/K = {r}", d, GLMInstance(K=8, d=d), 8 * r) for r in ratios for d in dims]


def algorithms(cell: Cell, quick: bool) -> dict:
    algs = gse_logistic()
    return {k: algs[k] for k in ("GSE-Log-FW", "GSE-Lin-FW")} if quick else algs


EXPERIMENT = Experiment("Logistic bandit (K = 8)", "d", "GSE-Log-FW", cells, algorithms)
run = EXPERIMENT.run
