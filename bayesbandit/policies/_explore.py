"""Initial exploration shared by the policies, and how ``init`` reads its arm argument.

Kveton et al. 2020, Section 5.1: "all algorithms pull d linearly independent arms initially".
For the first ``num_explore`` rounds (default ``d``) every policy pulls the arm with the largest
component outside the span of the features pulled so far. On a fixed arm set the order is
computed once by ``init`` (greedy pivoted Gram-Schmidt, :func:`exploration_order`), so the first
``d`` pulls form a basis whenever the arms span ``R^d`` and later rounds pay nothing for it;
with contextual features each exploration round maximises ``x_i^T (G + eps I)^{-1} x_i`` over
that round's arms. Either way it ignores rewards, as the paper's template (Algorithm 1)
requires.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

import jax
import jax.numpy as jnp

from bayesbandit._linalg import cho_solve
from bayesbandit._numerics import jittered_cholesky, random_argmax
from bayesbandit._typing import Array, ArrayLike, PRNGKey
from bayesbandit.errors import InvalidInput

__all__ = [
    "exploration_scores",
    "exploration_order",
    "choice_scores",
    "choose",
    "resolve_num_explore",
    "init_arms",
    "DesignExploration",
]

DEFAULT_CAPACITY = 1024


def exploration_scores(gram: Array, arms: Array) -> Array:
    """``x_i^T (G + eps I)^{-1} x_i`` for each arm: large for directions not yet pulled.

    Parameters
    ----------
    gram : array, shape (d, d)
        Unweighted design matrix of the pulls so far.
    arms : array, shape (K, d)
    """
    d = gram.shape[0]
    eps = 1e-9 * jnp.maximum(1.0, jnp.trace(gram) / d)
    chol, _ = jittered_cholesky(gram + eps * jnp.eye(d, dtype=gram.dtype))
    return jnp.sum(arms * cho_solve(chol, arms.T).T, axis=1)


def exploration_order(arms: Array, num: int) -> Array:
    """Greedy pivoted Gram-Schmidt: ``num`` arm indices, each with the largest residual norm
    after projecting out the arms chosen before it.

    Parameters
    ----------
    arms : array, shape (K, d)
    num : int
        How many indices (static); past the rank of ``arms`` the residuals vanish and the
        remaining picks are arbitrary.

    Returns
    -------
    int array, shape (num,)
    """

    def pick(residual, _):
        i = jnp.argmax(jnp.sum(residual**2, axis=1))
        q = residual[i] / jnp.maximum(jnp.linalg.norm(residual[i]), jnp.finfo(arms.dtype).tiny)
        return residual - jnp.outer(residual @ q, q), i

    _, order = jax.lax.scan(pick, arms, None, length=num)
    return order.astype(jnp.int32)


def choice_scores(
    scores: Array,
    arms: Array,
    t: Array,
    num_explore: int,
    order: Array | None,
    gram: Callable[[], Array],
) -> tuple[Array, Array]:
    """The scores whose random-tie-break argmax is the round's arm, and whether this is an
    initial-exploration round.

    Outside exploration: ``scores``. In exploration round ``t``: one-hot at ``order[t]`` for a
    fixed arm set, else :func:`exploration_scores` under the design matrix ``gram()`` (computed
    only in exploration rounds).
    """
    exploring = t < num_explore
    if num_explore == 0:
        return scores, exploring
    if order is not None:
        first = (jnp.arange(scores.shape[0]) == order[jnp.minimum(t, num_explore - 1)]).astype(scores.dtype)
        return jnp.where(exploring, first, scores), exploring
    return jax.lax.cond(exploring, lambda: exploration_scores(gram(), arms), lambda: scores), exploring


def choose(key: PRNGKey, *inputs: Any) -> tuple[Array, Array]:
    """The arm to pull, a random-tie-break argmax of :func:`choice_scores` ``(*inputs)``, and whether
    this is an initial-exploration round. Its law given the scores is
    ``tie_probabilities(choice_scores(*inputs)[0])`` (exact propensities of policies whose scores
    are not random)."""
    chosen, exploring = choice_scores(*inputs)
    return random_argmax(key, chosen), exploring


def resolve_num_explore(num_explore: int | None, d: int) -> int:
    """The number of initial exploration rounds: ``num_explore``, or ``d`` when it is None."""
    return d if num_explore is None else num_explore


class DesignExploration:
    """Mixin of the policies whose first ``num_explore`` rounds (``d`` by default) pull the design: the
    :class:`~bayesbandit.contract.ExploresFirst` capability, which an :class:`~bayesbandit.Agent` uses to
    count those rounds in decisions rather than rewards."""

    num_explore: int | None

    def initial_exploration(self, d: int) -> tuple[Literal["design", "uniform"], int]:
        """``("design", rounds)``: the rule of ``choose`` (this module) for the first ``rounds`` rounds."""
        return "design", resolve_num_explore(self.num_explore, d)

    def without_initial_exploration(self) -> Any:
        """This policy with ``num_explore=0``."""
        return dataclasses.replace(self, num_explore=0)  # type: ignore[type-var]


def init_arms(owner: str, arms: ArrayLike | None, d: int | None) -> tuple[Array | None, int]:
    """``(arms as a float array or None, d)`` from ``init``'s arguments (shapes only: init may be traced)."""
    if arms is not None:
        arms = jnp.asarray(arms, dtype=float)
        if arms.ndim != 2:
            raise InvalidInput(f"arms passed to {owner}.init must have shape (K, d); got shape {arms.shape}.")
        return arms, int(arms.shape[1])
    if d is None:
        raise InvalidInput(
            f"{owner}.init needs the arm set or the feature dimension. Fix: init(arms) for a fixed arm set of "
            "shape (K, d), or init(d=d) when each round's arms come with select."
        )
    return None, int(d)
