"""Sub-TS: linear Thompson sampling whose argmax is answered by a MIPS index (Yang et al., Alg. 4).

Each round (Alg. 4 lines 7-12, as run in the paper's section 7):

1. ``theta~_t = theta_t + beta V_t^{-1/2} xi_t``, ``xi_t ~ N(0, I_d)`` (Abeille and Lazaric 2017);
2. a shortlist of ``p`` arms from the index, ``index.query(theta~_t, p)``;
3. the played arm is the shortlist's exact ``argmax x_a^T theta~_t`` in float64;
4. ``V^{-1}`` by Sherman-Morrison and ``theta = V^{-1} b`` (``bayesbandit._gaussian_linear.HostRidge``).

No step does work that grows with the number of arms ``K``: the index query is the only search,
and arms added or removed touch the index only. The index is the one store of the arms' features
(:meth:`~bayesbandit.index.MIPSIndex.vectors`, float64 as added): the rescoring and the update
read them there. With ``index="exact"`` the
query is a full scan and the policy is Linear TS, the paper's baseline, making the same choices
as the textbook ``argmax_a x_a^T theta~_t`` over all arms.

The paper's theoretical solver (``ceil(d / eta)`` copies of an adaptive LSH solver at grid-rounded
queries, Alg. 4 line 3) is not implemented: section 7 runs an approximate nearest-neighbour index
with a shortlist, as here. ``shortlist`` (``p``) and the index's own search effort (``search_k``
for Annoy, the number of nodes inspected) are separate settings: a longer shortlist from a
shallow search does not find arms the search never reached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from bayesbandit._gaussian_linear import HostRidge
from bayesbandit.contract import RewardSupport
from bayesbandit.errors import CheckpointError, InvalidInput, UnknownArm
from bayesbandit.index import MIPSIndex
from bayesbandit.policies.sublinear._catalogue import (
    INDEX_KINDS,
    as_catalogue,
    host_rng,
    make_index,
    pack_indexes,
    unpack_indexes,
)
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["SubTS", "SubTSState", "SubTSInfo", "IndexUpdateInfo"]


class SubTSState:
    """The host state of :class:`SubTS`: ridge statistics and the index (which holds the arms' features)."""

    def __init__(self, stats: HostRidge, index: MIPSIndex) -> None:
        self.stats = stats
        self.index = index


class SubTSInfo(NamedTuple):
    """What ``SubTS.select`` reports."""

    converged: bool  # the sample is finite
    shortlist: np.ndarray  # (p,) ids the index returned
    theta: np.ndarray  # (d,) the sample theta~


class IndexUpdateInfo(NamedTuple):
    """What an index-backed policy's ``update`` reports."""

    converged: bool  # the statistics stayed finite


@dataclass(frozen=True)
class SubTS:
    """Sub-TS (``index="annoy"``) and Linear TS (``index="exact"``), Yang et al. Alg. 4.

    Parameters
    ----------
    beta : float
        Exploration scale of ``theta~ = theta + beta V^{-1/2} xi``. The theoretical value
        ``beta(delta / 4T)`` (:func:`~bayesbandit.policies.sublinear.confidence_radius`) is about 13 at
        ``d = 16``, ``T = 20,000`` and explores far more than the paper's reported regrets allow;
        0.5 on unit-norm arms matches them (see ``docs/results/sublinear``).
    shortlist : int
        ``p``, the candidates rescored exactly (the paper's 10, 30 or 100).
    index : {"annoy", "exact", "hnsw"}
        The MIPS engine (:mod:`bayesbandit.index`).
    n_trees, search_k : int
        Annoy's forest size and nodes inspected per query (``None``: Annoy's default
        ``n_trees * p``); HNSW reads ``search_k`` as its ``ef``.
    seed : int
        Seed of the index build.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesbandit.policies.sublinear import SubTS
    >>> arms = np.eye(3)
    >>> policy = SubTS(index="exact")
    >>> state = policy.init(arms)
    >>> arm, info = policy.select(state, None, np.random.default_rng(0))
    >>> state, _ = policy.update(state, None, arm, 1.0)
    >>> int(state.stats.t)
    1
    """

    kind: ClassVar[Literal["host"]] = "host"

    _: KW_ONLY
    beta: float = 0.5
    shortlist: int = 30
    index: str = "annoy"
    n_trees: int = 16
    search_k: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        name = type(self).__name__
        check_scalar(name, "beta", self.beta, low=0.0)
        check_int(name, "shortlist", self.shortlist, low=1)
        check_choice(name, "index", self.index, INDEX_KINDS)
        check_int(name, "n_trees", self.n_trees, low=1)
        if self.search_k is not None:
            check_int(name, "search_k", self.search_k, low=1)
        check_int(name, "seed", self.seed, low=0)

    def reward_support(self, d: int) -> RewardSupport:
        """Any real reward (the model is linear)."""
        return RewardSupport(None, "any real number")

    def init(
        self, arms: Any = None, *, d: int | None = None, capacity: int | None = None, key: Any = None
    ) -> SubTSState:
        """Build the index over ``arms`` (a :class:`Catalogue` or a ``(K, d)`` array): the preprocessing."""
        catalogue = as_catalogue(f"{type(self).__name__}.init", arms, d)
        dim = catalogue.features.shape[1]
        index = make_index(self.index, dim, n_trees=self.n_trees, search_k=self.search_k, seed=self.seed)
        if catalogue.ids.size:
            index.add(catalogue.ids, catalogue.features)
        return SubTSState(HostRidge(dim), index)

    def add_arms(self, state: SubTSState, ids: Any, features: Any) -> SubTSState:
        """New arms (Alg. 4 line 6): into the index, which validates them first."""
        self._guarded("add_arms", state.index.add, ids, features)
        return state

    def remove_arms(self, state: SubTSState, ids: Any) -> SubTSState:
        """Arms leaving the catalogue (Alg. 4 line 6); validated first."""
        self._guarded("remove_arms", state.index.remove, ids)
        return state

    def _guarded(self, method: str, change: Callable[..., None], *args: Any) -> None:
        """``change(*args)``, a change of the index, which validates its input before touching any state; its
        error names this method too."""
        try:
            change(*args)
        except InvalidInput as error:
            raise type(error)(f"{type(self).__name__}.{method}: {error}") from None

    def select(self, state: SubTSState, arms: Any, key: Any) -> tuple[int, SubTSInfo]:
        """Sample ``theta~``, shortlist ``p`` arms by the index, play the best of them exactly."""
        if len(state.index) == 0:
            raise InvalidInput(f"{type(self).__name__}.select: the catalogue is empty. Fix: add arms first.")
        xi = host_rng(key).standard_normal(state.stats.d)
        theta = state.stats.sample(self.beta, xi)
        if not np.isfinite(theta).all():
            return int(state.index.ids[0]), SubTSInfo(False, np.zeros(0, np.int64), theta)
        shortlist = state.index.query(theta, self.shortlist)
        scores = state.index.vectors(shortlist) @ theta
        return int(shortlist[int(np.argmax(scores))]), SubTSInfo(True, shortlist, theta)

    def held(self, state: SubTSState, ids: np.ndarray) -> np.ndarray:
        """Whether each of ``ids`` is an arm of the catalogue, a boolean array."""
        return state.index.held(ids)

    def state_parts(self, state: SubTSState) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The whole state as JSON meta and arrays, the index's parts included (for a checkpoint)."""
        return pack_indexes({"t": state.stats.t}, [state.stats.v_inv, state.stats.b], {"index": state.index})

    def state_from_parts(self, meta: dict[str, Any], arrays: list[np.ndarray]) -> SubTSState:
        """The inverse of :meth:`state_parts`."""
        meta, arrays, indexes = unpack_indexes(self.index, meta, arrays)
        if len(arrays) != 2:
            raise CheckpointError(
                f"{type(self).__name__}: the saved state has {len(arrays)} arrays of its own; this version keeps 2 "
                "(V^-1 and b; the features live in the index). Fix: load it with the version that saved it."
            )
        v_inv, b = arrays
        return SubTSState(HostRidge.from_arrays(v_inv, b, meta["t"]), indexes["index"])

    def update(self, state: SubTSState, arms: Any, action: Any, feedback: Any) -> tuple[SubTSState, IndexUpdateInfo]:
        """Add ``(x_action, feedback)`` to the ridge statistics: ``O(d^2)``."""
        item = int(action)
        if item not in state.index:
            raise UnknownArm(f"{type(self).__name__}.update: arm id {item} is not in the catalogue.")
        state.stats.update(state.index.vectors(np.array([item]))[0], float(feedback))
        return state, IndexUpdateInfo(bool(np.isfinite(state.stats.theta).all()))
