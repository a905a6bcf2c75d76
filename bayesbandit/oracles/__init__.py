"""Exact oracles of combinatorial semi-bandits: from per-arm scores to the best super arm.

Scores are a matrix ``(M, N)``: ``M`` blocks (e.g. promotions) of the same ``N`` arms (e.g.
users); ``M = 1`` is the plain problem. A super arm is returned as *lifted* indices ``j N + i``
(block ``j``, arm ``i``), int32 of shape ``(M k,)``, block-major: block 0's ``k`` picks first, then
block 1's, and so on; within a block in decreasing score order, equal scores by the tie rule.
``divmod(action, N)`` recovers ``(block, arm)``.

=============================  ============================================  =========
oracle                         constraint                                    runs
=============================  ============================================  =========
:class:`TopK`                  ``k`` arms per block (a partition matroid)    in JAX
:class:`ExclusiveAssignment`   ``k`` per block, each arm in one block        on the host
=============================  ============================================  =========

Both are hashable frozen dataclasses called as ``oracle(scores, key)`` inside or outside
``jax.jit`` and ``jax.vmap``; both take ``tie_break`` (``"index"``: the lowest index, deterministic;
``"random"``: from the key) and a tolerance under which scores tie; both have ``check(M, N)``,
raising :class:`~bayesbandit.errors.InvalidInput` when no super arm exists.

Examples
--------
>>> import jax, jax.numpy as jnp
>>> scores = jnp.array([[3.0, 2.0, 0.0], [3.0, 0.0, 1.0]])  # both blocks rank arm 0 first
>>> TopK(k=1)(scores, jax.random.PRNGKey(0)).tolist()  # arm 0 twice: 0 = 0 N + 0, 3 = 1 N + 0
[0, 3]
>>> ExclusiveAssignment(k=1)(scores, jax.random.PRNGKey(0)).tolist()  # arm 0 once: 2 + 3 beats 3 + 1
[1, 3]
"""

from bayesbandit.oracles.assignment import ExclusiveAssignment, exclusive_assignment
from bayesbandit.oracles.top_k import TIE_RULES, TopK, tie_order

__all__ = ["TopK", "ExclusiveAssignment", "exclusive_assignment", "TIE_RULES", "tie_order"]
