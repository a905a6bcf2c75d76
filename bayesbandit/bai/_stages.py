"""The elimination loop shared by the staged algorithms (GSE, Sequential Halving, OD-LinBAI, Peace).

A staged algorithm fixes, before it pulls anything, how many arms start each stage and how many
pulls each stage spends (both static, so every stage has static shapes and the stages unroll under
``jit``). In stage ``t`` it

1. allocates the stage's pulls over the surviving arms (``allocate``), in a random order of the
   arms so that every tie in a design or a rounding is broken at random;
2. pulls from the stack of rewards (:func:`bayesbandit.bai._protocol.stack_rewards`), this
   stage's data only;
3. scores the survivors from this stage's data (``estimate``), and keeps the best, ties broken at
   random. Scores within ``TIE_RTOL`` (relative to the largest score's magnitude) of the last
   kept score are ties: a saturated stage's least-squares scores are its arms' sample means, and
   two equal sample means come out of the solve equal only to rounding (GSE-Lin on the logistic
   instance at ``d = 10``, ``B = 80``, 300 replications: of 1,702 pairs of scores equal to
   ``1e-9``, 72 were equal to the bit), so an exact-equality rule would leave most ties to rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai._protocol import BAIEnv, BAIInfo, stack_rewards, streams
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput

__all__ = ["StageData", "num_stages", "halving_sizes", "stage_budgets", "eliminate", "run_stages"]


class StageData(NamedTuple):
    """One stage's pulls, as rows."""

    alive: Array  # (k_t,) int32 surviving arms (indices into the instance)
    counts: Array  # (k_t,) int32 pulls per surviving arm
    row_arm: Array  # (rows,) int32 position in ``alive`` of each row's arm
    rewards: Array  # (rows,) rewards
    valid: Array  # (rows,) bool: rows past the stage's pulls are padding

    def sums(self) -> Array:
        """Reward sums per surviving arm, shape (k_t,)."""
        return jax.ops.segment_sum(jnp.where(self.valid, self.rewards, 0.0), self.row_arm, self.alive.shape[0])


def num_stages(num_arms: int, eta: int) -> int:
    """The smallest ``s`` with ``eta**s >= num_arms`` (an integer loop: float logs miscount powers)."""
    s, reach = 0, 1
    while reach < num_arms:
        s, reach = s + 1, reach * eta
    return max(s, 1)


def halving_sizes(num_arms: int, eta: int) -> tuple[int, ...]:
    """Arms alive at the start of each stage: ``K, ceil(K/eta), ceil(K/eta^2), ...`` down to 2 (or 1)."""
    sizes = [num_arms]
    while len(sizes) < num_stages(num_arms, eta):
        sizes.append(-(-sizes[-1] // eta))
    return tuple(sizes)


def stage_budgets(budget: int, stages: int, leftover: str) -> tuple[int, ...]:
    """``floor(B/s)`` pulls per stage; ``leftover="spread"`` gives the ``B mod s`` remaining pulls to
    the last stages (one each), so the total is ``B``; ``"drop"`` leaves them unspent (Azizi et al.
    2022, Alg. 1)."""
    base, rest = divmod(budget, stages)
    if leftover == "drop":
        return (base,) * stages
    if leftover == "spread":
        return tuple(base + (t >= stages - rest) for t in range(stages))
    raise InvalidInput(f"The 'leftover' parameter must be 'spread' or 'drop'. Got {leftover!r} instead.")


TIE_RTOL = 1e-9


def eliminate(alive: Array, scores: Array, keep: int, key: PRNGKey) -> Array:
    """The ``keep`` arms of largest score, in increasing index order.

    The arms scored above the ``keep``-th largest score by more than ``TIE_RTOL * max |score|``
    are kept; the remaining places go at random to the arms within that tolerance of it.
    """
    noise = jax.random.uniform(key, scores.shape)
    boundary = jnp.sort(scores)[scores.shape[0] - keep]
    tol = TIE_RTOL * jnp.max(jnp.abs(scores))
    tier = jnp.where(scores > boundary + tol, 2, jnp.where(scores >= boundary - tol, 1, 0))
    order = jnp.lexsort((noise, -tier))
    return jnp.sort(alive[order[:keep]])


def pull_stage(
    env: BAIEnv,
    instance: Instance,
    reward_key: PRNGKey,
    alive: Array,
    counts: Array,
    pulled_before: Array,
    rows: int,
) -> StageData:
    """Pull arm ``alive[a]`` ``counts[a]`` times (``sum(counts) <= rows``) from the stack of rewards."""
    row_arm = jnp.repeat(jnp.arange(alive.shape[0]), counts, total_repeat_length=rows)
    starts = jnp.cumsum(counts) - counts
    position = jnp.arange(rows)
    valid = position < jnp.sum(counts)
    index = pulled_before[alive[row_arm]] + position - starts[row_arm]
    rewards = stack_rewards(env, instance, reward_key, alive[row_arm], index)
    return StageData(alive, counts, row_arm.astype(jnp.int32), rewards, valid)


Allocate = Callable[
    [Array, Any, PRNGKey], Array
]  # (features of the survivors, stage budget: int, or a real m, key) -> counts
Estimate = Callable[[StageData], tuple[Array, Array]]  # stage data -> (scores per survivor, theta)


def run_stages(
    env: BAIEnv,
    instance: Instance,
    key: PRNGKey,
    sizes: Sequence[int],
    budgets: Sequence[float],
    allocate: Allocate,
    estimate: Estimate,
    *,
    max_rows: Sequence[int] | None = None,
) -> tuple[Array, BAIInfo]:
    """Run the stages: ``sizes[t]`` arms start stage ``t`` and it spends up to ``budgets[t]`` pulls.

    ``allocate(features, n, key)`` returns int counts over the survivors (its argument's rows are
    the survivors in a random order: ties go at random); ``max_rows[t]`` bounds its total when an
    allocation may overspend ``n`` (OD-LinBAI's ``ceil``). After the last stage the best-scored
    survivor is returned.
    """
    reward_key, own_key = streams(key)
    num_arms = instance.arms.shape[0]
    alive = jnp.arange(num_arms)
    pulled = jnp.zeros(num_arms, jnp.int32)
    survivors, thetas = [], []
    rows_per_stage = [int(n) for n in budgets] if max_rows is None else max_rows
    for t, (size, n, rows) in enumerate(zip(sizes, budgets, rows_per_stage)):
        order_key, allocate_key, tie_key = jax.random.split(jax.random.fold_in(own_key, t), 3)
        survivors.append(jnp.zeros(num_arms, bool).at[alive].set(True))
        order = jax.random.permutation(order_key, size)
        counts_in_order = allocate(instance.arms[alive[order]], n, allocate_key)
        counts = jnp.zeros(size, jnp.int32).at[order].set(counts_in_order.astype(jnp.int32))
        data = pull_stage(env, instance, reward_key, alive, counts, pulled, rows)
        pulled = pulled.at[alive].add(counts)
        scores, theta = estimate(data)
        thetas.append(theta)
        keep = sizes[t + 1] if t + 1 < len(sizes) else 1
        alive = eliminate(alive, scores, keep, tie_key)
    info = BAIInfo(jnp.sum(pulled), pulled, jnp.stack(survivors), jnp.stack(thetas))
    return alive[0], info
