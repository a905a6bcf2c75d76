"""The contracts every bandit family implements: policies, environments, and what a round reports.

Policies
--------
A policy is a frozen dataclass of hyper-parameters (keyword-only) with three functions over a
state (Optax / BlackJAX style)::

    state = policy.init(arms)                        # a fixed arm set, shape (K, d)
    state = policy.init(d=d, capacity=n)             # contextual: this round's arms come with select
    action, info = policy.select(state, arms, key)   # pure; info reports, never feeds back
    state, info = policy.update(state, arms, action, feedback)

* ``arms`` is the round's arm set: the fixed one again, or this round's features, shape (K, d).
* ``action`` is an arm index (shape ``()``), or an index vector for a k-subset (shape ``(k,)``).
* ``feedback`` is the reward of the action, or a vector of per-arm rewards for a k-subset
  (semi-bandit feedback), with the action's shape.
* ``init`` takes an optional ``key``: policies that draw their initial parameters use it, the
  others ignore it.

``update`` returns ``(state, info)``, as BlackJAX's ``step`` does: the work done there (a Newton
solve, an optimiser step) reports its own convergence in the round it happened, and the state
never has to carry diagnostics. Each policy has its own select and update Info NamedTuples; the
one field they all share, ``converged`` (a boolean scalar: the computation behind this info
finished without a numerical failure), is all that the runners read.

Two kinds, declared by the class attribute ``kind``:

* ``"jax"`` (:class:`Policy`): state is a pytree and the three functions are pure and jittable,
  so whole experiments ``jit``, ``vmap`` over runs and ``scan`` over rounds.
* ``"host"`` (:class:`HostPolicy`): the same three functions with a state that lives on the host
  (an index over a large catalogue); the runners call them from Python, one run at a time.

Optional capabilities are protocols of their own, checked with ``isinstance``:
:class:`ModelBased` (a policy acting on a reward program, whose posterior the diagnostics can
compare with NUTS), :class:`Buffered` (a state whose row buffer grows outside ``jit``),
:class:`Combinatorial` (an action that is a super arm over ``blocks`` copies of the arms),
:class:`Catalogued` (arms that are item ids, added and removed while running) and
:class:`HostState` (a host state that a checkpoint can hold).

Environments
------------
An environment is a frozen dataclass of settings with pure functions::

    env_state = env.reset(key)                                # one problem instance
    arms = env.arms(env_state, t)                             # round t's arm set
    feedback, outcome = env.pull(env_state, action, key, t)   # what the policy observes, and
                                                              # the Outcome the runner scores

The environment owns its oracle: :class:`Outcome` carries the expected reward of the action
taken and of the best action this round (a precomputed best arm, a top-k, a per-block top-k),
so no runner does work per round that grows with the number of arms.

A catalogue environment (:class:`CatalogueEnv`) is host-side: its arms have ids and arrive and
leave while running; ``changes(env_state, t)`` replaces ``arms``, and the round hands each
change to the policy's ``add_arms`` / ``remove_arms``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, Literal, NamedTuple, Protocol, TypeVar, dataclass_transform, runtime_checkable

import jax

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.errors import InvalidInput

__all__ = [
    "Info",
    "Outcome",
    "RewardSupport",
    "Policy",
    "HostPolicy",
    "ModelBased",
    "Buffered",
    "Combinatorial",
    "Explains",
    "ExactLaw",
    "Discounts",
    "Forgets",
    "HostState",
    "Catalogued",
    "Env",
    "Parametric",
    "CatalogueEnv",
    "register_policy",
    "register_dataclass_node",
    "policy_kind",
    "ExploresFirst",
]


_T = TypeVar("_T", bound=type)


class Info(Protocol):
    """What every select and update Info shares: the only field runners read."""

    converged: Array  # () bool: the computation behind this info finished without numerical failure


class Outcome(NamedTuple):
    """What a round is scored on, computed by the environment's own oracle."""

    expected_reward: Array  # () expected reward of the action taken (sum over a k-subset)
    best_expected_reward: Array  # () expected reward of the best action this round

    @property
    def regret(self) -> Array:
        """Expected regret of the round, ``best_expected_reward - expected_reward``."""
        return self.best_expected_reward - self.expected_reward


class RewardSupport(NamedTuple):
    """Where a policy's rewards may lie, for validation at the public boundary."""

    constraint: Any  # a numpyro constraint (``.check(value) -> bool array``), or None for any real
    description: str  # e.g. "Bernoulli: {0, 1}", for messages


class _Methods(Protocol):
    """The four methods both kinds of policy have (see the module docstring)."""

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> Any: ...

    def select(self, state: Any, arms: Any, key: PRNGKey) -> tuple[Any, Info]: ...

    def update(self, state: Any, arms: Any, action: Any, feedback: Any) -> tuple[Any, Info]: ...

    def reward_support(self, d: int) -> RewardSupport: ...


class Policy(_Methods, Protocol):
    """A jittable policy: state is a pytree, the methods are pure (``jit``, ``vmap``, ``scan``)."""

    kind: ClassVar[Literal["jax"]]


class HostPolicy(_Methods, Protocol):
    """A host-side policy: the same methods over a host state, called from Python."""

    kind: ClassVar[Literal["host"]]


@runtime_checkable
class ModelBased(Protocol):
    """A policy acting on a NumPyro reward program.

    ``bound(d)`` is the program bound to ``d`` features; ``posterior_rows(state)`` the weighted
    rows ``(x, y, w)`` its posterior is built from (per-arm counts and mean rewards, or a row
    buffer), so :func:`bayesbandit.diagnostics.along_run` can fit NUTS to the same history;
    ``check_program(d)`` raises a ``ModelSpecError`` for a program the policy cannot follow (no
    joint mode), and runs on the host before anything is compiled.
    """

    model: Any

    def bound(self, d: int) -> Any: ...

    def check_program(self, d: int) -> None: ...

    def posterior_rows(self, state: Any) -> tuple[Array, Array, Array]: ...


@runtime_checkable
class Explains(Protocol):
    """A policy that says in plain words why an update did not converge (``Agent`` warns with it)."""

    def explain_update(self, info: Any, d: int) -> str: ...


@runtime_checkable
class ExactLaw(Protocol):
    """A policy that states the law of its choice: ``action_probabilities(state, arms)`` is the
    probability of each of the ``K`` arms under ``select(state, arms, key)`` over ``key`` (shape
    ``(K,)``, jittable). Propensities of the others are Monte Carlo (:mod:`bayesbandit.propensities`)."""

    def action_probabilities(self, state: Any, arms: Array) -> Array: ...


@runtime_checkable
class ExploresFirst(Protocol):
    """A policy whose first rounds follow a reward-blind exploration rule (Kveton et al. 2020, Section 5.1).

    ``initial_exploration(d)`` is ``(rule, rounds)``: for the first ``rounds`` rounds the policy
    pulls by ``rule``, ``"design"`` (the arm with the largest component outside the span of the
    pulls so far: on a fixed arm set the state's ``explore_order``) or ``"uniform"`` (an arm drawn
    uniformly). ``without_initial_exploration()`` is the same policy with none. A policy counts its
    rounds in rewards (``state.t``); an :class:`~bayesbandit.Agent` serving concurrent requests
    counts them in decisions instead and runs the policy without its own
    (``bayesbandit/agent/_explore.py``), so decisions made before their rewards arrive spread
    over the design.
    """

    def initial_exploration(self, d: int) -> tuple[Literal["design", "uniform"], int]: ...

    def without_initial_exploration(self) -> Any: ...


@runtime_checkable
class Discounts(Protocol):
    """A policy whose posterior can forget geometrically: the capability behind discounting.

    ``discount(state, gamma, refit=True)`` multiplies the weight of every observation so far by
    ``gamma`` in ``(0, 1]`` and leaves the prior's weight alone, so the precision never falls
    below the prior's (the stabilised rule, ``Lambda <- gamma Lambda + (1 - gamma) Lambda_0``
    where the state keeps no rows). ``refit=False`` leaves the point estimate for the next
    ``update`` to refresh (what :class:`bayesbandit.drift.Discounted` does: it updates right
    after). Jittable; ``gamma = 1`` returns an equal state.
    """

    def discount(self, state: Any, gamma: ArrayLike, *, refit: bool = True) -> Any: ...


@runtime_checkable
class Forgets(Protocol):
    """A policy that can remove one earlier observation: the capability behind a sliding window.

    ``forget(state, arms, action, feedback, refit=True)`` is the inverse of ``update``'s data term
    for that observation (the same ``arms``, ``action`` and ``feedback`` ``update`` was given):
    the posterior becomes the one the other observations alone give. Jittable.
    """

    def forget(self, state: Any, arms: Any, action: Any, feedback: Any, *, refit: bool = True) -> Any: ...


@runtime_checkable
class Buffered(Protocol):
    """A policy whose state keeps a fixed-capacity row buffer that grows outside ``jit``."""

    def capacity(self, state: Any) -> int | None: ...

    def filled(self, state: Any) -> int: ...

    def reserve(self, state: Any, num_rows: int) -> Any: ...


@runtime_checkable
class Combinatorial(Protocol):
    """A policy whose action is a super arm: lifted indices ``j K + i`` into ``blocks`` copies of the ``K`` arms.

    ``check_arms(K)`` raises :class:`~bayesbandit.errors.InvalidInput` when its oracle cannot fill
    a super arm from ``K`` arms (``k > K``, or ``blocks * k > K`` for an exclusive assignment);
    ``action_shape`` is ``(blocks * k,)``.
    """

    blocks: int

    @property
    def action_shape(self) -> tuple[int, ...]: ...

    def check_arms(self, num_arms: int) -> None: ...


@runtime_checkable
class HostState(Protocol):
    """A host policy whose state an :class:`~bayesbandit.Agent` checkpoint holds.

    ``state_parts(state)`` is the whole state as JSON-serialisable meta and numeric arrays (an
    index included, as its :meth:`~bayesbandit.index.MIPSIndex.parts`); ``state_from_parts(meta,
    arrays)`` rebuilds a state that continues exactly as the original would.
    """

    def state_parts(self, state: Any) -> tuple[dict[str, Any], list[Any]]: ...

    def state_from_parts(self, meta: dict[str, Any], arrays: list[Any]) -> Any: ...


@runtime_checkable
class Catalogued(Protocol):
    """A policy over a catalogue: arms are item ids that come and go while it runs.

    ``select`` returns an item id (the arm set lives in the state, ``arms`` is ``None``);
    ``add_arms(state, ids, features)`` and ``remove_arms(state, ids)`` validate before changing
    anything; ``held(state, ids)`` says which ids are in the catalogue now.
    """

    def add_arms(self, state: Any, ids: Any, features: Any) -> Any: ...

    def remove_arms(self, state: Any, ids: Any) -> Any: ...

    def held(self, state: Any, ids: Any) -> Any: ...


class Env(Protocol):
    """The environment contract (see the module docstring)."""

    fixed_arms: ClassVar[bool]  # whether ``arms`` is the same in every round
    K: int  # arms per round
    d: int  # feature dimension

    def reset(self, key: PRNGKey) -> Any: ...

    def arms(self, env_state: Any, t: ArrayLike) -> Array: ...

    def pull(self, env_state: Any, action: Array, key: PRNGKey, t: ArrayLike) -> tuple[Array, Outcome]: ...


@runtime_checkable
class Parametric(Protocol):
    """An environment whose instance has a parameter that can be moved: the capability behind drift.

    ``parameter(env_state)`` is the instance's parameter (``theta*``, or a Bernoulli bandit's
    means), an array; ``with_parameter(env_state, p)`` the same instance (arms, feature stream)
    with parameter ``p``, its means and best expected reward recomputed, so the oracle stays
    exact. Both jittable. :class:`bayesbandit.drift.Drifting` and
    :class:`bayesbandit.drift.PiecewiseStationary` move it.
    """

    def parameter(self, env_state: Any) -> Array: ...

    def with_parameter(self, env_state: Any, parameter: Array) -> Any: ...


class CatalogueEnv(Protocol):
    """A catalogue environment: arms with ids that arrive and leave while running (host side).

    ``reset(seed, run)`` draws run ``run``'s problem, a host object (the initial catalogue, every
    change, the reward noise); the same pair gives the same problem. ``initial(env_state)`` is
    the catalogue live at round 0 (``policy.init`` builds its index over it);
    ``changes(env_state, t)`` the arrivals and departures at the start of round ``t`` (or
    ``None``), which the round hands to the policy's ``remove_arms`` / ``add_arms`` before it
    selects; ``pull(env_state, item, key, t)`` the reward of arm id ``item`` and the round's
    :class:`Outcome` against the best live arm.
    """

    horizon: int  # rounds of a run

    def reset(self, seed: int, run: int) -> Any: ...

    def initial(self, env_state: Any) -> Any: ...

    def changes(self, env_state: Any, t: int) -> Any: ...

    def pull(self, env_state: Any, action: Any, key: Any, t: int) -> tuple[Any, Outcome]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def register_policy(data_fields: list[str]) -> Callable[[_T], _T]:
    """Class decorator: a frozen dataclass registered as a pytree with ``data_fields`` as leaves.

    Numeric hyper-parameters are leaves, so a sweep over them is one ``vmap`` and policies that
    differ only in numbers share one compiled program; everything else (the model, the solver,
    iteration caps) is static.
    """

    def wrap(cls: _T) -> _T:
        made: Any = dataclasses.dataclass(frozen=True)(cls)
        meta = [f.name for f in dataclasses.fields(made) if f.name not in data_fields]
        return register_dataclass_node(made, data_fields, meta)

    return wrap


def register_dataclass_node(cls: _T, data_fields: list[str], meta_fields: list[str]) -> _T:
    """Register the dataclass ``cls`` as a pytree node: ``data_fields`` are children, ``meta_fields`` static.

    What :func:`jax.tree_util.register_dataclass` does, with one difference that matters to every
    cache keyed on a tree structure: the structures of two classes with the same fields compare
    unequal. With ``register_dataclass`` (JAX 0.10) they compare equal while their hashes differ,
    so a ``jit`` cache could, when two hashes land in one bucket, serve one policy class the
    program traced for another (GLM-TSL's initial state, without the design matrix GLM-UCB
    needs); ``tests/test_api.py`` checks the structures differ. Unflattening calls ``cls(**fields)``,
    as ``register_dataclass`` does.
    """
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(obj: Any) -> tuple[tuple[tuple[Any, Any], ...], tuple[Any, ...]]:
        children = tuple((jax.tree_util.GetAttrKey(name), getattr(obj, name)) for name in data)
        return children, tuple(getattr(obj, name) for name in meta)

    def flatten(obj: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return tuple(getattr(obj, name) for name in data), tuple(getattr(obj, name) for name in meta)

    def unflatten(aux: tuple[Any, ...], children: Any) -> Any:
        return cls(**dict(zip(data, children, strict=True)), **dict(zip(meta, aux, strict=True)))  # type: ignore[operator]

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    return cls


def policy_kind(policy: Any) -> Literal["jax", "host"]:
    """The declared kind of ``policy``; raises if it does not declare one.

    Raises
    ------
    bayesbandit.errors.InvalidInput
        If ``policy`` has no ``kind`` of ``"jax"`` or ``"host"`` or lacks one of the contract's
        methods.
    """
    kind = getattr(type(policy), "kind", None)
    missing = [m for m in ("init", "select", "update", "reward_support") if not callable(getattr(policy, m, None))]
    if kind not in ("jax", "host") or missing:
        raise InvalidInput(
            f"expected a bandit policy (a class with kind = 'jax' or 'host' and methods init, select, update, "
            f"reward_support); got {type(policy).__name__} (kind={kind!r}, missing {missing}). Fix: pass a policy "
            "such as bayesbandit.GLMTSL(model) or implement the contract in docs/contract.md."
        )
    return kind
