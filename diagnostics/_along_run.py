"""``along_run``: compare a GLM policy's posterior with NUTS at chosen rounds of a bandit run.

Design: a fixed arm set, rewards drawn from the policy's own reward program at true parameters
(or from a user function), the policy's pure API in a Python loop over jitted ``select`` /
``update``, and at each chosen round a snapshot of ``state.history.rows()``: the weighted rows
``(x, y, w)`` the policy's posterior is built from (for per-arm statistics ``y`` is the arm's mean
reward and ``w`` its pull count). :func:`compare` then fits every method to exactly that history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from numpyro import handlers

import bayesbandit as bb
from bayesbandit.errors import InvalidInput

from ._compare import METHODS, compare

__all__ = ["along_run", "run_snapshots"]

RewardFn = Callable[[jax.Array, jax.Array], jax.Array]
"""``reward_fn(key, arm_index) -> reward``: a user reward source for :func:`along_run`."""


def _program_rewards(bound: bb.BoundModel, arms: jax.Array, theta_true: jax.Array) -> RewardFn:
    """Rewards from the program's observed site at the true parameters, one draw for every arm."""
    values = bound.constrain(theta_true)

    @jax.jit
    def reward(key, arm):
        model = handlers.seed(handlers.substitute(bound.model, data=values), key)
        trace = handlers.trace(model).get_trace(arms, None)
        return trace[bound.obs_site]["value"][arm].astype(arms.dtype)

    return reward


def run_snapshots(
    policy: Any,
    arms,
    theta_true=None,
    rounds: Sequence[int] = (10, 100),
    *,
    reward_fn: RewardFn | None = None,
    seed: int = 0,
) -> tuple[bb.BoundModel, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Run a GLM policy on a fixed arm set and snapshot its history at the chosen rounds.

    Parameters
    ----------
    policy : GLM policy
        ``GLMTSL``, ``GLMFPL``, ``GLMUCB``, ``UCBGLM`` or ``EpsilonGreedy`` (any policy with
        ``bound(d)`` and a state whose ``history.rows()`` gives weighted rows).
    arms : array, shape (K, d)
        The fixed arm set.
    theta_true : array, shape (p,), optional
        True flat *unconstrained* parameters of the policy's model (for the zoo GLMs, ``theta``
        itself). Rewards are drawn from the program's observed site at them. Needed unless
        ``reward_fn`` is given.
    rounds : sequence of int
        Numbers of observations after which to snapshot (positive, any order).
    reward_fn : callable, optional
        ``reward_fn(key, arm_index) -> reward`` (jittable), replacing the program's rewards.
    seed : int

    Returns
    -------
    bound : BoundModel
        The policy's model bound to ``d`` features.
    snapshots : dict of int to (x, y, w)
        ``state.history.rows()`` after each chosen round, as NumPy arrays.
    """
    arms = jnp.asarray(arms, dtype=jnp.float64)
    if arms.ndim != 2 or arms.shape[0] == 0:
        raise InvalidInput(f"arms must have shape (K, d) with K >= 1; got shape {arms.shape}.")
    rounds = sorted({int(r) for r in rounds})
    if not rounds or rounds[0] < 1:
        raise InvalidInput(f"rounds must be positive ints; got {rounds}.")
    if not hasattr(policy, "bound"):
        raise InvalidInput(f"along_run needs a GLM policy (with a reward model); got {type(policy).__name__}.")
    bound = policy.bound(arms.shape[1])
    if reward_fn is None:
        if theta_true is None:
            raise InvalidInput("along_run needs theta_true (true unconstrained parameters) or a reward_fn.")
        theta_true = jnp.asarray(theta_true, dtype=jnp.float64)
        if theta_true.shape != (bound.num_params,):
            raise InvalidInput(f"theta_true must have shape ({bound.num_params},); got {theta_true.shape}.")
        reward_fn = _program_rewards(bound, arms, theta_true)

    select = jax.jit(policy.select)
    update = jax.jit(policy.update)
    state = policy.init(arms, capacity=rounds[-1])
    key = jax.random.PRNGKey(seed)
    snapshots = {}
    for t in range(1, rounds[-1] + 1):
        key, k_select, k_reward = jax.random.split(key, 3)
        arm, _ = select(state, arms, k_select)
        state = update(state, arm, reward_fn(k_reward, arm))
        if t in rounds:
            snapshots[t] = tuple(np.asarray(a) for a in state.history.rows())
    return bound, snapshots


def along_run(
    policy: Any,
    arms,
    theta_true=None,
    rounds: Sequence[int] = (10, 100),
    *,
    reward_fn: RewardFn | None = None,
    methods: Sequence[str] = METHODS,
    fpl_a: float | None = None,
    seed: int = 0,
    **compare_kwargs: Any,
) -> pd.DataFrame:
    """Distances of the approximate posteriors to NUTS at chosen rounds of one bandit run.

    Runs ``policy`` for ``max(rounds)`` rounds on ``arms`` (see :func:`run_snapshots`) and, at
    each chosen round ``t``, calls :func:`compare` on the policy's history after ``t``
    observations: the posterior the policy itself samples from (GLM-TSL: Laplace; GLM-FPL: the
    perturbed MAP), against NUTS on the same weighted rows.

    Parameters
    ----------
    policy, arms, theta_true, rounds, reward_fn, seed
        See :func:`run_snapshots`.
    methods : sequence of str
        Passed to :func:`compare` (must include ``"nuts"`` for distances).
    fpl_a : float, optional
        FPL perturbation scale; defaults to the policy's ``a`` for ``GLMFPL``, else 0.5 (see
        :func:`compare`).
    **compare_kwargs
        ``num_draws``, ``num_warmup``, ``num_chains``, ``thresholds``... for :func:`compare`.

    Returns
    -------
    pandas.DataFrame
        Tidy: one row per ``(round, method)`` for the approximations, columns ``round``,
        ``method``, ``num_obs``, ``kl``, ``w1_max``, ``coverage90``, ``mean_shift_max``,
        ``sd_ratio_min``, ``sd_ratio_max``, ``poor``, NUTS ``rhat_max``, ``ess_bulk_min``,
        ``divergences``, and ``flags`` (the comparison's warnings, joined by ``"; "``).
        Plot it with :func:`plot_along_run`.

    Examples
    --------
    >>> import numpy as np, bayesbandit as bb                        # doctest: +SKIP
    >>> from bayesbandit.models import logistic                      # doctest: +SKIP
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (20, 3))      # doctest: +SKIP
    >>> df = along_run(bb.GLMTSL(logistic()), arms, np.ones(3), [20, 200])  # doctest: +SKIP
    """
    if fpl_a is None:
        fpl_a = float(policy.a) if isinstance(policy, bb.GLMFPL) else 0.5
    bound, snapshots = run_snapshots(policy, arms, theta_true, rounds, reward_fn=reward_fn, seed=seed)
    records = []
    for i, (t, (x, y, w)) in enumerate(sorted(snapshots.items())):
        comp = compare(bound, x, y, w, methods, fpl_a=fpl_a, seed=seed + i, **compare_kwargs)
        for method, row in comp.table.iterrows():
            records.append(
                {
                    "round": t,
                    "method": method,
                    "num_obs": float(np.sum(w)),
                    **row.to_dict(),
                    "rhat_max": comp.rhat_max,
                    "ess_bulk_min": comp.ess_bulk_min,
                    "divergences": comp.divergences,
                    "flags": "; ".join(comp.flags),
                }
            )
    return pd.DataFrame.from_records(records)
