"""``evaluate``: every estimator on every target policy, with intervals, as one xarray Dataset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.ope._estimators import DEFAULT_ESTIMATORS, IPS, Estimator, parts
from bayesbandit.ope._intervals import Betting, Bootstrap, betting_interval, percentile_interval
from bayesbandit.ope._logs import Logs
from bayesbandit.ope._reward_model import RewardModel, check_q_hat
from bayesbandit.ope._target import TargetDistribution

__all__ = ["evaluate", "point_estimates", "bootstrap_values", "ground_truth", "overlap"]


def point_estimates(
    logs: Logs, pi_e: Array, q_hat: Array | None, estimators: tuple[Estimator, ...]
) -> tuple[Array, Array]:
    """Values and CLT standard errors (``std(round terms, ddof=1) / sqrt(n)``) of every estimator on every target.

    ``pi_e`` of shape (T, n, K); returns two arrays of shape (T, E). Pure and jittable.
    """

    def one(pi: Array) -> tuple[Array, Array]:
        p = parts(logs.action, logs.reward, logs.pscore, pi, q_hat=q_hat)
        values = jnp.stack([e.value(p) for e in estimators])
        terms = jnp.stack([e.round_terms(p) for e in estimators])
        return values, jnp.std(terms, axis=1, ddof=1) / jnp.sqrt(terms.shape[1])

    return jax.vmap(one)(pi_e)


def bootstrap_values(
    key: PRNGKey,
    logs: Logs,
    pi_e: Array,
    q_hat: Array | None,
    estimators: tuple[Estimator, ...],
    num: int,
    *,
    refit: RewardModel | None = None,
    batch: int = 64,
) -> Array:
    """Every estimator's value on ``num`` resamples of the rounds, shape (num, T, E). Jittable.

    Resample ``b`` draws ``n`` rounds uniformly with replacement (key ``split(key, num)[b]``) and
    weights every per-round column by the multiplicities; with ``refit`` the reward model is
    refitted on the resample's weighted rows. ``batch`` resamples are computed at once.
    """
    n = logs.num_rounds

    def one(k: PRNGKey) -> Array:
        counts = jnp.zeros(n, logs.reward.dtype).at[jax.random.randint(k, (n,), 0, n)].add(1.0)
        q = q_hat if refit is None else refit.fit_predict(logs, counts=counts)

        def per_target(pi: Array) -> Array:
            p = parts(logs.action, logs.reward, logs.pscore, pi, q_hat=q)
            return jnp.stack([e.value(p, counts) for e in estimators])

        return jax.vmap(per_target)(pi_e)

    return jax.lax.map(one, jax.random.split(key, num), batch_size=min(batch, num))


def ground_truth(logs: Logs, pi_e: Array) -> Array:
    """OBP's ``calc_ground_truth_policy_value``: ``mean_i sum_a pi_e(a | i) q(i, a)`` from ``logs.expected_reward``, shape (T,)."""
    if logs.expected_reward is None:
        raise InvalidInput(
            "ground_truth: the 'logs' argument must carry expected_reward (a synthetic log). Got None. "
            "Fix: use logs from bayesbandit.ope.synthetic_logs, or Logs.create(..., expected_reward=q)."
        )
    return jnp.mean(jnp.sum(pi_e * logs.expected_reward[None], axis=2), axis=1)


def overlap(logs: Logs, pi_e: Array) -> dict[str, Array]:
    """How well the logs cover each target (``pi_e`` of shape (T, n, K)); each diagnostic of shape (T,).

    * ``effective_sample_size``: Kish's ``(sum_i w_i)^2 / sum_i w_i^2`` of the importance weights
      ``w_i = pi_e(a_i | i) / p_i``; ``n`` when the target is the logging policy, small when a
      few rounds carry the estimate.
    * ``max_weight``: the largest ``w_i``.
    * ``unsupported_mass`` (logs with ``pi_b`` only): ``mean_i sum_a pi_e(a | i) 1[pi_b(a | i) = 0]``,
      the target's probability on actions the logging policy could not take. IPS estimates the
      value with those actions' rewards counted as 0 (positivity fails): the DR family falls back
      on the reward model there, and the gap is not visible in any interval.
    """
    w = _weights(logs, pi_e)
    out = {
        "effective_sample_size": jnp.sum(w, axis=1) ** 2 / jnp.maximum(jnp.sum(w**2, axis=1), jnp.finfo(w.dtype).tiny),
        "max_weight": jnp.max(w, axis=1),
    }
    if logs.pi_b is not None:
        out["unsupported_mass"] = jnp.mean(jnp.sum(pi_e * (logs.pi_b[None] == 0), axis=2), axis=1)
    return out


def _targets(logs: Logs, targets: Mapping[str, Any]) -> tuple[list[str], Array, Array]:
    if not isinstance(targets, Mapping) or not targets:
        raise InvalidInput(
            "evaluate: the 'targets' argument must be a non-empty dict name -> action distribution (n, K). "
            f"Got {type(targets).__name__}. Fix: pass {{'name': ope.target_distribution(policy, state, logs, key)}}."
        )
    names, probs, ses = [], [], []
    shape = (logs.num_rounds, logs.num_arms)
    for name, target in targets.items():
        pi, se = (target.probabilities, target.se) if isinstance(target, TargetDistribution) else (target, None)
        arr = np.asarray(pi, dtype=np.float64)
        if arr.shape != shape or not np.isfinite(arr).all() or (arr < 0).any() or np.abs(arr.sum(1) - 1).max() > 1e-6:
            raise InvalidInput(
                f"evaluate: the 'targets' entry {name!r} must be an action distribution of shape {shape} with rows "
                f"of non-negative probabilities summing to one. Got shape {arr.shape}. Fix: pass "
                "ope.target_distribution(policy, state, logs, key) or a normalised array."
            )
        names.append(str(name))
        probs.append(arr)
        ses.append(np.zeros(shape) if se is None else np.asarray(se))
    return names, jnp.asarray(np.stack(probs)), jnp.asarray(np.stack(ses))


def _estimators(estimators: Sequence[Estimator], has_model: bool) -> tuple[Estimator, ...]:
    chosen = tuple(estimators)
    if not chosen or not all(isinstance(e, Estimator) for e in chosen):
        raise InvalidInput(
            "evaluate: the 'estimators' argument must be a non-empty sequence of ope estimators (IPS(), DR(), ...). "
            f"Got {estimators!r}. Fix: pass e.g. [ope.IPS(), ope.DR()]."
        )
    labels = [e.label for e in chosen]
    if len(set(labels)) != len(labels):
        raise InvalidInput(
            f"evaluate: the 'estimators' argument lists one estimator twice ({labels}). Fix: drop the repeat."
        )
    if not has_model and any(e.needs_model for e in chosen):
        needing = [e.label for e in chosen if e.needs_model]
        raise InvalidInput(
            f"evaluate: the 'reward_model' argument is None but {needing} need one. Fix: pass "
            "reward_model=ope.RewardModel(model) (or an (n, K) q_hat), or only IPS and SNIPS."
        )
    return chosen


@partial(jax.jit, static_argnums=(3,))
def _point_jit(logs: Logs, pi_e: Array, q_hat: Array | None, estimators: tuple[Estimator, ...]) -> tuple[Array, Array]:
    return point_estimates(logs, pi_e, q_hat, estimators)


@partial(jax.jit, static_argnums=(3, 5, 6))
def _bootstrap_jit(
    logs: Logs, pi_e: Array, q_hat: Array | None, estimators: tuple[Estimator, ...], key: PRNGKey, num: int, refit: Any
) -> Array:
    return bootstrap_values(key, logs, pi_e, q_hat, estimators, num, refit=refit)


def _betting(logs: Logs, pi_e: Array, interval: Betting) -> tuple[Array, Array]:
    """The betting interval of every target, each shape (T,)."""
    return jax.vmap(
        lambda w: betting_interval(w, logs.reward, level=interval.level, reward_range=interval.reward_range)
    )(_weights(logs, pi_e))


def _weights(logs: Logs, pi_e: Array) -> Array:
    """Importance weights ``pi_e(a_i | i) / p_i`` of every target, shape (T, n)."""
    return pi_e[:, jnp.arange(logs.num_rounds), logs.action] / logs.pscore[None]


def evaluate(
    logs: Logs,
    targets: Mapping[str, Any],
    *,
    estimators: Sequence[Estimator] = DEFAULT_ESTIMATORS,
    reward_model: RewardModel | Any | None = None,
    intervals: Sequence[Bootstrap | Betting] = (Bootstrap(), Betting()),
    key: PRNGKey | None = None,
) -> xr.Dataset:
    """Estimate the value of each target policy from the logs with each estimator, with intervals.

    Parameters
    ----------
    logs : Logs
    targets : dict name -> (n, K) array or TargetDistribution
        Each target's action distribution on the logged rounds
        (:func:`bayesbandit.ope.target_distribution`).
    estimators : sequence of Estimator
        Default :data:`DEFAULT_ESTIMATORS` (IPS, SNIPS, DM, DR, SNDR, Switch-DR, DR-os).
    reward_model : RewardModel or array (n, K), optional
        The direct method's ``q_hat`` (cross-fitted by :class:`RewardModel`), needed by DM and
        the DR family.
    intervals : sequence of Bootstrap and Betting
        Which intervals to compute (``()``: none).
    key : PRNGKey, optional
        Drives the bootstrap and NUTS (default ``PRNGKey(0)``).

    Returns
    -------
    xarray.Dataset
        Over ``target`` x ``estimator``: ``value``, ``se`` (CLT), and per interval asked
        ``bootstrap_lo``/``bootstrap_hi`` (every estimator) and ``betting_lo``/``betting_hi``
        (the IPS row; NaN elsewhere). Over ``target``: ``truth`` when the logs carry
        ``expected_reward``, and ``target_se_max`` (the largest Monte Carlo standard error of
        the target's probabilities, 0 when exact), and the overlap diagnostics of
        :func:`overlap` (``effective_sample_size``, ``max_weight``, and ``unsupported_mass``
        when the logs carry ``pi_b``). Attributes: ``n``, ``K``, the intervals'
        settings.
    """
    if not isinstance(logs, Logs):
        raise InvalidInput(
            f"evaluate: the 'logs' argument must be an ope.Logs. Got {type(logs).__name__}. "
            "Fix: build it with Logs.create, Logs.from_obp or Logs.from_decision_log."
        )
    key = jax.random.PRNGKey(0) if key is None else key
    names, pi_e, pi_se = _targets(logs, targets)
    chosen = _estimators(estimators, reward_model is not None)
    for interval in intervals:
        if not isinstance(interval, (Bootstrap, Betting)):
            raise InvalidInput(
                f"evaluate: the 'intervals' argument must hold Bootstrap(...) and Betting(...) objects. Got "
                f"{interval!r}. Fix: pass e.g. intervals=(ope.Bootstrap(1000), ope.Betting())."
            )
    model_key, boot_key = jax.random.split(key)
    q_hat = None
    if isinstance(reward_model, RewardModel):
        q_hat = reward_model.fit_predict(logs, model_key)
    elif reward_model is not None:
        q_hat = check_q_hat(reward_model, logs, "evaluate")
    values, se = _point_jit(logs, pi_e, q_hat, chosen)
    dims = ("target", "estimator")
    data: dict[str, Any] = {"value": (dims, np.asarray(values)), "se": (dims, np.asarray(se))}
    attrs: dict[str, Any] = {"n": logs.num_rounds, "K": logs.num_arms}
    for interval in intervals:
        if isinstance(interval, Bootstrap):
            refit = None
            if interval.refit:
                if not (isinstance(reward_model, RewardModel) and reward_model.method == "laplace"):
                    raise InvalidInput(
                        "evaluate: Bootstrap(refit=True) needs reward_model=RewardModel(model, method='laplace'). "
                        f"Got {reward_model!r}. Fix: pass such a reward model, or refit=False."
                    )
                refit = reward_model
            resampled = _bootstrap_jit(logs, pi_e, q_hat, chosen, boot_key, interval.num, refit)
            lo, hi = percentile_interval(resampled, interval.level)
            data["bootstrap_lo"], data["bootstrap_hi"] = (dims, np.asarray(lo)), (dims, np.asarray(hi))
            attrs.update(
                bootstrap_num=interval.num, bootstrap_level=interval.level, bootstrap_refit=int(interval.refit)
            )
        else:
            lo, hi = _betting(logs, pi_e, interval)
            row = np.full((len(names), len(chosen)), np.nan)
            ips = [i for i, e in enumerate(chosen) if isinstance(e, IPS)]
            both = []
            for bound in (lo, hi):
                filled = row.copy()
                filled[:, ips] = np.asarray(bound)[:, None]
                both.append(filled)
            data["betting_lo"], data["betting_hi"] = (dims, both[0]), (dims, both[1])
            attrs.update(betting_level=interval.level)
    if logs.expected_reward is not None:
        data["truth"] = (("target",), np.asarray(ground_truth(logs, pi_e)))
    data["target_se_max"] = (("target",), np.asarray(jnp.max(pi_se, axis=(1, 2))))
    for name, diagnostic in overlap(logs, pi_e).items():
        data[name] = (("target",), np.asarray(diagnostic))
    coords = {"target": names, "estimator": [e.label for e in chosen]}
    return xr.Dataset(data, coords=coords, attrs=attrs)
