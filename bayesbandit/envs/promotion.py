"""Takemura and Ito's promotion problem (sec. VII-A2): ``M`` promotions, each sent to ``k`` of ``N`` users a round.

Each round ``N`` users are drawn uniformly without replacement from a pool (MovieLens users,
:func:`bayesbandit.datasets.promotion.promotion_data`); the arms are their features, shape
``(N, d)``. A super arm is ``k`` users per promotion, given as ``M k`` *lifted* indices
``j N + i`` (promotion ``j``, position ``i`` in the round's user list), the layout of
:mod:`bayesbandit.oracles` and of the combinatorial policies (``blocks = M``). The reward of
sending promotion ``j`` to user ``u`` is ``u``'s rating of test movie ``j``, 0 when missing:
deterministic, no noise, so the feedback *is* the expected reward. The round's best value is the
environment's ``oracle`` (:class:`~bayesbandit.oracles.ExclusiveAssignment`: a user gets at most
one promotion, as the paper's text asks; :class:`~bayesbandit.oracles.TopK`: the formal,
per-promotion top-k) run on the true ratings of the round's users.

Choices where the paper is silent (spec sec. 5.2 and 7):

* **N**: ``100 k`` users per round (the paper's "N = 100k" read as ``100 * k``), capped at the
  pool size by :meth:`PromotionEnv.from_movielens`.
* **Sampling**: round ``t``'s users are the first ``N`` of a uniform permutation of the pool drawn
  from ``fold_in(instance_key, t)``: without replacement within a round, independent across
  rounds, and a function of (instance, round) only, so every policy meets the same users
  (common random numbers). The pull key is used only by a ``"random"`` tie rule of the oracle,
  which changes which optimum it returns, never its value.
* **Regret** is against the best super arm of each round in hindsight (spec sec. 6.5); the paper
  reports cumulative reward, which is the ``reward`` the runners record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.datasets.promotion import PromotionData, promotion_data
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import ExclusiveAssignment, TopK
from bayesbandit.validation import check_int

__all__ = ["PromotionEnv", "PromotionInstance"]


class PromotionInstance(NamedTuple):
    """One instance of the promotion problem: the key of its user draws."""

    key: PRNGKey  # round t's users come from fold_in(key, t)


def _table(owner: str, name: str, value: Any, rows: int | None) -> np.ndarray:
    """A finite 2-d float64 array with ``rows`` rows (when given), as a read-only copy."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be a 2-d numeric array; got {type(value).__name__}. "
            f"Fix: pass a NumPy array of one row per user."
        ) from exc
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be a non-empty 2-d array, one row per user; got shape "
            f"{arr.shape}. Fix: pass an array of shape (users, columns)."
        )
    if rows is not None and arr.shape[0] != rows:
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must have one row per user, {rows} like 'features'; got "
            f"{arr.shape[0]}. Fix: pass features and rewards of the same users, in the same order."
        )
    if not np.isfinite(arr).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be finite; got {arr[bad]} at index {bad}. "
            "Fix: replace missing ratings by 0 and drop non-finite features."
        )
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False, kw_only=True)
class PromotionEnv:
    """The promotion problem (see the module docstring); compared and hashed by identity.

    Parameters
    ----------
    features : array, shape (U, d)
        The user pool's features (``||x|| <= 1`` in the paper's setting).
    rewards : array, shape (U, M)
        User ``u``'s reward for promotion ``j`` (the rating of test movie ``j``, 0 when missing).
    num_users_per_round : int
        ``N``, users drawn per round, at most ``U`` (``100 k`` in the paper).
    k : int
        Users per promotion; the oracle's ``k``.
    oracle : oracle
        :class:`~bayesbandit.oracles.ExclusiveAssignment` (a user gets at most one promotion) or
        :class:`~bayesbandit.oracles.TopK` (per-promotion top-k), with ``k`` users per block.
    horizon : int
        ``T``, the rounds of the paper's experiment (20), for the runner's ``horizon``.
    source : str
        Where the pool came from, for descriptions.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from bayesbandit.oracles import TopK
    >>> rng = np.random.default_rng(0)
    >>> env = PromotionEnv(features=rng.uniform(-0.1, 0.1, (30, 3)), rewards=rng.integers(0, 6, (30, 2)) * 1.0,
    ...                    num_users_per_round=8, k=2, oracle=TopK(k=2))
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> env.arms(s, 0).shape, env.blocks, env.K
    ((8, 3), 2, 8)
    >>> action = env.oracle(env.round_rewards(s, 0), jax.random.PRNGKey(1))  # the best super arm, lifted
    >>> feedback, outcome = env.pull(s, action, jax.random.PRNGKey(1), 0)
    >>> feedback.shape, bool(outcome.regret == 0)
    ((4,), True)
    """

    features: np.ndarray = field(repr=False)
    rewards: np.ndarray = field(repr=False)
    num_users_per_round: int
    k: int
    oracle: Any
    horizon: int = 20
    source: str = "custom pool"

    fixed_arms: ClassVar[bool] = False

    def __post_init__(self) -> None:
        name = type(self).__name__
        features = _table(name, "features", self.features, None)
        rewards = _table(name, "rewards", self.rewards, features.shape[0])
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "rewards", rewards)
        pool = features.shape[0]
        check_int(name, "num_users_per_round", self.num_users_per_round, low=1)
        if self.num_users_per_round > pool:
            raise InvalidInput(
                f"The 'num_users_per_round' parameter of {name} must be an int in [1, {pool}] (the pool's users, "
                f"drawn without replacement); got {self.num_users_per_round}. Fix: pass num_users_per_round <= {pool}."
            )
        check_int(name, "k", self.k, low=1)
        check_int(name, "horizon", self.horizon, low=1)
        if not (callable(self.oracle) and callable(getattr(self.oracle, "check", None))):
            raise InvalidInput(
                f"The 'oracle' parameter of {name} must be an oracle (callable on (M, N) scores, with check(M, N)); "
                f"got {type(self.oracle).__name__}. Fix: pass bayesbandit.oracles.ExclusiveAssignment(k={self.k}) or "
                f"TopK(k={self.k})."
            )
        if getattr(self.oracle, "k", self.k) != self.k:
            raise InvalidInput(
                f"The 'oracle' parameter of {name} must choose k = {self.k} users per promotion; got one with "
                f"k = {self.oracle.k}. Fix: build the oracle with the environment's k."
            )
        self.oracle.check(self.blocks, int(self.num_users_per_round))

    # ------------------------------------------------------------------ sizes

    @property
    def K(self) -> int:
        """Arms per round, ``N``."""
        return int(self.num_users_per_round)

    @property
    def d(self) -> int:
        """Feature dimension."""
        return int(self.features.shape[1])

    @property
    def blocks(self) -> int:
        """``M``, the number of promotions."""
        return int(self.rewards.shape[1])

    @property
    def num_users(self) -> int:
        """``U``, the size of the user pool."""
        return int(self.features.shape[0])

    @property
    def action_shape(self) -> tuple[int, ...]:
        """``(M k,)``: one lifted index per (promotion, user) pair."""
        return (self.blocks * self.k,)

    @property
    def exclusive(self) -> bool:
        """Whether a user may receive at most one promotion (the oracle is an exclusive assignment)."""
        return isinstance(self.oracle, ExclusiveAssignment)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_data(
        cls,
        data: PromotionData,
        *,
        k: int,
        users_per_k: int = 100,
        exclusive: bool = True,
        tie_break: str = "index",
        horizon: int = 20,
    ) -> PromotionEnv:
        """The environment on a :class:`~bayesbandit.datasets.promotion.PromotionData` pool.

        ``N = users_per_k * k``, capped at the pool size (see :meth:`from_movielens`).
        """
        k = check_int("PromotionEnv.from_data", "k", k, low=1)
        users_per_k = check_int("PromotionEnv.from_data", "users_per_k", users_per_k, low=1)
        oracle = ExclusiveAssignment(k=k, tie_break=tie_break) if exclusive else TopK(k=k, tie_break=tie_break)
        return cls(
            features=data.features,
            rewards=data.rewards,
            num_users_per_round=min(users_per_k * k, data.num_users),
            k=k,
            oracle=oracle,
            horizon=horizon,
            source=f"{data.source}: {data.num_users} users, test movies {data.movie_ids.tolist()}",
        )

    @classmethod
    def from_movielens(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        k: int,
        num_promotions: int = 10,
        users_per_k: int = 100,
        exclusive: bool = True,
        tie_break: str = "index",
        horizon: int = 20,
        seed: int = 0,
        rank: int = 50,
        min_raters: int | None = None,
        max_raters: int | None = None,
    ) -> PromotionEnv:
        """The paper's experiment: :func:`~bayesbandit.datasets.promotion.promotion_data`, then :meth:`from_data`.

        ``N = users_per_k * k`` users a round (the paper: ``100 k`` of MovieLens 20M's 138,493),
        **capped at the pool size**. On MovieLens 100K (943 users) the cap binds from ``k = 10``:
        every round then offers all 943 users in a new order, so the arm set is the same users each
        round and the problem is easier to learn than the paper's; and an exclusive oracle needs
        ``M k <= N``, i.e. ``k <= 94`` for ``M = 10`` (the paper's ``k = 100 .. 200`` raise
        :class:`~bayesbandit.errors.InvalidInput`; use ``exclusive=False`` or fewer promotions).
        ``k <= 9`` keeps the paper's proportions on 100K (see the data module's docstring).

        Parameters
        ----------
        path : path, optional
            MovieLens folder or ratings file (default ``$BAYESBANDIT_DATA/ml-100k``).
        k : int
            Users per promotion (the paper: 50, 100, 150, 200).
        num_promotions : int
            ``M`` (10).
        users_per_k : int
            ``N / k`` (100).
        exclusive : bool
            :class:`~bayesbandit.oracles.ExclusiveAssignment` if true, else
            :class:`~bayesbandit.oracles.TopK`.
        tie_break : {"index", "random"}
            The oracle's tie rule.
        horizon : int
            ``T`` (20).
        seed : int
            Seeds the test movies and the SVD (the rounds' users come from the instance key).
        rank, min_raters, max_raters
            Passed to :func:`~bayesbandit.datasets.promotion.promotion_data`.
        """
        data = promotion_data(
            path, num_promotions=num_promotions, rank=rank, min_raters=min_raters, max_raters=max_raters, seed=seed
        )
        return cls.from_data(
            data, k=k, users_per_k=users_per_k, exclusive=exclusive, tie_break=tie_break, horizon=horizon
        )

    # ------------------------------------------------------------------ the contract

    def reset(self, key: PRNGKey) -> PromotionInstance:
        """One instance: the key from which every round's users are drawn."""
        return PromotionInstance(key)

    def users(self, env_state: PromotionInstance, t: ArrayLike) -> Array:
        """Round ``t``'s users, ``(N,)`` int32 rows of the pool, distinct."""
        order = jax.random.permutation(jax.random.fold_in(env_state.key, t), self.num_users)
        return order[: self.num_users_per_round].astype(jnp.int32)

    def arms(self, env_state: PromotionInstance, t: ArrayLike) -> Array:
        """Round ``t``'s arm set: its users' features, ``(N, d)``."""
        return jnp.asarray(self.features)[self.users(env_state, t)]

    def round_rewards(self, env_state: PromotionInstance, t: ArrayLike) -> Array:
        """Round ``t``'s true rewards ``(M, N)``: row ``j`` is promotion ``j``, column ``i`` the ``i``-th user."""
        return jnp.asarray(self.rewards)[self.users(env_state, t)].T

    def pull(self, env_state: PromotionInstance, action: Array, key: PRNGKey, t: ArrayLike) -> tuple[Array, Outcome]:
        """Ratings of the chosen (promotion, user) pairs ``(M k,)``, and the round's :class:`~bayesbandit.contract.Outcome`.

        ``action`` holds lifted indices ``j N + i``. The best value is the oracle's on the true
        ratings; ``key`` only feeds a ``"random"`` tie rule.
        """
        table = self.round_rewards(env_state, t).reshape(-1)
        feedback = table[action]
        best = table[self.oracle(table.reshape(self.blocks, self.num_users_per_round), key)]
        return feedback, Outcome(jnp.sum(feedback), jnp.sum(best))

    # ------------------------------------------------------------------ host-side checks

    def check_action(self, action: Any) -> np.ndarray:
        """Return ``action`` as int64 after checking it is a feasible super arm; raises InvalidInput.

        Feasible: ``M k`` distinct integer lifted indices in ``[0, M N)``, ``k`` in each promotion's
        block ``[j N, (j + 1) N)``, and (exclusive oracle) no user in two promotions.
        """
        name = f"{type(self).__name__}.check_action"
        n, size = self.num_users_per_round, self.blocks * self.k
        raw = np.asarray(action)
        fix = f"Fix: pass what the oracle or a combinatorial policy with blocks={self.blocks} and k={self.k} returns."
        if raw.shape != (size,) or raw.dtype.kind not in "iu":
            raise InvalidInput(
                f"{name}: 'action' must be {size} integer lifted indices j N + i (M k = {self.blocks} x {self.k}); "
                f"got shape {raw.shape}, dtype {raw.dtype}. {fix}"
            )
        index = raw.astype(np.int64)
        if np.any(index < 0) or np.any(index >= self.blocks * n):
            bad = index[(index < 0) | (index >= self.blocks * n)]
            raise InvalidInput(
                f"{name}: 'action' indices must lie in [0, M N) = [0, {self.blocks * n}); got {bad[:5].tolist()}. {fix}"
            )
        if np.unique(index).size != size:
            raise InvalidInput(f"{name}: 'action' must not repeat a (promotion, user) pair; got duplicates. {fix}")
        per_block = np.bincount(index // n, minlength=self.blocks)
        if np.any(per_block != self.k):
            raise InvalidInput(
                f"{name}: 'action' must send each promotion to exactly k = {self.k} users; got {per_block.tolist()} "
                f"per promotion. {fix}"
            )
        if self.exclusive and np.unique(index % n).size != size:
            raise InvalidInput(
                f"{name}: 'action' sends a user two promotions, but the oracle is exclusive (ExclusiveAssignment). "
                f"{fix}"
            )
        return index
