"""What every combinatorial semi-bandit policy shares: scoring ``(M, N)``, the oracle, the ridge state.

Each round the policy sees the features of ``N`` arms (``arms``, shape ``(N, d)``), scores every
arm in each of ``M`` blocks (``blocks``; one ridge model per block, ``M = 1`` for plain top-k),
and an exact oracle (:mod:`bayesbandit.oracles`) turns the ``(M, N)`` scores into a super arm:
the *lifted* indices ``j N + i`` (block ``j``, arm ``i``), shape ``(M k,)``. Feedback is one
reward per chosen copy (semi-bandit feedback), with the action's shape.

Takemura and Ito's lifting of the promotion problem (sec. VII-A2) puts ``x_i`` in the ``j``-th
``d``-block of a ``dM`` vector; its Gram matrix is block-diagonal, so it *is* ``M`` independent
ridge models that share hyper-parameters, and that is how it is stored here.

The shared ridge state (Alg. 1/2 lines 2-3, 15-16) per block ``j``::

    V_j = lam I + sum_{picks (j, i)} x_i x_i^T        b_j = sum_{picks (j, i)} r_i x_i

updated once per round with all of the round's picks (the model is batched: no update inside a
round). ``select`` factors ``V_j = L_j L_j^T`` once; ``theta_hat_j = V_j^{-1} b_j`` and the widths
``||x||_{V_j^{-1}} = ||L_j^{-1} x||`` come from triangular solves; ``V^{-1}`` is never formed (the
precision form of ``bayesbandit._gaussian_linear``, one block per leading index).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit import _gaussian_linear as gl
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.contract import RewardSupport
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_arms, check_int, check_scalar

__all__ = [
    "CombState",
    "CombInfo",
    "CombUpdateInfo",
    "CombPolicy",
    "RidgeCombPolicy",
    "lifted_picks",
    "feature_dimension",
]


class CombState(NamedTuple):
    """Per-block ridge statistics of a combinatorial policy."""

    precision: Array  # (M, d, d) V_j = lam I + sum x x^T
    b: Array  # (M, d) sum r x
    t: Array  # () int32, rounds observed


class CombInfo(NamedTuple):
    """The fields every combinatorial ``select`` reports; each policy reports its own subclass of it.

    A NamedTuple subclass adds no fields, so each policy's Info (``C2UCBInfo``, ``ArmTSInfo``, ...)
    is its own type over these two fields (``info_type`` on the policy), defined once here.
    """

    converged: Array  # () bool: every score is finite
    scores: Array  # (M, N) the scores the oracle maximised


class CombUpdateInfo(NamedTuple):
    """What a combinatorial ``update`` reports."""

    converged: Array  # () bool: recorded, and the statistics stayed finite
    recorded: Array  # () bool: every index was in [0, M N) and the feedback finite


def lifted_picks(arms: Array, action: Array, blocks: int) -> tuple[Array, Array, Array]:
    """The picks ``action`` (lifted indices ``j N + i``) as ``(block j, features x_i, valid)``.

    Returns ``(M k,)`` int, ``(M k, d)`` and a boolean: every index in ``[0, M N)`` (out-of-range
    indices are clipped into it).
    """
    n = arms.shape[0]
    valid = jnp.all((action >= 0) & (action < blocks * n))
    block, arm = jnp.divmod(jnp.clip(action, 0, blocks * n - 1), n)
    return block, arms[arm], valid


@dataclass(frozen=True)
class CombPolicy:
    """Base of every combinatorial policy: the oracle call and the checks; ``scores`` and the state differ.

    ``oracle`` (static) picks the super arm from the ``(M, N)`` scores, e.g.
    :class:`bayesbandit.oracles.TopK` or :class:`bayesbandit.oracles.ExclusiveAssignment`;
    ``blocks`` is ``M``.
    """

    kind: ClassVar[Literal["jax"]] = "jax"
    info_type: ClassVar[type[CombInfo]] = CombInfo

    _: KW_ONLY
    oracle: Any
    blocks: int = 1

    def _check_common(self) -> None:
        name = type(self).__name__
        check_int(name, "blocks", self.blocks, low=1)
        if isinstance(self.oracle, type):
            raise InvalidInput(
                f"{name}: 'oracle' must be an oracle object. Got the class {self.oracle.__name__} itself. "
                f"Fix: pass an instance, e.g. oracle={self.oracle.__name__}(k=10)."
            )
        if not callable(self.oracle) or not callable(getattr(self.oracle, "check", None)):
            raise InvalidInput(
                f"{name}: 'oracle' must be an oracle from bayesbandit.oracles (callable, with check). "
                f"Got {self.oracle!r}. Fix: pass e.g. oracle=bayesbandit.oracles.TopK(k=10)."
            )

    @property
    def action_shape(self) -> tuple[int, ...]:
        """``(M k,)``: one lifted index per chosen copy."""
        return (self.blocks * self.oracle.k,)

    def check_arms(self, num_arms: int) -> None:
        """Raise :class:`~bayesbandit.errors.InvalidInput` if the oracle cannot fill a super arm from ``num_arms``."""
        self.oracle.check(self.blocks, int(num_arms))

    def _init_dimension(self, arms: ArrayLike | None, d: int | None) -> int:
        """``d`` for ``init``: from the arm set (checked, and checked against the oracle) or as given."""
        owner = type(self).__name__
        dim = feature_dimension(owner, arms, d)
        if arms is not None:
            if not isinstance(arms, jax.core.Tracer):
                check_arms(arms, name=f"arms passed to {owner}.init", unchanged=None)
            self.check_arms(jnp.shape(arms)[0])
        return dim

    def reward_support(self, d: int) -> RewardSupport:
        """Any real reward per chosen arm (the model is linear)."""
        return RewardSupport(None, "any real number")

    def select(self, state: Any, arms: Array, key: PRNGKey) -> tuple[Array, CombInfo]:
        """Score every arm in every block, then let the oracle pick the super arm ``(M k,)``; Info of type ``info_type``."""
        arms = jnp.asarray(arms, dtype=self._dtype(state))
        key_scores, key_oracle = jax.random.split(key)
        scores = self.scores(state, arms, key_scores)
        action = self.oracle(scores, key_oracle)
        return action, self.info_type(jnp.all(jnp.isfinite(scores)), scores)

    def scores(self, state: Any, arms: Array, key: PRNGKey) -> Array:
        """The ``(M, N)`` scores the oracle maximises."""
        raise NotImplementedError

    def _dtype(self, state: Any) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class RidgeCombPolicy(CombPolicy):
    """Base of the policies on the ridge state of the module docstring (all but CombLinUCB / CombLinTS).

    ``lam`` (> 0) is the ridge; ``scores_from`` gets the factors and estimates.
    """

    _: KW_ONLY
    lam: float = 1.0

    def _check_common(self) -> None:
        super()._check_common()
        check_scalar(type(self).__name__, "lam", self.lam, low=0.0, low_open=True, high_open=True)

    def init(
        self,
        arms: ArrayLike | None = None,
        *,
        d: int | None = None,
        capacity: int | None = None,
        key: PRNGKey | None = None,
    ) -> CombState:
        """``V_j = lam I``, ``b_j = 0`` for each block; ``d`` from ``arms`` (N, d) or given."""
        d = self._init_dimension(arms, d)
        return CombState(*gl.isotropic(self.lam, d, (self.blocks,)), jnp.asarray(0, jnp.int32))

    def _dtype(self, state: Any) -> Any:
        return state.b.dtype

    def update(self, state: CombState, arms: Array, action: Array, feedback: Array) -> tuple[CombState, CombUpdateInfo]:
        """``V_j += sum x x^T``, ``b_j += sum r x`` over the round's picks of block ``j`` (Alg. 1 lines 15-16).

        Indices outside ``[0, M N)`` or non-finite feedback leave the state unchanged (``recorded``).
        """
        arms = jnp.asarray(arms, dtype=state.b.dtype)
        feedback = jnp.asarray(feedback, dtype=state.b.dtype)
        block, x, valid = lifted_picks(arms, action, self.blocks)
        new = CombState(*gl.observe_blocks(state.precision, state.b, block, x, feedback), state.t + 1)
        recorded = valid & jnp.all(jnp.isfinite(feedback))
        keep = recorded & jnp.all(jnp.isfinite(new.b)) & jnp.all(jnp.isfinite(new.precision))
        new = jax.tree.map(lambda n, o: jnp.where(keep, n, o), new, state)
        return new, CombUpdateInfo(keep, recorded)

    def discount(self, state: CombState, gamma: ArrayLike, *, refit: bool = True) -> CombState:
        """Every observation's weight times ``gamma`` in ``(0, 1]`` in each block, the prior's kept:
        ``V_j <- gamma V_j + (1 - gamma) lam I``, ``b_j <- gamma b_j``
        (``bayesbandit._gaussian_linear.discount_precision``; ``refit`` has nothing to do here)."""
        d = state.b.shape[-1]
        gamma = jnp.asarray(gamma, state.b.dtype)
        prior = self.lam * jnp.eye(d, dtype=state.b.dtype)
        precision, b = gl.discount_precision(state.precision, state.b, gamma, prior)
        return state._replace(precision=precision, b=b)

    def forget(self, state: CombState, arms: Array, action: Array, feedback: Array, *, refit: bool = True) -> CombState:
        """Remove one earlier round's picks, the inverse of :meth:`update`: ``V_j -= sum x x^T``, ``b_j -= sum r x``
        over the picks of block ``j``. ``t`` is not changed; invalid indices or feedback change nothing."""
        arms = jnp.asarray(arms, dtype=state.b.dtype)
        feedback = jnp.asarray(feedback, dtype=state.b.dtype)
        block, x, valid = lifted_picks(arms, action, self.blocks)
        precision, b = gl.observe_blocks(state.precision, state.b, block, x, feedback, weight=-1.0)
        new = state._replace(precision=precision, b=b)
        keep = valid & jnp.all(jnp.isfinite(feedback))
        return jax.tree.map(lambda n, o: jnp.where(keep, n, o), new, state)

    def scores(self, state: CombState, arms: Array, key: PRNGKey) -> Array:
        chol, theta_hat = gl.estimate(state.precision, state.b)
        return self.scores_from(chol, theta_hat, arms, key, state.t)

    def scores_from(self, chol: Array, theta_hat: Array, arms: Array, key: PRNGKey, t: Array) -> Array:
        """Scores from the factors ``L_j`` (M, d, d), the estimates (M, d), the arms (N, d) and the round."""
        raise NotImplementedError


def feature_dimension(owner: str, arms: ArrayLike | None, d: int | None) -> int:
    if arms is not None:
        shape = jnp.shape(arms)
        if len(shape) != 2:
            raise InvalidInput(
                f"{owner}.init: 'arms' must have shape (N, d). Got shape {shape}. Fix: pass one feature row per arm."
            )
        return int(shape[1])
    return check_int(f"{owner}.init", "d", d, low=1)
