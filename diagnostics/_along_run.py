"""``along_run``: compare a GLM policy's posterior with NUTS at chosen rounds of a bandit run.

Design: a fixed arm set, rewards drawn from the policy's own reward program at true parameters
(or from a user function), the simulation's own round (:func:`bayesbandit.sim.play_round`,
jitted) in a Python loop, and at each chosen round a snapshot of
``policy.posterior_rows(state)``: the weighted rows ``(x, y, w)`` the policy's posterior is
built from (for per-arm statistics ``y`` is the arm's mean reward and ``w`` its pull count).
:func:`compare` then fits every method to exactly that history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from numpyro import handlers

import bayesbandit as bb
from bayesbandit.errors import InvalidInput
from bayesbandit.sim import init_run, key_streams, play_round
from bayesbandit.validation import check_arms

from ._compare import METHODS, compare

__all__ = ["along_run", "run_snapshots"]

RewardFn = Callable[[jax.Array, jax.Array], jax.Array]
"""``reward_fn(key, arm_index) -> reward``: a user reward source for :func:`along_run`."""


@dataclass(frozen=True, eq=False)
class _ProgramBandit:
    """A fixed-arm environment whose rewards come from the policy's own program (or ``reward_fn``).

    Rewards of all arms are drawn from the round's key and the pulled one returned (common
    random numbers). The oracle is the program's mean reward at the true parameters (NaN with
    a user ``reward_fn``, whose means are unknown; along_run does not score regret).
    """

    bound: bb.inference.BoundModel
    arm_set: jax.Array
    theta_true: jax.Array | None
    reward_fn: RewardFn | None

    fixed_arms: ClassVar[bool] = True

    @property
    def d(self) -> int:
        return int(self.arm_set.shape[1])

    def reset(self, key: jax.Array) -> jax.Array:
        if self.theta_true is None:
            return jnp.full(self.arm_set.shape[:1], jnp.nan, self.arm_set.dtype)
        return self.bound.mean_reward(self.theta_true, self.arm_set)

    def arms(self, env_state: jax.Array, t: Any) -> jax.Array:
        return self.arm_set

    def pull(
        self, env_state: jax.Array, action: jax.Array, key: jax.Array, t: Any
    ) -> tuple[jax.Array, bb.contract.Outcome]:
        outcome = bb.contract.Outcome(env_state[action], jnp.max(env_state))
        if self.reward_fn is not None:
            return jnp.asarray(self.reward_fn(key, action), self.arm_set.dtype), outcome
        assert self.theta_true is not None  # reset made the means from it
        values = self.bound.constrain(self.theta_true)
        model = handlers.seed(handlers.substitute(self.bound.model, data=values), key)
        trace = handlers.trace(model).get_trace(self.arm_set, None)
        return trace[self.bound.obs_site]["value"][action].astype(self.arm_set.dtype), outcome


def run_snapshots(
    policy: Any,
    arms: Any,
    *,
    theta_true: Any = None,
    rounds: Sequence[int] = (10, 100),
    reward_fn: RewardFn | None = None,
    seed: int = 0,
) -> tuple[bb.inference.BoundModel, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Run a model-based policy on a fixed arm set and snapshot its history at the chosen rounds.

    The rounds are :func:`bayesbandit.sim.play_round`, the same round the simulation runners
    play, with the key streams of :func:`bayesbandit.sim.key_streams` for ``seed`` (run 0).

    Parameters
    ----------
    policy : model-based policy
        ``GLMTSL``, ``GLMFPL``, ``GLMUCB``, ``UCBGLM``, ``EpsilonGreedy`` or any policy
        implementing :class:`bayesbandit.contract.ModelBased` (its ``posterior_rows(state)`` gives the
        weighted rows its posterior is built from).
    arms : array, shape (K, d)
        The fixed arm set.
    theta_true : array, shape (p,), optional
        True flat *unconstrained* parameters of the policy's model (for the zoo GLMs, ``theta``
        itself; for a program with constrained sites, :func:`flat_parameters` turns the site values
        ``{"beta": [...], "tau": 0.5}`` into this vector). Rewards are drawn from the program's
        observed site at them. Needed unless ``reward_fn`` is given.
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
        ``policy.posterior_rows(state)`` after each chosen round, as NumPy arrays.

    Raises
    ------
    InvalidInput
        If ``rounds`` holds a non-positive round, ``policy`` is not model-based, or neither
        ``theta_true`` (of shape ``(p,)``) nor ``reward_fn`` is given.

    Examples
    --------
    >>> import numpy as np, bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> arms = np.random.default_rng(0).uniform(-1, 1, (5, 2))
    >>> bound, snaps = run_snapshots(bb.GLMTSL(logistic()), arms, theta_true=np.array([1.0, -1.0]), rounds=[3, 8])
    >>> sorted(snaps), float(snaps[8][2].sum())  # rounds, and observations in the last history
    ([3, 8], 8.0)
    """
    arms = jnp.asarray(check_arms(arms, unchanged=None))
    rounds = sorted({int(r) for r in rounds})
    if not rounds or rounds[0] < 1:
        raise InvalidInput(f"The 'rounds' parameter of along_run must be positive ints. Got {rounds} instead.")
    if not isinstance(policy, bb.contract.ModelBased):
        raise InvalidInput(
            f"The 'policy' parameter of along_run must act on a reward program (bayesbandit.contract.ModelBased: model, "
            f"bound, posterior_rows); got {type(policy).__name__}. Fix: use a GLM policy such as bb.GLMTSL(model)."
        )
    bound: bb.inference.BoundModel = policy.bound(arms.shape[1])
    if reward_fn is None:
        if theta_true is None:
            raise InvalidInput(
                "along_run needs the true parameters or a reward source. Fix: pass theta_true (flat unconstrained, "
                f"shape ({bound.num_params},)) or reward_fn(key, arm) -> reward."
            )
        theta_true = jnp.asarray(theta_true, dtype=arms.dtype)
        if theta_true.shape != (bound.num_params,):
            raise InvalidInput(
                f"The 'theta_true' parameter of along_run must have shape ({bound.num_params},). "
                f"Got shape {theta_true.shape} instead."
            )
    env = _ProgramBandit(bound, arms, theta_true, reward_fn)
    keys = key_streams(seed, 1)
    env_state, state = jax.jit(lambda ek, pk: init_run(ek, pk, policy, env, rounds[-1]))(keys.env[0], keys.policy[0])

    @jax.jit
    def step(state, t):
        return play_round(keys.pull[0], keys.policy[0], policy, env, env_state, state, t)[0]

    snapshots: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for t in range(rounds[-1]):
        state = step(state, jnp.asarray(t, jnp.int32))
        if t + 1 in rounds:
            x, y, w = policy.posterior_rows(state)
            snapshots[t + 1] = (np.asarray(x), np.asarray(y), np.asarray(w))
    return bound, snapshots


def along_run(
    policy: Any,
    arms,
    *,
    theta_true=None,
    rounds: Sequence[int] = (10, 100),
    reward_fn: RewardFn | None = None,
    methods: Sequence[str] = METHODS,
    fpl_a: float | None = None,
    seed: int = 0,
    **compare_kwargs: Any,
) -> pd.DataFrame:
    """Distances of the approximate posteriors to NUTS at chosen rounds of one bandit run.

    Runs ``policy`` for ``max(rounds)`` rounds on ``arms`` (:func:`run_snapshots`) and, at
    each chosen round ``t``, calls :func:`compare` on the policy's history after ``t``
    observations: the posterior the policy itself samples from (GLM-TSL: Laplace; GLM-FPL: the
    perturbed MAP), against NUTS on the same weighted rows.

    Parameters
    ----------
    policy, arms, theta_true, rounds, reward_fn, seed
        See :func:`run_snapshots`; :func:`flat_parameters` writes ``theta_true`` from site values.
    methods : sequence of str
        Passed to :func:`compare` (must include ``"nuts"`` for distances).
    fpl_a : float, optional
        FPL perturbation scale; defaults to the policy's ``a`` for ``GLMFPL``, else 1 (see
        :func:`compare`; the policy's ``noise`` is used too).
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
    >>> df = along_run(bb.GLMTSL(logistic()), arms, theta_true=np.ones(3), rounds=[20, 200])  # doctest: +SKIP
    """
    if fpl_a is None:
        fpl_a = float(policy.a) if isinstance(policy, bb.GLMFPL) else 1.0
    fpl_noise = policy.noise if isinstance(policy, bb.GLMFPL) else "posterior"
    bound, snapshots = run_snapshots(policy, arms, theta_true=theta_true, rounds=rounds, reward_fn=reward_fn, seed=seed)
    records = []
    for i, (t, (x, y, w)) in enumerate(sorted(snapshots.items())):
        comp = compare(
            bound, x, y, w, methods=methods, fpl_a=fpl_a, fpl_noise=fpl_noise, seed=seed + i, **compare_kwargs
        )
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
