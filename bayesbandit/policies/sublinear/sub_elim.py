"""Sub-Elim: elimination in stages of uncertainty, with o(K) work per round (Yang et al., Algs. 2-3).

Arms live in stages ``Psi_0 .. Psi_{s_max}`` (``Stage``):
an arm placed in ``Psi_s`` had uncertainty ``u_a = beta ||x_a||_{V^{-1}} < 2^{-s}``. Each round
plays, from the lowest non-empty stage, an arm of uncertainty at least ``2^{-s-1}``, found by a
MIPS query over the lifted points ``vec(x x^T)`` with ``vec(V^{-1})`` (a shortlist of ``p``,
rescored exactly); when the query finds none (a *null*), the stage is scanned once, its arms move
to the stages of their current uncertainty, and the search goes on one stage up. In the last stage
(``s_max = ceil(log2(1 / (8 eta)))``, Alg. 3 line 4) an arm is drawn uniformly. An arm is
eliminated when its frozen upper bound ``key_a`` falls below the best lower bound seen,
``r = max_a x_a^T theta - u_a``, taken from min-heaps (no scan).

The paper's Algorithm 3 misbehaves as printed (spec errata); this implementation follows these
readings, each tested:

* stages ``0 .. s_max`` (line 4 allocates ``1 .. s_max``, line 5 uses ``Psi_0``);
* ``s(u) = clip(floor(-log2 u), 0, s_max)`` (lines 8, 21 print ``ceil(-log u)``, which breaks the
  invariant ``u < 2^{-s}`` that Lemma 5.1 needs);
* lines 9 and 20 read ``x_a^T theta - u_a`` (the printed ``x_{a_t}`` is a typo);
* ``key_a = x_a^T theta + max(2^{-s}, u_a)`` at placement: the paper's ``x_a^T theta + 2^{-s}``
  whenever the invariant holds, and still an upper bound for arms clipped into ``Psi_0`` with
  ``u_a > 1`` (otherwise the first good arrival would eliminate every initial arm);
* ``Eliminate`` runs after every placement, on the stages that received arms, not only when
  ``r`` grows (else bad late arrivals survive, and are drawn uniformly in the last stage);
* re-bucketing a stage (lines 20-24) places every one of its arms again, those that stay in the
  stage too, so each key is ``x_a^T theta + max(2^{-s}, u_a)`` at the current ``theta`` (keeping a
  stayer's old key would test it against a bound from older data);
* the arm attaining ``r`` (the leader) is never eliminated, so the arm set never empties under
  a small, tuned ``beta``;
* a null is declared when the best rescored arm has ``u < 2^{-s-1}`` (the gap of Alg. 2's
  ``(c, r, eps)``); an approximate index can miss the arm that would have answered (a false
  null): if after re-bucketing some arms stay in the stage, the most uncertain of them is played;
* the initial arms are placed by the rule of line 8, as arrivals are, instead of all in ``Psi_0``
  (line 5): the first null would move them there anyway, at the cost of a second index build
  inside the timed rounds.

Arms can be added while running (line 7); they cannot be removed: the paper's Sub-Elim handles
additions only (an eliminated arm may have been the only evidence against another), and
``remove_arms`` raises.

``index="exact"`` queries an :class:`~bayesbandit.index.ExactIndex` over the lifted points: the
paper's Linear Elim, making the same choices as an exhaustive ``argmax u_a`` per stage. Stages of
at most ``exact_below`` arms are scanned exactly, whatever the engine (an index over a handful of
arms costs more than the scan and its recall is poor).
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from bayesbandit._gaussian_linear import HostRidge
from bayesbandit.contract import RewardSupport
from bayesbandit.errors import InvalidInput, UnknownArm
from bayesbandit.index.protocol import check_ids, check_new_ids, check_vectors
from bayesbandit.policies.sublinear._catalogue import (
    INDEX_KINDS,
    as_catalogue,
    host_rng,
    make_index,
    pack_indexes,
    unpack_indexes,
)
from bayesbandit.policies.sublinear._stage import Stage, pack_matrix
from bayesbandit.policies.sublinear.sub_ts import IndexUpdateInfo
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["SubElim", "SubElimState", "SubElimInfo"]


class SubElimState:
    """The host state of :class:`SubElim`."""

    def __init__(self, stats: HostRidge, stages: list[Stage]) -> None:
        self.stats = stats
        self.stages = stages
        self.stage_of: dict[int, int] = {}  # live arm id -> its stage
        self.r_low = -math.inf  # best lower confidence bound seen
        self.leader: int | None = None  # the arm attaining r_low
        self.eliminated = 0
        self.rebuckets = 0  # nulls: queries answered by scanning and re-bucketing the stage
        self.queries = 0  # Alg. 2 Query calls (lines 18, 26)
        self.index_queries = 0  # of which the stage's index answered (the rest: exact scans of small stages)
        self.unqueried_rounds = 0  # rounds drawn uniformly from the last stage with no query at all

    @property
    def index_use(self) -> dict[str, int]:
        """The stages' searches so far, by kind.

        ``queries`` (Alg. 2 ``Query`` calls), ``index_queries`` (of those, the ones the stage's index
        answered, the rest being exact scans of stages of at most ``exact_below`` arms), ``null_queries``
        (queries that found no arm of ``u >= 2^{-s-1}``, each followed by a scan of the stage) and ``unqueried_rounds`` (rounds served
        by a uniform draw from the last stage without any query). A round makes zero or more queries:
        ``queries - null_queries`` rounds ended on a query's answer."""
        return {
            "queries": self.queries,
            "index_queries": self.index_queries,
            "null_queries": self.rebuckets,
            "unqueried_rounds": self.unqueried_rounds,
        }

    def __len__(self) -> int:
        return len(self.stage_of)

    def __contains__(self, item: object) -> bool:
        return item in self.stage_of

    def held(self, ids: np.ndarray) -> np.ndarray:
        """Whether each of ``ids`` is a live arm, a boolean array."""
        return np.fromiter((i in self.stage_of for i in ids.tolist()), dtype=bool, count=ids.size)


class SubElimInfo(NamedTuple):
    """What ``SubElim.select`` reports."""

    converged: bool  # always True: the selection has no numerical failure mode
    stage: int  # the stage the arm was played from
    rebuckets: int  # nulls answered by re-bucketing a stage this round
    uniform: bool  # drawn uniformly from the last stage
    live: int  # arms not eliminated


@dataclass(frozen=True)
class SubElim:
    """Sub-Elim (``index="annoy"``) and Linear Elim (``index="exact"``), Yang et al. Algs. 2-3.

    Parameters
    ----------
    beta : float
        Confidence radius of ``u_a = beta ||x_a||_{V^{-1}}``. The theoretical ``beta(delta / 2)``
        (:func:`~bayesbandit.policies.sublinear.confidence_radius`, about 12 at ``d = 16``,
        ``T = 20,000``) keeps every arm in stages 0-1 for the whole horizon; 0.3 on unit-norm arms
        is the scale the paper's regrets imply.
    eta : float
        The MIPS accuracy ``eta(T)``; it sets the last stage ``s_max = ceil(log2(1 / (8 eta)))``
        (``1 / sqrt(20,000)``: ``s_max = 5``).
    shortlist : int
        ``p``, candidates rescored exactly per query.
    index : {"annoy", "exact", "hnsw"}
        Engine of the per-stage indexes over ``vec(x x^T)``.
    exact_below : int or None
        Stages with at most this many arms are scanned exactly (``None``: ``4 * shortlist``).
    n_trees, search_k, seed : int
        Index settings (see :class:`~bayesbandit.policies.sublinear.SubTS`).
    """

    kind: ClassVar[Literal["host"]] = "host"

    _: KW_ONLY
    beta: float = 0.3
    eta: float = 1.0 / math.sqrt(20_000)
    shortlist: int = 30
    index: str = "annoy"
    exact_below: int | None = None
    n_trees: int = 16
    search_k: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        name = type(self).__name__
        check_scalar(name, "beta", self.beta, low=0.0, low_open=True)
        check_scalar(name, "eta", self.eta, low=0.0, high=1.0 / 16.0, low_open=True, high_open=True)
        check_int(name, "shortlist", self.shortlist, low=1)
        check_choice(name, "index", self.index, INDEX_KINDS)
        if self.exact_below is not None:
            check_int(name, "exact_below", self.exact_below, low=0)
        check_int(name, "n_trees", self.n_trees, low=1)
        if self.search_k is not None:
            check_int(name, "search_k", self.search_k, low=1)
        check_int(name, "seed", self.seed, low=0)

    @property
    def s_max(self) -> int:
        """The last stage, ``ceil(log2(1 / (8 eta)))`` (Alg. 3 line 4, log base 2)."""
        return math.ceil(math.log2(1.0 / (8.0 * self.eta)))

    @property
    def scan_limit(self) -> int:
        return 4 * self.shortlist if self.exact_below is None else self.exact_below

    def reward_support(self, d: int) -> RewardSupport:
        """Any real reward (the model is linear)."""
        return RewardSupport(None, "any real number")

    # ---------------------------------------------------------------------------- catalogue
    def init(
        self, arms: Any = None, *, d: int | None = None, capacity: int | None = None, key: Any = None
    ) -> SubElimState:
        """Stages, their indexes and heaps over ``arms`` (a :class:`Catalogue` or ``(K, d)`` array)."""
        catalogue = as_catalogue(f"{type(self).__name__}.init", arms, d)
        dim = catalogue.features.shape[1]
        lifted = dim * (dim + 1) // 2
        stages = [Stage(s, dim, None if s == self.s_max else self._index(lifted, s)) for s in range(self.s_max + 1)]
        state = SubElimState(HostRidge(dim), stages)
        if catalogue.ids.size:
            self._place(state, catalogue.ids, catalogue.features)
        return state

    def _index(self, dim: int, s: int) -> Any:
        return make_index(self.index, dim, n_trees=self.n_trees, search_k=self.search_k, seed=self.seed + s)

    def add_arms(self, state: SubElimState, ids: Any, features: Any) -> SubElimState:
        """New arms (Alg. 3 lines 7-12), placed by their uncertainty; validated first."""
        where = f"{type(self).__name__}.add_arms"
        ids = check_ids(where, ids)
        features = check_vectors(where, features, ids.size, state.stats.d, name="features")
        check_new_ids(where, ids, state.held)
        self._place(state, ids, features)
        return state

    def remove_arms(self, state: SubElimState, ids: Any) -> SubElimState:
        """Not supported: Sub-Elim handles additions only (Yang et al., sec. 5)."""
        raise InvalidInput(
            f"{type(self).__name__}.remove_arms: Sub-Elim cannot remove arms; the paper's algorithm handles "
            "additions only (sec. 5). Fix: use SubTS for a catalogue whose items leave."
        )

    # ---------------------------------------------------------------------------- placement
    def _stage_index(self, u: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            s = np.floor(-np.log2(u))
        return np.clip(np.nan_to_num(s, posinf=self.s_max), 0, self.s_max).astype(np.int64)

    def _place(
        self, state: SubElimState, ids: np.ndarray, features: np.ndarray, staying: np.ndarray | None = None
    ) -> None:
        """Put arms into the stages of their current uncertainty, raise ``r``, eliminate (lines 8-11, 21-23).

        ``staying`` marks arms their target stage holds already (re-bucketed arms that stay): they only
        get their new keys, their features and index entries being where they belong.
        """
        if ids.size == 0:
            return
        stats = state.stats
        u = self.beta * stats.uncertainty(features)
        mean = features @ stats.theta
        stage = self._stage_index(u)
        keys = mean + np.maximum(2.0 ** (-stage.astype(float)), u)
        for s in np.unique(stage).tolist():
            at = stage == s
            new = at if staying is None else at & ~staying
            state.stages[s].add(ids[new], features[new], keys[new])
            state.stages[s].rekey(ids[at & ~new], keys[at & ~new])
            state.stage_of.update(dict.fromkeys(ids[new].tolist(), s))
        lcb = mean - u
        best = int(np.argmax(lcb))
        raised = lcb[best] > state.r_low
        if raised:
            state.r_low, state.leader = float(lcb[best]), int(ids[best])
        targets = range(len(state.stages)) if raised else np.unique(stage).tolist()
        self._eliminate(state, targets)

    def _eliminate(self, state: SubElimState, stages: Any) -> None:
        for s in stages:
            for item in state.stages[s].eliminate(state.r_low, lambda a: a == state.leader):
                del state.stage_of[item]
                state.eliminated += 1

    # ---------------------------------------------------------------------------- selection
    def _query(self, state: SubElimState, stage: Stage, v_inv: np.ndarray) -> int | None:
        """Alg. 2 ``Query``: an arm of ``u >= 2^{-s-1}`` in the stage, or ``None`` (a null); counted in
        ``state.index_use``."""
        state.queries += 1
        if len(stage) <= self.scan_limit or stage.index is None:
            ids, features = stage.store.ids, stage.store.matrix
        else:
            state.index_queries += 1
            ids = stage.index.query(pack_matrix(v_inv), self.shortlist)
            features = stage.store.get(ids)
        u = self.beta * state.stats.uncertainty(features)
        best = int(np.argmax(u))
        return int(ids[best]) if u[best] >= 2.0 ** (-stage.s - 1) else None

    def _rebucket(self, state: SubElimState, stage: Stage) -> int | None:
        """Lines 20-24: place the stage's arms again, by their uncertainty now and with keys from the
        current ``theta`` (those that stay in the stage too). Returns the most uncertain arm left in
        the stage (a false null), or ``None`` when the stage emptied."""
        ids, features = stage.store.ids.copy(), stage.store.matrix.copy()
        u = self.beta * state.stats.uncertainty(features)
        move = self._stage_index(u) != stage.s
        stage.remove(ids[move])
        for item in ids[move].tolist():
            del state.stage_of[item]
        self._place(state, ids, features, staying=~move)  # the arms that stay keep their place, with new keys
        stay = np.flatnonzero(~move)
        stay = stay[np.isin(ids[stay], stage.store.ids)]  # not eliminated meanwhile
        return None if stay.size == 0 else int(ids[stay[np.argmax(u[stay])]])

    def select(self, state: SubElimState, arms: Any, key: Any) -> tuple[int, SubElimInfo]:
        """Lines 13-28: the lowest non-empty stage's uncertain arm, re-bucketing on nulls."""
        if not state.stage_of:
            raise InvalidInput(f"{type(self).__name__}.select: the catalogue is empty. Fix: add arms first.")
        v_inv = state.stats.v_inv
        rebuckets = 0
        queried = state.queries
        while True:
            stage = next(st for st in state.stages if len(st))
            if stage.s == self.s_max:
                if state.queries == queried:
                    state.unqueried_rounds += 1
                drawn = int(stage.store.ids[host_rng(key).integers(len(stage))])
                return drawn, SubElimInfo(True, stage.s, rebuckets, True, len(state))
            found = self._query(state, stage, v_inv)
            if found is None:
                rebuckets += 1
                state.rebuckets += 1
                found = self._rebucket(state, stage)
            if found is not None:
                return found, SubElimInfo(True, stage.s, rebuckets, False, len(state))

    def held(self, state: SubElimState, ids: np.ndarray) -> np.ndarray:
        """Whether each of ``ids`` is a live arm, a boolean array."""
        return state.held(ids)

    def state_parts(self, state: SubElimState) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The whole state as JSON meta and arrays, the stages' indexes included (for a checkpoint)."""
        meta = {
            "t": state.stats.t,
            "r_low": None if math.isinf(state.r_low) else state.r_low,
            "leader": state.leader,
            "eliminated": state.eliminated,
            "rebuckets": state.rebuckets,
            "queries": state.queries,
            "index_queries": state.index_queries,
            "unqueried_rounds": state.unqueried_rounds,
        }
        arrays: list[np.ndarray] = [state.stats.v_inv, state.stats.b]
        indexes: dict[str, Any] = {}
        for stage in state.stages:
            heap = stage.current_heap()
            keys = np.array([k for k, _ in heap], dtype=np.float64)
            heap_ids = np.array([i for _, i in heap], dtype=np.int64)
            arrays += [stage.store.ids.copy(), stage.store.matrix.copy(), keys, heap_ids]
            if stage.index is not None:
                indexes[f"stage{stage.s}"] = stage.index
        return pack_indexes(meta, arrays, indexes)

    def state_from_parts(self, meta: dict[str, Any], arrays: list[np.ndarray]) -> SubElimState:
        """The inverse of :meth:`state_parts` (heaps, without their stale entries, keep their order: they are saved as lists)."""
        meta, arrays, indexes = unpack_indexes(self.index, meta, arrays)
        v_inv, b = arrays[:2]
        stats = HostRidge.from_arrays(v_inv, b, meta["t"])
        stages: list[Stage] = []
        state = SubElimState(stats, stages)
        for s in range(self.s_max + 1):
            ids, features, keys, heap_ids = arrays[2 + 4 * s : 6 + 4 * s]
            stage = Stage(s, b.size, indexes.get(f"stage{s}"))
            stage.store.add_unchecked(ids, features)
            stage.restore(list(zip(keys.tolist(), heap_ids.tolist(), strict=True)))
            state.stage_of.update(dict.fromkeys(ids.tolist(), s))
            stages.append(stage)
        state.r_low = -math.inf if meta["r_low"] is None else float(meta["r_low"])
        state.leader = meta["leader"]
        state.eliminated, state.rebuckets = int(meta["eliminated"]), int(meta["rebuckets"])
        # a state saved before the search counters existed restores them from 0
        state.queries = int(meta.get("queries", 0))
        state.index_queries = int(meta.get("index_queries", 0))
        state.unqueried_rounds = int(meta.get("unqueried_rounds", 0))
        return state

    def update(
        self, state: SubElimState, arms: Any, action: Any, feedback: Any
    ) -> tuple[SubElimState, IndexUpdateInfo]:
        """Lines 29-31: ``V``, ``b`` and ``theta`` with ``(x_action, feedback)``."""
        item = int(action)
        if item not in state.stage_of:
            raise UnknownArm(f"{type(self).__name__}.update: arm id {item} is not a live arm of the catalogue.")
        x = state.stages[state.stage_of[item]].store.vector(item)
        state.stats.update(x, float(feedback))
        return state, IndexUpdateInfo(bool(np.isfinite(state.stats.theta).all()))
