"""``SlidingWindow``: a posterior of the last ``window`` observations over any policy that can forget one."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal, NamedTuple, cast

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import Combinatorial, Forgets, RewardSupport, register_dataclass_node
from bayesbandit.drift._wrap import Wrapper, check_wrapped
from bayesbandit.drift.discounted import recorded
from bayesbandit.validation import check_int

__all__ = ["SlidingWindow", "WindowState"]


class WindowState(NamedTuple):
    """State of a :class:`SlidingWindow`: the wrapped policy's state and a ring of the last ``window`` rounds."""

    inner: Any  # the wrapped policy's state
    actions: Array  # (window, *action_shape) int32: each round's action as ``forget`` takes it
    feedback: Array  # (window, *action_shape) each round's feedback
    rows: Array | None  # (window, m, d) the chosen rows (contextual use), None on a fixed arm set
    size: Array  # () int32, rounds recorded


@dataclasses.dataclass(frozen=True)
class SlidingWindow(Wrapper):
    """Keep only the last ``window`` observations: each one is forgotten ``window`` rounds after it was made.

    Before each update, once ``window`` rounds are recorded, the oldest is removed from the
    posterior exactly with the wrapped policy's :meth:`~bayesbandit.contract.Forgets.forget`
    (``B -= x x^T``, ``b -= y x`` for LinTS / LinUCB and the combinatorial policies, a pull taken
    off the per-arm statistics or a row emptied for the GLM policies), then the new observation
    is added by the wrapped policy's ``update``, which refits. After round ``t`` the posterior is
    the prior times the likelihood of rounds ``t - window + 1 .. t``: SMPyBandits' SW-UCB window
    (``tau``), for any posterior that can forget.

    The ring in the state holds what ``forget`` must be given to undo ``update``'s data term: on a
    fixed arm set (``init(arms)``) the action and feedback (the arms are passed again every
    round); in contextual use (``init(d=...)``) also the chosen features, stored as a small arm
    set of their own (one row with action 0; for a super arm its ``m`` picked rows with the
    lifted indices re-based onto them), so ``forget`` sees the features ``update`` saw, bit for
    bit. The round count ``t`` of the wrapped state keeps counting (initial exploration is not
    repeated). An update the wrapped policy does not record (an action out of range) leaves the
    whole state unchanged.

    Parameters
    ----------
    policy : Policy
        A JAX policy with the :class:`~bayesbandit.contract.Forgets` capability: GLM-TSL, GLM-FPL,
        GLM-UCB, UCB-GLM, epsilon-greedy with ``history="full"``, LinTS, LinUCB and the
        combinatorial policies. The online GLM posterior keeps no rows and cannot forget one;
        neural and index policies are refused.
    window : int, >= 1
        Observations kept (static: it sizes the ring).

    Raises
    ------
    InvalidInput
        ``policy`` cannot forget (named in the message), or ``window`` is not a positive integer.

    Notes
    -----
    A GLM policy's row buffer (contextual use, or a likelihood without per-arm statistics) still
    grows by one row a round: forgotten rows are emptied (weight 0), not reused, so its memory
    and the cost of a refit grow with the rounds played, as without the window.

    See Also
    --------
    Discounted : geometric forgetting, every earlier observation by ``gamma`` each round.

    Examples
    --------
    >>> import jax
    >>> import bayesbandit as bb
    >>> policy = bb.drift.SlidingWindow(bb.LinTS(lam=1.0, v=0.5), window=100)
    >>> arms = jax.random.normal(jax.random.PRNGKey(0), (5, 3))
    >>> state = policy.init(arms)
    >>> action, _ = policy.select(state, arms, jax.random.PRNGKey(1))
    >>> state, info = policy.update(state, arms, action, 1.0)
    >>> int(state.size), bool(info.converged)
    (1, True)
    """

    kind: ClassVar[Literal["jax"]] = "jax"
    data_fields: ClassVar[tuple[str, ...]] = ("policy",)
    _public: ClassVar[bool] = True

    policy: Any
    _: dataclasses.KW_ONLY
    window: int = 100

    def __post_init__(self) -> None:
        check_wrapped("SlidingWindow", self.policy, Forgets, "it removes the observation that leaves the window")
        check_int("SlidingWindow", "window", self.window, low=1)

    def inner(self, state: WindowState) -> Any:
        return state.inner

    def with_inner(self, state: WindowState, inner: Any) -> WindowState:
        return state._replace(inner=inner)

    def _action_shape(self) -> tuple[int, ...]:
        return tuple(self.policy.action_shape) if isinstance(self.policy, Combinatorial) else ()

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> WindowState:
        """The wrapped policy's initial state and an empty ring (with room for the chosen rows in contextual use).

        Raises
        ------
        InvalidInput
            The wrapped policy refuses to forget in this configuration (``history="online"``).
        """
        inner = self.policy.init(arms, d=d, capacity=capacity, key=key)
        dim = int(jnp.shape(arms)[1]) if arms is not None else int(cast(int, d))  # init checked one of them
        shape, dtype = self._action_shape(), jnp.result_type(float)
        picks = shape[0] if shape else 1
        rows = None if arms is not None else jnp.zeros((self.window, picks, dim), dtype)
        state = WindowState(
            inner,
            jnp.zeros((self.window, *shape), jnp.int32),
            jnp.zeros((self.window, *shape), dtype),
            rows,
            jnp.asarray(0, jnp.int32),
        )
        # Trace one forget now, so a policy that cannot forget here is refused at init, not mid-run.
        jax.eval_shape(lambda s: self._forget_oldest(s, arms), state)
        return state

    def _forget_oldest(self, state: WindowState, arms: Any) -> Any:
        """The wrapped state without the ring's oldest round (the slot the next round overwrites)."""
        slot = state.size % self.window
        if state.rows is not None:  # contextual: the round's own rows, its action re-based onto them
            arms = state.rows[slot]
        return self.policy.forget(state.inner, arms, state.actions[slot], state.feedback[slot], refit=False)

    def _stored(self, arms: Array, action: Array) -> tuple[Array, Array]:
        """``(rows, local action)`` of this round's choice, for contextual use (see the class docstring)."""
        shape = self._action_shape()
        num_arms = arms.shape[0]
        if not shape:
            return arms[jnp.clip(action, 0, num_arms - 1)][None], jnp.asarray(0, jnp.int32)
        picks = shape[0]
        block, arm = jnp.divmod(jnp.clip(action, 0, self.policy.blocks * num_arms - 1), num_arms)
        return arms[arm], (block * picks + jnp.arange(picks)).astype(jnp.int32)

    def select(self, state: WindowState, arms: Any, key: PRNGKey) -> tuple[Any, Any]:
        """The wrapped policy's choice on the windowed posterior."""
        return self.policy.select(state.inner, arms, key)

    def update(self, state: WindowState, arms: Any, action: Any, feedback: Any) -> tuple[WindowState, Any]:
        """Forget the round that leaves the window (once it is full), then the wrapped policy's update."""
        arms = jnp.asarray(arms, dtype=jnp.result_type(float))
        full = state.size >= self.window
        forgotten = self._forget_oldest(state, arms)
        inner = jax.tree.map(lambda f, s: jnp.where(full, f, s), forgotten, state.inner)
        inner, info = self.policy.update(inner, arms, action, feedback)
        slot = state.size % self.window
        rows, stored_action = state.rows, jnp.asarray(action, jnp.int32)
        if rows is not None:
            picked, stored_action = self._stored(arms, stored_action)
            rows = rows.at[slot].set(picked)
        new = WindowState(
            inner,
            state.actions.at[slot].set(stored_action),
            state.feedback.at[slot].set(jnp.asarray(feedback, state.feedback.dtype)),
            rows,
            state.size + 1,
        )
        kept = recorded(info)
        return jax.tree.map(lambda n, o: jnp.where(kept, n, o), new, state), info

    def reward_support(self, d: int) -> RewardSupport:
        """The wrapped policy's."""
        return self.policy.reward_support(d)


register_dataclass_node(SlidingWindow, list(SlidingWindow.data_fields), ["window"])
