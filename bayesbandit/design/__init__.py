"""Optimal experimental designs: G-optimal (= D-optimal) allocations and their exact rounding.

=====================  ==============================================================
module                 job
=====================  ==============================================================
``g_optimal``          :func:`wynn` (Fedorov-Wynn / Khachiyan), :func:`fw_away` (Frank-Wolfe
                       with Wolfe-Atwood away steps), on the smooth D-criterion
``rounding``           :func:`efficient_rounding` (exact budget), :func:`project` (onto the span)
``baselines``          :func:`fw_literal` (the paper's Alg. 2, which stalls), :func:`greedy_allocation`
=====================  ==============================================================
"""

from bayesbandit.design.baselines import fw_literal, greedy_allocation
from bayesbandit.design.g_optimal import Design, effective_dim, fw_away, g_values, null_columns, wynn
from bayesbandit.design.rounding import Projection, efficient_rounding, project

__all__ = [
    "Design",
    "wynn",
    "fw_away",
    "g_values",
    "efficient_rounding",
    "project",
    "Projection",
    "null_columns",
    "effective_dim",
    "fw_literal",
    "greedy_allocation",
]
