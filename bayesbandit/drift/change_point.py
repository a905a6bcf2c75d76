"""Change-point restarts over any JAX policy: a test watches the rewards, an alarm restarts the policy.

:class:`ChangePoint` wraps any ``kind = "jax"`` policy. Its state holds the inner policy's state, a
copy of the inner *initial* state and the statistics of a sequential change-point test. After each
``update`` the test sees the new reward(s); when it raises an alarm the inner state is replaced by
the initial copy, so every observation before the alarm gets weight 0. For a Bayesian policy this is
an exact restart of the posterior (the history *is* the state), which is what SMPyBandits'
change-point wrappers cannot do for a Bayesian policy ("cannot work on any Bayesian policy",
``Policies/GLR_UCB.py``).

Streams
-------
The test watches one reward stream per action index since the last restart: on a fixed arm set
(``init(arms)``) one stream per arm (``K * blocks`` lifted indices for a combinatorial policy; each
index of a super arm feeds its own stream), with contextual features (``init(d=...)``) a single
stream of every reward (an index names a different arm every round there). An alarm on any stream
restarts the whole policy (``restart="global"``, SMPyBandits' "Global" option). Per-arm restarts
(its "Local" option) would need to remove one arm's rows from a posterior that couples the arms
through a shared parameter; they are not offered.

Tests
-----
* :class:`GLR`: the generalised likelihood ratio test of Besson, Kaufmann, Maillard and Seznec
  (2020) as in SMPyBandits ``GLR_UCB.py``: for a stream ``y_1..y_n``,

  .. math::  G_n = \\max_{1 \\le s < n}\\; s\\,\\mathrm{kl}(\\hat\\mu_{1:s}, \\hat\\mu_{1:n})
             + (n - s)\\,\\mathrm{kl}(\\hat\\mu_{s+1:n}, \\hat\\mu_{1:n})
             \\;\\ge\\; \\beta(n, \\delta) = \\log(3 n^{3/2} / \\delta),

  with the Bernoulli ``kl`` (``family="bernoulli"``) or the Gaussian one
  ``(x - y)^2 / (2 sigma^2)`` (``family="gaussian"``, sub-Gaussian rewards; ``sigma = 1/2`` bounds any
  reward in ``[0, 1]``). The test runs when a stream's count is a multiple of ``every`` (10, as
  SMPyBandits' lazy detection); every split ``s`` is tried (SMPyBandits tries one in 10, a speed-up
  that prefix sums make unnecessary).
* :class:`CUSUM`: the two-sided CUSUM of Liu, Lee and Shroff (2018, Algorithm 2; SMPyBandits
  ``CUSUM_UCB.py``): ``u_0`` is the mean of a stream's first ``M`` rewards, then
  ``g^+ <- max(0, g^+ + u_0 - y - eps)``, ``g^- <- max(0, g^- + y - u_0 - eps)``, and an alarm when
  either reaches ``h`` (the paper's ``h = log(T / Upsilon_T)``). Recursive, O(1) per stream, checked
  every round.
* :class:`KnownChanges`: an alarm at given rounds (the oracle restart of benchmarks).

Window cap
----------
Under ``jit`` a stream is a fixed-size ring buffer: :class:`GLR` keeps the last ``window`` rewards
of each stream (memory ``O(streams * window)``, work ``O(window)`` per tested stream). While a
stream has at most ``window`` rewards since the restart the statistic is exactly the one above;
after that the splits range over the last ``window`` rewards only (a change older than ``window``
rewards of that stream is no longer seen as a split, the pre-window rewards drop out of the means),
and the threshold keeps the count since the restart, ``beta(n, delta)``, which is larger than the
window's own and so keeps the false-alarm bound. CUSUM keeps four numbers per stream and has no cap.

What a restart drops
--------------------
The alarm is raised on the stream that includes the round's reward, and the restart drops that
reward with the rest (the state becomes the fresh initial one, initial exploration included), as
SMPyBandits' restart empties every history. The update Info reports ``restarted`` (this round) and
``alarms`` (restarts so far), so experiments count detections and false alarms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import xlogy

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Combinatorial, RewardSupport, policy_kind, register_dataclass_node, register_policy
from bayesbandit.drift._wrap import Wrapper
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = [
    "ChangePoint",
    "ChangePointState",
    "ChangePointInfo",
    "GLR",
    "GLRStats",
    "CUSUM",
    "CUSUMStats",
    "KnownChanges",
    "bernoulli_kl",
    "glr_statistic",
    "check_change_points",
]

_KL_EPS = 1e-10  # SMPyBandits' clip of a Bernoulli mean into [eps, 1 - eps]


# ------------------------------------------------------------------------------------------ the tests
def check_change_points(owner: str, change_points: Sequence[int]) -> tuple[int, ...]:
    """``change_points`` as a tuple of increasing positive ints, else InvalidInput naming ``owner``."""
    points = tuple(change_points) if isinstance(change_points, Sequence) else None
    if (
        points is None
        or not points
        or not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in points)
        or list(points) != sorted(set(points))
    ):
        raise InvalidInput(
            f"The 'change_points' parameter of {owner} must be a non-empty increasing sequence of positive ints. "
            f"Got {change_points!r} instead. Fix: pass the rounds at which the rewards change, e.g. (1000, 2000)."
        )
    return points


def bernoulli_kl(x: Array, y: Array) -> Array:
    """``kl(x, y) = x log(x / y) + (1 - x) log((1 - x) / (1 - y))``, with ``0 log 0 = 0`` and ``y`` clipped
    into ``[eps, 1 - eps]`` (``eps = 1e-10``, SMPyBandits' ``klBern``; in float32 the dtype's own epsilon)."""
    eps = max(_KL_EPS, float(jnp.finfo(jnp.result_type(y)).eps))
    x = jnp.clip(x, 0.0, 1.0)
    y = jnp.clip(y, eps, 1.0 - eps)
    return xlogy(x, x) - xlogy(x, y) + xlogy(1.0 - x, 1.0 - x) - xlogy(1.0 - x, 1.0 - y)


def glr_statistic(samples: Array, count: ArrayLike, *, family: str = "bernoulli", sigma: ArrayLike = 0.5) -> Array:
    """The GLR statistic ``G`` of the first ``count`` entries of ``samples`` (chronological order).

    ``G = max_{1 <= s < m} s kl(mean_{1:s}, mean_{1:m}) + (m - s) kl(mean_{s+1:m}, mean_{1:m})``
    over the ``m = count`` samples, from one prefix sum (``O(W)`` for ``W = len(samples)``); 0 when
    ``m < 2``. Jittable, ``count`` may be traced.

    Parameters
    ----------
    samples : array, shape (W,)
    count : int
        How many leading entries are data (at most ``W``).
    family : {"bernoulli", "gaussian"}
        The ``kl``: Bernoulli, or Gaussian of known standard deviation ``sigma``.
    sigma : float
    """
    samples = jnp.asarray(samples)
    width = samples.shape[0]
    m = jnp.minimum(jnp.asarray(count), width)
    position = jnp.arange(1, width + 1)
    data = jnp.where(position <= m, samples, 0.0)
    prefix = jnp.cumsum(data)
    mf = jnp.maximum(m, 1).astype(data.dtype)
    total = jnp.sum(data)
    split = position.astype(data.dtype)  # s: samples before the split
    rest = jnp.maximum(mf - split, 1.0)
    before, after, whole = prefix / split, (total - prefix) / rest, total / mf
    if family == "bernoulli":
        terms = split * bernoulli_kl(before, whole) + (mf - split) * bernoulli_kl(after, whole)
    else:
        scale = 2.0 * jnp.asarray(sigma, data.dtype) ** 2
        terms = (split * (before - whole) ** 2 + (mf - split) * (after - whole) ** 2) / scale
    return jnp.max(jnp.where(position < m, terms, 0.0))


class GLRStats(NamedTuple):
    """Per-stream ring buffers of the GLR test."""

    buffer: Array  # (S, W) the last W rewards of each stream (ring: reward j at j mod W)
    counts: Array  # (S,) int32 rewards of each stream since the last restart


@register_policy(data_fields=["delta", "sigma"])
class GLR:
    """The Bernoulli / sub-Gaussian GLR change-point test (Besson et al. 2020; module docstring).

    Parameters
    ----------
    delta : float in (0, 1)
        Confidence level: ``beta(n, delta) = log(3 n^{3/2} / delta)``. SMPyBandits' tuning for a
        global restart is ``delta = 1 / sqrt(Upsilon_T T)`` (``Upsilon_T`` changes in ``T`` rounds).
    family : {"bernoulli", "gaussian"}
        The ``kl`` of the statistic: Bernoulli (rewards in ``[0, 1]``) or Gaussian with ``sigma``.
    sigma : float, > 0
        Sub-Gaussian scale for ``family="gaussian"`` (``1/2`` bounds rewards in ``[0, 1]``).
    window : int
        Rewards kept per stream (the window cap of the module docstring).
    every : int
        The test runs when a stream's count is a multiple of ``every``.
    """

    _: KW_ONLY
    delta: float = 0.01
    family: str = "bernoulli"
    sigma: float = 0.5
    window: int = 1000
    every: int = 10

    def __post_init__(self) -> None:
        check_scalar("GLR", "delta", self.delta, low=0.0, high=1.0, low_open=True, high_open=True)
        check_choice("GLR", "family", self.family, ("bernoulli", "gaussian"))
        check_scalar("GLR", "sigma", self.sigma, low=0.0, low_open=True, high=math.inf, high_open=True)
        check_int("GLR", "window", self.window, low=2)
        check_int("GLR", "every", self.every, low=1)

    def threshold(self, count: ArrayLike) -> Array:
        """``beta(n, delta) = log(3 n^{3/2} / delta)`` for ``n = count`` rewards."""
        n = jnp.maximum(jnp.asarray(count), 1).astype(jnp.result_type(float))
        return jnp.log(3.0) + 1.5 * jnp.log(n) - jnp.log(self.delta)

    def init(self, num_streams: int, dtype: Any) -> GLRStats:
        """Empty buffers for ``num_streams`` streams."""
        return GLRStats(jnp.zeros((num_streams, self.window), dtype), jnp.zeros(num_streams, jnp.int32))

    def update(self, stats: GLRStats, index: Array, reward: Array, valid: Array) -> tuple[GLRStats, Array, Array]:
        """Add one reward to stream ``index`` (when ``valid``) and test it: ``(stats, alarm, margin)``.

        ``margin`` is ``G_n - beta(n, delta)`` when the stream was tested this round, else ``-inf``.
        """
        width = stats.buffer.shape[1]
        old = stats.counts[index]
        slot = old % width
        value = jnp.where(valid, reward.astype(stats.buffer.dtype), stats.buffer[index, slot])
        buffer = stats.buffer.at[index, slot].set(value)
        n = old + valid.astype(jnp.int32)
        kept = jnp.minimum(n, width)
        chronological = buffer[index][(n - kept + jnp.arange(width)) % width]
        margin = glr_statistic(chronological, kept, family=self.family, sigma=self.sigma) - self.threshold(n)
        tested = valid & (n >= 2) & (n % self.every == 0)
        margin = jnp.where(tested, margin, -jnp.inf)
        return GLRStats(buffer, stats.counts.at[index].set(n)), margin >= 0.0, margin


class CUSUMStats(NamedTuple):
    """Per-stream statistics of the two-sided CUSUM test."""

    counts: Array  # (S,) int32 rewards since the last restart
    head: Array  # (S,) sum of the first M rewards (u_0 = head / M)
    upper: Array  # (S,) g^+ (a fall of the mean)
    lower: Array  # (S,) g^- (a rise of the mean)


@register_policy(data_fields=["epsilon", "h"])
class CUSUM:
    """The two-sided CUSUM test of CUSUM-UCB (Liu, Lee and Shroff 2018, Alg. 2; module docstring).

    Parameters
    ----------
    epsilon : float, >= 0
        Drift correction: changes smaller than about ``epsilon`` are not sought.
    h : float, > 0
        Threshold; the paper's tuning is ``log(T / Upsilon_T)``.
    M : int
        Warm-up: rewards of a stream that estimate ``u_0`` before the test starts (SMPyBandits' 100).
    """

    _: KW_ONLY
    epsilon: float = 0.05
    h: float = 6.9
    M: int = 100

    def __post_init__(self) -> None:
        check_scalar("CUSUM", "epsilon", self.epsilon, low=0.0, high=math.inf, high_open=True)
        check_scalar("CUSUM", "h", self.h, low=0.0, low_open=True, high=math.inf, high_open=True)
        check_int("CUSUM", "M", self.M, low=1)

    def init(self, num_streams: int, dtype: Any) -> CUSUMStats:
        """Zero statistics for ``num_streams`` streams."""
        zeros = jnp.zeros(num_streams, dtype)
        return CUSUMStats(jnp.zeros(num_streams, jnp.int32), zeros, zeros, zeros)

    def update(self, stats: CUSUMStats, index: Array, reward: Array, valid: Array) -> tuple[CUSUMStats, Array, Array]:
        """Add one reward to stream ``index`` (when ``valid``): ``(stats, alarm, margin)``.

        Reward ``k`` of a stream with ``k <= M`` goes into ``u_0``; after that it moves ``g^+`` and
        ``g^-``. ``margin`` is ``max(g^+, g^-) - h`` past the warm-up, else ``-inf``.
        """
        y = reward.astype(stats.head.dtype)
        k = stats.counts[index] + 1
        warm = valid & (k <= self.M)
        live = valid & (k > self.M)
        u0 = stats.head[index] / self.M
        upper = jnp.where(live, jnp.maximum(0.0, stats.upper[index] + u0 - y - self.epsilon), stats.upper[index])
        lower = jnp.where(live, jnp.maximum(0.0, stats.lower[index] + y - u0 - self.epsilon), stats.lower[index])
        new = CUSUMStats(
            stats.counts.at[index].add(valid.astype(jnp.int32)),
            stats.head.at[index].add(jnp.where(warm, y, 0.0)),
            stats.upper.at[index].set(upper),
            stats.lower.at[index].set(lower),
        )
        margin = jnp.where(live, jnp.maximum(upper, lower) - self.h, -jnp.inf)
        return new, margin >= 0.0, margin


@register_policy(data_fields=[])
class KnownChanges:
    """An alarm right after each given round: the oracle restart (the change points are known).

    Parameters
    ----------
    change_points : sequence of int
        The rounds ``t`` (0-based) at which the rewards change; the restart comes at the end of
        round ``t - 1``, so round ``t`` starts from the prior.
    """

    _: KW_ONLY
    change_points: tuple[int, ...] = ()

    per_round: ClassVar[bool] = True  # one update a round, whatever the action's size

    def __post_init__(self) -> None:
        object.__setattr__(self, "change_points", check_change_points("KnownChanges", self.change_points))

    def init(self, num_streams: int, dtype: Any) -> Array:
        """The round counter."""
        return jnp.asarray(0, jnp.int32)

    def update(self, stats: Array, index: Array, reward: Array, valid: Array) -> tuple[Array, Array, Array]:
        """Count the round: ``(rounds, alarm, margin)``, the alarm when the next round is a change point."""
        t = stats + 1
        alarm = jnp.any(t == jnp.asarray(self.change_points, jnp.int32))
        return t, alarm, jnp.where(alarm, 0.0, -jnp.inf)

    def reset(self, stats: Array) -> Array:
        """The counter runs on through restarts (rounds are global)."""
        return stats


# ------------------------------------------------------------------------------------------ the wrapper
class ChangePointState(NamedTuple):
    """State of :class:`ChangePoint`."""

    inner: Any  # the wrapped policy's state
    initial: Any  # the wrapped policy's initial state (what a restart returns to)
    stats: Any  # the test's statistics
    alarms: Array  # () int32 restarts so far


class ChangePointInfo(NamedTuple):
    """What :meth:`ChangePoint.update` reports; any other field is read from the inner update's Info
    (``info.recorded``, ``info.solver``, ...), so the inner policy's words for a failed update apply."""

    converged: Array  # () bool: the inner update's
    restarted: Array  # () bool: the test raised an alarm and the policy restarted this round
    alarms: Array  # () int32 restarts so far
    statistic: Array  # () the test's margin this round (statistic minus threshold; -inf when untested)
    inner: Any  # the inner update's Info

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)


@dataclass(frozen=True)
class ChangePoint(Wrapper):
    """Restart any JAX policy when a change-point test fires (module docstring).

    ``select`` is the wrapped policy's on the state since the last restart; the wrapper has the
    wrapped policy's capabilities (combinatorial, model-based with the rows since the last
    restart, buffered, exact law; ``bayesbandit.drift._wrap``).

    Parameters
    ----------
    policy : policy
        A ``kind = "jax"`` policy.
    test : GLR, CUSUM or KnownChanges
        A pytree leaf with the wrapped policy's numbers (``delta``, ``epsilon``, ``h``).
    restart : {"global"}
        An alarm on any stream restarts the whole policy.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.drift import ChangePoint, GLR
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> policy = ChangePoint(bb.GLMTSL(logistic(), a=1.0), test=GLR(delta=0.01))
    >>> arms = jnp.eye(3)
    >>> state = policy.init(arms)
    >>> action, _ = policy.select(state, arms, jax.random.PRNGKey(0))
    >>> state, info = policy.update(state, arms, action, 1.0)
    >>> bool(info.restarted), int(info.alarms)
    (False, 0)
    """

    kind: ClassVar[Literal["jax"]] = "jax"
    data_fields: ClassVar[tuple[str, ...]] = ("policy", "test")
    _public: ClassVar[bool] = True

    policy: Any
    _: KW_ONLY
    test: Any = field(default_factory=GLR)
    restart: str = "global"

    def __post_init__(self) -> None:
        if policy_kind(self.policy) != "jax":
            raise InvalidInput(
                f"The 'policy' parameter of ChangePoint must be a JAX policy (kind 'jax'). Got "
                f"{type(self.policy).__name__} (kind 'host'). Fix: wrap a jittable policy such as bayesbandit.GLMTSL."
            )
        if not all(callable(getattr(self.test, m, None)) for m in ("init", "update")):
            raise InvalidInput(
                f"The 'test' parameter of ChangePoint must be a change-point test (GLR, CUSUM, KnownChanges). Got "
                f"{type(self.test).__name__}. Fix: pass test=bayesbandit.drift.GLR(delta=0.01)."
            )
        check_choice("ChangePoint", "restart", self.restart, ("global",))

    def inner(self, state: ChangePointState) -> Any:
        """The wrapped policy's state."""
        return state.inner

    def with_inner(self, state: ChangePointState, inner: Any) -> ChangePointState:
        """``state`` with the wrapped state ``inner``; a grown row buffer grows the initial copy to match."""
        initial = state.initial
        if jax.tree.map(jnp.shape, initial) != jax.tree.map(jnp.shape, inner):
            initial = self.policy.reserve(initial, self.policy.capacity(inner) - self.policy.filled(initial))
        return state._replace(inner=inner, initial=initial)

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> ChangePointState:
        """The wrapped policy's initial state (kept twice: one copy is what a restart returns to) and
        empty test statistics: one stream per action index on a fixed arm set, one otherwise."""
        inner = self.policy.init(arms, d=d, capacity=capacity, key=key)
        streams = 1
        if arms is not None:
            streams = int(jnp.shape(arms)[0]) * (self.policy.blocks if isinstance(self.policy, Combinatorial) else 1)
        stats = self.test.init(streams, jnp.result_type(float))
        return ChangePointState(inner, inner, stats, jnp.asarray(0, jnp.int32))

    def select(self, state: ChangePointState, arms: Any, key: PRNGKey) -> tuple[Any, Any]:
        """The wrapped policy's choice and Info."""
        return self.policy.select(state.inner, arms, key)

    def update(
        self, state: ChangePointState, arms: Any, action: Any, feedback: Any
    ) -> tuple[ChangePointState, ChangePointInfo]:
        """Update the wrapped policy, feed the reward(s) to the test, restart on an alarm."""
        inner, info = self.policy.update(state.inner, arms, action, feedback)
        stats, alarm, margin = _feed(self.test, state.stats, action, feedback)
        fresh = self.test.reset(stats) if hasattr(self.test, "reset") else jax.tree.map(jnp.zeros_like, stats)
        inner = jax.tree.map(lambda start, now: jnp.where(alarm, start, now), state.initial, inner)
        stats = jax.tree.map(lambda start, now: jnp.where(alarm, start, now), fresh, stats)
        alarms = state.alarms + alarm.astype(jnp.int32)
        new = ChangePointState(inner, state.initial, stats, alarms)
        return new, ChangePointInfo(jnp.asarray(info.converged), alarm, alarms, jnp.asarray(margin), info)

    def reward_support(self, d: int) -> RewardSupport:
        """The wrapped policy's."""
        return self.policy.reward_support(d)


register_dataclass_node(ChangePoint, list(ChangePoint.data_fields), ["restart"])


def _feed(test: Any, stats: Any, action: Any, feedback: Any) -> tuple[Any, Array, Array]:
    """Feed each index of the action and its reward to the test, in order: ``(stats, any alarm, largest margin)``.

    The stream of an index is the index itself with one stream per action index, else stream 0; an
    index outside the streams (which the inner update does not record either) feeds nothing.
    """
    leaves = [x for x in jax.tree.leaves(stats) if jnp.ndim(x) >= 1]
    num_streams = int(leaves[0].shape[0]) if leaves else 1
    action = jnp.reshape(jnp.asarray(action), (-1,))
    rewards = jnp.reshape(jnp.asarray(feedback), (-1,))
    if num_streams > 1:
        valid, index = (action >= 0) & (action < num_streams), jnp.clip(action, 0, num_streams - 1)
    else:
        valid, index = jnp.ones(action.shape, bool), jnp.zeros(action.shape, jnp.int32)
    if action.shape[0] == 1 or getattr(test, "per_round", False):
        return test.update(stats, index[0].astype(jnp.int32), rewards[0], valid[0])

    def one(stats: Any, pick: tuple) -> tuple:
        stats, alarm, margin = test.update(stats, *pick)
        return stats, (alarm, margin)

    flags: tuple[Array, Array]
    stats, flags = jax.lax.scan(one, stats, (index.astype(jnp.int32), rewards, valid))
    return stats, jnp.any(flags[0]), jnp.max(flags[1])
