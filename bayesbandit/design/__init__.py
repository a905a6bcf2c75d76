"""Optimal experimental designs: G-optimal (= D-optimal) allocations and their exact rounding.

=====================  ==============================================================
module                 job
=====================  ==============================================================
``g_optimal``          :func:`wynn` (Fedorov-Wynn / Khachiyan), :func:`fw_away` (Frank-Wolfe
                       with Wolfe-Atwood away steps), on the smooth D-criterion
``rounding``           :func:`efficient_rounding` (exact budget), :func:`span_basis`
``baselines``          :func:`fw_literal` (the paper's Alg. 2, which stalls), :func:`greedy_allocation`
=====================  ==============================================================
"""

from bayesbandit.design.baselines import fw_literal, greedy_allocation
from bayesbandit.design.g_optimal import Design, fw_away, g_values, wynn
from bayesbandit.design.rounding import efficient_rounding, span_basis

__all__ = [
    "Design",
    "wynn",
    "fw_away",
    "g_values",
    "efficient_rounding",
    "span_basis",
    "fw_literal",
    "greedy_allocation",
]
