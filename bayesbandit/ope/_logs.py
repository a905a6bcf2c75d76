"""The log contract of off-policy evaluation: what was shown, chosen, paid, and with which probability.

:class:`Logs` is a NamedTuple of arrays, hence a pytree: it goes through ``jit`` and ``vmap``
(a stack of replicate logs is one ``Logs`` with a leading axis). Three ways in:

* the constructor, from arrays (:meth:`Logs.create` checks them);
* :meth:`Logs.from_obp`, from Open Bandit Pipeline's ``bandit_feedback`` dict (and
  :meth:`Logs.to_obp` back);
* :meth:`Logs.from_decision_log`, from an :class:`~bayesbandit.Agent`'s decision log
  (:func:`bayesbandit.agent.read_log`).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array
from bayesbandit.errors import InvalidInput

__all__ = ["Logs", "obp_arms"]


def _fail(owner: str, name: str, expected: str, got: str, fix: str) -> InvalidInput:
    return InvalidInput(f"{owner}: the '{name}' argument must be {expected}. Got {got}. Fix: {fix}.")


class Logs(NamedTuple):
    """``n`` logged rounds: the arms shown, the action taken, its reward and logged propensity.

    Attributes
    ----------
    arms : array, shape (n, K, d) or (K, d)
        Each round's arm features (what a bayesbandit policy's ``select`` takes), or one fixed
        arm set shared by every round.
    action : int array, shape (n,)
        The arm chosen, an index into the round's arms.
    reward : array, shape (n,)
    pscore : array, shape (n,)
        The logging policy's probability of ``action`` in that round (OBP's ``pscore``), in
        ``(0, 1]``.
    t : array, shape (n,)
        When each round happened (round number or timestamp): rows are in this order.
    pi_b : array, shape (n, K), optional
        The logging policy's whole action distribution, when known.
    context : array, shape (n, dx), optional
        Raw contexts, kept for :meth:`to_obp`.
    expected_reward : array, shape (n, K), optional
        The true mean rewards ``q(x, a)`` of a synthetic log (for ground truth).
    """

    arms: Array
    action: Array
    reward: Array
    pscore: Array
    t: Array
    pi_b: Array | None = None
    context: Array | None = None
    expected_reward: Array | None = None

    @property
    def num_rounds(self) -> int:
        """``n``."""
        return int(self.action.shape[-1])

    @property
    def num_arms(self) -> int:
        """``K``."""
        return int(self.arms.shape[-2])

    @property
    def fixed_arms(self) -> bool:
        """Whether one arm set serves every round (``arms`` of shape (K, d))."""
        return self.arms.ndim == 2

    def row_arms(self) -> Array:
        """The arm set of every round, shape (n, K, d) (a fixed set broadcast)."""
        if self.fixed_arms:
            return jnp.broadcast_to(self.arms, (self.num_rounds, *self.arms.shape))
        return self.arms

    def chosen_arms(self) -> Array:
        """The features of the chosen arms, shape (n, d): the rows a reward model is fitted to."""
        if self.fixed_arms:
            return self.arms[self.action]
        return jnp.take_along_axis(self.arms, self.action[:, None, None], axis=1)[:, 0]

    # ------------------------------------------------------------------------ construction
    @classmethod
    def create(
        cls,
        arms: Any,
        action: Any,
        reward: Any,
        pscore: Any,
        t: Any = None,
        *,
        pi_b: Any = None,
        context: Any = None,
        expected_reward: Any = None,
        owner: str = "Logs.create",
    ) -> Logs:
        """Checked :class:`Logs` from array-likes (``t`` defaults to ``0, 1, ..., n - 1``).

        Raises
        ------
        InvalidInput
            Naming the argument, for a wrong shape, a non-finite value, an action outside
            ``[0, K)``, a propensity outside ``(0, 1]``, a time that goes backwards, or a
            ``pi_b`` whose rows do not sum to one or that disagrees with ``pscore``.
        """
        arms_a = np.asarray(arms, dtype=np.float64)
        if arms_a.ndim not in (2, 3) or 0 in arms_a.shape:
            raise _fail(
                owner, "arms", "an array of shape (n, K, d) or (K, d)", f"shape {arms_a.shape}", "pass arm features"
            )
        action_a = np.asarray(action)
        n = action_a.shape[0] if action_a.ndim == 1 else -1
        if action_a.ndim != 1 or n == 0 or not np.issubdtype(action_a.dtype, np.integer):
            raise _fail(
                owner,
                "action",
                "a non-empty 1-d integer array",
                f"shape {action_a.shape}, dtype {action_a.dtype}",
                "pass arm indices",
            )
        num_arms = arms_a.shape[-2]
        if arms_a.ndim == 3 and arms_a.shape[0] != n:
            raise _fail(
                owner, "arms", f"of shape (n, K, d) with n = {n}", f"shape {arms_a.shape}", "one arm set per round"
            )
        if action_a.min() < 0 or action_a.max() >= num_arms:
            raise _fail(
                owner,
                "action",
                f"indices in [0, {num_arms})",
                f"range [{action_a.min()}, {action_a.max()}]",
                "index the round's arms",
            )
        vectors = {"reward": reward, "pscore": pscore, "t": np.arange(n) if t is None else t}
        checked = {}
        for name, value in vectors.items():
            arr = np.asarray(value, dtype=np.float64)
            if arr.shape != (n,) or not np.isfinite(arr).all():
                raise _fail(
                    owner,
                    name,
                    f"a finite array of shape ({n},)",
                    f"shape {arr.shape}",
                    f"pass one finite {name} per round",
                )
            checked[name] = arr
        if not ((checked["pscore"] > 0) & (checked["pscore"] <= 1)).all():
            bad = checked["pscore"][~((checked["pscore"] > 0) & (checked["pscore"] <= 1))][0]
            raise _fail(
                owner, "pscore", "propensities in (0, 1]", f"{bad!r}", "log the probability of the action taken"
            )
        if (np.diff(checked["t"]) < 0).any():
            raise _fail(
                owner, "t", "non-decreasing (rows in time order)", "a time that goes backwards", "sort the rows by time"
            )
        extras: dict[str, Any] = {}
        for name, value, shape in (
            ("pi_b", pi_b, (n, num_arms)),
            ("expected_reward", expected_reward, (n, num_arms)),
            ("context", context, None),
        ):
            if value is None:
                extras[name] = None
                continue
            arr = np.asarray(value, dtype=np.float64)
            if (shape is not None and arr.shape != shape) or (shape is None and (arr.ndim != 2 or arr.shape[0] != n)):
                expected = f"shape {shape}" if shape is not None else f"shape ({n}, dx)"
                raise _fail(owner, name, f"an array of {expected}", f"shape {arr.shape}", "pass one row per round")
            if not np.isfinite(arr).all():
                raise _fail(owner, name, "finite", "a non-finite value", "clean it")
            extras[name] = jnp.asarray(arr)
        if extras["pi_b"] is not None:
            pi = np.asarray(extras["pi_b"])
            if (pi < 0).any() or np.abs(pi.sum(axis=1) - 1).max() > 1e-6:
                raise _fail(
                    owner, "pi_b", "rows of probabilities summing to one", "a row that does not", "normalise it"
                )
            if np.abs(pi[np.arange(n), action_a] - checked["pscore"]).max() > 1e-6:
                raise _fail(
                    owner,
                    "pi_b",
                    "equal to pscore at the logged actions",
                    "a mismatch",
                    "log both from the same policy",
                )
        return cls(
            jnp.asarray(arms_a),
            jnp.asarray(action_a, dtype=jnp.int32),
            jnp.asarray(checked["reward"]),
            jnp.asarray(checked["pscore"]),
            jnp.asarray(checked["t"]),
            **extras,
        )

    @classmethod
    def from_obp(cls, bandit_feedback: dict[str, Any], *, arms: Any = None) -> Logs:
        """From Open Bandit Pipeline's ``bandit_feedback`` dict (``obtain_batch_bandit_feedback``).

        Reads ``n_rounds``, ``n_actions``, ``context``, ``action``, ``reward``, ``pscore``,
        optional ``action_context``, ``pi_b`` (``(n, K, 1)``), ``expected_reward`` and
        ``position`` (which must be ``None`` or all zero: single-slot logs). ``arms`` are the
        policy's per-round features; default :func:`obp_arms` (each context crossed with each
        action's one-hot). Rounds are numbered ``0 .. n - 1``.
        """
        if not isinstance(bandit_feedback, dict):
            raise _fail(
                "Logs.from_obp",
                "bandit_feedback",
                "a dict",
                type(bandit_feedback).__name__,
                "pass OBP's bandit_feedback dict",
            )
        missing = [k for k in ("n_actions", "context", "action", "reward", "pscore") if k not in bandit_feedback]
        if missing:
            raise _fail(
                "Logs.from_obp",
                "bandit_feedback",
                "a dict with keys n_actions, context, action, reward, pscore",
                f"none for {missing}",
                "pass OBP's bandit_feedback dict",
            )
        position = bandit_feedback.get("position")
        if position is not None and np.any(np.asarray(position) != 0):
            raise _fail(
                "Logs.from_obp",
                "bandit_feedback",
                "single-slot logs (position None or 0)",
                "positions > 0",
                "evaluate one position at a time",
            )
        context = np.asarray(bandit_feedback["context"], dtype=np.float64)
        num_arms = int(bandit_feedback["n_actions"])
        pi_b = bandit_feedback.get("pi_b")
        return cls.create(
            obp_arms(context, num_arms) if arms is None else arms,
            np.asarray(bandit_feedback["action"]).astype(np.int64),
            bandit_feedback["reward"],
            bandit_feedback["pscore"],
            pi_b=None if pi_b is None else np.asarray(pi_b)[..., 0],
            context=context,
            expected_reward=bandit_feedback.get("expected_reward"),
            owner="Logs.from_obp",
        )

    def to_obp(self) -> dict[str, Any]:
        """OBP's ``bandit_feedback`` dict of these logs (``pi_b`` with its trailing ``len_list = 1`` axis)."""
        out: dict[str, Any] = {
            "n_rounds": self.num_rounds,
            "n_actions": self.num_arms,
            "context": None if self.context is None else np.asarray(self.context),
            "action_context": np.eye(self.num_arms),
            "action": np.asarray(self.action).astype(np.int64),
            "position": None,
            "reward": np.asarray(self.reward),
            "pscore": np.asarray(self.pscore),
            "expected_reward": None if self.expected_reward is None else np.asarray(self.expected_reward),
            "pi_b": None if self.pi_b is None else np.asarray(self.pi_b)[..., None],
        }
        return out

    @classmethod
    def from_decision_log(cls, log: Any, *, arms: Any = None) -> Logs:
        """From an :class:`~bayesbandit.Agent`'s decision log: a path, or :func:`~bayesbandit.agent.read_log`'s frame.

        Keeps the decisions that logged a propensity (``decide(..., propensity=M)``) and have
        a reward, in the log's order; ``t`` is the decision time. A fixed-arm agent's log holds
        no arms: pass them as ``arms`` (shape (K, d)). A path reads the live file and every
        archive its retention left (:class:`~bayesbandit.agent.DecisionLog`'s ``archive_bytes``,
        :func:`~bayesbandit.agent.log_files`), each row once, a decision joined with its reward
        across files; the rows of archives deleted by ``keep_archives`` are not evaluated.

        Raises
        ------
        InvalidInput
            No decision with a propensity and a reward; a fixed-arm log without ``arms``; a
            super-arm (combinatorial) action.
        """
        from bayesbandit.agent import read_log

        frame = read_log(log) if isinstance(log, (str, os.PathLike)) else log
        if not hasattr(frame, "columns") or not {"action", "reward", "propensity", "time", "arms"} <= set(
            frame.columns
        ):
            raise _fail(
                "Logs.from_decision_log",
                "log",
                "a decision-log path or read_log's DataFrame",
                type(log).__name__,
                "pass the path given to Agent(log=...)",
            )
        kept = frame[frame["propensity"].notna() & frame["reward"].apply(lambda r: np.ndim(r) == 0 and np.isfinite(r))]
        if len(kept) == 0:
            raise _fail(
                "Logs.from_decision_log",
                "log",
                "decisions with a logged propensity and a reward",
                "none",
                "serve with agent.decide(arms, propensity=M) and report rewards",
            )
        actions = [np.asarray(a) for a in kept["action"]]
        if any(a.ndim != 0 for a in actions):
            raise _fail(
                "Logs.from_decision_log",
                "log",
                "single-arm decisions",
                "super-arm actions",
                "evaluate single-arm policies",
            )
        row_arms = list(kept["arms"])
        if any(a is None for a in row_arms):
            if arms is None:
                raise _fail(
                    "Logs.from_decision_log",
                    "arms",
                    "the fixed arm set (K, d) of a fixed-arm agent's log",
                    "None",
                    "pass arms=the agent's arm set",
                )
            stacked = np.asarray(arms, dtype=np.float64)
        else:
            stacked = np.stack(row_arms)
        return cls.create(
            stacked,
            np.asarray(actions, dtype=np.int64),
            np.asarray(kept["reward"], dtype=np.float64),
            np.asarray(kept["propensity"], dtype=np.float64),
            np.asarray(kept["time"], dtype=np.float64),
            owner="Logs.from_decision_log",
        )


def obp_arms(context: Any, num_arms: int) -> Array:
    """Per-round arm features of an OBP context: ``x_i`` crossed with arm ``a``'s one-hot, shape (n, K, K dx).

    Arm ``a``'s feature vector holds ``x_i`` in block ``a`` and zeros elsewhere, so a linear or
    GLM policy on these arms has one coefficient vector per action (OBP's disjoint LinTS,
    LogisticTS and LinUCB).
    """
    x = jnp.asarray(context, dtype=float)
    eye = jnp.eye(num_arms, dtype=x.dtype)
    return (eye[None, :, :, None] * x[:, None, None, :]).reshape(x.shape[0], num_arms, num_arms * x.shape[1])
