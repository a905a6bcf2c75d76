"""Index-backed linear bandits over large, changing catalogues (Yang et al., "Linear Bandit Algorithms
with Sublinear Time Complexity").

=============  =====================================================  ==========================
policy         what it does                                           exact twin (the baseline)
=============  =====================================================  ==========================
``SubTS``      linear Thompson sampling, argmax by a MIPS shortlist   ``SubTS(index="exact")``
``SubElim``    elimination in uncertainty stages, heaps, lifted MIPS  ``SubElim(index="exact")``
=============  =====================================================  ==========================

Both are ``kind = "host"`` policies: their state holds indexes (:mod:`bayesbandit.index`) and lives
on the host. Arms carry ids (:class:`Catalogue`) and come and go with ``add_arms`` /
``remove_arms`` (Sub-Elim: additions only).
"""

from bayesbandit.policies.sublinear._catalogue import Catalogue
from bayesbandit.policies.sublinear._radius import confidence_radius
from bayesbandit.policies.sublinear.sub_elim import SubElim, SubElimInfo, SubElimState
from bayesbandit.policies.sublinear.sub_ts import IndexUpdateInfo, SubTS, SubTSInfo, SubTSState

__all__ = [
    "Catalogue",
    "confidence_radius",
    "SubTS",
    "SubTSInfo",
    "SubTSState",
    "SubElim",
    "SubElimInfo",
    "SubElimState",
    "IndexUpdateInfo",
]
