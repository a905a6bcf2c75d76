"""The environment contract and the pieces shared by the synthetic environments.

An environment is a frozen dataclass of its settings (hashable, so it can be closed over by a
jitted function) with pure functions::

    env_state = env.reset(key)                          # one problem instance
    arms = env.arms(env_state, t)                       # (K, d) features offered in round t
    reward, means = env.pull(env_state, arm, key, t=t)  # realised reward of ``arm``, and (K,)
                                                        # expected rewards of all arms in round t

``fixed_arms`` says whether ``arms`` is the same in every round (then policies get the arm set
at ``init`` and keep per-arm statistics). ``pull`` takes the round ``t`` as a keyword: fixed-arm
environments ignore it, contextual ones need it to rebuild the round's features.

Common random numbers: ``pull`` draws the rewards of *all* ``K`` arms from ``key`` and returns
the one pulled, so two policies given the same key see the same reward for the same arm
(Bernoulli rewards compare one shared uniform ``u_{t,i}`` with the mean; Gaussian ones add one
shared ``sigma z_{t,i}``). :func:`bayesbandit.simulate` derives that key from (run, round)
only.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple, Protocol

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey

__all__ = ["Env", "Instance", "ContextualInstance", "theta_variance", "uniform_arms"]


class Instance(NamedTuple):
    """A problem instance with a fixed arm set."""

    arms: Array  # (K, d) arm features
    theta: Array  # (d,)  true parameter theta*


class ContextualInstance(NamedTuple):
    """A problem instance whose arm features are redrawn every round."""

    theta: Array  # (d,)  true parameter theta*
    key: PRNGKey  # key from which round t's features are derived (fold_in(key, t))


class Env(Protocol):
    """The pure environment contract (see the module docstring)."""

    fixed_arms: ClassVar[bool]
    K: int
    d: int

    def reset(self, key: PRNGKey): ...

    def arms(self, env_state, t) -> Array: ...

    def pull(self, env_state, arm, key: PRNGKey, *, t=0) -> tuple[Array, Array]: ...


def theta_variance(theta_cov: str | float, d: int) -> float:
    """Per-coordinate variance ``v`` of ``theta* ~ N(0, v I_d)``.

    ``"paper"``: ``3 / d**2`` (Kveton et al. 2020, Section 5.1, as printed), which gives
    ``var(x^T theta*) = d * (1/3) * 3/d^2 = 1/d`` for ``x`` uniform on ``[-1, 1]^d``.
    ``"unit"``: ``3 / d``, which gives ``var(x^T theta*) = 1``, the value the paper's text
    claims. A float is used as ``v`` itself.
    """
    if isinstance(theta_cov, str):
        if theta_cov == "paper":
            return 3.0 / d**2
        if theta_cov == "unit":
            return 3.0 / d
        raise ValueError(f"theta_cov must be 'paper', 'unit' or a positive float; got {theta_cov!r}.")
    if not float(theta_cov) > 0:
        raise ValueError(f"theta_cov must be 'paper', 'unit' or a positive float; got {theta_cov!r}.")
    return float(theta_cov)


def uniform_arms(key: PRNGKey, K: int, d: int) -> Array:
    """``K`` feature vectors uniform on ``[-1, 1]^d``, shape (K, d), float64."""
    return jax.random.uniform(key, (K, d), dtype=jnp.float64, minval=-1.0, maxval=1.0)


def check_sizes(name: str, K: int, d: int) -> None:
    for field, value in (("K", K), ("d", d)):
        if not (isinstance(value, int) and value >= 1):
            raise ValueError(f"The '{field}' parameter of {name} must be an int >= 1. Got {value!r} instead.")


def describe(env) -> str:
    """One-line description of an environment (its class and settings), for result attributes."""
    fields = ", ".join(f"{f.name}={getattr(env, f.name)!r}" for f in dataclasses.fields(env))
    return f"{type(env).__name__}({fields})"
