"""``Discounted``: geometric forgetting over any policy that can discount its posterior."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Discounts, RewardSupport, register_dataclass_node
from bayesbandit.drift._wrap import Wrapper, check_wrapped
from bayesbandit.validation import check_scalar

__all__ = ["Discounted", "recorded"]


def recorded(info: Any) -> Array:
    """Whether an update stored its observation (``info.recorded`` where the policy reports it, else true)."""
    return jnp.asarray(getattr(info, "recorded", True))


@dataclasses.dataclass(frozen=True)
class Discounted(Wrapper):
    """Discount every earlier observation by ``gamma`` each round, then update: forgetting for drifting rewards.

    ``update(state, arms, action, feedback)`` is ``policy.update(policy.discount(state, gamma,
    refit=False), arms, action, feedback)``, so after ``t`` rounds observation ``s`` weighs
    ``gamma^{t-s}`` and the prior weighs 1:

    .. math::  \\hat\\theta_t = \\arg\\max_\\theta \\sum_{s \\le t} \\gamma^{t-s} \\log p(y_s \\mid x_s, \\theta) + \\log p_0(\\theta)

    (the discounted Laplace fit of any reward program for the GLM policies; ``B = lam I + sum_s
    gamma^{t-s} x_s x_s^T`` for LinTS / LinUCB and the combinatorial policies; the stabilised rule
    ``Lambda <- gamma Lambda + (1 - gamma) Lambda_0`` for ``history="online"``:
    :class:`~bayesbandit.contract.Discounts`). Every arm is discounted once every round, pulled or
    not (on success and failure counts: ``S <- gamma S + r``, ``F <- gamma F + (1 - r)`` for the
    pulled arm, ``S <- gamma S``, ``F <- gamma F`` for the others). SMPyBandits' docstrings state
    this rule, but its code differs: ``DiscountedBayesianIndexPolicy.getReward``
    (``Policies/DiscountedBayesianIndexPolicy.py``) updates the pulled arm's ``DiscountedBeta``,
    then calls ``self.posterior[arm].discount()`` on the pulled arm once per other arm, so the
    pulled arm is discounted ``K`` times a pull and the others never.
    The weights sum to at most ``1 / (1 - gamma)``: the effective window (``gamma =
    0.99``: 100 rounds, ``0.95``: 20). Because the prior keeps its weight, the precision never
    falls below the prior's, however many rounds pass without exciting a direction
    (``benchmarks/results/bench_forgetting_conditioning.md``).

    ``select``, ``init`` and ``reward_support`` are the wrapped policy's, on the same state; the
    wrapper has the wrapped policy's capabilities (combinatorial, model-based, buffered, exact
    law) and is itself a :class:`~bayesbandit.contract.Discounts` policy. An update the wrapped
    policy does not record (an action out of range) leaves the state as it was, undiscounted.

    Parameters
    ----------
    policy : Policy
        A JAX policy with the :class:`~bayesbandit.contract.Discounts` capability: GLM-TSL,
        GLM-FPL, GLM-UCB, UCB-GLM, epsilon-greedy (full or online history), LinTS, LinUCB and
        the combinatorial policies. Neural policies (their networks have no prior to fall back
        to) and the host policies over an index are refused.
    gamma : float in (0, 1]
        Discount per round; ``1`` is the wrapped policy itself. A pytree leaf, with the wrapped
        policy's numbers, so a sweep over it is one ``vmap``.

    Raises
    ------
    InvalidInput
        ``policy`` cannot discount, or ``gamma`` is outside ``(0, 1]``.

    See Also
    --------
    SlidingWindow : forget each observation ``window`` rounds after it was made.
    bayesbandit.Agent.decay : discount on the caller's schedule instead of every round.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> policy = bb.drift.Discounted(bb.GLMTSL(logistic(), a=1.0), gamma=0.99)
    >>> env = bb.envs.LogisticBandit(K=10, d=3)
    >>> ds = bb.simulate({"D-TS": policy}, env, horizon=50, runs=2, seed=0)
    >>> ds.regret.shape
    (1, 2, 50)
    """

    kind: ClassVar[Literal["jax"]] = "jax"
    data_fields: ClassVar[tuple[str, ...]] = ("policy", "gamma")
    _public: ClassVar[bool] = True

    policy: Any
    _: dataclasses.KW_ONLY
    gamma: float = 0.99

    def __post_init__(self) -> None:
        check_wrapped("Discounted", self.policy, Discounts, "it discounts the posterior each round")
        check_scalar("Discounted", "gamma", self.gamma, low=0.0, high=1.0, low_open=True)

    def inner(self, state: Any) -> Any:
        return state

    def with_inner(self, state: Any, inner: Any) -> Any:
        return inner

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> Any:
        """The wrapped policy's initial state."""
        return self.policy.init(arms, d=d, capacity=capacity, key=key)

    def select(self, state: Any, arms: Any, key: PRNGKey) -> tuple[Any, Any]:
        """The wrapped policy's choice."""
        return self.policy.select(state, arms, key)

    def update(self, state: Any, arms: Any, action: Any, feedback: Any) -> tuple[Any, Any]:
        """Discount every earlier observation by ``gamma`` (no refit), then the wrapped policy's update."""
        new, info = self.policy.update(self.policy.discount(state, self.gamma, refit=False), arms, action, feedback)
        kept = recorded(info)
        return jax.tree.map(lambda n, o: jnp.where(kept, n, o), new, state), info

    def discount(self, state: Any, gamma: ArrayLike, *, refit: bool = True) -> Any:
        """The wrapped policy's :meth:`~bayesbandit.contract.Discounts.discount` (for a decay on schedule too)."""
        return self.policy.discount(state, gamma, refit=refit)

    def reward_support(self, d: int) -> RewardSupport:
        """The wrapped policy's."""
        return self.policy.reward_support(d)


register_dataclass_node(Discounted, list(Discounted.data_fields), [])
