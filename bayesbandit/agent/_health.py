"""The posterior checks of an :class:`~bayesbandit.Agent` (:meth:`Agent.health <bayesbandit.Agent.health>`).

One job: :class:`PosteriorMonitor` decides when a check falls due, runs it off the request path on
the agent's check thread from a snapshot of the state, keeps what the last one found
(:class:`AgentHealth`) and warns when the Laplace posterior turns poor. The agent calls it at four
hook points: a decision made (:meth:`~PosteriorMonitor.record_decision`), an update committed
(:meth:`~PosteriorMonitor.after_update`), :meth:`Agent.health <bayesbandit.Agent.health>`
(:meth:`~PosteriorMonitor.wait_for_check`, :meth:`~PosteriorMonitor.report`) and
:meth:`Agent.close <bayesbandit.Agent.close>` (:meth:`~PosteriorMonitor.close`).

A check grades, for a GLM policy with a Laplace fit, the Pareto ``k_hat`` of that fit against
the exact posterior of the history's rows (:func:`bayesbandit.inference.laplace_psis`) and, on
a fixed arm set, whether the recent decisions have locked in on one arm while the posterior has
not (:class:`AgentHealth`).
"""

from __future__ import annotations

import threading
import warnings
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.errors import PosteriorQualityWarning
from bayesbandit.inference.posteriors import Laplace
from bayesbandit.inference.potential import BoundModel
from bayesbandit.inference.psis import K_HAT_GOOD, K_HAT_POOR, _run_compiled, laplace_psis
from bayesbandit.inference.solvers import NewtonFit
from bayesbandit.policies.glm import GLMPolicy

__all__ = ["AgentHealth", "PosteriorMonitor"]

_HEALTH_STREAM = 0x4845414C  # folded into the seed key for the posterior checks' draws
LOCK_IN_WINDOW = 100  # the decisions the lock-in signal looks back on
LOCK_IN_MIN_DECISIONS = 20  # fewer in the window: no lock-in signal
LOCK_IN_SHARE = 0.9  # the most chosen arm's share of the window above which the decisions have locked in...
LOCK_IN_OVERLAP = 0.2  # ...if the posterior still makes another arm the best with at least this probability
_LOCK_IN_DRAWS = 1000  # Laplace draws of the probability that each arm is best


@dataclass(frozen=True)
class AgentHealth:
    """How an :class:`Agent` is doing: its failed fits, and whether its posterior can be trusted.

    :meth:`Agent.health` returns it. The posterior fields come from the agent's last posterior
    check, run every ``health_every`` updates on a background thread from a snapshot of the state
    (``checked_at``: the update count of that snapshot); they are ``None`` until the first check,
    with ``health_every=0``, and where the check does not apply.

    Attributes
    ----------
    num_updates : int
        Rewards recorded so far (the agent's ``num_updates``).
    failed_updates : int
        Updates whose fit did not converge or was rejected (:attr:`bayesbandit.Agent.failed_updates`).
    checked_at : int or None
        ``num_updates`` of the state the last finished check examined.
    k_hat : float or None
        The Pareto ``k_hat`` of the Laplace approximation the policy's fit carries, importance
        sampling the exact posterior of the history's rows with it
        (:func:`bayesbandit.inference.laplace_psis`): below 0.5 good, 0.5 to 0.7 usable but
        imperfect, above 0.7 poor (a :class:`~bayesbandit.errors.PosteriorQualityWarning` is
        emitted when it crosses 0.7). ``None`` where it does not apply: a policy without a Laplace
        fit (other than a GLM policy with :class:`~bayesbandit.inference.DenseNewton`), or
        ``history="online"``, which keeps no rows to weigh the draws with.
    ess : float or None
        The effective sample size of that check's smoothed importance weights (of 4,000 draws).
    lock_in : bool or None
        Whether the decisions have locked in on one arm while the posterior has not: of the last
        ``LOCK_IN_WINDOW = 100`` decisions (at least ``LOCK_IN_MIN_DECISIONS = 20`` made), the most
        chosen arm took more than ``LOCK_IN_SHARE = 90%``, while under 1,000 draws of the Laplace
        posterior at the check another arm has the highest mean reward with probability above
        ``LOCK_IN_OVERLAP = 0.2``. Thompson sampling plays each arm with its posterior
        probability of being the best, so such a share means the decisions no longer follow the
        posterior: a posterior inflation ``a`` too small, a greedy or UCB rule stuck on an arm
        whose rivals were never tried, or a posterior that has moved since. ``None``: no check
        yet, fewer decisions in the window, or a contextual or catalogue agent (an arm's index
        means another arm each round), or a policy without a Laplace fit.
    dominant_arm : int or None
        The most chosen arm of the window.
    dominant_share : float or None
        Its share of the window's decisions.
    other_best_probability : float or None
        The posterior probability that another arm is the best, ``1 - P(dominant arm is best)``.
    check_error : str or None
        The exception the last check raised, if it did (the agent serves on; the next check
        tries again).
    summary : str
        The above in one line of plain words.
    """

    num_updates: int
    failed_updates: int
    checked_at: int | None
    k_hat: float | None
    ess: float | None
    lock_in: bool | None
    dominant_arm: int | None
    dominant_share: float | None
    other_best_probability: float | None
    check_error: str | None
    summary: str


_NOT_CHECKED: dict[str, Any] = dict.fromkeys(
    ("checked_at", "k_hat", "ess", "lock_in", "dominant_arm", "dominant_share", "other_best_probability")
)


def _best_arm_frequencies(bound: BoundModel, num_draws: int, key: Any, theta: Any, chol: Any, arms: Any) -> Any:
    """The fraction of ``num_draws`` Laplace draws under which each arm has the highest mean reward, shape ``(K,)``."""
    draws = Laplace(theta, chol, cast(Any, None)).sample(key, (num_draws,))  # sampling reads no Newton info
    means = jax.vmap(lambda t: bound.mean_reward(t, arms))(draws)
    return jnp.mean(jax.nn.one_hot(jnp.argmax(means, axis=1), arms.shape[0], dtype=theta.dtype), axis=0)


def _poor_posterior(policy: str, k_hat: float, updates: int) -> str:
    """The :class:`~bayesbandit.errors.PosteriorQualityWarning` of a check that found ``k_hat > 0.7``."""
    return (
        f"The Laplace posterior of this agent's {policy} is poor: Pareto k-hat = {k_hat:.2f} > 0.7 at update "
        f"{updates} (importance sampling its exact posterior with the Laplace draws, Yao et al. 2018): the Gaussian "
        "it samples from is far from the posterior (skewed, heavy-tailed or funnel-shaped, or the fit did not reach "
        "the mode), so its exploration is not calibrated. Fixes: more data before trusting it; a better-conditioned "
        "program (a non-centred parameterisation, a tighter prior, scaled features); compare it with NUTS, "
        "bayesbandit.diagnostics.compare(model, *policy.posterior_rows(agent.state)); between 0.5 and 0.7, "
        "importance-resampled Thompson draws (GLMTSL(..., proposals=64)). Warned once until a check finds "
        "k-hat <= 0.7 again."
    )


class PosteriorMonitor:
    """The posterior checks of one agent: when they fall due, the check thread, and the last check's findings.

    Every ``every`` updates (``0``: never) the update that reaches the count hands a snapshot of the
    agent's state to a thread of the monitor's own (made at the first check); a check that falls due
    while another runs is made when that one ends, from the state then current (several due meanwhile
    make one). Its fields are guarded by the agent's lock ``lock``, under which the agent calls
    :meth:`record_decision`, :meth:`after_update` and :meth:`report`: a snapshot and its scheduling
    are atomic with the update that makes a check due, and a report's counts with the check it reports.

    Parameters
    ----------
    policy : Policy
        The agent's policy; checked only for a GLM policy whose state carries a Laplace fit
        (:class:`~bayesbandit.inference.solvers.NewtonFit`).
    state : pytree
        The agent's initial policy state (whether it carries such a fit).
    d : int
        The feature dimension.
    arms : array, shape (K, d), or None
        A fixed arm set, as the agent passes it to compiled calls; ``None`` for a contextual or a
        catalogue agent (no lock-in signal: an index means another arm each round).
    every : int
        Updates between checks; ``0``: no checks.
    lock : threading.RLock
        The agent's lock.
    current : callable
        Returns the agent's state, update count and seed key; called under ``lock``.
    """

    def __init__(
        self,
        policy: Any,
        state: Any,
        *,
        d: int,
        arms: Any,
        every: int,
        lock: threading.RLock,
        current: Callable[[], tuple[Any, int, Any]],
    ) -> None:
        self._policy, self._d, self._arms, self._every = policy, d, arms, every
        self._lock, self._current = lock, current
        # a GLM policy's Laplace fit, with the history's rows unless online
        self._laplace = isinstance(policy, GLMPolicy) and isinstance(getattr(state, "fit", None), NewtonFit)
        self._watch = self._laplace and arms is not None and bool(every)  # keep the decisions (lock-in)
        self._recent: deque[int] = deque(maxlen=LOCK_IN_WINDOW)  # a fixed arm set's last decisions
        self._pool: ThreadPoolExecutor | None = None  # one thread, made at the first check
        self._check: Future | None = None  # the last check submitted
        self._last_check: dict[str, Any] = _NOT_CHECKED
        self._check_error: str | None = None
        self._poor = False  # the last k_hat was above 0.7 (warned once per crossing)
        self._checking = False  # the check thread is at work
        self._check_due = False  # a check fell due while it was

    # ------------------------------------------------------------------------------ the agent's hooks
    def record_decision(self, action: Any) -> None:
        """A selection's action (an index, or an array of them), for the lock-in window (under the agent's lock)."""
        if self._watch:
            self._recent.extend(np.asarray(action).reshape(-1).tolist())

    def after_update(self, updates: int, count: int) -> None:
        """An update that recorded ``count`` rewards, ``updates`` in all, was committed (under the agent's lock):
        when it reaches a multiple of ``every``, hand a snapshot to the check thread. Returns at once."""
        every = self._every
        if every and (updates - count) // every < updates // every:
            self._schedule_check()

    def wait_for_check(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the check in flight, if any (not under the agent's lock).

        Raises
        ------
        TimeoutError
            The check did not finish within ``timeout`` seconds.
        """
        with self._lock:
            check = self._check
        if timeout > 0 and check is not None:
            _, late = wait([check], timeout=timeout)
            if late:
                raise TimeoutError(f"Agent.health: the posterior check did not finish within {timeout} s.")

    def report(self, num_updates: int, failed_updates: int) -> AgentHealth:
        """The agent's counts with the last check's findings (under the agent's lock, which the counts were read
        under)."""
        fields = {
            "num_updates": num_updates,
            "failed_updates": failed_updates,
            **self._last_check,
            "check_error": self._check_error,
        }
        return AgentHealth(**fields, summary=self._summary(fields))

    def close(self) -> None:
        """Let a check in flight end and stop the check thread (a later check makes a new one)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    # ------------------------------------------------------------------------------ the checks
    def _summary(self, h: dict[str, Any]) -> str:
        """:class:`AgentHealth`'s fields in one line of plain words."""
        parts = [f"{h['num_updates']} updates, {h['failed_updates']} failed"]
        if not self._laplace:
            parts.append(f"{type(self._policy).__name__} has no Laplace posterior to check")
        elif not self._every:
            parts.append("posterior checks off (health_every=0)")
        elif h["check_error"] is not None:
            parts.append(f"the last posterior check failed ({h['check_error']})")
        elif h["checked_at"] is None:
            parts.append(f"no posterior check yet (one every {self._every} updates)")
        elif h["k_hat"] is None:
            parts.append(f"no k-hat: history='{self._policy.history}' keeps no rows")
        else:
            k, at = h["k_hat"], h["checked_at"]
            if k < K_HAT_GOOD:
                parts.append(f"Laplace posterior good (k-hat {k:.2f} at update {at})")
            elif k <= K_HAT_POOR:
                parts.append(
                    f"Laplace posterior usable but imperfect (k-hat {k:.2f} at update {at}): "
                    "importance-resampled draws are closer"
                )
            else:
                parts.append(
                    f"Laplace posterior POOR (k-hat {k:.2f} at update {at}): its draws are not the posterior's"
                )
        if h["lock_in"]:
            parts.append(
                f"LOCK-IN: arm {h['dominant_arm']} took {h['dominant_share']:.0%} of the recent decisions "
                "while another arm is best with probability "
                f"{h['other_best_probability']:.2f}"
            )
        elif h["lock_in"] is False:
            parts.append("no lock-in")
        return "; ".join(parts) + "."

    def _schedule_check(self) -> None:
        """Hand a snapshot of the state to the check thread (under the lock); with a check in flight, mark one due."""
        if not self._laplace:
            return
        if self._checking:
            self._check_due = True  # the check thread runs one more when it ends, from the state it then finds
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bayesbandit-health")
        self._checking = True
        self._check = self._pool.submit(self._posterior_checks, self._snapshot())

    def _snapshot(self) -> tuple[Any, int, Any, np.ndarray]:
        """What a check examines (under the lock): the state (replaced by updates, never changed in place), the
        update count, the seed key and the recent decisions."""
        state, updates, key = self._current()
        return state, updates, key, np.array(self._recent, dtype=np.int64)

    def _posterior_checks(self, snapshot: tuple[Any, int, Any, np.ndarray] | None) -> None:
        """Checks on the check thread: of ``snapshot``, then of the latest state while one fell due meanwhile."""
        while snapshot is not None:
            self._posterior_check(*snapshot)
            with self._lock:  # the last one found no check due and leaves (atomically with _schedule_check)
                snapshot, self._check_due = (self._snapshot() if self._check_due else None), False
                self._checking = snapshot is not None

    def _posterior_check(self, state: Any, updates: int, key: Any, recent: np.ndarray) -> None:
        """One check: ``k_hat`` and the lock-in signal of a snapshot; warns once per crossing of 0.7."""
        try:
            found = self._examine(state, updates, key, recent)
            k_hat = found["k_hat"]
            with self._lock:
                self._last_check, self._check_error = found, None
                crossed = k_hat is not None and k_hat > K_HAT_POOR and not self._poor
                self._poor = self._poor if k_hat is None else k_hat > K_HAT_POOR
            if crossed:
                message = _poor_posterior(type(self._policy).__name__, k_hat, updates)
                warnings.warn(message, PosteriorQualityWarning, stacklevel=1)  # on the check thread: no caller
        except Exception as exc:  # the agent serves on; health() reports it and the next check tries again
            with self._lock:
                self._check_error = f"{type(exc).__name__}: {exc}"

    def _examine(self, state: Any, updates: int, key: Any, recent: np.ndarray) -> dict[str, Any]:
        """The posterior fields of :class:`AgentHealth` for a snapshot (the check thread; no lock held)."""
        bound = self._policy.bound(self._d)
        psis_key, lock_key = jax.random.split(jax.random.fold_in(jax.random.fold_in(key, _HEALTH_STREAM), updates))
        found: dict[str, Any] = {**_NOT_CHECKED, "checked_at": updates}
        if self._policy.history == "full":
            result = laplace_psis(psis_key, bound, self._policy.posterior_rows(state), state.fit)
            found.update(k_hat=result.k_hat, ess=result.ess)
        if self._arms is not None and recent.size >= LOCK_IN_MIN_DECISIONS:
            fit = state.fit
            static = (bound, _LOCK_IN_DRAWS)
            best = np.asarray(_run_compiled(_best_arm_frequencies, static, lock_key, fit.theta, fit.chol, self._arms))
            counts = np.bincount(recent, minlength=best.size)
            arm = int(np.argmax(counts))
            share, other = counts[arm] / recent.size, 1.0 - float(best[arm])
            found.update(
                lock_in=bool(share > LOCK_IN_SHARE and other > LOCK_IN_OVERLAP),
                dominant_arm=arm,
                dominant_share=float(share),
                other_best_probability=other,
            )
        return found
