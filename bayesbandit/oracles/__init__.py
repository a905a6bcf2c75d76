"""Exact oracles of combinatorial semi-bandits: from per-arm scores to the best super arm.

Scores are a matrix ``(M, N)``: ``M`` blocks (e.g. promotions) of the same ``N`` arms (e.g.
users); ``M = 1`` is the plain problem. A super arm is returned as *lifted* indices ``j N + i``
(block ``j``, arm ``i``), shape ``(M k,)``, block by block and best first within a block:

=============================  ============================================  =========
oracle                         constraint                                    runs
=============================  ============================================  =========
:class:`TopK`                  ``k`` arms per block (a partition matroid)    in JAX
:class:`ExclusiveAssignment`   ``k`` per block, each arm in one block        on the host
=============================  ============================================  =========

Both take ``tie_break`` (``"index"``: the lowest index; ``"random"``) and a tolerance under which
scores tie; both have ``check(M, N)``, raising :class:`~bayesbandit.errors.InvalidInput` when no
super arm exists.
"""

from bayesbandit.oracles.assignment import ExclusiveAssignment, exclusive_assignment
from bayesbandit.oracles.top_k import TIE_RULES, TopK

__all__ = ["TopK", "ExclusiveAssignment", "exclusive_assignment", "TIE_RULES"]
