"""``Agent``: one stateful agent over any policy, with validation, keys, failure handling and checkpoints.

``Agent`` is the convenience level over the pure policy API (the policy stays the expert level).
It serves every kind of policy the contract has (``docs/contract.md``): JAX and host policies,
over a fixed arm set, each round's contextual arms, k-subsets of them, or a catalogue of item ids
that changes while it runs (``add_arms`` / ``remove_arms``). Every input is validated before any
state changes; a bad input raises an exception from :mod:`bayesbandit.errors` and leaves the agent
as it was.

The calls it makes live in :mod:`._calls` (compiled once per policy and shape), the pending
decisions in :mod:`._decisions`, the checkpoint schema in :mod:`._persist`. A reloaded agent
continues bit-for-bit.

Threads. Any number of threads may call every method at once. One lock orders the changes of
state: each ``update`` (and ``add_arms``, ``remove_arms``) applies to the state the previous one
left, so none is lost. A ``select`` of a JAX policy takes the current state and the next draw
number under the lock and computes outside it, side by side with other selections and with an
update in progress: its decision is the policy's choice from a state in that sequence, with the
key of its draw (``fold_in(seed key, draw)``: the same seed and number of draws give the same
keys however the calls interleave). A host policy's state changes in place, so its selections
run under the lock. ``save`` writes a consistent snapshot taken under the lock, and one save at
a time, so a later snapshot never lands before an earlier one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import threading
import time
import uuid
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._process import OwningProcess
from bayesbandit._typing import ArrayLike
from bayesbandit.agent._calls import (
    INFO,
    NEXT_ACTION,
    SELECT_INFO,
    UPDATE_INFO,
    CompileAhead,
    calls_for,
    draw_data,
    draw_key,
    packed_signature,
    round_inputs,
    signature,
)
from bayesbandit.agent._decisions import Decision, DecisionBook, check_decision_id
from bayesbandit.agent._log import DecisionLog, decision_arms
from bayesbandit.agent._packed import HeldState, Layout, Report, ReportPart
from bayesbandit.agent._persist import (
    KIND,
    check_policy,
    key_data,
    policy_description,
    program_of,
    state_arrays,
    state_from_arrays,
)
from bayesbandit.checkpoint import array_fingerprint, read_checkpoint, write_checkpoint
from bayesbandit.contract import Buffered, Catalogued, Combinatorial, Explains, ModelBased, policy_kind
from bayesbandit.errors import CheckpointError, InvalidInput, NotConverged
from bayesbandit.propensities import DEFAULT_SAMPLES, Propensity, logged_propensity
from bayesbandit.validation import check_action, check_arms, check_feedback, check_int, check_item_ids, check_scalar

__all__ = ["Agent"]

_PROPENSITY_STREAM = 0x50524F50  # folded into a draw's key for its propensity's Monte Carlo draws


def _unpacked(info: Any) -> Any:
    """An Info as its policy made it (a compiled call's packed Info unpacked, with NumPy leaves)."""
    return info.unpack() if isinstance(info, ReportPart) else info


class _NextSelection(NamedTuple):
    """The selection a round computed after its update (``._calls._round``): draw ``draw`` from ``held``.
    A ``select`` that finds both still current takes it; any other change of state or draw leaves it stale."""

    held: HeldState
    draw: int
    report: Report


def _fingerprint(policy: Any, d: int) -> str:
    """What the decision log records as the policy: its class and a hash of its hyper-parameters and program."""
    description = policy_description(policy)
    program = program_of(policy, d)
    digest = hashlib.sha256(json.dumps([description, program], sort_keys=True).encode()).hexdigest()[:16]
    return f"{description['class']}:{digest}"


class Agent:
    """Interactive bandit agent over any policy.

    Parameters
    ----------
    policy : Policy
        A policy, e.g. ``bb.GLMTSL(logistic(), a=1.0)`` or ``bb.SubTS()``.
    arms : array, shape (K, d), or Catalogue, optional
        A fixed arm set; then ``select()`` takes no argument. For a catalogue policy
        (:class:`~bayesbandit.contract.Catalogued`: ``SubTS``, ``SubElim``), the initial catalogue, a
        :class:`~bayesbandit.Catalogue` of ids and features or a ``(K, d)`` array (ids ``0 .. K-1``);
        ``select()`` returns an item id, and ``add_arms`` / ``remove_arms`` change the catalogue.
    d : int, optional
        Feature dimension for contextual use; then ``select(arms)`` takes each round's arms
        (for a catalogue policy: the dimension of an initially empty catalogue).
    seed : int
        Seed of the agent's PRNG key (same seed, same choices).
    capacity : int, optional
        Initial row-buffer capacity when the policy keeps one (it doubles when full).
    compile_ahead : bool
        Compile ``select`` and ``update`` with XLA in background threads before they are called:
        for a fixed arm set both when the agent is created, side by side (the first ``select``
        waits for its own compilation only), and when a row buffer is half full, both for the
        doubled buffer, so the round in which the buffer grows does not stall on compilation (the
        doubled shape is new to XLA). Tracing stays in the calling thread (NumPyro's handlers are
        not thread-safe). Default true.
    max_pending : int
        Decisions awaiting their reward that the agent keeps (:meth:`decide`,
        ``select(decision_id=...)``); past it the oldest expires. Default 10,000. A contextual
        agent keeps each pending decision's arms: ``K d`` floats (8 kB at K = 100, d = 10).
    max_age : float, optional
        Seconds after which a pending decision expires (default: never).
    log : path-like or DecisionLog, optional
        An append-only SQLite decision log (:class:`~bayesbandit.agent.DecisionLog`): one row per
        decision (id, time, policy, arms, action, propensity) and per reward, written by a
        background thread. :meth:`save` commits it first, and ``load(..., log=...)`` replays
        what it committed after the checkpoint. Call :meth:`close` when done.

    Notes
    -----
    Every method may be called from any number of threads (the module docstring says how).

    On a fixed arm set an ``update`` also selects for the next draw from the state it leaves, in
    the same compiled call, and the next ``select`` returns that selection if nothing changed in
    between (the same bits it would compute): select + update is one compiled call a round
    (``bayesbandit/agent/_calls.py``), once that call has compiled in the background.

    Examples
    --------
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (10, 3))
    >>> agent = bb.Agent(bb.GLMTSL(logistic()), arms=arms, seed=0)
    >>> arm = agent.select()
    >>> agent.update(arm, 1.0)
    >>> agent.num_updates
    1

    Delayed rewards, credited to their own decision whatever the order they arrive in:

    >>> first = agent.decide()
    >>> second = agent.decide(decision_id="request-17")
    >>> agent.update("request-17", 0.0)  # by id, before the earlier decision's reward
    >>> agent.update(first, 1.0)
    >>> agent.num_updates, agent.pending_decisions
    (3, 0)

    A catalogue of item ids that changes while the agent runs:

    >>> features = np.random.default_rng(0).normal(size=(50, 4))
    >>> agent = bb.Agent(bb.SubTS(index="exact"), bb.Catalogue(np.arange(100, 150), features), seed=0)
    >>> item = agent.select()
    >>> agent.update(item, 1.0)
    >>> agent.add_arms(np.array([7]), np.ones((1, 4)))
    >>> agent.remove_arms(np.array([100]))
    >>> 100 <= item < 150, agent.num_updates
    (True, 1)
    """

    def __init__(
        self,
        policy: Any,
        arms: Any = None,
        *,
        d: int | None = None,
        seed: int = 0,
        capacity: int | None = None,
        compile_ahead: bool = True,
        max_pending: int = 10_000,
        max_age: float | None = None,
        log: str | os.PathLike[str] | DecisionLog | None = None,
    ) -> None:
        kind = policy_kind(policy)
        self._process = OwningProcess("Agent")
        self._layout: Layout | None = None  # the packed state's, for a fixed-arm agent's packed calls (_use_layout)
        if arms is None and d is None:
            raise InvalidInput(
                "Agent needs a fixed arm set or a feature dimension. Fix: Agent(policy, arms=...) with arms of "
                "shape (K, d), or Agent(policy, d=...) and pass each round's arms to select(arms)."
            )
        seed = check_int("Agent", "seed", seed, low=0, high=2**32 - 1)
        if capacity is not None:
            capacity = check_int("Agent", "capacity", capacity, low=1)
        max_pending = check_int("Agent", "max_pending", max_pending, low=1)
        if max_age is not None:
            check_scalar("Agent", "max_age", max_age, low=0.0, low_open=True)
            max_age = float(max_age)
        self.policy = policy
        self._catalogue = isinstance(policy, Catalogued)
        key, init_key = jax.random.split(jax.random.PRNGKey(seed))
        if self._catalogue:  # the arm set lives in the policy state (which validates it)
            self._arms = None
            self.state = policy.init(arms, d=d, capacity=capacity, key=init_key)
            features = getattr(arms, "features", arms)
            self.d = int(np.shape(features)[-1]) if features is not None else check_int("Agent", "d", d, low=1)
        else:
            self._arms = None if arms is None else check_arms(arms, unchanged=None)
            self.d = int(self._arms.shape[1]) if self._arms is not None else check_int("Agent", "d", d, low=1)
            if self._arms is not None and d is not None and d != self.d:
                raise InvalidInput(f"The 'd' parameter of Agent is {d} but the arm set has d = {self.d}. Fix: omit d.")
        if isinstance(policy, ModelBased):
            policy.check_program(self.d)
        self._support = policy.reward_support(self.d)
        if not self._catalogue:
            self.state = policy.init(self._arms, d=self.d, capacity=capacity, key=init_key)
        self._key = key  # the seed key; draw i selects with fold_in(key, i) (._calls.draw_key)
        self._draws = 0
        self._lock = threading.RLock()  # orders every change of state (module docstring)
        self._save_lock = threading.Lock()  # one save at a time, in the order of their snapshots
        self._decisions = DecisionBook(max_pending, max_age)
        self._log = log if isinstance(log, DecisionLog) or log is None else DecisionLog(log)
        self._log_policy = _fingerprint(policy, self.d)
        self._kind = kind
        self._calls = calls_for(policy, kind)
        self._combinatorial = isinstance(policy, Combinatorial)
        self._buffered = isinstance(policy, Buffered)
        self._explains = isinstance(policy, Explains)
        self._ahead = CompileAhead(policy, self._calls) if compile_ahead and kind == "jax" else None
        # The arms as the compiled calls take them: a fixed set on the device once; a contextual
        # round's NumPy array as given (the call copies it in, sooner than jax.device_put would).
        self._arms_call: Any = None if self._arms is None else jnp.asarray(self._arms)
        self._next_selection: _NextSelection | None = None
        row_buffer = self._buffered and policy.capacity(self.state) is not None  # its shapes grow: kept as a tree
        if kind == "jax" and self._arms is not None and not row_buffer and not self._catalogue:
            self._use_layout(Layout.of(self.state))
        if self._ahead is not None and self._arms_call is not None:
            self._ahead.prepare(self.state, self._key, self._arms_call, self._layout)
        self._last_arms: np.ndarray | None = None
        self._last_arms_call: Any = None
        self._action_shape: tuple[int, ...] | None = None
        self.num_updates = 0
        self._last_select_info: Any = None
        self._last_update_info: Any = None
        self._warned: set[str] = set()

    @property
    def state(self) -> Any:
        """The policy state, a pytree; each update replaces it (never changes it in place)."""
        return self._current.tree()

    @state.setter
    def state(self, value: Any) -> None:
        if self._layout is not None:
            layout = Layout.of(value)
            if layout != self._layout:
                self._use_layout(layout)
        self._current = self._hold(value)

    def _hold(self, tree: Any) -> HeldState:
        return HeldState(tree, None, self._layout)

    def _use_layout(self, layout: Layout | None) -> None:
        """Keep the state packed by ``layout`` between calls, and play a fixed arm set's rounds as one call each
        (``._calls._round``): select takes the selection the last update computed when it is still current.
        ``None`` (a leaf that cannot be packed, a typed key): the calls take the state's tree."""
        self._layout = layout
        self._next_selection = None
        self._packed_ready: dict[int, Any] = {}  # the calls _packed_call found, kept
        self._round_compiled = False  # until then updates take the plain update (CompileAhead.prepare)
        self._report_layout: Layout | None = None  # the round's report's, known once it is traced
        self._changed_layout: Layout | None = None  # the round's state's, if not ``layout``
        if layout is None:
            return
        self._packed_key = packed_signature(self._arms_call, layout)
        self._round_inputs = round_inputs(tuple(self.policy.action_shape) if self._combinatorial else ())
        self._packed_calls = {
            0: functools.partial(self._calls.select_packed, layout),
            2: functools.partial(self._calls.round, layout, self._round_inputs),
        }
        self._current = self._hold(self._current.tree())

    def _packed_call(self, which: int) -> Any:
        """The packed select (0) or round (2): compiled ahead when it was, else jitted."""
        call = self._packed_ready.get(which)
        if call is None:
            jitted = self._packed_calls[which]
            call = self._packed_ready[which] = (
                self._ahead.executable(which, self._packed_key, jitted) if self._ahead else jitted
            )
        return call

    @property
    def last_select_info(self) -> Any:
        """The Info of the last ``select`` (of any thread; stacked for ``select(n=...)``), or None."""
        return _unpacked(self._last_select_info)

    @property
    def last_update_info(self) -> Any:
        """The Info of the last update (stacked for ``update_many``), or None."""
        return _unpacked(self._last_update_info)

    def __reduce__(self) -> Any:
        self._process.refuse_pickle()

    @property
    def pending_decisions(self) -> int:
        """Decisions made with an id whose reward has not arrived (nor expired)."""
        return len(self._decisions)

    @property
    def expired_decisions(self) -> int:
        """Decisions that expired before their reward (past ``max_pending`` or ``max_age``), since creation."""
        return self._decisions.expired_count

    # ------------------------------------------------------------------------------ acting
    def select(self, arms: ArrayLike | None = None, *, n: int | None = None, decision_id: str | None = None) -> Any:
        """Choose an action: an index into the fixed arm set, or into ``arms`` (K, d) if given; an item id for a catalogue.

        Parameters
        ----------
        arms : array, shape (K, d), optional
            This round's arms (contextual agents only).
        n : int, optional
            Make ``n`` decisions at once, for batched or delayed feedback: each is a selection
            from the current state with its own random key, so Thompson sampling draws ``n``
            independent posterior samples (GLM-FPL ``n`` independent perturbations, epsilon-greedy
            ``n`` independent coin flips) and the ``n`` arms differ where the posterior is
            uncertain; a deterministic policy (UCB) returns its best arm ``n`` times, up to
            random tie-breaks. Report the rewards with :meth:`update_many`.
        decision_id : str, optional
            Record the decision under this id (a request id, say), with its arms: a later
            ``update(decision_id, reward)`` credits this decision's arms and action, whatever
            was selected in between. :meth:`decide` returns the whole :class:`Decision`.

        Returns
        -------
        An ``int`` (or an int array of indices for a k-subset policy); with ``n``, an int array
        of shape ``(n,)`` (``(n, k)``).
        """
        self._process.check("select")
        if n is not None:
            if decision_id is not None:
                raise InvalidInput(
                    "select: 'n' and 'decision_id' cannot be combined (one id names one decision). Fix: call "
                    "decide() once per decision; the agent state was not changed."
                )
            n = check_int("Agent.select", "n", n, low=1)
            arms_np, arms_call = self._round_arms(arms)
            with self._lock:
                draw = draw_data(self._next_draw())
                actions, info = self._calls.select_many(n, self.state, arms_call, self._key, draw)
                self._after_select(arms_np, arms_call, info)
            return np.asarray(actions)
        if decision_id is None:
            return self._select(arms)[0]
        return self._decide(arms, check_decision_id("select", decision_id)).action

    def decide(
        self, arms: ArrayLike | None = None, *, decision_id: str | None = None, propensity: bool | int = False
    ) -> Decision:
        """:meth:`select`, recorded as a :class:`Decision` whose reward may come later, in any order.

        Parameters
        ----------
        arms : array, shape (K, d), optional
            This round's arms (contextual agents only); the decision keeps them.
        decision_id : str, optional
            The decision's id (a request id, say; at most 256 characters); default a fresh UUID.
        propensity : bool or int
            Also compute the probability that the policy chose this action in the state it chose
            from (:func:`bayesbandit.propensities.logged_propensity`): exact for the UCB rules and
            epsilon-greedy, else the action's frequency among itself and ``propensity - 1`` more
            selections (``True``: 1,000 in all), never below ``1 / draws``: given those draws it
            is the action's exact probability, so inverse-propensity weighting with it is
            unbiased on the arms drawn (:mod:`bayesbandit.propensities`).

        Returns
        -------
        Decision
            Its ``id``, ``action``, ``time`` and (if asked) ``propensity``, ``propensity_se``.
            Pass it, or its id, to :meth:`update` with the reward. Pending decisions are bounded
            (``max_pending``, ``max_age``) and saved with the agent.
        """
        self._process.check("decide")
        decision_id = uuid.uuid4().hex if decision_id is None else check_decision_id("decide", decision_id)
        samples = None
        if propensity is not False:
            samples = DEFAULT_SAMPLES if propensity is True else check_int("decide", "propensity", propensity, low=1)
        return self._decide(arms, decision_id, samples)

    def _decide(self, arms: ArrayLike | None, decision_id: str, samples: int | None = None) -> Decision:
        with self._lock:
            self._decisions.check_new("select", decision_id)
        action, arms_np, law, draw = self._select(arms, samples)
        propensity, propensity_se = (law.value, law.se) if law else (None, None)
        decision = Decision(decision_id, action, time.time(), propensity=propensity, propensity_se=propensity_se)
        kept_arms = None if self._arms is not None else arms_np
        with self._lock:
            self._decisions.check_new("select", decision_id)  # another thread may have taken it meanwhile
            self._decisions.add(decision, kept_arms)
            if self._log is not None:
                self._log.decision(decision, draw, self._log_policy, kept_arms)
        return decision

    def _select(self, arms: ArrayLike | None, samples: int | None = None) -> tuple[Any, np.ndarray | None, Any, int]:
        """One selection from the current state with the next draw's key: ``(action, its arms, its propensity,
        the draw)`` (the propensity, with ``samples`` Monte Carlo draws, only if ``samples`` is given)."""
        arms_np, arms_call = self._round_arms(arms)
        if self._kind == "host":  # its state changes in place: select under the lock
            with self._lock:
                state, number = self.state, self._next_draw()
                action, info = self._calls.select(state, arms_call, self._key, draw_data(number))
                self._after_select(arms_np, arms_call, info)
                law = None if samples is None else self._propensity(state, arms_call, action, number, samples)
        else:  # a snapshot and a draw number under the lock, the computation outside it
            with self._lock:
                held, ready = self._current, self._next_selection
                number = self._next_draw()
                self._next_selection = None  # a draw is taken: its selection is current now or never
                if ready is not None and ready.held is held and ready.draw == number:
                    action, info = ready.report.leaf(NEXT_ACTION), ReportPart(ready.report, SELECT_INFO)
                    self._after_select(arms_np, arms_call, info)
                else:
                    ready = None
            if ready is None:
                draw = draw_data(number)
                if self._layout is not None:
                    action, info = self._packed_call(0)(held.buffer(), arms_call, self._key, draw)
                else:
                    state = held.tree()
                    call_signature = signature(self.policy, state, arms_call, self._buffered)
                    select = self._calls.select
                    select = self._ahead.executable(0, call_signature, select) if self._ahead else select
                    action, info = select(state, arms_call, self._key, draw)
                with self._lock:
                    self._after_select(arms_np, arms_call, info)
            law = None if samples is None else self._propensity(held.tree(), arms_call, action, number, samples)
        action = np.asarray(action)
        return (int(action) if action.ndim == 0 else action), arms_np, law, number

    def _propensity(self, state: Any, arms_call: Any, action: Any, number: int, samples: int) -> Propensity:
        """The propensity to log with ``action``, the selection of draw ``number`` from ``state``: its frequency
        among itself and ``samples - 1`` more selections on keys apart from every selection's, exact given those
        draws (:func:`bayesbandit.propensities.logged_propensity`)."""
        key = jax.random.fold_in(draw_key(self._key, draw_data(number)), _PROPENSITY_STREAM)
        return logged_propensity(key, self.policy, state, arms_call, np.asarray(action), samples=samples)

    def _next_draw(self) -> int:
        """The next draw number, taken (under the lock)."""
        self._draws += 1
        return self._draws - 1

    def _after_select(self, arms_np: np.ndarray | None, arms_call: Any, info: Any) -> None:
        """What a selection leaves for a plain ``update(action, reward)`` (under the lock)."""
        self._last_arms, self._last_arms_call = arms_np, arms_call
        self._last_select_info = info
        if self._action_shape is None:
            shape = self.policy.action_shape if self._combinatorial else ()
            self._action_shape = tuple(shape)

    def _round_arms(self, arms: ArrayLike | None) -> tuple[np.ndarray | None, Any]:
        """The arms a selection indexes, validated: ``(NumPy array, what the compiled calls take)``."""
        if self._catalogue:
            if arms is not None:
                raise InvalidInput(
                    "this agent's arms are a catalogue of item ids held by the policy: select() takes no arms. "
                    "Fix: call select() and change the catalogue with add_arms / remove_arms; the agent state was "
                    "not changed."
                )
            return None, None
        if arms is not None and self._arms is not None:
            given = check_arms(arms, dim=self.d)
            if not np.array_equal(given, self._arms):
                raise InvalidInput(
                    "this agent has a fixed arm set, and update(action) credits an arm of that set: select(arms) "
                    "with other arms would record rewards against the wrong arm. Fix: call select() with no "
                    "argument, or make a contextual agent, Agent(policy, d=d), and pass each round's arms; "
                    "the agent state was not changed."
                )
            arms = None
        if arms is None:
            if self._arms is None:
                raise InvalidInput(
                    "this agent has no fixed arm set. Fix: pass this round's arms, select(arms) with shape (K, d)."
                )
            arms_np, arms_call = self._arms, self._arms_call
        else:
            arms_np = check_arms(arms, dim=self.d)
            arms_call = arms_np
        if self._combinatorial:
            self.policy.check_arms(arms_np.shape[0])
        return arms_np, arms_call

    def _action_layout(self, num_arms: int) -> tuple[int, tuple[int, ...]]:
        """``(index range, action shape)``: a k-subset policy's actions index ``blocks`` copies of the arms."""
        if self._combinatorial:
            return self.policy.blocks * num_arms, self.policy.action_shape
        return num_arms, self._action_shape or ()

    def _held_ids(self, ids: np.ndarray) -> np.ndarray:
        return self.policy.held(self.state, ids)

    def update(self, action: Any, reward: Any, *, arms: ArrayLike | None = None) -> None:
        """Record ``reward`` for a decision, or for ``action`` (indices into the fixed set or ``arms``; an item id).

        Parameters
        ----------
        action : Decision, str, int or int array
            A :class:`Decision` from :meth:`decide`, or the ``decision_id`` given to
            :meth:`select` or :meth:`decide`: the reward is credited to that decision's own arms
            and action, after any delay and in any order. Otherwise what :meth:`select` returned.
        reward : float or float array
        arms : array, shape (K, d), optional
            Contextual agents, with an action: the arms it indexes. Default: the arms of the
            agent's last ``select`` (of any thread): with selections in between, or several
            threads, pass them, or use decisions.

        Raises
        ------
        InvalidInput
            A malformed action or reward (wrong shape, out of range, non-finite, outside the
            reward model's support); the agent is unchanged.
        UnknownDecision, ExpiredDecision, DecisionAlreadyRewarded
            A decision this agent does not hold pending; the agent is unchanged.
        UnknownArm
            An item id that is not in the catalogue; the agent is unchanged.
        NotConverged
            The update produced non-finite state; the agent is unchanged.
        """
        self._process.check("update")
        decision_id = action.id if isinstance(action, Decision) else action if isinstance(action, str) else None
        if decision_id is not None and arms is not None:
            raise InvalidInput(
                "update: a decision keeps its own arms; pass arms= only with a plain action. Fix: omit arms=; the "
                "agent state was not changed."
            )
        with self._lock:
            if decision_id is not None:
                self._reward_decision(decision_id, reward)
                return
            arms_np, arms_call = self._update_arms(arms)
            value = self._update_one(action, reward, arms_np, arms_call)
            if self._log is not None:
                self._log_update(action, value, None if self._arms is not None else arms_np)

    def _reward_decision(self, decision_id: str, reward: Any, log: bool = True) -> None:
        """Credit ``reward`` to the pending decision ``decision_id`` (under the lock)."""
        decision, decision_arms = self._decisions.get(decision_id)
        arms_np, arms_call = (self._arms, self._arms_call) if self._arms is not None else (decision_arms,) * 2
        value = self._update_one(decision.action, reward, arms_np, arms_call)
        self._decisions.settle(decision_id)
        if log and self._log is not None:
            self._log.reward(decision_id, time.time(), value)

    def _log_update(self, action: Any, value: np.ndarray, arms_np: np.ndarray | None) -> None:
        """Log a plain update as a decision ``update:<uuid>`` and its reward (under the lock). Its draw is the last
        one taken before it (the selection it rewards is not known): a replay's draw counter then passes every
        plain ``select`` before a logged update, so a loaded agent does not draw with their keys again."""
        if self._log is None:
            return
        decision = Decision(f"update:{uuid.uuid4().hex}", np.asarray(action), time.time())
        self._log.decision(decision, self._draws - 1, self._log_policy, arms_np)
        self._log.reward(decision.id, decision.time, value)

    def _update_arms(self, arms: ArrayLike | None) -> tuple[np.ndarray | None, Any]:
        """The arms a plain ``update``'s action indexes: the fixed set, the given ones or the last select's."""
        if self._catalogue:
            if arms is not None:
                raise InvalidInput(
                    "this agent's arms are a catalogue held by the policy: omit arms=; the agent state was not changed."
                )
            return None, None
        if self._arms is not None:
            if arms is not None and not np.array_equal(np.asarray(arms), self._arms):
                raise InvalidInput(
                    "this agent has a fixed arm set; update(action, reward) indexes it. Fix: omit arms=; the agent "
                    "state was not changed."
                )
            return self._arms, self._arms_call
        if arms is not None:
            given = check_arms(arms, dim=self.d)
            return given, given
        if self._last_arms is None:
            raise InvalidInput(
                "update(action, reward) on a contextual agent needs the arms the action indexes. Fix: pass "
                "arms=, use a Decision from decide(), or call select(arms) first; the agent state was not changed."
            )
        return self._last_arms, self._last_arms_call

    def _update_one(self, action: Any, reward: Any, arms_np: np.ndarray | None, arms_call: Any) -> np.ndarray:
        """Validate, update and commit one reward (under the lock); returns the validated reward."""
        if arms_np is None:  # a catalogue's item id
            index = check_item_ids(action, self._held_ids)
        else:
            num_arms, shape = self._action_layout(arms_np.shape[0])
            index = check_action(action, num_arms, shape=shape)
        value = check_feedback(reward, self._support.constraint, self._support.description, shape=index.shape)
        action_host = index if self._catalogue else index.astype(np.int32)

        def failure(info: Any) -> tuple[Any, str]:
            return _unpacked(info), f"for reward {reward!r} of action {action!r}"

        if self._layout is not None and self._round_ready():
            self._round(action_host, value, arms_call, failure)
            return value
        state = self.policy.reserve(self.state, 1) if self._buffered else self.state
        call_signature = signature(self.policy, state, arms_call, self._buffered)
        ahead_id = call_signature if self._layout is None else self._packed_key
        update = self._ahead.executable(1, ahead_id, self._calls.update) if self._ahead else self._calls.update
        new_state, info = update(state, arms_call, action_host, value)
        if self._kind == "jax":
            info = ReportPart(Report(info, self._calls.reports[("update", call_signature)]), INFO)
        self._commit(self._hold(new_state), info, 1, failure)
        if self._ahead is not None:
            self._ahead.schedule(self.state, self._key, (arms_call, action_host, value))
        return value

    def _round_ready(self) -> bool:
        """Whether the round is compiled (without compiling ahead, it compiles on its first call)."""
        if not self._round_compiled:
            self._round_compiled = self._ahead is None or self._ahead.done(2, self._packed_key)
        return self._round_compiled

    def _round(self, action: np.ndarray, value: np.ndarray, arms_call: Any, failure: Any) -> None:
        """Update with ``(action, value)`` and select for the next draw in one call (``._calls._round``); commit
        the update and keep the selection for the next ``select`` (under the lock)."""
        held, number = self._current, self._draws
        inputs = self._round_inputs.pack_host((action, value, draw_data(number)))
        buffer, packed = self._packed_call(2)(held.buffer(), arms_call, self._key, inputs)
        if self._report_layout is None:  # known once the round is traced
            self._report_layout = self._calls.reports[("round", self._packed_key)]
            out_layout = self._calls.reports[("state", self._packed_key)]
            self._changed_layout = out_layout if out_layout != self._layout else None
        report = Report(packed, self._report_layout)
        new = HeldState(None, buffer, self._changed_layout or self._layout)
        self._commit(new, ReportPart(report, UPDATE_INFO), 1, failure)
        self._next_selection = _NextSelection(new, number, report)
        if self._changed_layout is not None:  # a policy that changes its state's dtypes: follow it
            self._use_layout(self._changed_layout)

    def update_many(self, actions: Any, rewards: Any, *, arms: ArrayLike | None = None) -> None:
        """Record several rewards in one compiled call (batched or delayed feedback), in order.

        The same as ``update(actions[i], rewards[i])`` for each ``i`` in turn, run as one
        ``lax.scan``. Every row is validated before anything is recorded: a bad row raises and
        the agent is unchanged.

        Parameters
        ----------
        actions : int array, shape (m,) or (m, k)
            What :meth:`select` returned (for example ``select(n=m)``).
        rewards : array, shape (m,) or (m, k)
        arms : array, shape (K, d) or (m, K, d), optional
            Contextual agents only: the arms the actions index, one set for all rows or one per
            row. Default: the arms of the last ``select``.

        Raises
        ------
        InvalidInput
            A malformed row (wrong shape, out of range, non-finite, outside the reward model's
            support) or arms; the agent is unchanged.
        UnknownArm
            An item id that is not in the catalogue; the agent is unchanged.
        NotConverged
            The updates produced non-finite state; the agent is unchanged.
        """
        self._process.check("update_many")
        with self._lock:
            self._update_many(actions, rewards, arms)

    def _update_many(self, actions: Any, rewards: Any, arms: ArrayLike | None) -> None:
        count = int(np.shape(actions)[0]) if np.ndim(actions) >= 1 else 0
        if count == 0:
            raise InvalidInput(
                f"update_many needs a non-empty array of actions, one row per reward; got {actions!r}; "
                "the agent state was not changed."
            )
        if self._catalogue:
            if arms is not None:
                raise InvalidInput(
                    "this agent's arms are a catalogue held by the policy: omit arms=; the agent state was not changed."
                )
            index, arms_per_row, arms_call = check_item_ids(actions, self._held_ids, count=count), False, None
            arms_np = None
        else:
            arms_np = self._batch_arms(arms, count)
            arms_per_row = arms_np.ndim == 3
            num_arms, shape = self._action_layout(arms_np.shape[-2])
            index = check_action(actions, num_arms, shape=shape, count=count).astype(np.int32)
            if self._arms is not None:
                arms_call = self._arms_call
            elif arms is None:  # the last select's arms
                arms_call = self._last_arms_call
            else:
                arms_call = arms_np
        value = check_feedback(rewards, self._support.constraint, self._support.description, shape=index.shape)
        state = self.policy.reserve(self.state, count) if self._buffered else self.state
        new_state, info = self._calls.update_many(arms_per_row, state, arms_call, index, value)

        def first_failure(info: Any) -> tuple[Any, str]:
            row = int(np.argmin(np.asarray(info.converged).reshape(count, -1).all(axis=1)))
            return jax.tree.map(lambda leaf: leaf[row], info), f"in row {row} (reward {value[row]!r})"

        self._commit(self._hold(new_state), info, count, first_failure)
        if self._log is not None:
            for i in range(count):
                row_arms = (
                    None if arms_np is None or self._arms is not None else arms_np[i] if arms_per_row else arms_np
                )
                self._log_update(index[i], value[i], row_arms)

    def _batch_arms(self, arms: ArrayLike | None, count: int) -> np.ndarray:
        """The arms ``update_many``'s actions index: the fixed set, the given ones, or the last select's."""
        if self._arms is not None:
            if arms is not None and not np.array_equal(np.asarray(arms), self._arms):
                raise InvalidInput(
                    "this agent has a fixed arm set; update_many(actions, rewards) indexes it. Fix: omit arms=; "
                    "the agent state was not changed."
                )
            return self._arms
        if arms is None:
            if self._last_arms is None:
                raise InvalidInput(
                    "update_many on a contextual agent needs the arms its actions index: pass arms= (shape (K, d) "
                    "or (m, K, d)) or call select(arms) first; the agent state was not changed."
                )
            return self._last_arms
        given = np.asarray(arms)
        if given.ndim == 3:
            if given.shape[0] != count:
                raise InvalidInput(
                    f"arms passed to update_many has {given.shape[0]} arm sets for {count} actions; expected shape "
                    f"({count}, K, {self.d}); the agent state was not changed."
                )
            return check_arms(given.reshape(-1, given.shape[-1]), dim=self.d).reshape(given.shape)
        return check_arms(given, dim=self.d)

    def _commit(self, new: HeldState, info: Any, count: int, failure: Any) -> None:
        """Keep the updated state, or raise if it is not finite; warn (once per kind) if a fit did not converge.

        ``failure(info)`` returns the Info of the update to explain and words saying which one it was.
        """
        converged = info.all_converged if isinstance(info, ReportPart) else bool(np.all(np.asarray(info.converged)))
        if not converged:
            failed, where = failure(info)
            if self._kind == "jax":
                leaves = jax.tree.leaves(new.tree())
                floats = [np.asarray(x) for x in leaves if jnp.issubdtype(x.dtype, jnp.inexact)]
                if not all(np.isfinite(x).all() for x in floats):
                    raise NotConverged(
                        f"the update {where} made the policy state non-finite; the agent state was not changed."
                    )
            if self._explains:
                message = self.policy.explain_update(failed, self.d)
            else:
                message = f"{type(self.policy).__name__}.update did not converge: {failed}."
            kind = re.sub(r"\[[^\]]*\]|\(.*?\)|[-+]?\d[\d.e+-]*", "#", message)  # the message without its numbers
            if kind not in self._warned:  # once per kind of problem, not every round
                self._warned.add(kind)
                warnings.warn(message, RuntimeWarning, stacklevel=4)
        self._current = new
        self._last_update_info = info
        self.num_updates += count

    # ------------------------------------------------------------------------------ the catalogue
    def add_arms(self, ids: Any, features: Any) -> None:
        """Items arriving in the catalogue (a :class:`~bayesbandit.contract.Catalogued` policy): validated first.

        Raises
        ------
        InvalidInput
            The policy's arm set cannot change, or the ids are not new, or the features are not
            finite rows of the catalogue's dimension; the agent is unchanged.
        """
        self._process.check("add_arms")
        with self._lock:
            self.state = self._catalogue_policy("add_arms").add_arms(self.state, ids, features)

    def remove_arms(self, ids: Any) -> None:
        """Items leaving the catalogue (a :class:`~bayesbandit.contract.Catalogued` policy): validated first.

        Raises
        ------
        InvalidInput, UnknownArm
            The policy's arm set cannot change, or an id is not held; the agent is unchanged.
        """
        self._process.check("remove_arms")
        with self._lock:
            self.state = self._catalogue_policy("remove_arms").remove_arms(self.state, ids)

    def _catalogue_policy(self, method: str) -> Any:
        if not self._catalogue:
            raise InvalidInput(
                f"Agent.{method}: {type(self.policy).__name__} acts on a fixed or per-round arm set, not a catalogue "
                "of item ids. Fix: use a catalogue policy (SubTS, SubElim), or pass each round's arms to select(arms); "
                "the agent state was not changed."
            )
        return self.policy

    # ------------------------------------------------------------------------------ forgetting
    def decay(self, gamma: float) -> None:
        """Discount everything learnt so far by ``gamma``: forgetting on the caller's schedule (drifting rewards).

        Every earlier observation's weight is multiplied by ``gamma`` and the prior keeps its
        own, then the posterior is refitted (:class:`~bayesbandit.contract.Discounts`: the
        discounted Laplace fit for the GLM policies, ``B <- gamma B + (1 - gamma) lam I`` for
        the ridge policies, the stabilised rule for ``history="online"``; ``docs/drift.md``).
        Called on a schedule, say nightly, independent of how many rewards arrive (bayesianbandits'
        advice: decoupled from updates), observations ``n`` decays old weigh ``gamma^n``: the
        effective memory is ``1 / (1 - gamma)`` decays (``gamma = 0.9`` nightly: about ten days).
        For a discount every round, wrap the policy in :class:`bayesbandit.drift.Discounted`.

        The decay is part of the state a checkpoint saves, and with a decision log it is logged
        (table ``decays``) and replayed in order by ``load(..., log=...)``.

        Parameters
        ----------
        gamma : float in (0, 1]
            ``1`` changes nothing.

        Raises
        ------
        InvalidInput
            ``gamma`` outside ``(0, 1]``, or a policy without the ``Discounts`` capability
            (neural and index policies); the agent is unchanged.
        NotConverged
            The discounted state is not finite; the agent is unchanged.
        """
        self._process.check("decay")
        check_scalar("Agent.decay", "gamma", gamma, low=0.0, high=1.0, low_open=True)
        if self._calls.discount is None:
            raise InvalidInput(
                f"Agent.decay: {type(self.policy).__name__} cannot discount its posterior (it has no Discounts "
                "capability: neural and index policies keep no prior to fall back to). Fix: use a GLM, linear or "
                "combinatorial policy, or bayesbandit.drift.Discounted over one; the agent state was not changed."
            )
        with self._lock:
            self._decay(float(gamma))
            if self._log is not None:
                self._log.decay(time.time(), float(gamma))

    def _decay(self, gamma: float) -> None:
        """Apply ``discount(state, gamma, refit=True)`` and commit it if finite (under the lock)."""
        new_state = self._calls.discount(self.state, np.float64(gamma))
        floats = [np.asarray(x) for x in jax.tree.leaves(new_state) if jnp.issubdtype(x.dtype, jnp.inexact)]
        if not all(np.isfinite(x).all() for x in floats):
            raise NotConverged(f"decay({gamma!r}) made the policy state non-finite; the agent state was not changed.")
        self.state = new_state

    # ------------------------------------------------------------------------------ saving
    def _replay(self, seq: int) -> None:
        """Apply the decision log's rows committed after ``seq``, in order, without logging them again."""
        if self._log is None:
            return
        rows = self._log.after(seq)
        with self._lock:
            for kind, row in rows:
                if kind == "decay":
                    self._decay(row[2])
                elif kind == "decision":
                    action = np.asarray(json.loads(row[5]))
                    decision = Decision(
                        row[1],
                        int(action) if action.ndim == 0 else action,
                        row[2],
                        propensity=row[8],
                        propensity_se=row[9],
                    )
                    self._decisions.add(decision, decision_arms(row))
                    self._draws = max(self._draws, row[3] + 1)
                else:
                    self._reward_decision(row[1], np.asarray(json.loads(row[3])), log=False)

    def save(self, path: str | os.PathLike) -> None:
        """Write a checkpoint atomically (:mod:`bayesbandit.checkpoint`; the schema: ``._persist``).

        Raises
        ------
        InvalidInput
            A host policy that cannot hand its state to a checkpoint (no ``HostState`` capability).
        """
        self._process.check("save")
        with self._save_lock:  # saves land in the order of their snapshots
            with self._lock:
                header, arrays = self._snapshot()
            if self._log is not None:  # the log holds every reward the checkpoint does
                self._log.flush(header["log_seq"])
            write_checkpoint(path, header, arrays)

    def close(self) -> None:
        """Commit the decision log's last rows and stop its writer (nothing else needs closing)."""
        if self._log is not None:
            self._log.close()

    def _snapshot(self) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The checkpoint's header and arrays (under the lock; host state copied, JAX arrays are immutable)."""
        layout, state = state_arrays(self.policy, self._kind, self.state)
        if self._kind == "host":
            state = [np.array(a, copy=True) for a in state]
        has_last_arms = self._last_arms is not None and self._arms is None
        book, book_arrays = self._decisions.parts()
        header = {
            "kind": KIND,
            "policy": policy_description(self.policy),
            "program": program_of(self.policy, self.d),
            "arms": None if self._arms is None else array_fingerprint(self._arms),
            "d": self.d,
            "capacity": self.policy.capacity(self.state) if self._buffered else None,
            "num_updates": self.num_updates,
            "draws": self._draws,
            "log_seq": None if self._log is None else self._log.last_seq,
            "action_shape": None if self._action_shape is None else list(self._action_shape),
            "has_last_arms": has_last_arms,
            "decisions": {**book, "max_pending": self._decisions.max_pending, "max_age": self._decisions.max_age},
            "state": layout,
        }
        arrays = [key_data(self._key)]
        if self._arms is not None:
            arrays.append(self._arms)
        if has_last_arms:
            arrays.append(np.asarray(self._last_arms))
        return header, [*arrays, *book_arrays, *state]

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        policy: Any,
        *,
        arms: ArrayLike | None = None,
        max_pending: int | None = None,
        max_age: float | None = None,
        log: str | os.PathLike[str] | DecisionLog | None = None,
    ) -> Agent:
        """Read a checkpoint written by :meth:`save` for ``policy``.

        Parameters
        ----------
        path : path-like
        policy : Policy
            The policy the checkpoint was written for (same class, hyper-parameters and reward
            program); the file holds no code, so the caller supplies it.
        arms : array, shape (K, d), optional
            If given, the arm set the agent must have been saved with.
        max_pending, max_age : optional
            Bounds on pending decisions (:class:`Agent`); default: those it was saved with. The
            pending decisions saved come back with it.
        log : path-like or DecisionLog, optional
            The agent's decision log: what it committed after the checkpoint is replayed in
            order (the decisions made since, and the rewards, credited as they were), so the
            agent continues from the last committed row, and goes on logging there.

        Raises
        ------
        CheckpointError
            Unreadable, corrupted, of an unknown format version, or written for another
            policy, reward program, arm set or state layout (the message names which).
        """
        name = os.fspath(path)
        meta, arrays = read_checkpoint(path)
        check_policy(path, meta, policy)
        arrays = list(arrays)
        key = jnp.asarray(arrays.pop(0))
        saved_arms = arrays.pop(0) if meta["arms"] is not None else None
        last_arms = arrays.pop(0) if meta["has_last_arms"] else None
        if arms is not None:
            given = check_arms(arms, unchanged=None)
            if saved_arms is None or array_fingerprint(given) != meta["arms"]:
                raise CheckpointError(
                    f"{name!r} was written for another arm set than the one given. Fix: load without arms=, "
                    "or pass the arm set it was saved with."
                )
        book = meta["decisions"]
        book_arrays = [arrays.pop(0), arrays.pop(0)]
        agent = cls(
            policy,
            saved_arms,
            d=int(meta["d"]),
            capacity=meta["capacity"],
            max_pending=book["max_pending"] if max_pending is None else max_pending,
            max_age=book["max_age"] if max_age is None else max_age,
        )
        agent.state = state_from_arrays(name, policy, agent._kind, agent.state, meta["state"], arrays)
        agent._decisions.restore(book, book_arrays)
        agent._draws = int(meta["draws"])
        agent._key = key
        agent._last_arms = last_arms
        agent._last_arms_call = last_arms
        agent._action_shape = None if meta["action_shape"] is None else tuple(meta["action_shape"])
        agent.num_updates = int(meta["num_updates"])
        if log is not None:
            agent._log = log if isinstance(log, DecisionLog) else DecisionLog(log)
            agent._replay(meta["log_seq"] or 0)
        return agent
