"""A bandit whose rewards come from a reward program itself: the problem of the program's own family."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Outcome
from bayesbandit.envs._common import Instance, check_sizes, uniform_arms
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.validation import check_arms, check_scalar

__all__ = ["ProgramBandit"]

_OWNER = "ProgramBandit"
_DEFAULT_K, _DEFAULT_D = 20, 3


@dataclass(frozen=True, init=False, eq=False)
class ProgramBandit:
    """``K`` fixed arms and rewards drawn from a reward program at a true parameter.

    ``reset(key)`` splits ``key`` into an arms key and a parameter key. The arms are the ones given
    (``arms=``: an array, or a function of the arms key), else ``K`` vectors uniform on
    ``[-h, h]^d``; the true parameters ``theta*`` are the ones given (``theta=``), else a draw from
    the program's prior (:meth:`~bayesbandit.inference.BoundModel.sample_prior`: every latent site,
    a noise scale or cut-points included). The mean reward of arm ``i`` is the observed
    distribution's mean at ``x_i`` (:meth:`~bayesbandit.inference.BoundModel.mean_reward`; an
    ordinal reward's expected label), and a reward is a draw from it. The rewards of all ``K`` arms
    of a round come from the round's key and the pulled arm's is returned (common random numbers,
    as in :mod:`bayesbandit.envs.glm`); a discrete reward is returned as the float of its integer.
    The same key gives the same instance.

    The instance's ``theta`` is the flat unconstrained parameter vector of the bound program
    (``p`` values, not ``d``).

    Parameters
    ----------
    model : NumPyro program
        ``model(x, y=None)``, the reward-program contract of :func:`bayesbandit.bind`.
    K, d : int, optional
        Number of arms and feature dimension. Inferred from ``arms`` when it is given (pass them
        only to check it); otherwise 20 and 3.
    half_width : float, > 0
        Features drawn uniform on ``[-half_width, half_width]^d`` (when ``arms`` is not given).
    obs_site : str
        Name of the observed reward site.
    arms : array (K, d) or callable, optional
        The arm features of every instance (an array: a fixed arm set, such as the user's own
        items), or a function ``key -> (K, d) array`` (jittable) drawing each instance's arm set
        from its arms key (columns that are not features, such as a group index or a log
        exposure, cycled or spread as the program needs).
    theta : array (p,), optional
        A fixed true parameter (flat and unconstrained, the layout of
        :meth:`~bayesbandit.inference.BoundModel.unravel`) instead of a prior draw: a world chosen
        by hand, the same in every instance.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import poisson
    >>> env = bb.envs.ProgramBandit(model=poisson(), K=5, d=2)
    >>> s = env.reset(jax.random.PRNGKey(0))
    >>> reward, outcome = env.pull(s, 3, jax.random.PRNGKey(1))
    >>> float(reward) == int(reward), bool(outcome.regret >= 0)
    (True, True)

    One's own arm set and a chosen world:

    >>> import numpy as np
    >>> mine = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> env = bb.envs.ProgramBandit(model=poisson(), arms=mine, theta=np.array([0.2, -0.1]))
    >>> env.K, env.d, np.asarray(env.reset(jax.random.PRNGKey(0)).arms).tolist() == mine.tolist()
    (3, 2, True)
    """

    model: Any
    K: int
    d: int
    half_width: float
    obs_site: str
    arm_features: np.ndarray | Callable[[PRNGKey], Array] | None = field(repr=False)
    theta: np.ndarray | None = field(repr=False)

    fixed_arms: ClassVar[bool] = True

    def __init__(
        self,
        *,
        model: Any,
        K: int | None = None,
        d: int | None = None,
        half_width: float = 1.0,
        obs_site: str = "y",
        arms: ArrayLike | Callable[[PRNGKey], Array] | None = None,
        theta: ArrayLike | None = None,
    ) -> None:
        features = None if arms is None else arms if callable(arms) else _arm_table(arms)
        K, d = _sizes(features, K, d)
        check_scalar(_OWNER, "half_width", half_width, low=0.0, low_open=True, high=float("inf"))
        for name, value in (("model", model), ("K", K), ("d", d), ("half_width", half_width), ("obs_site", obs_site)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "arm_features", features)
        object.__setattr__(self, "theta", None if theta is None else _parameters(theta, self.bound))

    def _identity(self) -> tuple:
        """What the environment is, arrays by value: equal settings share compiled simulations."""
        return (
            self.model,
            self.K,
            self.d,
            self.half_width,
            self.obs_site,
            *(_by_value(value) for value in (self.arm_features, self.theta)),
        )

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._identity() == other._identity()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._identity())

    @property
    def bound(self) -> BoundModel:
        """The program bound to ``d`` features."""
        return bound_for(self.model, (self.d,), obs_site=self.obs_site)

    def reset(self, key: PRNGKey) -> Instance:
        """Draw one instance: arms (K, d), theta* (p,) (given, or from the prior), the arms' means and the best one."""
        key_arms, key_theta = jax.random.split(key)
        if self.arm_features is None:
            arms = uniform_arms(key_arms, self.K, self.d, self.half_width)
        elif callable(self.arm_features):
            arms = jnp.asarray(self.arm_features(key_arms), dtype=float)
        else:
            arms = jnp.asarray(self.arm_features, dtype=float)
        if self.theta is None:
            theta = self.bound.sample_prior(key_theta, arms.dtype)
        else:
            theta = jnp.asarray(self.theta, dtype=arms.dtype)
        means = self.bound.mean_reward(theta, arms)
        return Instance(arms, theta, means, jnp.max(means))

    def arms(self, env_state: Instance, t: ArrayLike = 0) -> Array:
        """The fixed arm set, shape (K, d) (``t`` is ignored)."""
        return env_state.arms

    def pull(self, env_state: Instance, action: Array, key: PRNGKey, t: ArrayLike = 0) -> tuple[Array, Outcome]:
        """A reward of arm ``action`` drawn from the program at ``theta*``, and the round's Outcome."""
        rewards = self.bound.sample_rewards(env_state.theta, env_state.arms, key)
        return rewards[action].astype(env_state.means.dtype), Outcome(env_state.means[action], env_state.best_mean)


def _by_value(value: Any) -> Any:
    """An array as its shape and bytes (hashable, compared by value); anything else as it is."""
    return (value.shape, value.tobytes()) if isinstance(value, np.ndarray) else value


def _arm_table(arms: ArrayLike) -> np.ndarray:
    """The given arm set as a read-only finite float64 array of shape (K, d) (:func:`~bayesbandit.validation.check_arms`)."""
    table = np.array(check_arms(arms, name=f"The 'arms' parameter of {_OWNER}", unchanged=None))
    table.setflags(write=False)
    return table


def _sizes(features: np.ndarray | Callable | None, K: int | None, d: int | None) -> tuple[int, int]:
    """``(K, d)``: from the arms when given (checked against ``K`` and ``d`` when those are given too), else the
    ones passed or the defaults."""
    if features is None:
        K, d = _DEFAULT_K if K is None else K, _DEFAULT_D if d is None else d
        check_sizes(_OWNER, K, d)
        return K, d
    if callable(features):
        try:
            shape = tuple(getattr(jax.eval_shape(features, jax.random.PRNGKey(0)), "shape", ()))
        except Exception as exc:  # the user's function, traced: any error it raises is theirs to see
            raise InvalidInput(
                f"The 'arms' function of {_OWNER} must be jittable, key -> (K, d) array (it draws each instance's "
                f"arms inside the compiled simulation). Tracing it raised {type(exc).__name__}: {exc} Fix: write it "
                "with jax.numpy and jax.random on the key it is given."
            ) from exc
        if len(shape) != 2 or 0 in shape:
            raise InvalidInput(
                f"The 'arms' function of {_OWNER} must return a non-empty (K, d) array for a key. Got shape {shape} "
                "instead. Fix: return one row of features per arm, e.g. jax.random.uniform(key, (K, d))."
            )
    else:
        shape = features.shape
    for name, given, inferred, what in (("K", K, shape[0], "rows (arms)"), ("d", d, shape[1], "columns (features)")):
        if given is not None and given != inferred:
            raise InvalidInput(
                f"The '{name}' parameter of {_OWNER} must match the arms given: they have {inferred} {what} (shape "
                f"{shape}). Got {name}={given!r} instead. Fix: drop {name}= (it is inferred from arms) or pass arms "
                f"of the size you meant."
            )
    return int(shape[0]), int(shape[1])


def _parameters(theta: ArrayLike, bound: BoundModel) -> np.ndarray:
    """The given true parameter as a read-only finite float64 vector of the bound program's flat length."""
    layout = ", ".join(f"'{name}' {block.stop - block.start}" for name, block in bound.site_slices().items())
    try:
        vector = np.array(theta, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"The 'theta' parameter of {_OWNER} must be a numeric vector. Got {type(theta).__name__} instead. "
            "Fix: pass the flat unconstrained parameters (env.bound.sample_prior(key) has the layout)."
        ) from exc
    if vector.shape != (bound.num_params,) or not np.isfinite(vector).all():
        raise InvalidInput(
            f"The 'theta' parameter of {_OWNER} must be a finite vector of the program's {bound.num_params} flat "
            f"unconstrained parameters (sites in order, with sizes: {layout}). Got shape {vector.shape}"
            f"{'' if np.isfinite(vector).all() else ' with non-finite values'} instead. Fix: start from "
            "env.bound.sample_prior(key) and set the values you want (log of a scale for a positive site)."
        )
    vector.setflags(write=False)
    return vector
