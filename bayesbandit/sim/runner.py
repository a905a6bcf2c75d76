"""``simulate``: run policies on an environment with common random numbers, into an ``xarray.Dataset``.

Jittable policies (``kind = "jax"``) run compiled (:mod:`bayesbandit.sim.scan`: ``lax.scan``
over rounds inside ``vmap`` over runs); host policies (``kind = "host"``) run in a Python loop
(:mod:`bayesbandit.sim.host`). Both play :func:`bayesbandit.sim.round.play_round` with the
same key streams (common random numbers, described there), and give the same result type.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np
import xarray as xr

from bayesbandit.contract import Combinatorial, ModelBased, policy_kind
from bayesbandit.envs import describe
from bayesbandit.errors import InvalidInput
from bayesbandit.sim.host import run_host
from bayesbandit.sim.round import Round, key_streams
from bayesbandit.sim.scan import run_scan
from bayesbandit.validation import check_compiler_options, check_int

__all__ = ["simulate"]

DEFAULT_NUM_CHUNKS = 20
_AUTO_PROGRESS = 100_000  # runs * horizon * policies above which the progress bar shows by default


def _as_dict(policies: Any) -> dict[str, Any]:
    if isinstance(policies, Mapping):
        if not policies:
            raise InvalidInput(
                "The 'policies' parameter of simulate must name at least one policy. Got an empty mapping instead."
            )
        named = {str(k): v for k, v in policies.items()}
    else:
        named = {type(policies).__name__: policies}
    for policy in named.values():
        policy_kind(policy)
    return named


def _check_env(env: Any) -> None:
    missing = [m for m in ("reset", "arms", "pull") if not callable(getattr(env, m, None))]
    if missing or not hasattr(env, "fixed_arms") or not hasattr(env, "d"):
        raise InvalidInput(
            f"The 'env' parameter of simulate must be an environment (reset, arms, pull, fixed_arms, d); got "
            f"{type(env).__name__} (missing {missing or ['fixed_arms or d']}). Fix: pass one from bayesbandit.envs."
        )


def simulate(
    policies: Any,
    env: Any,
    horizon: int,
    *,
    runs: int = 1,
    seed: int = 0,
    progress: bool | None = None,
    record: Callable[[Round], dict[str, Any]] | None = None,
    num_chunks: int = DEFAULT_NUM_CHUNKS,
    compiler_options: dict[str, Any] | None = None,
    first_run: int = 0,
) -> xr.Dataset:
    """Run one or several policies for ``runs`` independent instances of ``horizon`` rounds.

    Parameters
    ----------
    policies : policy or dict of str to policy
        A policy or several, by name (``docs/contract.md``). All see the same instances and
        reward noise (common random numbers; see :mod:`bayesbandit.sim.round`).
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
        ``record(round) -> dict[str, array]`` called every round inside the scan with the
        :class:`~bayesbandit.sim.round.Round` (arms, action, feedback, outcome, the select and
        update infos); each entry becomes a variable with dims ``(policy, run, round, ...)``.
        Keep outputs small.
    num_chunks : int
        Number of equal chunks the horizon is cut into (progress granularity).
    compiler_options : dict, optional
        XLA options for the jitted chunk, e.g. ``{"xla_backend_optimization_level": 0}``
        compiles several times faster and runs about half as fast (worth it for short runs).
    first_run : int
        The global index of the first run: runs ``first_run, ..., first_run + runs - 1`` are
        played, each with the keys of its index (:func:`~bayesbandit.sim.key_streams`), so a
        block of runs gives exactly those runs of a larger ``simulate`` with the same seed, and
        blocks played anywhere concatenate to it (:mod:`bayesbandit.scale`). The ``run``
        coordinate holds the global indices.

    Returns
    -------
    xarray.Dataset
        dims ``(policy, run, round)``: ``regret`` (per-round expected regret from the
        environment's oracle, ``Outcome.regret``), ``reward`` (realised feedback), ``action``
        (index pulled; an extra dim for k-subsets); per policy: ``compile_time`` and
        ``run_time`` (seconds, steady execution after compilation), ``wall_time`` (their sum);
        per policy and run: ``not_converged`` (rounds whose select or update Info had
        ``converged`` false). Attributes: ``horizon``, ``runs``, ``seed``, ``devices`` (the
        compiled runs are split over every device: :mod:`bayesbandit.sim.scan`),
        ``env`` (description), versions. Save with ``ds.to_netcdf(path)``; plot with
        :func:`bayesbandit.sim.plot_regret`; tabulate with :func:`bayesbandit.sim.summarize`.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.envs import LinearBandit
    >>> ds = bb.simulate({"lints": bb.LinTS(v=0.5)}, LinearBandit(K=5, d=2), horizon=30, runs=2)
    >>> ds.regret.dims
    ('policy', 'run', 'round')
    """
    named = _as_dict(policies)
    _check_env(env)
    horizon = check_int("simulate", "horizon", horizon, low=1)
    runs = check_int("simulate", "runs", runs, low=1)
    num_chunks = min(check_int("simulate", "num_chunks", num_chunks, low=1), horizon)
    seed = check_int("simulate", "seed", seed, low=0, high=2**32 - 1)
    first_run = check_int("simulate", "first_run", first_run, low=0, high=2**32 - runs)
    if progress is not None and not isinstance(progress, bool):
        raise InvalidInput(f"The 'progress' parameter of simulate must be a bool or None. Got {progress!r} instead.")
    compiler_options = check_compiler_options("simulate", compiler_options)
    if record is not None and not callable(record):
        raise InvalidInput(f"The 'record' parameter of simulate must be callable or None. Got {record!r} instead.")
    for policy in named.values():
        if isinstance(policy, ModelBased):
            policy.check_program(env.d)
        if isinstance(policy, Combinatorial):
            policy.check_arms(env.K)
    keys = key_streams(seed, runs, first_run=first_run)
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
            if policy_kind(policy) == "jax":
                out, fail, comp, run = run_scan(policy, env, record, horizon, num_chunks, keys, bar, compiler_options)
            else:
                out, fail, comp, run = run_host(policy, env, record, horizon, keys, bar)
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
    data["not_converged"] = (("policy", "run"), np.stack([failures[n] for n in names]).astype(np.int64))
    data["compile_time"] = ("policy", np.array([compile_s[n] for n in names]), {"units": "s"})
    data["run_time"] = ("policy", np.array([run_s[n] for n in names]), {"units": "s"})
    data["wall_time"] = ("policy", np.array([compile_s[n] + run_s[n] for n in names]), {"units": "s"})
    data["policy_description"] = ("policy", np.array([repr(named[n]) for n in names], dtype=str))
    ds = xr.Dataset(
        data,
        coords={"policy": names, "run": np.arange(first_run, first_run + runs), "round": np.arange(horizon)},
        attrs={
            "horizon": horizon,
            "runs": runs,
            "first_run": first_run,
            "seed": int(seed),
            "env": describe(env) if hasattr(env, "__dataclass_fields__") else repr(env),
            "num_chunks": num_chunks,
            "jax_version": jax.__version__,
            "device": str(jax.devices()[0]),
            "devices": len(jax.devices()),  # compiled runs are split over all of them
            "regret": "per-round expected regret: best expected reward minus the action's (environment oracle)",
        },
    )
    ds["regret"].attrs["long_name"] = "per-round expected regret"
    bad = [n for n in names if not np.all(np.isfinite(results[n]["regret"]))]
    if bad:
        warnings.warn(f"non-finite regret for policies {bad}", RuntimeWarning, stacklevel=2)
    return ds
