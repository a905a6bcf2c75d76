"""The algorithms of the ``bai-*`` experiments, named as in Azizi et al. (2022, sec. 8).

``GSE-Lin-FW`` is GSE with the G-optimal design by Frank-Wolfe with away steps (what the paper's
"GSE-Lin-FWG" is meant to be); ``GSE-Lin-FWG-literal`` runs the paper's Alg. 2 as printed, which
stalls at the uniform design on symmetric instances.
"""

from __future__ import annotations

from typing import Any

from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.bai import GSE, BayesGap, MostPulled, ODLinBAI, Peace, SequentialHalving
from bayesbandit.bai.lingape import LinGapE

__all__ = [
    "gse_linear",
    "gse_logistic",
    "baselines",
    "LOGISTIC_PRIOR_SCALE",
    "PEACE_MAX_K",
    "LINGAPE_MAX_K",
    "LINUCB_MAX_D",
    "LINUCB_MAX_COST",
    "PEACE_MAX_BUDGET",
]

PEACE_MAX_K = 16  # as in the paper (sec. 8.1): Peace's design is the costliest by far
LINGAPE_MAX_K = 32  # LinGapE solves an L1 program every round: B = 50 K rounds at K = 64, 128 is out of reach here
LINUCB_MAX_D = 63  # LinUCB factorises a d x d matrix every round; d = 127 (adaptive, K = 128) is out of reach here
# LinUCB's cost grows as B d^2: 706 s a cell at K = 64, B = 640 (adaptive) on 2 cores; B = 1,280 and 3,200 there
# would take 1,400 and 3,500 s, so cells above B d^2 = 2.6e6 leave it out.
LINUCB_MAX_COST = 2.6e6
PEACE_MAX_BUDGET = 400  # Peace at K = 16, B = 800 would take about 1,200 s (246 s at B = 160)

LOGISTIC_PRIOR_SCALE = 10.0  # N(0, 10^2 I): a near-flat prior, the ridge that keeps separated stages finite


def gse_linear(*, literal: bool = True) -> dict[str, Any]:
    """The GSE-Lin variants and Sequential Halving."""
    algs: dict[str, Any] = {
        "GSE-Lin-FW": GSE(allocation="g-optimal"),
        "GSE-Lin-Wynn": GSE(allocation="wynn"),
        "GSE-Lin-Greedy": GSE(allocation="greedy"),
        "GSE-Lin": GSE(allocation="uniform"),
    }
    if literal:
        algs["GSE-Lin-FWG-literal"] = GSE(allocation="fw-literal")
    algs["SH"] = SequentialHalving()
    return algs


def gse_logistic() -> dict[str, Any]:
    """GSE with a logistic reward program (MAP per stage), G-optimal and uniform; linear GSE, UCB-GLM, BayesGap."""
    model = logistic(prior_scale=LOGISTIC_PRIOR_SCALE)
    return {
        "GSE-Log-FW": GSE(allocation="g-optimal", model=model),
        "GSE-Log": GSE(allocation="uniform", model=model),
        "GSE-Lin-FW": GSE(allocation="g-optimal"),
        "GSE-Lin": GSE(allocation="uniform"),
        "UCB-GLM": MostPulled(bb.UCBGLM(model)),
        # Bernoulli rewards have variance at most 1/4
        "BayesGap-matern": BayesGap(kernel="matern", length_scale=10.0, noise_var=0.25),
    }


def baselines(
    num_arms: int,
    dim: int,
    *,
    bayesgap: tuple[str, float],
    lingape_greedy: bool = False,
    noise_var: float | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """The paper's baselines for a linear instance with ``num_arms`` arms in ``dim`` dimensions.

    ``bayesgap`` is the (kernel, length scale) the paper tuned for the experiment; the costliest
    baselines are left out above :data:`PEACE_MAX_K` arms or a ``budget`` of
    :data:`PEACE_MAX_BUDGET`, :data:`LINGAPE_MAX_K` arms, and :data:`LINUCB_MAX_D` dimensions or
    ``budget * dim^2`` of :data:`LINUCB_MAX_COST` (the summaries say so).
    """
    kernel, length_scale = bayesgap
    algs: dict[str, Any] = {}
    if dim <= LINUCB_MAX_D and (budget is None or budget * dim**2 <= LINUCB_MAX_COST):
        algs["LinUCB"] = MostPulled(bb.LinUCB())
    algs[f"BayesGap-{kernel}"] = BayesGap(kernel=kernel, length_scale=length_scale, noise_var=noise_var)
    if num_arms <= LINGAPE_MAX_K:
        algs["LinGapE"] = LinGapE(noise_var=noise_var)
        if lingape_greedy:
            algs["LinGapE-Greedy"] = LinGapE(greedy=True, noise_var=noise_var)
    if num_arms <= PEACE_MAX_K and (budget is None or budget <= PEACE_MAX_BUDGET):
        algs["Peace"] = Peace()
    algs["OD-LinBAI"] = ODLinBAI()
    return algs
