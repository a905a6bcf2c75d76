"""``Agent``: one stateful agent over any policy, with validation, keys, failure handling and checkpoints.

``Agent`` is the convenience level over the pure policy API (the policy stays the expert level).
It serves every kind of policy the contract has (``docs/contract.md``): JAX and host policies,
over a fixed arm set, each round's contextual arms, k-subsets of them, or a catalogue of item ids
that changes while it runs (``add_arms`` / ``remove_arms``). Every input is validated before any
state changes; a bad input raises an exception from :mod:`bayesbandit.errors` and leaves the agent
as it was.

It is a facade over one engine chosen at construction (:mod:`._engine`: compiled programs for a JAX
policy, the policy's own functions for a host one); the pending decisions live in
:mod:`._decisions`, the initial exploration in :mod:`._explore`, the decision log in :mod:`._log`,
the checkpoint schema in :mod:`._persist`, the posterior checks in :mod:`._health`. A reloaded agent
continues bit-for-bit.

Threads. Any number of threads may call every method at once. One lock orders the changes of
state: each ``update`` (and ``add_arms``, ``remove_arms``, ``decay``) applies to the state the
previous one left, so none is lost. A ``select`` of a JAX policy takes the current state and the
next draw number under the lock and computes outside it, side by side with other selections and
with an update in progress: its decision is the policy's choice from a state in that sequence, with
the key of its draw (``fold_in(seed key, draw)``: the same seed and number of draws give the same
keys however the calls interleave). No call holds the lock while XLA compiles: an update whose
program is not compiled yet compiles it first, outside the lock. A host policy's state changes in
place, so its selections run under the lock. ``save`` writes a consistent snapshot taken under the
lock, and one save at a time, so a later snapshot never lands before an earlier one. The posterior
checks (:meth:`Agent.health`) run on the agent's own check thread, from a snapshot of the state taken
under the lock by the update that makes one due (:mod:`._health`); no request waits for them.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from concurrent.futures import wait
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import TRACE_LOCK
from bayesbandit._process import OwningProcess
from bayesbandit._typing import ArrayLike
from bayesbandit.agent import _persist
from bayesbandit.agent._decisions import Decision, DecisionBook, check_decision_id
from bayesbandit.agent._engine import draw_data, engine_for, to_host
from bayesbandit.agent._explore import initial_exploration
from bayesbandit.agent._health import AgentHealth, PosteriorMonitor
from bayesbandit.agent._log import DecisionLog, decision_arms
from bayesbandit.contract import Buffered, Catalogued, Combinatorial, Explains, ModelBased, policy_kind
from bayesbandit.errors import InvalidInput, NotConverged
from bayesbandit.propensities import DEFAULT_SAMPLES
from bayesbandit.validation import check_action, check_arms, check_feedback, check_int, check_item_ids, check_scalar

__all__ = ["Agent"]

_UNCHANGED = "the agent state was not changed."


class _NotGiven:
    def __repr__(self) -> str:
        return "<the log it was saved with>"


_LOG_NOT_GIVEN: Any = _NotGiven()


def _finite(state: Any) -> bool:
    """Whether every float leaf of a policy state is finite."""
    leaves = [np.asarray(x) for x in jax.tree.leaves(state) if jnp.issubdtype(x.dtype, jnp.inexact)]
    return all(np.isfinite(x).all() for x in leaves)


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
        Compile before a call needs it, in background threads (the programs are traced in the
        calling thread, XLA compiles them in the background): a fixed-arm agent's ``select`` and
        ``update`` when it is created, and every call the agent has made (each arm-set shape, each
        propensity sample count) for the doubled row buffer once the buffer is half full (traced by
        the update that fills it, outside the agent's lock), so the round in which it grows does
        not wait for XLA. Default true. :meth:`warm_up` compiles the rest and waits.
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
    health_every : int
        Check the posterior every ``health_every`` updates (default 100; ``0``: never), on a
        background thread from a snapshot of the state, so no request waits for it: the Pareto
        ``k_hat`` of the Laplace approximation and the lock-in signal (:meth:`health`). A poor
        posterior (``k_hat > 0.7``) warns with :class:`~bayesbandit.errors.PosteriorQualityWarning`.

    Notes
    -----
    Every method may be called from any number of threads (the module docstring says how).

    Initial exploration (the policy's first ``num_explore`` pulls, Kveton et al. 2020, Section 5.1)
    advances with decisions made, not rewards received (``bayesbandit/agent/_explore.py``): ``d``
    concurrent first requests on a fixed arm set get ``d`` distinct arms that span the features, each
    logged with its exact propensity.

    Examples
    --------
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (10, 3))
    >>> agent = bb.Agent(bb.GLMTSL(logistic()), arms=arms, seed=0)
    >>> agent.warm_up()  # compile everything it will run, before the first request
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
        health_every: int = 100,
    ) -> None:
        self._kind = policy_kind(policy)
        self._process = OwningProcess("Agent")
        if arms is None and d is None:
            raise InvalidInput(
                "Agent needs a fixed arm set or a feature dimension. Fix: Agent(policy, arms=...) with arms of "
                "shape (K, d), or Agent(policy, d=...) and pass each round's arms to select(arms)."
            )
        seed = check_int("Agent", "seed", seed, low=0, high=2**32 - 1)
        if capacity is not None:
            capacity = check_int("Agent", "capacity", capacity, low=1)
        max_pending = check_int("Agent", "max_pending", max_pending, low=1)
        health_every = check_int("Agent", "health_every", health_every, low=0)
        if max_age is not None:
            check_scalar("Agent", "max_age", max_age, low=0.0, low_open=True)
            max_age = float(max_age)
        self.policy = policy
        self._catalogue = isinstance(policy, Catalogued)
        self._key, init_key = jax.random.split(jax.random.PRNGKey(seed))  # draw i selects with fold_in(key, i)
        with TRACE_LOCK:  # init and the program's checks trace the reward program
            if self._catalogue:  # the arm set lives in the policy state (which validates it)
                self._arms = None
                state = policy.init(arms, d=d, capacity=capacity, key=init_key)
                features = getattr(arms, "features", arms)
                self.d = int(np.shape(features)[-1]) if features is not None else check_int("Agent", "d", d, low=1)
            else:
                self._arms = None if arms is None else check_arms(arms, unchanged=None)
                self.d = int(self._arms.shape[1]) if self._arms is not None else check_int("Agent", "d", d, low=1)
                if self._arms is not None and d is not None and d != self.d:
                    raise InvalidInput(
                        f"The 'd' parameter of Agent is {d} but the arm set has d = {self.d}. Fix: omit d."
                    )
            if isinstance(policy, ModelBased):
                policy.check_program(self.d)
            self._support = policy.reward_support(self.d)
            if not self._catalogue:
                state = policy.init(self._arms, d=self.d, capacity=capacity, key=init_key)
            self._log_policy = _persist.fingerprint(policy, self.d)
        self._state = state
        self._run_policy, self._explore, self._design = initial_exploration(
            policy, state, self._arms is not None, self.d
        )
        self._engine = engine_for(self._run_policy, self._explore)
        self._arms_call: Any = None if self._arms is None else jnp.asarray(self._arms)  # on the device once
        self._combinatorial = isinstance(policy, Combinatorial)
        self._buffered = isinstance(policy, Buffered) and policy.capacity(state) is not None
        self._explains = isinstance(policy, Explains)
        self._action_shape: tuple[int, ...] = tuple(policy.action_shape) if self._combinatorial else ()
        self._lock = threading.RLock()  # orders every change of state (module docstring)
        self._save_lock = threading.Lock()  # one save at a time, in the order of their snapshots
        self._decisions = DecisionBook(max_pending, max_age)
        self._log = log if isinstance(log, DecisionLog) or log is None else DecisionLog(log)
        self._draws = 0
        self.num_updates = 0
        self._failed_updates = 0
        self._last_arms: np.ndarray | None = None
        self._last_select_info: Any = None
        self._last_update_info: Any = None
        self._warned: set[str] = set()
        self._compile_ahead = compile_ahead and self._kind == "jax"
        self._arm_shapes: set[tuple[int, ...]] = set() if self._arms is None else {self._arms.shape}
        self._samples_used: set[int] = set()  # propensity sample counts asked for: compiled ahead too
        self._grown_for: set[int] = set()  # row-buffer capacities whose doubled calls are scheduled
        self._background: list = []  # compilations in flight (wait_compiled)
        self._monitor = PosteriorMonitor(  # the posterior checks (health); it reads the key a checkpoint restores
            policy,
            state,
            d=self.d,
            arms=self._arms_call,
            every=health_every,
            lock=self._lock,
            current=lambda: (self._state, self.num_updates, self._key),
        )
        if self._compile_ahead and self._arms is not None:
            self._prepare(self._calls(self._state))

    # ------------------------------------------------------------------------------ reading
    @property
    def state(self) -> Any:
        """The policy state, a pytree; each update replaces it (never changes it in place)."""
        return self._state

    @state.setter
    def state(self, value: Any) -> None:
        with self._lock:
            self._state = value

    @property
    def last_select_info(self) -> Any:
        """The Info of the last ``select`` (of any thread; stacked for ``select(n=...)``), NumPy leaves, or None."""
        return None if self._last_select_info is None else to_host(self._last_select_info)

    @property
    def last_update_info(self) -> Any:
        """The Info of the last update (stacked for ``update_many``), NumPy leaves, or None."""
        return None if self._last_update_info is None else to_host(self._last_update_info)

    @property
    def num_decisions(self) -> int:
        """Selections made so far (``select(n=m)`` counts ``m``): the next one uses draw number ``num_decisions``."""
        return self._draws

    @property
    def failed_updates(self) -> int:
        """Updates whose fit did not converge, since creation (each also warns, once per kind of problem)."""
        return self._failed_updates

    @property
    def compiled_programs(self) -> int:
        """Programs compiled for this agent's policy so far, in this process (shared by the agents of an equal
        policy; 0 for a host policy): after :meth:`warm_up`, serving adds none until the row buffer grows."""
        return self._engine.compiled

    @property
    def pending_decisions(self) -> int:
        """Decisions made with an id whose reward has not arrived (nor expired)."""
        return len(self._decisions)

    @property
    def expired_decisions(self) -> int:
        """Decisions that expired before their reward (past ``max_pending`` or ``max_age``), since creation."""
        return self._decisions.expired_count

    def __reduce__(self) -> Any:
        self._process.refuse_pickle()

    # ------------------------------------------------------------------------------ compiling
    def warm_up(
        self,
        *,
        num_arms: int | None = None,
        propensity: bool | int = False,
        rows: int | None = None,
        timeout: float = 600.0,
    ) -> None:
        """Compile everything a served agent will run, and wait: then no request waits for XLA.

        Compiles ``select``, ``update``, and with ``propensity`` the decision with its propensity
        (:meth:`decide`), for the current state and the doubled row buffer, and with ``rows`` for
        every buffer size up to ``rows`` rows (later doublings are compiled ahead: traced by the
        update that fills the buffer half, which stalls the process's other Python threads while it
        traces, then compiled in the background).
        Compiled programs are shared by every agent of an equal policy in the process, and
        JAX's persistent compilation cache (:func:`bayesbandit.runtime.enable_compilation_cache`)
        keeps them across restarts.

        Parameters
        ----------
        num_arms : int, optional
            Contextual agents: the number of arms ``K`` each round's ``select(arms)`` will pass
            (call once per ``K`` served). Not for a fixed arm set or a catalogue.
        propensity : bool or int
            What ``decide(propensity=...)`` will be called with.
        rows : int, optional
            A policy with a row buffer (a full-history GLM policy): the rows the agent will hold;
            every buffer size up to it is compiled now, so none is traced while serving.
        timeout : float
            Seconds to wait for the compilations.

        Raises
        ------
        InvalidInput
            A contextual agent without ``num_arms``, or ``num_arms`` with a fixed arm set.
        TimeoutError
            The compilations did not finish within ``timeout``.
        """
        self._process.check("warm_up")
        contextual = self._arms is None and not self._catalogue
        if contextual and num_arms is None:
            raise InvalidInput(
                "Agent.warm_up: a contextual agent needs 'num_arms', the number of arms K each select(arms) will pass; "
                "got None. Fix: warm_up(num_arms=K), once per K served."
            )
        if not contextual and num_arms is not None:
            raise InvalidInput(
                f"Agent.warm_up: 'num_arms' is for contextual agents; this one holds its arms, got num_arms={num_arms!r}. "
                "Fix: omit num_arms."
            )
        if num_arms is not None:
            self._arm_shapes.add((check_int("Agent.warm_up", "num_arms", num_arms, low=1), self.d))
        if propensity is not False:
            samples = DEFAULT_SAMPLES if propensity is True else check_int("warm_up", "propensity", propensity, low=1)
            self._samples_used.add(samples)
        if rows is not None:
            rows = check_int("Agent.warm_up", "rows", rows, low=1)
        with self._lock:
            state = self._state
        futures = self._prepare(self._calls(state))
        if self._buffered:
            futures += self._grow_ahead(state, force=True)
            buffer = self._run_policy
            while rows is not None and 2 * buffer.capacity(state) < rows:
                state = buffer.reserve(state, buffer.capacity(state) - buffer.filled(state) + 1)
                futures += self._grow_ahead(state, force=True)
        _, late = wait(futures, timeout=timeout)
        if late:
            raise TimeoutError(f"Agent.warm_up: {len(late)} compilations did not finish within {timeout} s.")
        for future in futures:
            future.result()

    def wait_compiled(self, timeout: float = 600.0) -> None:
        """Wait for the compilations running in the background (``compile_ahead``, :meth:`warm_up`) to finish.

        Raises
        ------
        TimeoutError
            They did not finish within ``timeout`` seconds.
        """
        _, late = wait(list(self._background), timeout=timeout)
        if late:
            raise TimeoutError(f"Agent.wait_compiled: {len(late)} compilations did not finish within {timeout} s.")

    def _prepare(self, calls: list[tuple[tuple, tuple]]) -> list:
        """Trace ``calls`` here, compile them in the background (:meth:`CompiledEngine.prepare`); remembered for
        :meth:`wait_compiled`."""
        futures = self._engine.prepare(calls)
        self._background = [f for f in self._background if not f.done()] + futures
        return futures

    def _calls(self, state: Any) -> list[tuple[tuple, tuple]]:
        """Every call the agent serves from ``state``: select (with each propensity sample count) and update, per
        arm-set shape, with arguments of their shapes."""
        key, draw, design = self._key, draw_data(0), self._design
        action = np.zeros(self._action_shape, np.int32)
        value = np.zeros(self._action_shape, np.float64)
        fixed = self._arms is not None or self._catalogue
        arm_sets = [self._arms_call] if fixed else [np.zeros(shape) for shape in sorted(self._arm_shapes)]
        calls: list[tuple[tuple, tuple]] = []
        for arms in arm_sets:
            calls += [(("select",), (state, arms, key, draw, design)), (("update",), (state, arms, action, value))]
            calls += [(("select_logged", m), (state, arms, key, draw, design)) for m in sorted(self._samples_used)]
        return calls

    def _grow_ahead(self, state: Any, force: bool = False) -> list:
        """Half-full row buffer: every call for the doubled one, traced here (the state padded on the host, no
        lock held) and compiled in the background."""
        capacity, filled = self._run_policy.capacity(state), self._run_policy.filled(state)
        if capacity in self._grown_for or (not force and 2 * filled < capacity):
            return []
        self._grown_for.add(capacity)
        grown = self._run_policy.reserve(state, capacity - filled + 1)
        return self._prepare(self._calls(grown))

    # ------------------------------------------------------------------------------ deciding
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
            random tie-breaks. They count as ``n`` decisions. Report the rewards with
            :meth:`update_many`.
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
                    "decide() once per decision; " + _UNCHANGED
                )
            n = check_int("Agent.select", "n", n, low=1)
            return self._choose(arms, ("select_many", n), n)[0]
        if decision_id is None:
            return self._choose(arms, ("select",), 1)[0]
        return self._decide(arms, check_decision_id("select", decision_id), None).action

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
            from, in the decision's own compiled call (:mod:`bayesbandit.propensities`): exact
            for the UCB rules, epsilon-greedy and initial exploration, else the action's
            frequency among itself and ``propensity - 1`` more selections (``True``: 1,000 in
            all), never below ``1 / draws``: given those draws it is the action's exact
            probability, so inverse-propensity weighting with it is unbiased on the arms drawn.

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

    def _decide(self, arms: ArrayLike | None, decision_id: str, samples: int | None) -> Decision:
        with self._lock:
            self._decisions.check_new("select", decision_id)
        call = ("select",) if samples is None else ("select_logged", samples)
        action, arms_np, law, number = self._choose(arms, call, 1)
        propensity, propensity_se = (None, None) if law is None else (float(law[0]), float(law[1]))
        decision = Decision(decision_id, action, time.time(), propensity=propensity, propensity_se=propensity_se)
        kept_arms = None if self._arms is not None else arms_np
        with self._lock:
            self._decisions.check_new("select", decision_id)  # another thread may have taken it meanwhile
            self._decisions.add(decision, kept_arms)
            if self._log is not None:
                self._log.decision(decision, number, self._log_policy, kept_arms)
        return decision

    def _choose(self, arms: ArrayLike | None, call: tuple, count: int) -> tuple[Any, np.ndarray | None, Any, int]:
        """The one selection path: ``count`` draws from the current state, ``call`` on the engine; returns
        ``(action, its arms, its propensity or None, its draw number)``."""
        arms_np, arms_call = self._select_arms(arms)
        if call[0] == "select_logged":
            self._samples_used.add(call[1])
        if self._kind == "host":  # its state changes in place: select under the lock
            with self._lock:
                number = self._draws
                out = self._engine.run(call, self._state, arms_call, self._key, draw_data(number), self._design)
                self._draws += count
                self._after_select(arms_np, out[0], out[1], number)
        else:  # a snapshot and draw numbers under the lock, the computation outside it
            with self._lock:
                state, number, design = self._state, self._draws, self._design
                self._draws += count
            out = self._engine.run(call, state, arms_call, self._key, draw_data(number), design)
            with self._lock:
                self._after_select(arms_np, out[0], out[1], number)
        action = np.asarray(out[0])
        law = out[2] if len(out) > 2 else None
        return (int(action) if action.ndim == 0 else action), arms_np, law, number

    def _after_select(self, arms_np: np.ndarray | None, action: Any, info: Any, number: int) -> None:
        """What a selection leaves (under the lock): the last arms and Info, and an exploration decision's design."""
        self._last_arms = arms_np
        if info is not None:
            self._last_select_info = info
        self._monitor.record_decision(action)
        if arms_np is not None and self._arms is None:
            self._arm_shapes.add(arms_np.shape)
        explored = self._explore.rounds - number  # of these decisions, the first ones explored
        if self._explore.rule == "design" and explored > 0 and arms_np is not None:
            rows = arms_np[np.asarray(action).reshape(-1)[:explored]]
            self._design = self._design + rows.T @ rows  # a new array: selections in flight keep theirs

    def _select_arms(self, arms: ArrayLike | None) -> tuple[np.ndarray | None, Any]:
        """The arms a selection indexes, validated: ``(NumPy array, what the engine takes)``."""
        if self._catalogue:
            if arms is not None:
                raise InvalidInput(
                    "this agent's arms are a catalogue of item ids held by the policy: select() takes no arms. "
                    "Fix: call select() and change the catalogue with add_arms / remove_arms; " + _UNCHANGED
                )
            return None, None
        if self._arms is not None:
            if arms is not None and not np.array_equal(check_arms(arms, dim=self.d), self._arms):
                raise InvalidInput(
                    "this agent has a fixed arm set, and update(action) credits an arm of that set: select(arms) "
                    "with other arms would record rewards against the wrong arm. Fix: call select() with no "
                    "argument, or make a contextual agent, Agent(policy, d=d), and pass each round's arms; "
                    + _UNCHANGED
                )
            return self._arms, self._arms_call
        if arms is None:
            raise InvalidInput(
                "this agent has no fixed arm set. Fix: pass this round's arms, select(arms) with shape (K, d)."
            )
        given = check_arms(arms, dim=self.d)
        if self._combinatorial:
            self.policy.check_arms(given.shape[0])
        return given, given

    # ------------------------------------------------------------------------------ learning
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
        if decision_id is not None:
            if arms is not None:
                raise InvalidInput(
                    "update: a decision keeps its own arms; pass arms= only with a plain action. Fix: omit arms=; "
                    + _UNCHANGED
                )
            self._learn(lambda: self._decision_update(decision_id, reward))
        else:
            self._learn(lambda: self._plain_update(action, reward, arms))

    def _decision_update(self, decision_id: str, reward: Any, log: bool = True) -> tuple:
        """The update crediting ``reward`` to pending decision ``decision_id`` (under the lock): see :meth:`_learn`."""
        decision, kept = self._decisions.get(decision_id)
        arms_np, arms_call = (self._arms, self._arms_call) if self._arms is not None else (kept, kept)
        call, args, value = self._one_update(decision.action, reward, arms_np, arms_call)

        def done() -> None:
            self._decisions.settle(decision_id)
            if log and self._log is not None:
                self._log.reward(decision_id, time.time(), value)

        return call, args, f"for reward {reward!r} of decision {decision_id!r}", 1, done

    def _plain_update(self, action: Any, reward: Any, arms: ArrayLike | None) -> tuple:
        """The update of a plain ``update(action, reward)`` (under the lock): see :meth:`_learn`."""
        arms_np, arms_call = self._indexed_arms(arms, "update")
        call, args, value = self._one_update(action, reward, arms_np, arms_call)

        def done() -> None:
            if self._log is not None:  # as a decision ``update:<uuid>`` and its reward; its draw the last taken
                decision = Decision(f"update:{uuid.uuid4().hex}", np.asarray(action), time.time())
                self._log.decision(
                    decision, self._draws - 1, self._log_policy, None if self._arms is not None else arms_np
                )
                self._log.reward(decision.id, decision.time, value)

        return call, args, f"for reward {reward!r} of action {action!r}", 1, done

    def _one_update(self, action: Any, reward: Any, arms_np: np.ndarray | None, arms_call: Any) -> tuple:
        """``(call, arguments, validated reward)`` of one update, validated (under the lock)."""
        if arms_np is None:  # a catalogue's item id
            index = check_item_ids(action, self._held_ids)
        else:
            num_arms = arms_np.shape[0] * (self.policy.blocks if self._combinatorial else 1)
            index = check_action(action, num_arms, shape=self._action_shape).astype(np.int32)
        value = check_feedback(reward, self._support.constraint, self._support.description, shape=index.shape)
        state = self._run_policy.reserve(self._state, 1) if self._buffered else self._state
        return ("update",), (state, arms_call, index, value), value

    def _learn(self, prepare: Callable[[], tuple]) -> None:
        """The one update path. ``prepare()`` validates under the lock and returns ``(call, arguments, words naming
        the update, rewards it counts, what to do once committed)``; the engine runs the call on those arguments
        and the result is committed. A call not compiled yet compiles first, outside the lock, then everything is
        prepared again from the state then current."""
        while True:
            with self._lock:
                call, args, where, count, done = prepare()
                out = self._engine.run_if_ready(call, *args)
                if out is not None:
                    new_state, info = out
                    self._commit(new_state, info, count, where)
                    done()
                    self._monitor.after_update(self.num_updates, count)
                    break
            self._engine.compile(call, *args)
        if self._compile_ahead and self._buffered:
            self._grow_ahead(new_state)

    def _commit(self, new_state: Any, info: Any, count: int, where: str) -> None:
        """Keep the updated state, or raise if it is not finite; count and warn (once per kind) a failed fit."""
        converged = np.asarray(info.converged)
        if not converged.all():
            failed = info
            if converged.ndim:  # a batch: explain its first failure
                row = int(np.argmin(converged.reshape(count, -1).all(axis=1)))
                failed, where = jax.tree.map(lambda leaf: leaf[row], info), f"in row {row}"
            if self._kind == "jax":
                if not _finite(new_state):
                    raise NotConverged(f"the update {where} made the policy state non-finite; " + _UNCHANGED)
            self._failed_updates += 1
            if self._explains:
                message = self.policy.explain_update(to_host(failed), self.d)
            else:
                message = f"{type(self.policy).__name__}.update did not converge: {to_host(failed)}."
            kind = re.sub(r"\[[^\]]*\]|\(.*?\)|[-+]?\d[\d.e+-]*", "#", message)  # the message without its numbers
            if kind not in self._warned:  # once per kind of problem, not every round
                self._warned.add(kind)
                warnings.warn(message, RuntimeWarning, stacklevel=5)
        self._state = new_state
        self._last_update_info = info
        self.num_updates += count

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
        self._learn(lambda: self._batch_update(actions, rewards, arms))

    def _batch_update(self, actions: Any, rewards: Any, arms: ArrayLike | None) -> tuple:
        count = int(np.shape(actions)[0]) if np.ndim(actions) >= 1 else 0
        if count == 0:
            raise InvalidInput(
                f"update_many needs a non-empty array of actions, one row per reward; got {actions!r}; " + _UNCHANGED
            )
        if self._catalogue:
            arms_np, arms_call = self._indexed_arms(arms, "update_many")
            index = check_item_ids(actions, self._held_ids, count=count)
        else:
            arms_np, arms_call = self._indexed_arms(arms, "update_many", count)
            num_arms = arms_np.shape[-2] * (self.policy.blocks if self._combinatorial else 1)
            index = check_action(actions, num_arms, shape=self._action_shape, count=count).astype(np.int32)
        value = check_feedback(rewards, self._support.constraint, self._support.description, shape=index.shape)
        per_row = arms_np is not None and arms_np.ndim == 3
        state = self._run_policy.reserve(self._state, count) if self._buffered else self._state

        def done() -> None:
            if self._log is not None:
                for i in range(count):
                    kept = None if arms_np is None or self._arms is not None else arms_np[i] if per_row else arms_np
                    decision = Decision(f"update:{uuid.uuid4().hex}", np.asarray(index[i]), time.time())
                    self._log.decision(decision, self._draws - 1, self._log_policy, kept)
                    self._log.reward(decision.id, decision.time, value[i])

        return ("update_many", per_row), (state, arms_call, index, value), "of update_many", count, done

    def _indexed_arms(self, arms: ArrayLike | None, where: str, count: int | None = None) -> tuple[Any, Any]:
        """The one arms resolver of the updates: the fixed set, the given ones (one set, or with ``count``
        one per row) or the last select's; ``(NumPy array or None for a catalogue, what the engine takes)``."""
        if self._catalogue or self._arms is not None:
            if arms is not None and (self._arms is None or not np.array_equal(np.asarray(arms), self._arms)):
                owner = (
                    "a catalogue held by the policy" if self._catalogue else "a fixed arm set, which the actions index"
                )
                raise InvalidInput(
                    f"this agent's arms are {owner}: {where} takes no arms=. Fix: omit arms=; " + _UNCHANGED
                )
            return self._arms, self._arms_call
        if arms is None:
            if self._last_arms is None:
                raise InvalidInput(
                    f"{where} on a contextual agent needs the arms its actions index. Fix: pass arms= (shape (K, d)"
                    f"{' or (m, K, d)' if count else ''}), use a Decision from decide(), or call select(arms) first; "
                    + _UNCHANGED
                )
            return self._last_arms, self._last_arms
        given = np.asarray(arms)
        if count is not None and given.ndim == 3:
            if given.shape[0] != count:
                raise InvalidInput(
                    f"arms passed to {where} has {given.shape[0]} arm sets for {count} actions; expected shape "
                    f"({count}, K, {self.d}); " + _UNCHANGED
                )
            per_row = check_arms(given.reshape(-1, given.shape[-1]), dim=self.d).reshape(given.shape)
            return per_row, per_row
        given = check_arms(given, dim=self.d)
        return given, given

    def _held_ids(self, ids: np.ndarray) -> np.ndarray:
        return self.policy.held(self._state, ids)

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
            self._state = self._catalogue_policy("add_arms").add_arms(self._state, ids, features)

    def remove_arms(self, ids: Any) -> None:
        """Items leaving the catalogue (a :class:`~bayesbandit.contract.Catalogued` policy): validated first.

        Raises
        ------
        InvalidInput, UnknownArm
            The policy's arm set cannot change, or an id is not held; the agent is unchanged.
        """
        self._process.check("remove_arms")
        with self._lock:
            self._state = self._catalogue_policy("remove_arms").remove_arms(self._state, ids)

    def _catalogue_policy(self, method: str) -> Any:
        if not self._catalogue:
            raise InvalidInput(
                f"Agent.{method}: {type(self.policy).__name__} acts on a fixed or per-round arm set, not a catalogue "
                "of item ids. Fix: use a catalogue policy (SubTS, SubElim), or pass each round's arms to select(arms); "
                + _UNCHANGED
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
        advice: decoupled from updates), an observation ``n`` decays old weighs ``gamma^n``: the
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
        if not self._engine.discounts:
            raise InvalidInput(
                f"Agent.decay: {type(self.policy).__name__} cannot discount its posterior (it has no Discounts "
                "capability: neural and index policies keep no prior to fall back to). Fix: use a GLM, linear or "
                "combinatorial policy, or bayesbandit.drift.Discounted over one; " + _UNCHANGED
            )
        self._decay(float(gamma), log=True)

    def _decay(self, gamma: float, log: bool) -> None:
        """Apply ``discount(state, gamma, refit=True)`` and commit it if finite (outside the lock while compiling)."""
        while True:
            with self._lock:
                args = (self._state, np.float64(gamma))
                new_state = self._engine.run_if_ready(("discount",), *args)
                if new_state is not None:
                    if not _finite(new_state):
                        raise NotConverged(f"decay({gamma!r}) made the policy state non-finite; " + _UNCHANGED)
                    self._state = new_state
                    if log and self._log is not None:
                        self._log.decay(time.time(), gamma)
                    return
            self._engine.compile(("discount",), *args)

    # ------------------------------------------------------------------------------ health
    def health(self, *, timeout: float = 0.0) -> AgentHealth:
        """Failed fits, and whether the posterior can be trusted, as of the last posterior check.

        Every ``health_every`` updates (:class:`Agent`) the update that reaches the count takes a
        snapshot of the state under the agent's lock (the state is never changed in place, so it
        is a reference) and hands it to the agent's check thread; the request returns at once. The
        check computes, for a GLM policy with a Laplace fit (:class:`~bayesbandit.inference.DenseNewton`):

        * the Pareto ``k_hat`` of the Laplace approximation ``N(theta_hat, H^{-1})`` against the
          exact posterior of the history's rows (:func:`bayesbandit.inference.laplace_psis`,
          4,000 draws; not with ``history="online"``, which keeps no rows). When it exceeds 0.7
          the check warns with :class:`~bayesbandit.errors.PosteriorQualityWarning`, once per
          crossing (a later check at or below 0.7 re-arms it);
        * on a fixed arm set, the lock-in signal (:class:`AgentHealth`).

        A check that falls due while another runs is made when that one ends, from the state
        then current (several due meanwhile make one). Checks start afresh when the agent is
        loaded. Cost: 40-120 ms per check for ``p = 10`` and 500 rows on a shared 2-core machine,
        growing with rows times parameters (:func:`~bayesbandit.inference.laplace_psis`).

        Parameters
        ----------
        timeout : float
            Seconds to wait first for a check in flight to finish (default 0: do not wait): a
            test, or a health endpoint that wants the latest grade, bounds its wait with it.

        Returns
        -------
        AgentHealth

        Raises
        ------
        TimeoutError
            The check in flight did not finish within ``timeout`` seconds.

        Examples
        --------
        >>> import numpy as np
        >>> import bayesbandit as bb
        >>> from bayesbandit.models import logistic
        >>> bb.runtime.enable_x64()
        >>> arms = np.random.default_rng(0).uniform(-1, 1, (5, 2))
        >>> agent = bb.Agent(bb.GLMTSL(logistic()), arms=arms, seed=0, health_every=10)
        >>> for _ in range(10):
        ...     agent.update(agent.select(), 1.0)
        >>> health = agent.health(timeout=60.0)
        >>> health.checked_at, health.k_hat < 0.7
        (10, True)
        """
        self._process.check("health")
        check_scalar("Agent.health", "timeout", timeout, low=0.0)
        self._monitor.wait_for_check(timeout)
        with self._lock:  # the counts with the check they are reported with
            return self._monitor.report(self.num_updates, self._failed_updates)

    # ------------------------------------------------------------------------------ saving
    def save(self, path: str | os.PathLike) -> None:
        """Write a checkpoint atomically (:mod:`bayesbandit.checkpoint`; the schema: ``._persist``).

        With a decision log, its rows are committed first, and once the checkpoint is written the
        log may archive the rows it holds (:class:`~bayesbandit.agent.DecisionLog` retention).

        Raises
        ------
        InvalidInput
            A host policy that cannot hand its state to a checkpoint (no ``HostState`` capability).
        """
        self._process.check("save")
        with self._save_lock:  # saves land in the order of their snapshots
            with self._lock:
                header, arrays = _persist.snapshot(self)
            _persist.write(path, header, arrays, self._log)

    def close(self) -> None:
        """Commit the decision log's last rows and stop its writer, and let a posterior check in flight end."""
        if self._log is not None:
            self._log.close()
        self._monitor.close()

    def _replay(self, seq: int) -> None:
        """Apply the decision log's rows committed after ``seq``, in order, without logging them again."""
        if self._log is None:
            return
        for kind, row in self._log.after(seq):
            if kind == "decay":
                self._decay(row[2], log=False)
            elif kind == "decision":
                decision, kept = _persist.logged_decision(row), decision_arms(row)
                with self._lock:
                    self._decisions.add(decision, kept)
                    self._draws = max(self._draws, row[3] + 1)
                    if row[3] >= 0 and not decision.id.startswith("update:"):
                        self._after_select(kept if kept is not None else self._arms, decision.action, None, row[3])
            else:
                decision_id, value = row[1], _persist.logged_reward(row)
                self._learn(functools.partial(self._decision_update, decision_id, value, log=False))

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        policy: Any,
        *,
        arms: ArrayLike | None = None,
        max_pending: int | None = None,
        max_age: float | None = None,
        log: str | os.PathLike[str] | DecisionLog | None = _LOG_NOT_GIVEN,
        health_every: int = 100,
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
        log : path-like or DecisionLog or None
            The agent's decision log: what it committed after the checkpoint is replayed in
            order (the decisions made since, and the rewards, credited as they were), so the
            agent continues from the last committed row, and goes on logging there. Required
            for a checkpoint saved with a log; ``log=None`` loads it without, dropping what was
            logged after the checkpoint.
        health_every : int
            Updates between posterior checks (:class:`Agent`); the checks start afresh.

        Raises
        ------
        CheckpointError
            Unreadable, corrupted, of an unknown format version, or written for another
            policy, reward program, arm set or state layout (the message names which); or saved
            with a decision log and loaded without ``log=``.
        """
        meta, arrays = _persist.read(path, policy, arms, log is not _LOG_NOT_GIVEN)
        book = meta["decisions"]
        agent = cls(
            policy,
            arrays["arms"],
            d=int(meta["d"]),
            capacity=meta["capacity"],
            compile_ahead=False,
            max_pending=book["max_pending"] if max_pending is None else max_pending,
            max_age=book["max_age"] if max_age is None else max_age,
            health_every=health_every,
        )
        _persist.restore(agent, os.fspath(path), meta, arrays)
        agent._compile_ahead = agent._kind == "jax"
        if agent._compile_ahead and agent._arms is not None:
            agent._prepare(agent._calls(agent._state))
        if log is not None and log is not _LOG_NOT_GIVEN:
            agent._log = log if isinstance(log, DecisionLog) else DecisionLog(log)
            agent._replay(meta["log_seq"] or 0)
        return agent
