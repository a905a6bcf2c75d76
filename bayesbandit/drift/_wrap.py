"""What the forgetting wrappers share: the capabilities of the wrapped policy, passed through.

A wrapper (:class:`~bayesbandit.drift.Discounted`, :class:`~bayesbandit.drift.SlidingWindow`) is a
policy over another one. The runners, the :class:`~bayesbandit.Agent` and the contract suite read a
policy's optional capabilities with ``isinstance`` on the protocols of :mod:`bayesbandit.contract`
(:class:`~bayesbandit.contract.Combinatorial`, :class:`~bayesbandit.contract.ModelBased`,
:class:`~bayesbandit.contract.Buffered`, :class:`~bayesbandit.contract.Explains`,
:class:`~bayesbandit.contract.ExactLaw`), so a wrapper must have exactly those of the policy it
wraps: constructing one returns an instance of a subclass (cached per set of capabilities, with
the wrapper's own name) that mixes in one forwarding class per capability. Each subclass is a
registered pytree dataclass like its base; ``isinstance(w, Discounted)`` holds for all of them,
and they pickle as their base.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar, cast

from bayesbandit.contract import (
    Buffered,
    Combinatorial,
    ExactLaw,
    Explains,
    ModelBased,
    policy_kind,
    register_dataclass_node,
)
from bayesbandit.errors import InvalidInput

__all__ = ["Wrapper", "check_wrapped"]


class _Combinatorial:
    """A super arm over ``blocks`` copies of the arms, as the wrapped policy's."""

    policy: Any

    @property
    def blocks(self) -> int:
        return self.policy.blocks

    @property
    def action_shape(self) -> tuple[int, ...]:
        return self.policy.action_shape

    @property
    def oracle(self) -> Any:
        return self.policy.oracle

    def check_arms(self, num_arms: int) -> None:
        self.policy.check_arms(num_arms)


class _ModelBased:
    """The wrapped policy's reward program; its posterior rows read from the wrapped state."""

    policy: Any

    @property
    def model(self) -> Any:
        return self.policy.model

    def bound(self, d: int) -> Any:
        return self.policy.bound(d)

    def check_program(self, d: int) -> None:
        self.policy.check_program(d)

    def posterior_rows(self, state: Any) -> Any:
        return self.policy.posterior_rows(self.inner(state))  # type: ignore[attr-defined]


class _Buffered:
    """The wrapped state's row buffer."""

    policy: Any

    def capacity(self, state: Any) -> int | None:
        return self.policy.capacity(self.inner(state))  # type: ignore[attr-defined]

    def filled(self, state: Any) -> int:
        return self.policy.filled(self.inner(state))  # type: ignore[attr-defined]

    def reserve(self, state: Any, num_rows: int) -> Any:
        return self.with_inner(state, self.policy.reserve(self.inner(state), num_rows))  # type: ignore[attr-defined]


class _Explains:
    """The wrapped policy's words for an update that did not converge (the wrapper reports its info)."""

    policy: Any

    def explain_update(self, info: Any, d: int) -> str:
        return self.policy.explain_update(info, d)


class _ExactLaw:
    """The wrapped policy's law of choice: ``select`` is the wrapped policy's on the wrapped state."""

    policy: Any

    def action_probabilities(self, state: Any, arms: Any) -> Any:
        return self.policy.action_probabilities(self.inner(state), arms)  # type: ignore[attr-defined]


_CAPABILITIES = (
    (Combinatorial, _Combinatorial),
    (ModelBased, _ModelBased),
    (Buffered, _Buffered),
    (Explains, _Explains),
    (ExactLaw, _ExactLaw),
)


@functools.cache
def _variant(base: Any, mixins: tuple[type, ...]) -> Any:
    """``base`` with ``mixins``: a registered pytree dataclass named as ``base`` (one class per set)."""
    if not mixins:
        return base
    cls = type(
        base.__name__,
        (*mixins, base),
        {"__module__": base.__module__, "__qualname__": base.__qualname__, "__doc__": base.__doc__},
    )
    data = [f.name for f in dataclasses.fields(base) if f.name in base.data_fields]
    meta = [f.name for f in dataclasses.fields(base) if f.name not in base.data_fields]
    return register_dataclass_node(cls, data, meta)


class Wrapper:
    """Base of the forgetting wrappers: the capability dispatch of the module docstring.

    Subclasses are frozen dataclasses whose first field is ``policy``, that set ``_public = True``
    (the class a user constructs) and list their pytree leaves in ``data_fields``; ``inner(state)`` is the wrapped policy's state in the wrapper's, and
    ``with_inner(state, inner)`` puts one back.
    """

    data_fields: ClassVar[tuple[str, ...]] = ()
    policy: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if not cls.__dict__.get("_public", False):  # a variant (rebuilt by a pytree unflatten, say): itself
            return object.__new__(cls)
        policy = args[0] if args else kwargs.get("policy")
        mixins = tuple(mixin for protocol, mixin in _CAPABILITIES if isinstance(policy, protocol))
        return object.__new__(_variant(cast(Any, cls), mixins))

    def __reduce__(self) -> Any:
        public = next(c for c in type(self).__mro__ if c.__dict__.get("_public", False))
        return (_rebuild, (public, {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}))  # type: ignore[arg-type]

    def inner(self, state: Any) -> Any:
        raise NotImplementedError

    def with_inner(self, state: Any, inner: Any) -> Any:
        raise NotImplementedError


def _rebuild(cls: type, fields: dict[str, Any]) -> Any:
    return cls(**fields)


def check_wrapped(owner: str, policy: Any, capability: type, what: str) -> None:
    """Raise :class:`~bayesbandit.errors.InvalidInput` unless ``policy`` is a JAX policy with ``capability``."""
    kind = policy_kind(policy)
    if kind != "jax" or not isinstance(policy, capability):
        has = "a host policy" if kind == "host" else f"it has no {capability.__name__} capability"
        raise InvalidInput(
            f"The 'policy' parameter of {owner} must be a JAX policy with the {capability.__name__} capability "
            f"({what}); got {type(policy).__name__}: {has}. Fix: wrap a Gaussian-posterior or reward-program policy "
            "(GLMTSL, GLMUCB, UCBGLM, GLMFPL, EpsilonGreedy, LinTS, LinUCB, or a combinatorial policy); neural and "
            "index policies cannot forget."
        )
