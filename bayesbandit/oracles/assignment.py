"""``ExclusiveAssignment``: ``k`` arms per block, each arm in at most one block (the promotion problem).

Takemura and Ito's promotion problem (sec. VII-A2) sends each of ``M`` promotions to ``k`` users,
and a user receives at most one promotion. For scores ``s`` of shape ``(M, N)`` the oracle solves

    max sum_{j, i} s_{j,i} z_{j,i}   s.t.   sum_i z_{j,i} = k (every block),  sum_j z_{j,i} <= 1 (every arm),

``z`` binary (spec sec. 6.2). It is a min-cost flow (block ``j`` supplies ``k`` units, edges
``j -> i`` of cost ``-s_{j,i}`` and capacity 1, edges ``i -> sink`` of capacity 1), so its LP is
integral. Its dual is ``min_p sum_j k p_j + sum_i max(0, max_j s_{j,i} - p_j)``, and an assignment
with ``n_j <= k`` arms in block ``j`` is optimal for the supplies ``n_j`` exactly when some prices
``p`` satisfy complementary slackness: each assigned arm sits in a block attaining
``max_j s_{j,i} - p_j >= 0``, and each free arm has ``s_{j,i} - p_j <= 0`` everywhere. (The prices,
with ``-max(0, max_j s_{j,i} - p_j)`` on the arms, are node potentials under which every residual
edge has a non-negative reduced cost: the residual graph has no negative cycle.)
The per-block top-k (:class:`~bayesbandit.oracles.TopK`) is the relaxation without exclusivity;
greedy over sorted pairs is not exact.

The solver, on the host in NumPy, is exact:

1. **Pruning.** Only block ``j``'s ``M k`` best arms are needed: in an optimal solution with arm
   ``i`` in block ``j`` outside that list, at most ``M k - 1`` other arms are assigned, so one of
   the list is free and scores at least ``s_{j,i}``; swapping it in loses nothing. So the problem
   restricted to the listed pairs ``(j, i)`` (over the union of the lists, at most ``M^2 k`` arms)
   has the full problem's optimum, and it is always feasible.
2. **Disjoint top-k.** If the blocks' top-k sets (equal scores by the order below) are disjoint,
   they attain the relaxation's value: return them.
3. **Price sweeps** (dual coordinate descent, an auction without epsilon). Start from nothing
   assigned and ``p_j = max_i s_{j,i}``. For a block short of ``k``, lower ``p_j`` just enough that
   it holds ``k`` arms: its bids are ``s_{j,i} - max(0, max_{j' != j} s_{j',i} - p_{j'})``, it takes
   the best bids of non-members (free arms first among equal bids) from wherever they are, and
   ``p_j`` becomes the last bid taken. Every step keeps the slackness above with at most ``k`` arms
   per block, so each state is optimal for its own counts. Sweeps stop when every block is full
   or a sweep no longer halves the total shortfall.
4. **Successive shortest paths** for the rest, on the residual graph of the listed pairs compressed
   onto the ``M`` blocks (a simple path visits each block, hence each moved arm, once): an edge
   ``a -> b`` of cost ``min_{i in b} (s_{b,i} - s_{a,i})`` (``a`` takes user ``i`` from ``b``), an
   exit ``a -> sink`` of cost ``-max_{i free} s_{a,i}``, and Bellman-Ford from the blocks short of
   ``k``. Step 3 leaves no negative cycle, and augmenting along a shortest path adds one assigned
   arm and keeps it so (the successive-shortest-path invariant with supplies; arms are never freed
   again, so each block's best free arm is a pointer into its sorted list). When every block holds
   ``k`` no improving exchange of any length remains: the assignment is optimal.

Ties: scores are first rounded to integer multiples of ``tol max(1, max |s|)`` (round-off becomes a
tie, never a silent decision, and the solver's sums are exact integers); with ``tol = 0`` the
scores are used as given. Among optimal assignments the choice is a deterministic function of the
rounded scores and an order of the arms: every step takes the earliest arm among equals (so when
the top-k sets do not collide, the result is :class:`~bayesbandit.oracles.TopK`'s). Small
collided problems (at most 200,000 slot-candidate pairs after pruning) go instead to
:func:`scipy.optimize.linear_sum_assignment` on the pruned matrix, a few hundred microseconds where
the sweeps' Python costs milliseconds: the same optimal value, and among tied optima scipy's
deterministic choice on the ordered candidates rather than the earliest-arm rule. The order is
the index (``"index"``) or a random permutation from the key (``"random"``). Non-finite scores are
treated as just below (NaN, ``-inf``) or above (``inf``) every finite score. Inside ``jax.jit`` and
``jax.vmap`` the call goes through ``jax.pure_callback`` (sequentially over a batch).

Cost: the selections of step 1 (``O(M N)``), then ``O(M k)`` per price step and ``O(M^2 k)`` per
augmentation (at most ``M k`` of them). At ``M = 10``, ``N = 20,000``, ``k = 200`` with top-k lists
that collide (a fifth of the picks contested) three sweeps leave one or two augmentations: about
15 ms, against 13 s for ``scipy.optimize.linear_sum_assignment`` on the repeated ``N x M k`` matrix,
with the same value. Coordinate descent stalls when the blocks' scores are nearly proportional
(every block wants the same arms in the same order); then the paths do almost all the work, about
0.1 ms each: 0.2 to 0.3 s at that size.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles.top_k import TIE_RULES, score_shape
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["ExclusiveAssignment", "exclusive_assignment"]


def _largest(values: np.ndarray, count: int, prefer: np.ndarray | None = None) -> np.ndarray:
    """Positions (ascending) of the ``count`` largest ``values``; among equal values ``prefer`` first, then the lowest."""
    n = values.size
    if count >= n:
        return np.arange(n)
    threshold = np.partition(values, n - count)[n - count]
    above = np.flatnonzero(values > threshold)
    tied = np.flatnonzero(values == threshold)
    if prefer is not None:
        tied = np.concatenate([tied[prefer[tied]], tied[~prefer[tied]]])
    return np.sort(np.concatenate([above, tied[: count - above.size]]))


def _price_sweeps(scores: np.ndarray, lists: list[np.ndarray], k: int, assign: np.ndarray) -> None:
    """Step 3 of the module docstring: fill the blocks by lowering their prices, in place on ``assign``.

    ``scores`` is ``-inf`` off the lists: block ``j`` bids on ``lists[j]`` only, ``O(M k)`` a step.
    """
    blocks = scores.shape[0]
    price = scores.max(axis=1)
    # per arm, the best and second-best value s_{j,i} - p_j over the blocks (prices only fall: values
    # only rise); all are <= 0 at the start, so the empty assignment is consistent
    top = np.full(scores.shape[1], -np.inf)
    second = top.copy()
    top_row = np.zeros(scores.shape[1], dtype=np.int64)
    for j, row in enumerate(scores - price[:, None]):
        rises = row > top
        second = np.where(rises, top, np.maximum(second, row))
        top = np.where(rises, row, top)
        top_row[rises] = j
    count = np.zeros(blocks, dtype=np.int64)
    shortfall = blocks * k
    while shortfall > 0:
        before = shortfall
        for j, arms in enumerate(lists):
            need = k - int(count[j])
            if need == 0:
                continue
            owner, mine = assign[arms], top_row[arms] == j
            outside = np.maximum(np.where(mine, second[arms], top[arms]), 0.0)  # each arm's best option but j
            bids = scores[j, arms] - outside
            bids[owner == j] = -np.inf
            taken = _largest(bids, need, prefer=owner < 0)
            price[j] = min(price[j], float(bids[taken].min()))
            new = scores[j, arms] - price[j]
            rises = ~mine & (new > top[arms])
            second[arms] = np.where(rises, top[arms], np.maximum(second[arms], np.where(mine, -np.inf, new)))
            top[arms] = np.where(mine | rises, new, top[arms])
            top_row[arms[rises]] = j
            losers = owner[taken]
            count -= np.bincount(losers[losers >= 0], minlength=blocks)
            assign[arms[taken]] = j
            count[j] = k
        shortfall = blocks * k - int(count.sum())
        if 2 * shortfall > before:
            return


def _shortest_paths(scores: np.ndarray, lists: list[np.ndarray], k: int, assign: np.ndarray) -> None:
    """Step 4 of the module docstring: augment along shortest paths until every block holds ``k``, in place.

    ``scores`` is ``-inf`` off the lists. Arms never become free again, so each block's best free arm
    is a pointer into its list sorted best first.
    """
    blocks = scores.shape[0]
    rows = np.arange(blocks)
    count = np.bincount(assign[assign >= 0], minlength=blocks)
    members = np.zeros((blocks, k), dtype=np.int64)  # members[b, :count[b]], in any order
    slot = np.zeros(assign.size, dtype=np.int64)
    for b in range(blocks):
        held = np.flatnonzero(assign == b)
        members[b, : held.size] = held
        slot[held] = np.arange(held.size)
    cost = np.full((blocks, blocks), np.inf)  # cost[a, b]: a takes arm via[a, b] from b
    via = np.zeros((blocks, blocks), dtype=np.int64)

    def refresh(b: int) -> None:
        held = members[b, : count[b]]
        if held.size == 0:
            cost[:, b] = np.inf
            return
        change = scores[b, held] - scores[:, held]
        pick = change.argmin(axis=1)
        cost[:, b] = change[rows, pick]
        via[:, b] = held[pick]
        cost[b, b] = np.inf

    def move(arm: int, src: int, dst: int) -> None:
        if src >= 0:
            last = members[src, count[src] - 1]
            members[src, slot[arm]] = last
            slot[last] = slot[arm]
            count[src] -= 1
        members[dst, count[dst]] = arm
        slot[arm] = count[dst]
        count[dst] += 1
        assign[arm] = dst

    ranked = [arms[np.argsort(-scores[j, arms], kind="stable")].tolist() for j, arms in enumerate(lists)]
    pointer = [0] * blocks
    exit_cost = np.empty(blocks)
    best_free = [0] * blocks

    def advance(a: int) -> None:  # while any block is short, fewer than M k arms are held: one of a's list is free
        arms = ranked[a]
        while pointer[a] < len(arms) and assign[arms[pointer[a]]] >= 0:
            pointer[a] += 1
        best_free[a] = arms[min(pointer[a], len(arms) - 1)]
        exit_cost[a] = -scores[a, best_free[a]] if pointer[a] < len(arms) else np.inf

    for b in range(blocks):
        refresh(b)
        advance(b)
    for _ in range(blocks * k - int(count.sum())):
        dist = np.where(count < k, 0.0, np.inf)
        pred = np.full(blocks, -1)
        for _ in range(blocks):  # Bellman-Ford from the blocks short of k
            through = dist[:, None] + cost
            arg = through.argmin(axis=0)
            best = through[arg, rows]
            better = best < dist
            if not better.any():
                break
            dist = np.where(better, best, dist)
            pred = np.where(better, arg, pred)
        end = int(np.argmin(dist + exit_cost))
        path = [end]
        while pred[path[-1]] >= 0 and len(path) <= blocks:
            path.append(int(pred[path[-1]]))
        if len(path) > blocks:  # a cycle of round-off (tol = 0 only): take the best direct exit
            end = int(np.argmin(np.where(count < k, exit_cost, np.inf)))
            path = [end]
        path.reverse()  # the block short of k first, the block taking a free arm last
        taken = [int(via[a, b]) for a, b in zip(path[:-1], path[1:])]
        for a, b, arm in zip(path[:-1], path[1:], taken):
            move(arm, b, a)
        user = best_free[end]
        move(user, -1, end)
        for b in path:
            refresh(b)
        for a in range(blocks):
            if best_free[a] == user:
                advance(a)


_SMALL = 200_000  # slots x candidates up to which scipy's assignment solver beats the Python price sweeps


def _assign_small(reduced: np.ndarray, k: int, candidates: np.ndarray) -> np.ndarray:
    """The pruned problem as a rectangular assignment (block ``j`` repeated ``k`` times against the
    candidates), solved by :func:`scipy.optimize.linear_sum_assignment`: exact, and faster than the
    sweeps below a few hundred thousand entries. Unlisted pairs get a cost below every listed one."""
    from scipy.optimize import linear_sum_assignment

    listed = np.isfinite(reduced)
    floor = reduced[listed].min() - 1.0 - np.ptp(reduced[listed]) * reduced.shape[0] * k
    slots = np.repeat(np.where(listed, reduced, floor), k, axis=0)
    rows, cols = linear_sum_assignment(slots, maximize=True)
    chosen = np.empty((reduced.shape[0], k), dtype=np.int64)
    chosen[rows // k, rows % k] = candidates[cols]
    return chosen


def exclusive_assignment(scores: np.ndarray, k: int, *, order: np.ndarray | None = None) -> np.ndarray:
    """The optimal exclusive assignment of the module docstring, on the host.

    Parameters
    ----------
    scores : ndarray, shape (M, N)
        Finite scores; sums of them are exact when they are integers (as :class:`ExclusiveAssignment` makes them).
    k : int
        Arms per block; ``M k <= N``.
    order : ndarray, shape (N,), optional
        A permutation of the arms: among equal options, arms earlier in it are taken first (default: the index).

    Returns
    -------
    ndarray, shape (M, k)
        Block ``j``'s arms in row ``j``, best first (equal scores in ``order``).

    Examples
    --------
    >>> import numpy as np
    >>> exclusive_assignment(np.array([[5.0, 4.0, 0.0], [5.0, 1.0, 0.0]]), 1).tolist()
    [[1], [0]]
    """
    k = check_int("exclusive_assignment", "k", k, low=1)
    scores = np.asarray(scores, dtype=np.float64)
    blocks, n = score_shape("exclusive_assignment", scores)
    if blocks * k > n:
        raise InvalidInput(
            f"exclusive_assignment: M k = {blocks} x {k} distinct arms are needed, but there are only N = {n}. "
            f"Fix: use k <= {n // max(blocks, 1)}."
        )
    if not np.all(np.isfinite(scores)):
        j, i = np.argwhere(~np.isfinite(scores))[0]
        raise InvalidInput(
            f"exclusive_assignment: scores must be finite; got {scores[j, i]} in block {j}, arm {i}. "
            "Fix: replace non-finite scores (ExclusiveAssignment does: NaN and -inf below every finite score)."
        )
    order = np.arange(n) if order is None else np.asarray(order)
    if (
        order.shape != (n,)
        or order.dtype.kind not in "iu"
        or order.min() < 0
        or order.max() >= n
        or np.bincount(order, minlength=n).max() > 1
    ):
        raise InvalidInput(
            f"exclusive_assignment: order must be a permutation of 0 .. {n - 1} (shape ({n},)); got {order!r}. "
            "Fix: pass np.random.default_rng(seed).permutation(N), or omit order."
        )
    permuted = scores[:, order]
    if n <= 5_000:  # one stable sort of every row beats 2 M partitions at this size
        ranked = np.argsort(-permuted, axis=1, kind="stable")
        lists = list(np.sort(ranked[:, : blocks * k], axis=1))
        chosen = np.sort(ranked[:, :k], axis=1)
    else:
        lists = [_largest(row, blocks * k) for row in permuted]
        chosen = np.stack([top[_largest(row[top], k)] for row, top in zip(permuted, lists, strict=True)])
    if np.bincount(chosen.ravel(), minlength=n).max() > 1:
        listed = np.zeros(n, dtype=bool)
        listed[np.concatenate(lists)] = True
        candidates = np.flatnonzero(listed)  # ascending: the order is kept
        local = [np.searchsorted(candidates, top) for top in lists]
        reduced = np.full((blocks, candidates.size), -np.inf)  # the listed pairs only (step 1)
        for j, arms in enumerate(local):
            reduced[j, arms] = permuted[j, candidates[arms]]
        if blocks * k * candidates.size <= _SMALL:
            chosen = _assign_small(reduced, k, candidates)
        else:
            assign = np.full(candidates.size, -1, dtype=np.int64)
            _price_sweeps(reduced, local, k, assign)
            _shortest_paths(reduced, local, k, assign)
            chosen = np.stack([candidates[np.flatnonzero(assign == j)] for j in range(blocks)])
    picked = np.take_along_axis(permuted, chosen, 1)
    chosen = np.take_along_axis(chosen, np.argsort(-picked, axis=1, kind="stable"), 1)  # best first
    return order[chosen]


@dataclass(frozen=True, kw_only=True)
class ExclusiveAssignment:
    """``k`` arms per block, each arm in at most one block, maximising the total score (module docstring).

    Hashable and without array leaves: a policy closes over it inside ``jax.jit``.

    Parameters
    ----------
    k : int
        Arms per block, ``k >= 1``.
    tie_break : {"index", "random"}
        The order in which the solver meets arms among equal options: the index, or a random
        permutation from the key.
    tol : float
        Relative resolution below which scores tie: they are rounded to multiples of
        ``tol max(1, max |s|)`` (``0``: used as given).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> oracle = ExclusiveAssignment(k=1)
    >>> scores = jnp.array([[5.0, 4.0, 0.0], [5.0, 1.0, 0.0]])  # both blocks want arm 0
    >>> oracle(scores, jax.random.PRNGKey(0)).tolist()  # block 0 takes arm 1, block 1 arm 0 (lifted 3 + 0)
    [1, 3]
    >>> jax.jit(oracle)(scores, jax.random.PRNGKey(0)).tolist()
    [1, 3]
    """

    k: int
    tie_break: str = "index"
    tol: float = 1e-9

    def __post_init__(self) -> None:
        check_int("ExclusiveAssignment", "k", self.k, low=1)
        check_choice("ExclusiveAssignment", "tie_break", self.tie_break, TIE_RULES)
        check_scalar("ExclusiveAssignment", "tol", self.tol, low=0.0, high_open=True)

    def check(self, num_blocks: int, num_arms: int) -> None:
        """Raise :class:`~bayesbandit.errors.InvalidInput` unless ``M k <= N`` (each arm in one block at most)."""
        check_int("ExclusiveAssignment.check", "num_blocks", num_blocks, low=1)
        check_int("ExclusiveAssignment.check", "num_arms", num_arms, low=1)
        if num_blocks * self.k > num_arms:
            raise InvalidInput(
                f"ExclusiveAssignment: M k = {num_blocks} x {self.k} = {num_blocks * self.k} distinct arms are "
                f"needed, but there are only N = {num_arms}. Fix: use k <= {num_arms // num_blocks}, offer more "
                "arms, or drop exclusivity (bayesbandit.oracles.TopK)."
            )

    def solve(self, scores: np.ndarray, seed: int | np.ndarray = 0) -> np.ndarray:
        """Host version of ``__call__``: ``(M k,)`` int32 lifted indices for ``(M, N)`` NumPy scores.

        ``seed`` (an int or array of ints) draws the arm order of ``tie_break="random"``.
        """
        scores = np.array(scores, dtype=np.float64)
        blocks, n = score_shape("ExclusiveAssignment", scores)
        self.check(blocks, n)
        finite = np.isfinite(scores)
        if not finite.all():
            low, high = (scores[finite].min(), scores[finite].max()) if finite.any() else (0.0, 0.0)
            scores[np.isnan(scores) | (scores == -np.inf)] = low - 1.0
            scores[scores == np.inf] = high + 1.0
        resolution = self.tol * max(1.0, float(np.abs(scores).max()))
        rounded = np.round(scores / resolution) if resolution > 0 else scores
        if self.tie_break == "index":
            order = np.arange(n)
        else:
            order = np.random.default_rng(np.asarray(seed, dtype=np.uint32).ravel().tolist()).permutation(n)
        chosen = exclusive_assignment(rounded, self.k, order=order)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        raw = np.take_along_axis(scores, chosen, 1)
        chosen = np.take_along_axis(chosen, np.lexsort((rank[chosen], -raw), axis=-1), 1)  # best first, raw scores
        return (chosen + n * np.arange(blocks)[:, None]).reshape(-1).astype(np.int32)

    def __call__(self, scores: Array, key: PRNGKey) -> Array:
        """The super arm ``(M k,)`` int32 of lifted indices ``j N + i``, block by block, best first.

        Parameters
        ----------
        scores : array, shape (M, N)
        key : PRNG key
            Used by ``tie_break="random"`` only.
        """
        blocks, n = score_shape("ExclusiveAssignment", scores)
        self.check(blocks, n)
        seed = jax.random.randint(key, (2,), 0, jnp.iinfo(jnp.int32).max)
        shape = jax.ShapeDtypeStruct((blocks * self.k,), jnp.int32)
        return jax.pure_callback(self.solve, shape, scores, seed, vmap_method="sequential")
