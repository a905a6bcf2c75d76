"""Maximum-inner-product (MIPS) indexes over catalogues that change: one contract, three engines.

===================  =============================================================  =====================
engine               how                                                            use it for
===================  =============================================================  =====================
:class:`ExactIndex`  one BLAS scan over contiguous rows, swap-remove deletions      the baseline; small K
:class:`AnnoyIndex`  Annoy forest + exactly scanned overlay + tombstones, rebuilt   large K (the default)
                     when the changes pass a fraction of the index
:class:`HNSWIndex`   hnswlib graph, incremental inserts, mark-deleted (extra)       large K, many changes
===================  =============================================================  =====================

All take integer ids and validate every call before changing anything (:mod:`.protocol`);
:func:`recall_at_k` measures an engine against :class:`ExactIndex`.
"""

from bayesbandit.index.annoy import AnnoyIndex
from bayesbandit.index.exact import ExactIndex
from bayesbandit.index.hnsw import HNSWIndex
from bayesbandit.index.protocol import Catalogue, MIPSIndex
from bayesbandit.index.recall import recall_at_k
from bayesbandit.index.store import FeatureStore

__all__ = ["Catalogue", "MIPSIndex", "ExactIndex", "AnnoyIndex", "HNSWIndex", "FeatureStore", "recall_at_k"]
