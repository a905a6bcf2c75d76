"""Environments whose rewards change over time: abrupt change points, and continuous drift.

Both wrap any JAX environment of :mod:`bayesbandit.envs` and keep its contract (``reset``, ``arms``,
``pull``); the round's instance is chosen from ``t``, which every environment receives, and the
wrapped environment's own oracle scores the round, so ``Outcome.best_expected_reward`` is exact at
every ``t``.

* :class:`PiecewiseStationary`: segment ``i`` (rounds ``c_i <= t < c_{i+1}``, ``c_0 = 0``) uses its own
  independently drawn problem instance (``env.reset(fold_in(key, i))``), or the instance of the
  ``i``-th of several given environments (:meth:`PiecewiseStationary.from_envs`). An environment
  with the :class:`~bayesbandit.contract.Parametric` capability keeps segment 0's instance (its
  arms, its feature stream) and takes only the parameter of segment ``i``'s draw: ``theta*`` is
  redrawn, the arms stay, and a fixed arm set stays fixed. Any other environment switches whole
  instances, so its arms may change at a change point (``fixed_arms`` is then ``False``).
* :class:`Drifting`: the parameter of a :class:`~bayesbandit.contract.Parametric` environment moves
  every ``interval`` rounds: a Gaussian random walk (``kind="random_walk"``) or a periodic
  oscillation between two draws (``kind="periodic"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome, Parametric
from bayesbandit.drift.change_point import check_change_points
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_choice, check_int, check_scalar

__all__ = ["PiecewiseStationary", "PiecewiseState", "Drifting", "DriftState"]


def _check_env(owner: str, env: Any) -> None:
    missing = [m for m in ("reset", "arms", "pull") if not callable(getattr(env, m, None))]
    if missing or getattr(env, "kind", "jax") == "host" or callable(getattr(env, "changes", None)):
        raise InvalidInput(
            f"The 'env' parameter of {owner} must be a JAX environment (reset, arms, pull). Got {type(env).__name__}. "
            "Fix: pass one from bayesbandit.envs (catalogue environments are host-side and cannot be wrapped)."
        )


class PiecewiseState(NamedTuple):
    """State of :class:`PiecewiseStationary`."""

    base: Any  # segment 0's instance (parameter mode), or None
    segments: Any  # (S, ...) stacked parameters (parameter mode), or the S stacked instances


class _Wrapped:
    """What an environment wrapper reports of the environment it wraps: arms per round and their dimension."""

    env: Any

    @property
    def K(self) -> int:
        """Arms per round."""
        return int(self.env.K)

    @property
    def d(self) -> int:
        """Feature dimension."""
        return int(self.env.d)


@dataclass(frozen=True)
class PiecewiseStationary(_Wrapped):
    """An environment that switches problem instance at given rounds (module docstring).

    Parameters
    ----------
    env : environment
        Any JAX environment.
    change_points : sequence of int
        Increasing rounds ``c_1 < ... < c_m``: round ``t`` is in segment
        ``searchsorted(change_points, t, side="right")``.
    envs : tuple of environments, optional
        Set by :meth:`from_envs`: one environment per segment, of one class.

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.envs import BernoulliBandit
    >>> from bayesbandit.drift import PiecewiseStationary
    >>> env = PiecewiseStationary.from_envs(
    ...     (BernoulliBandit(means=(0.3, 0.9)), BernoulliBandit(means=(0.7, 0.1))), change_points=(100,))
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> [round(float(env.pull(s, 0, jax.random.PRNGKey(1), t)[1].regret), 6) for t in (99, 100)]
    [0.6, 0.0]
    """

    env: Any
    change_points: tuple[int, ...]
    _: KW_ONLY
    envs: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        _check_env("PiecewiseStationary", self.env)
        object.__setattr__(self, "change_points", check_change_points("PiecewiseStationary", self.change_points))
        if self.envs is None:
            return
        envs = tuple(self.envs)
        if len(envs) != len(self.change_points) + 1:
            raise InvalidInput(
                f"The 'envs' parameter of PiecewiseStationary must hold one environment per segment "
                f"({len(self.change_points) + 1} for {len(self.change_points)} change points). Got {len(envs)}. "
                "Fix: pass len(change_points) + 1 environments."
            )
        shapes = {(type(e), e.K, e.d) for e in envs}
        if len(shapes) != 1 or type(envs[0]) is not type(self.env):
            raise InvalidInput(
                "The 'envs' parameter of PiecewiseStationary must hold environments of one class with the same K "
                f"and d. Got {sorted(f'{t.__name__}(K={k}, d={d})' for t, k, d in shapes)}. Fix: build every "
                "segment's environment from the same class and sizes."
            )
        structure = {str(jax.eval_shape(e.reset, jax.random.PRNGKey(0))) for e in envs}
        if len(structure) != 1:
            raise InvalidInput(
                "The 'envs' parameter of PiecewiseStationary must hold environments whose instances have one "
                f"layout. Got {len(structure)} layouts. Fix: give every segment the same settings but its parameter."
            )
        object.__setattr__(self, "envs", envs)

    @classmethod
    def from_envs(cls, envs: Sequence[Any], change_points: Sequence[int]) -> PiecewiseStationary:
        """Segment ``i`` draws its instance from ``envs[i]`` (one class, same ``K`` and ``d``), e.g. Bernoulli
        bandits with given means."""
        if not isinstance(envs, Sequence) or not envs:
            raise InvalidInput(
                f"The 'envs' parameter of PiecewiseStationary.from_envs must be a non-empty sequence of environments. "
                f"Got {envs!r} instead. Fix: pass one environment per segment."
            )
        return cls(envs[0], tuple(change_points), envs=tuple(envs))

    @property
    def parametric(self) -> bool:
        """Whether segments share segment 0's instance and differ in its parameter only."""
        return isinstance(self.env, Parametric)

    @property
    def fixed_arms(self) -> bool:  # type: ignore[override]
        """The wrapped environment's, when only the parameter changes; else ``False``."""
        return bool(self.env.fixed_arms) and self.parametric

    @property
    def num_segments(self) -> int:
        """Number of segments, ``len(change_points) + 1``."""
        return len(self.change_points) + 1

    def segment(self, t: ArrayLike) -> Array:
        """The segment of round ``t``."""
        return jnp.searchsorted(jnp.asarray(self.change_points), jnp.asarray(t), side="right")

    def reset(self, key: PRNGKey) -> PiecewiseState:
        """Every segment's instance, from ``fold_in(key, i)`` for segment ``i``."""
        envs = self.envs or (self.env,) * self.num_segments
        instances = [e.reset(jax.random.fold_in(key, i)) for i, e in enumerate(envs)]
        if self.parametric:
            return PiecewiseState(instances[0], jnp.stack([self.env.parameter(s) for s in instances]))
        return PiecewiseState(None, jax.tree.map(lambda *xs: jnp.stack(xs), *instances))

    def instance(self, env_state: PiecewiseState, t: ArrayLike) -> Any:
        """The wrapped environment's instance in round ``t``."""
        i = self.segment(t)
        if self.parametric:
            return self.env.with_parameter(env_state.base, env_state.segments[i])
        return jax.tree.map(lambda x: x[i], env_state.segments)

    def arms(self, env_state: PiecewiseState, t: ArrayLike) -> Array:
        """Round ``t``'s arms (those of its segment's instance)."""
        return self.env.arms(self.instance(env_state, t), t)

    def pull(self, env_state: PiecewiseState, action: Array, key: PRNGKey, t: ArrayLike) -> tuple[Array, Outcome]:
        """The segment's reward and Outcome (its own oracle)."""
        return self.env.pull(self.instance(env_state, t), action, key, t)


class DriftState(NamedTuple):
    """State of :class:`Drifting`."""

    base: Any  # the wrapped environment's instance at t = 0
    path: Array  # random walk: (steps, ...) the parameter at each step; periodic: (2, ...) the two ends


@dataclass(frozen=True)
class Drifting(_Wrapped):
    """An environment whose parameter drifts continuously (module docstring).

    The parameter in round ``t`` is that of step ``j = floor(t / interval)``:

    * ``kind="random_walk"``: ``p_j = p_0 + scale * sum_{i <= j} z_i`` with ``z_i ~ N(0, I)``, the path
      drawn in ``reset`` for ``ceil(horizon / interval)`` steps (rounds past the horizon keep the last
      step's parameter). The wrapped environment maps the parameter to valid means (a Bernoulli
      bandit clips its means into ``[0, 1]``, the clustered bandit normalises ``theta*``).
    * ``kind="periodic"``: ``p_j = (1 - w) p_a + w p_b`` with ``w = (1 - cos(2 pi j interval / period)) / 2``
      between the instance's own parameter ``p_a`` and a second draw ``p_b`` (``env.reset`` from a second
      key): it goes from ``p_a`` to ``p_b`` and back every ``period`` rounds.

    Parameters
    ----------
    env : environment
        A :class:`~bayesbandit.contract.Parametric` environment.
    kind : {"random_walk", "periodic"}
    scale : float, > 0
        Standard deviation of a random-walk step, per coordinate.
    period : int
        Rounds of one periodic cycle.
    interval : int
        Rounds between parameter steps.
    horizon : int, optional
        Rounds the random walk covers (required for it).

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.envs import LogisticBandit
    >>> from bayesbandit.drift import Drifting
    >>> env = Drifting(LogisticBandit(K=5, d=2), kind="periodic", period=100)
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> bool((env.instance(s, 0).theta == env.instance(s, 100).theta).all())
    True
    """

    env: Any
    _: KW_ONLY
    kind: str = "random_walk"
    scale: float = 0.05
    period: int = 1000
    interval: int = 1
    horizon: int | None = None

    def __post_init__(self) -> None:
        _check_env("Drifting", self.env)
        if not isinstance(self.env, Parametric):
            raise InvalidInput(
                f"The 'env' parameter of Drifting must expose its parameter (parameter / with_parameter, the "
                f"Parametric capability of bayesbandit.contract). Got {type(self.env).__name__}, which does not. "
                "Fix: use a Parametric environment (the GLM, contextual logistic, clustered or Bernoulli bandits) "
                "or PiecewiseStationary, which needs no capability."
            )
        check_choice("Drifting", "kind", self.kind, ("random_walk", "periodic"))
        check_scalar("Drifting", "scale", self.scale, low=0.0, low_open=True, high=math.inf, high_open=True)
        check_int("Drifting", "period", self.period, low=2)
        check_int("Drifting", "interval", self.interval, low=1)
        if self.kind == "random_walk":
            if self.horizon is None:
                raise InvalidInput(
                    "The 'horizon' parameter of Drifting is required with kind='random_walk' (the path is drawn in "
                    "reset). Got None. Fix: pass horizon= the rounds of the run."
                )
            check_int("Drifting", "horizon", self.horizon, low=1)

    @property
    def fixed_arms(self) -> bool:  # type: ignore[override]
        """The wrapped environment's."""
        return bool(self.env.fixed_arms)

    @property
    def steps(self) -> int:
        """Parameter steps the random walk's path holds."""
        return -(-(self.horizon or 1) // self.interval)

    def reset(self, key: PRNGKey) -> DriftState:
        """The instance and its parameter path (module docstring)."""
        key_env, key_drift = jax.random.split(key)
        base = self.env.reset(key_env)
        start = self.env.parameter(base)
        if self.kind == "periodic":
            other = self.env.parameter(self.env.reset(key_drift))
            return DriftState(base, jnp.stack([start, other]))
        steps = jax.random.normal(key_drift, (self.steps - 1, *start.shape), dtype=start.dtype)
        walk = start + self.scale * jnp.cumsum(steps, axis=0)
        return DriftState(base, jnp.concatenate([start[None], walk]))

    def parameter_at(self, env_state: DriftState, t: ArrayLike) -> Array:
        """The parameter in round ``t`` (before the wrapped environment maps it to valid means)."""
        j = jnp.asarray(t) // self.interval
        if self.kind == "periodic":
            w = (1.0 - jnp.cos(2.0 * jnp.pi * (j * self.interval) / self.period)) / 2.0
            return (1.0 - w) * env_state.path[0] + w * env_state.path[1]
        return env_state.path[jnp.minimum(j, env_state.path.shape[0] - 1)]

    def instance(self, env_state: DriftState, t: ArrayLike) -> Any:
        """The wrapped environment's instance in round ``t``: means and best mean recomputed."""
        return self.env.with_parameter(env_state.base, self.parameter_at(env_state, t))

    def arms(self, env_state: DriftState, t: ArrayLike) -> Array:
        """Round ``t``'s arms."""
        return self.env.arms(self.instance(env_state, t), t)

    def pull(self, env_state: DriftState, action: Array, key: PRNGKey, t: ArrayLike) -> tuple[Array, Outcome]:
        """Round ``t``'s reward and Outcome (the wrapped environment's oracle on the current parameter)."""
        return self.env.pull(self.instance(env_state, t), action, key, t)
