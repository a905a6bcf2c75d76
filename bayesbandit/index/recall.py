"""Recall@k of an approximate index against the exact answer."""

from __future__ import annotations

import numpy as np

from bayesbandit.index.protocol import MIPSIndex

__all__ = ["recall_at_k"]


def recall_at_k(index: MIPSIndex, reference: MIPSIndex, queries: np.ndarray, k: int) -> float:
    """Mean fraction of ``reference``'s top ``k`` (an :class:`~bayesbandit.index.ExactIndex`) that
    ``index`` returns in its top ``k``, over the rows of ``queries``."""
    hits = [np.intersect1d(index.query(q, k), reference.query(q, k)).size / min(k, len(reference)) for q in queries]
    return float(np.mean(hits))
