"""Decisions with identities: what an :class:`~bayesbandit.Agent` chose, kept until its reward arrives.

A :class:`Decision` is one ``select`` with an id (the caller's, such as a request id, or a fresh
UUID), its action, its time and, when asked for, the probability that the policy chose that
action. :class:`DecisionBook` keeps the pending ones with the arms they index, so that a reward
arriving later, in any order, is credited to its own decision's arms and action.

The book is bounded: at most ``max_pending`` pending decisions (the oldest expires first when a
new one would exceed it) and, if ``max_age`` is set, none older than ``max_age`` seconds. The ids
of settled decisions (rewarded or expired) are remembered, as many as ``max_pending``, so that a
second reward for a decision raises :class:`~bayesbandit.errors.DecisionAlreadyRewarded` and a
late one :class:`~bayesbandit.errors.ExpiredDecision` rather than
:class:`~bayesbandit.errors.UnknownDecision`. The book and its counts live in the agent's
checkpoint (:meth:`DecisionBook.parts`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

from bayesbandit.errors import DecisionAlreadyRewarded, ExpiredDecision, InvalidInput, UnknownDecision

__all__ = ["Decision", "DecisionBook", "check_decision_id"]

MAX_ID_LENGTH = 256


@dataclass(frozen=True)
class Decision:
    """One decision of an :class:`~bayesbandit.Agent`: pass it (or its ``id``) to ``update`` with its reward.

    Attributes
    ----------
    id : str
        The caller's id (for example a request id) or a fresh UUID.
    action : int or int array
        What the policy chose: an index into the decision's arms (an array of them for a k-subset
        policy), or an item id for a catalogue policy.
    time : float
        When it was made, in seconds since the epoch (:func:`time.time`).
    propensity : float or None
        The probability that the policy chose ``action`` in the state it chose from, when asked
        for (:meth:`bayesbandit.Agent.decide`); ``None`` otherwise.
    propensity_se : float or None
        Its Monte Carlo standard error (``0.0`` when it is exact).
    """

    id: str
    action: Any
    time: float
    _: KW_ONLY
    propensity: float | None = None
    propensity_se: float | None = None


def check_decision_id(where: str, decision_id: Any) -> str:
    """``decision_id`` if it is a non-empty str of at most :data:`MAX_ID_LENGTH` characters."""
    if not isinstance(decision_id, str) or not 0 < len(decision_id) <= MAX_ID_LENGTH:
        raise InvalidInput(
            f"{where}: the 'decision_id' argument must be a non-empty str of at most {MAX_ID_LENGTH} characters "
            f"(a request id, say). Got {decision_id!r:.80}. Fix: pass such a string, or none for a fresh UUID; "
            "the agent state was not changed."
        )
    return decision_id


class DecisionBook:
    """The pending decisions of an agent, bounded in number and age (module docstring).

    Not thread-safe by itself: the agent calls it under its lock.
    """

    def __init__(self, max_pending: int, max_age: float | None) -> None:
        self.max_pending = max_pending
        self.max_age = max_age
        self._pending: OrderedDict[str, tuple[Decision, np.ndarray | None]] = OrderedDict()
        self._settled: OrderedDict[str, str] = OrderedDict()  # id -> "rewarded" | "expired"
        self.expired_count = 0

    def __len__(self) -> int:
        return len(self._pending)

    def check_new(self, where: str, decision_id: str) -> None:
        """Raise :class:`InvalidInput` if ``decision_id`` is pending or settled already."""
        if decision_id in self._pending or decision_id in self._settled:
            state = "pending" if decision_id in self._pending else self._settled[decision_id]
            raise InvalidInput(
                f"{where}: decision id {decision_id!r} was used already (that decision is {state}). Fix: give "
                "each decision its own id, or none for a fresh UUID; the agent state was not changed."
            )

    def add(self, decision: Decision, arms: np.ndarray | None) -> None:
        """Keep ``decision`` (and the arms its action indexes) until its reward; expire the oldest past the bounds."""
        self._pending[decision.id] = (decision, arms)
        self._expire(decision.time)

    def get(self, decision_id: str, now: float | None = None) -> tuple[Decision, np.ndarray | None]:
        """The pending decision ``decision_id`` and its arms.

        Raises
        ------
        UnknownDecision, ExpiredDecision, DecisionAlreadyRewarded
        """
        self._expire(time.time() if now is None else now)
        if decision_id in self._pending:
            return self._pending[decision_id]
        status = self._settled.get(decision_id)
        if status == "rewarded":
            raise DecisionAlreadyRewarded(
                f"decision {decision_id!r} has been rewarded already; a decision takes one reward. Fix: report "
                "each decision's reward once; the agent state was not changed."
            )
        if status == "expired":
            raise ExpiredDecision(
                f"decision {decision_id!r} expired before its reward arrived (the agent keeps at most "
                f"{self.max_pending} pending decisions{self._age_words()}; {self.expired_count} have expired). "
                "Fix: raise max_pending or max_age when making the Agent; the agent state was not changed."
            )
        raise UnknownDecision(
            f"no decision {decision_id!r}: this agent never made it, or forgot it (it remembers the last "
            f"{self.max_pending} settled ids); update takes a Decision, a decision id, or an action (an int index "
            "of an arm, or an item id). Fix: pass a Decision returned by decide(), or the decision_id given to "
            "select(); the agent state was not changed."
        )

    def settle(self, decision_id: str) -> None:
        """Mark the pending ``decision_id`` as rewarded."""
        del self._pending[decision_id]
        self._remember(decision_id, "rewarded")

    def _age_words(self) -> str:
        return "" if self.max_age is None else f", none older than {self.max_age:g} s"

    def _expire(self, now: float) -> None:
        while self._pending:
            oldest_id, (oldest, _) = next(iter(self._pending.items()))
            too_old = self.max_age is not None and now - oldest.time > self.max_age
            if len(self._pending) <= self.max_pending and not too_old:
                return
            del self._pending[oldest_id]
            self._remember(oldest_id, "expired")
            self.expired_count += 1

    def _remember(self, decision_id: str, status: str) -> None:
        self._settled[decision_id] = status
        while len(self._settled) > self.max_pending:
            self._settled.popitem(last=False)

    # ------------------------------------------------------------------------------ checkpoints
    def parts(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The book as JSON meta and arrays (actions stacked; the arms of each decision, row-concatenated)."""
        decisions = [d for d, _ in self._pending.values()]
        arms = [a for _, a in self._pending.values() if a is not None]  # none, or one set per decision
        meta = {
            "ids": [d.id for d in decisions],
            "times": [d.time for d in decisions],
            "propensities": [[d.propensity, d.propensity_se] for d in decisions],
            "arm_rows": [int(a.shape[0]) for a in arms] if arms else None,
            "settled": list(self._settled.items()),
            "expired_count": self.expired_count,
        }
        actions = np.asarray([np.asarray(d.action) for d in decisions]) if decisions else np.zeros(0, np.int64)
        rows = np.concatenate(arms) if meta["arm_rows"] else np.zeros((0, 0))
        return meta, [actions, rows]

    def restore(self, meta: dict[str, Any], arrays: list[np.ndarray]) -> None:
        """Replace the book's contents by what :meth:`parts` gave."""
        actions, rows = arrays
        splits = np.cumsum(meta["arm_rows"])[:-1] if meta["arm_rows"] else None
        arms = np.split(rows, splits) if splits is not None else [None] * len(meta["ids"])
        self._pending.clear()
        for i, decision_id in enumerate(meta["ids"]):
            action = actions[i]
            propensity, se = meta["propensities"][i]
            decision = Decision(
                decision_id,
                int(action) if action.ndim == 0 else action,
                meta["times"][i],
                propensity=propensity,
                propensity_se=se,
            )
            self._pending[decision_id] = (decision, arms[i])
        self._settled = OrderedDict((k, v) for k, v in meta["settled"])
        self.expired_count = int(meta["expired_count"])
