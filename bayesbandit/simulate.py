"""Simulate policies on an environment: ``lax.scan`` over rounds inside ``vmap`` over runs.

Common random numbers
---------------------
Every policy in one call (and every call with the same ``seed``) sees the same problem
instances and the same reward noise. From ``seed`` three independent key streams are split:

* instances: run ``r`` is ``env.reset(split(k_env, runs)[r])``;
* rewards: round ``t`` of run ``r`` pulls with ``fold_in(split(k_pull, runs)[r], t)``, which
  depends on (run, round) only, never on the policy; environments draw the rewards of all arms
  from it and return the pulled one, so the same arm gets the same reward realisation whichever
  policy pulls it;
* policies: ``select`` in round ``t`` of run ``r`` gets ``fold_in(split(k_policy, runs)[r], t)``
  (the same stream for every policy, so two identical policies give identical results).

Compilation
-----------
The horizon is cut into ``num_chunks`` equal chunks (the last one padded: the extra rounds run
and are dropped), each one ``scan`` carried over from the previous, so a progress bar can advance
while the executable is compiled once. The policy is an *argument* of the jitted chunk (its
numeric hyper-parameters are pytree leaves), so policies that differ only in numbers, e.g.
GLM-TSL with the theory ``a`` and with ``a = 1``, share one executable. Compilation is done
ahead of time (``jit(...).lower(...).compile()``) and timed on its own; a reused executable
reports a compile time of 0.

Policies with ``jittable = False`` (e.g. backed by a host index) run in a Python loop over runs
and rounds instead, with the same keys and the same result type.
"""

from __future__ import annotations

import math
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from bayesbandit._results import cumulative_regret, plot_regret, summarize, summary_markdown
from bayesbandit._typing import Array
from bayesbandit.envs._base import describe

__all__ = ["simulate", "Step", "plot_regret", "summarize", "summary_markdown", "cumulative_regret"]

DEFAULT_NUM_CHUNKS = 20
_AUTO_PROGRESS = 100_000  # runs * horizon * policies above which the progress bar shows by default
_CACHE_SIZE = 32
_COMPILED: OrderedDict = OrderedDict()  # (env, record, policy treedef and avals, shapes) -> executables


class Step(NamedTuple):
    """What a ``record`` hook sees of one round (besides the policy's ``info``)."""

    t: Array  # ()  int, round index (0-based)
    arms: Array  # (K, d) features offered
    arm: Array  # ()  int, arm pulled
    reward: Array  # ()  realised reward
    means: Array  # (K,) expected rewards of all arms


def _key_streams(seed: int, runs: int) -> tuple[Array, Array, Array]:
    k_env, k_pull, k_policy = jax.random.split(jax.random.PRNGKey(seed), 3)
    return jax.random.split(k_env, runs), jax.random.split(k_pull, runs), jax.random.split(k_policy, runs)


def _as_dict(policies: Any) -> dict[str, Any]:
    if isinstance(policies, Mapping):
        if not policies:
            raise ValueError("simulate needs at least one policy; got an empty mapping.")
        return {str(k): v for k, v in policies.items()}
    return {type(policies).__name__: policies}


def _check(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"The '{name}' parameter of simulate must be an int >= {low}. Got {value!r} instead.")
    return int(value)


def _newton_failed(info: Any) -> Array:
    converged = getattr(getattr(info, "newton", None), "converged", None)
    return jnp.asarray(False) if converged is None else ~jnp.asarray(converged)


def _init(policy, env, capacity: int, env_key: Array):
    env_state = env.reset(env_key)
    if env.fixed_arms:
        return env_state, policy.init(env.arms(env_state, 0), capacity=capacity)
    return env_state, policy.init(d=env.d, capacity=capacity)


def _round(policy, env, record, env_state, pstate, pull_key, policy_key, t):
    """One round for one run: select, pull, update. Returns the new policy state and outputs."""
    arms = env.arms(env_state, t)
    arm, info = policy.select(pstate, arms, jax.random.fold_in(policy_key, t))
    reward, means = env.pull(env_state, arm, jax.random.fold_in(pull_key, t), t=t)
    pstate = policy.update(pstate, arm if env.fixed_arms else arms[arm], reward)
    out = {
        "regret": jnp.max(means) - means[arm],
        "reward": jnp.asarray(reward, jnp.float64),
        "arm": jnp.asarray(arm, jnp.int32),
    }
    if record is not None:
        out.update(record(info, Step(t, arms, arm, reward, means)))
    return pstate, out, _newton_failed(info)


def _chunk(policy, env, record, carry, ts):
    """``scan`` of one chunk of rounds ``ts`` for one run (vmapped over runs by the caller)."""

    def body(carry, t):
        env_state, pstate, pull_key, policy_key, failures = carry
        pstate, out, failed = _round(policy, env, record, env_state, pstate, pull_key, policy_key, t)
        return (env_state, pstate, pull_key, policy_key, failures + failed.astype(jnp.int32)), out

    return jax.lax.scan(body, carry, ts)


def _split_policy(policy):
    """(dynamic leaves, rebuild, cache identity): numeric leaves are jit arguments, the rest static.

    A policy that is not a registered pytree is closed over whole (cached only if hashable).
    """
    leaves, treedef = jax.tree.flatten(policy)
    if len(leaves) == 1 and leaves[0] is policy:
        try:
            ident = ("static", hash(policy), policy)
        except TypeError:
            ident = None
        return [], lambda _: policy, ident
    dyn = [jnp.asarray(x) for x in leaves]
    return dyn, lambda d: jax.tree.unflatten(treedef, d), (treedef, tuple(jax.typeof(x) for x in dyn))


def _executables(split, env, record, capacity: int, env_keys, pull_keys, policy_keys, chunk_len: int, options):
    """Ahead-of-time compiled (init, chunk) for this policy structure; cached. Returns (init, chunk, seconds)."""
    dyn, rebuild, ident = split
    cache_key = (
        env,
        record,
        ident,
        capacity,
        env_keys.shape[0],
        chunk_len,
        tuple(sorted((options or {}).items())),
    )
    if ident is not None and cache_key in _COMPILED:
        _COMPILED.move_to_end(cache_key)
        return (*_COMPILED[cache_key], 0.0)
    start = time.perf_counter()

    # lax.map, not vmap: init runs once per run, and a batched Newton while-loop compiles slowly.
    def init(d, ks):
        return jax.lax.map(lambda k: _init(rebuild(d), env, capacity, k), ks)

    init_c = jax.jit(init, compiler_options=options).lower(dyn, env_keys).compile()
    env_state, pstate = jax.eval_shape(init, dyn, env_keys)
    failures = jax.ShapeDtypeStruct((env_keys.shape[0],), jnp.int32)
    carry = (env_state, pstate, pull_keys, policy_keys, failures)
    ts = jax.ShapeDtypeStruct((chunk_len,), jnp.int32)
    chunk = jax.jit(
        jax.vmap(lambda d, c, t: _chunk(rebuild(d), env, record, c, t), in_axes=(None, 0, None)),
        compiler_options=options,
    )
    chunk_c = chunk.lower(dyn, carry, ts).compile()
    seconds = time.perf_counter() - start
    if ident is not None:
        _COMPILED[cache_key] = (init_c, chunk_c)
    while len(_COMPILED) > _CACHE_SIZE:
        _COMPILED.popitem(last=False)
    return init_c, chunk_c, seconds


def _simulate_scan(policy, env, record, horizon, num_chunks, keys, bar, options):
    env_keys, pull_keys, policy_keys = keys
    chunk_len = math.ceil(horizon / num_chunks)
    num_chunks = math.ceil(horizon / chunk_len)
    capacity = num_chunks * chunk_len
    split = _split_policy(policy)
    dyn = split[0]
    init_c, chunk_c, compile_s = _executables(
        split, env, record, capacity, env_keys, pull_keys, policy_keys, chunk_len, options
    )
    start = time.perf_counter()
    env_state, pstate = init_c(dyn, env_keys)
    carry = (env_state, pstate, pull_keys, policy_keys, jnp.zeros(env_keys.shape[0], jnp.int32))
    outs = []
    for c in range(num_chunks):
        ts = jnp.arange(c * chunk_len, (c + 1) * chunk_len, dtype=jnp.int32)
        carry, out = chunk_c(dyn, carry, ts)
        outs.append(jax.device_get(out))  # waits for the chunk: the bar shows real progress
        if bar is not None:
            bar.update(min(chunk_len, horizon - c * chunk_len))
    run_s = time.perf_counter() - start
    out = {k: np.concatenate([o[k] for o in outs], axis=1)[:, :horizon] for k in outs[0]}
    return out, np.asarray(carry[4]), compile_s, run_s


def _simulate_host(policy, env, record, horizon, keys, bar):
    """Python loop over runs and rounds for policies that cannot be traced (``jittable = False``)."""
    env_keys, pull_keys, policy_keys = keys
    reset = jax.jit(env.reset)
    arms_fn = jax.jit(env.arms)
    pull = jax.jit(lambda s, a, k, t: env.pull(s, a, k, t=t))
    fold_in = jax.jit(jax.random.fold_in)
    runs = env_keys.shape[0]
    outs: list[dict[str, list]] = []
    failures = np.zeros(runs, np.int32)
    round_times: list[float] = []
    start = time.perf_counter()
    for r in range(runs):
        env_state = reset(env_keys[r])
        if env.fixed_arms:
            pstate = policy.init(arms_fn(env_state, 0), capacity=horizon)
        else:
            pstate = policy.init(d=env.d, capacity=horizon)
        rows: dict[str, list] = {}
        for t in range(horizon):
            t0 = time.perf_counter()
            tj = jnp.asarray(t, jnp.int32)
            arms = arms_fn(env_state, tj)
            arm, info = policy.select(pstate, arms, fold_in(policy_keys[r], tj))
            reward, means = pull(env_state, arm, fold_in(pull_keys[r], tj), tj)
            pstate = policy.update(pstate, arm if env.fixed_arms else arms[arm], reward)
            means = np.asarray(means)
            out = {
                "regret": float(means.max() - means[int(arm)]),
                "reward": float(reward),
                "arm": int(arm),
            }
            if record is not None:
                out.update({k: np.asarray(v) for k, v in record(info, Step(tj, arms, arm, reward, means)).items()})
            failures[r] += bool(_newton_failed(info))
            for k, v in out.items():
                rows.setdefault(k, []).append(v)
            round_times.append(time.perf_counter() - t0)
        outs.append(rows)
        if bar is not None:
            bar.update(horizon)
    total = time.perf_counter() - start
    # Compile time estimate: the first round's excess over a typical round.
    compile_s = max(0.0, round_times[0] - float(np.median(round_times))) if round_times else 0.0
    out = {k: np.stack([np.asarray(o[k]) for o in outs]) for k in outs[0]}
    out["arm"] = out["arm"].astype(np.int32)
    return out, failures, compile_s, total - compile_s


def simulate(
    policies: Any,
    env: Any,
    horizon: int,
    runs: int = 1,
    seed: int = 0,
    *,
    progress: bool | None = None,
    record: Callable[[Any, Step], dict[str, Array]] | None = None,
    num_chunks: int = DEFAULT_NUM_CHUNKS,
    compiler_options: dict[str, Any] | None = None,
) -> xr.Dataset:
    """Run one or several policies for ``runs`` independent instances of ``horizon`` rounds.

    Parameters
    ----------
    policies : policy or dict of str to policy
        A pure policy (``init / select / update``) or several, by name. All see the same
        instances and reward noise (common random numbers; see the module docstring).
    env : environment
        A :mod:`bayesbandit.envs` environment (``reset``, ``arms``, ``pull``, ``fixed_arms``).
    horizon : int
        Rounds per run ``n``.
    runs : int
        Independent instances (one run each).
    seed : int
    progress : bool, optional
        Show a tqdm progress bar; by default only for long simulations.
    record : callable, optional
        ``record(info, step) -> dict[str, array]`` called every round inside the scan
        (``info`` is what ``select`` returned, ``step`` a :class:`Step`); each entry becomes a
        variable with dims ``(policy, run, round, ...)``. Keep outputs small.
    num_chunks : int
        Number of equal chunks the horizon is cut into (progress granularity).
    compiler_options : dict, optional
        XLA options for the jitted chunk, e.g. ``{"xla_backend_optimization_level": 0}``
        compiles several times faster and runs about half as fast (worth it for short runs).

    Returns
    -------
    xarray.Dataset
        dims ``(policy, run, round)``: ``regret`` (per-round expected regret
        ``max_i mu_i - mu_{I_t}``), ``reward`` (realised), ``arm`` (index pulled); per policy:
        ``compile_time`` and ``run_time`` (seconds, steady execution after compilation),
        ``wall_time`` (their sum); per policy and run: ``newton_failures`` (rounds whose
        ``info.newton.converged`` was false). Attributes: ``horizon``, ``runs``, ``seed``,
        ``env`` (description), versions. Save with ``ds.to_netcdf(path)``; plot with
        :func:`bayesbandit.plot_regret`; tabulate with :func:`bayesbandit.summarize`.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.envs import LinearBandit
    >>> ds = bb.simulate({"lints": bb.LinTS(v=0.5)}, LinearBandit(K=5, d=2), horizon=30, runs=2)
    >>> ds.regret.dims
    ('policy', 'run', 'round')
    """
    named = _as_dict(policies)
    horizon = _check("horizon", horizon, 1)
    runs = _check("runs", runs, 1)
    num_chunks = min(_check("num_chunks", num_chunks, 1), horizon)
    keys = _key_streams(seed, runs)
    if progress is None:
        progress = runs * horizon * len(named) >= _AUTO_PROGRESS
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=horizon * len(named), unit="round", desc="simulate", dynamic_ncols=True)

    results, failures, compile_s, run_s = {}, {}, {}, {}
    try:
        for name, policy in named.items():
            if bar is not None:
                bar.set_description(name)
            if getattr(policy, "jittable", True):
                out, fail, comp, run = _simulate_scan(
                    policy, env, record, horizon, num_chunks, keys, bar, compiler_options
                )
            else:
                out, fail, comp, run = _simulate_host(policy, env, record, horizon, keys, bar)
            results[name], failures[name], compile_s[name], run_s[name] = out, fail, comp, run
    finally:
        if bar is not None:
            bar.close()

    names = list(named)
    data: dict[str, Any] = {}
    for var in results[names[0]]:
        stacked = np.stack([results[n][var] for n in names])
        extra = tuple(f"{var}_dim_{i}" for i in range(stacked.ndim - 3))
        data[var] = (("policy", "run", "round", *extra), stacked)
    data["newton_failures"] = (("policy", "run"), np.stack([failures[n] for n in names]).astype(np.int64))
    data["compile_time"] = ("policy", np.array([compile_s[n] for n in names]), {"units": "s"})
    data["run_time"] = ("policy", np.array([run_s[n] for n in names]), {"units": "s"})
    data["wall_time"] = ("policy", np.array([compile_s[n] + run_s[n] for n in names]), {"units": "s"})
    data["policy_description"] = ("policy", np.array([repr(named[n]) for n in names], dtype=str))
    ds = xr.Dataset(
        data,
        coords={"policy": names, "run": np.arange(runs), "round": np.arange(horizon)},
        attrs={
            "horizon": horizon,
            "runs": runs,
            "seed": int(seed),
            "env": describe(env) if hasattr(env, "__dataclass_fields__") else repr(env),
            "num_chunks": num_chunks,
            "jax_version": jax.__version__,
            "device": str(jax.devices()[0]),
            "regret": "per-round expected regret max_i mu_i - mu_{I_t} (true means)",
        },
    )
    ds["regret"].attrs["long_name"] = "per-round expected regret"
    bad = [n for n in names if not np.all(np.isfinite(results[n]["regret"]))]
    if bad:
        warnings.warn(f"non-finite regret for policies {bad}", RuntimeWarning, stacklevel=2)
    return ds
