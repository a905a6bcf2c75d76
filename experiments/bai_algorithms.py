"""The algorithms of the ``bai-*`` experiments, named as in Azizi et al. (2022, sec. 8).

``GSE-Lin-FW`` is GSE with the G-optimal design by Frank-Wolfe with away steps (what the paper's
"GSE-Lin-FWG" is meant to be); ``GSE-Lin-FWG-literal`` runs the paper's Alg. 2 as printed, which
stalls at the uniform design on symmetric instances.
"""

from __future__ import annotations

from typing import Any

from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.bai import GSE, MostPulled, SequentialHalving

__all__ = ["gse_linear", "gse_logistic", "LOGISTIC_PRIOR_SCALE"]

LOGISTIC_PRIOR_SCALE = 10.0  # N(0, 10^2 I): a near-flat prior, the ridge that keeps separated stages finite


def gse_linear(*, literal: bool = True) -> dict[str, Any]:
    """The GSE-Lin variants, Sequential Halving and LinUCB."""
    algs: dict[str, Any] = {
        "GSE-Lin-FW": GSE("g-optimal"),
        "GSE-Lin-Wynn": GSE("wynn"),
        "GSE-Lin-Greedy": GSE("greedy"),
        "GSE-Lin": GSE("uniform"),
    }
    if literal:
        algs["GSE-Lin-FWG-literal"] = GSE("fw-literal")
    algs["SH"] = SequentialHalving()
    algs["LinUCB"] = MostPulled(bb.LinUCB())
    return algs


def gse_logistic() -> dict[str, Any]:
    """GSE with a logistic reward program (MAP per stage), G-optimal and uniform, and UCB-GLM."""
    model = logistic(LOGISTIC_PRIOR_SCALE)
    return {
        "GSE-Log-FW": GSE("g-optimal", model=model),
        "GSE-Log": GSE("uniform", model=model),
        "GSE-Lin-FW": GSE("g-optimal"),
        "GSE-Lin": GSE("uniform"),
        "UCB-GLM": MostPulled(bb.UCBGLM(model)),
    }
