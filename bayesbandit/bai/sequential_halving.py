"""Sequential Halving (Karnin, Koren and Somekh 2013): the unstructured baseline GSE generalises.

Stage ``t`` spreads its budget uniformly over the surviving arms, estimates each arm by its mean
reward in this stage, and keeps the top ``ceil(|A_t|/2)``. With one-hot features (``d = K``) and
the uniform allocation, GSE is exactly this algorithm (Azizi et al. 2022, sec. 4.1).

Budget: Karnin et al. give each arm ``floor(B / (|A_t| ceil(log2 K)))`` pulls, which leaves up to
``|A_t|`` pulls a stage unspent. Here the stages share the budget as GSE's do
(``bayesbandit.bai._stages.stage_budgets``) and the ``n mod |A_t|`` pulls a stage leaves over go
to arms drawn at random, so every run spends exactly ``B`` and the two algorithms stay comparable.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.bai._protocol import BAIEnv, BAIInfo, check_budget, check_call
from bayesbandit.bai._stages import StageData, halving_sizes, run_stages, stage_budgets
from bayesbandit.design import efficient_rounding
from bayesbandit.envs import Instance
from bayesbandit.validation import check_choice, check_int

__all__ = ["SequentialHalving"]


def _uniform(x: Array, n: int, key: PRNGKey) -> Array:
    return efficient_rounding(jnp.full(x.shape[0], 1.0 / x.shape[0]), n)


def _arm_means(num_arms: int, data: StageData) -> tuple[Array, Array]:
    means = data.sums() / jnp.maximum(data.counts, 1)
    return means, jnp.zeros(num_arms, means.dtype).at[data.alive].set(means)


@dataclass(frozen=True)
class SequentialHalving:
    """Sequential Halving: uniform pulls, per-arm means, keep the top ``ceil(|A_t|/eta)``.

    Parameters
    ----------
    eta : int, >= 2
        Elimination rate (2 in Karnin et al.).
    leftover : {"spread", "drop"}
        As for :class:`bayesbandit.bai.GSE`.

    Examples
    --------
    >>> import jax
    >>> from bayesbandit.bai import SequentialHalving, StaticInstance
    >>> env = StaticInstance(K=4, gap=0.3)
    >>> identify = jax.jit(SequentialHalving().identify, static_argnums=(0, 2))  # one compiled program
    >>> arm, info = identify(env, env.reset(jax.random.key(0)), 30, jax.random.key(1))
    >>> int(info.pulls)
    30
    """

    _: KW_ONLY
    eta: int = 2
    leftover: str = "spread"

    name: ClassVar[str] = "SH"

    def __post_init__(self) -> None:
        check_int("SequentialHalving", "eta", self.eta, low=2)
        check_choice("SequentialHalving", "leftover", self.leftover, ("spread", "drop"))

    def identify(self, env: BAIEnv, instance: Instance, budget: int, key: PRNGKey) -> tuple[Array, BAIInfo]:
        """Run Sequential Halving; the per-arm means of each stage are ``info.theta``."""
        check_call("SequentialHalving", env, instance, key)
        num_arms = instance.arms.shape[0]
        sizes = halving_sizes(num_arms, self.eta)
        budget = check_budget("SequentialHalving", budget, num_arms, len(sizes))
        budgets = stage_budgets(budget, len(sizes), self.leftover)
        return run_stages(env, instance, key, sizes, budgets, _uniform, lambda data: _arm_means(num_arms, data))
