"""``simulate`` cut into (policy, block of runs) parts, computed here or on a Dask cluster."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any

import xarray as xr

from bayesbandit._compile import options_key
from bayesbandit.envs import describe
from bayesbandit.errors import InvalidInput
from bayesbandit.scale._parts import Part, plan
from bayesbandit.scale._run import per_point, run_grid
from bayesbandit.scale._store import PartStore, Settings
from bayesbandit.sim import simulate as simulate_here
from bayesbandit.validation import check_int

__all__ = ["SimulateGrid", "simulate_parts"]


@dataclass(frozen=True)
class SimulateGrid:
    """The :class:`~bayesbandit.scale.Grid` of :func:`bayesbandit.simulate`: one part per policy and block of runs.

    Every part is ``simulate({name: policy}, env, horizon, part.runs, seed, first_run=part.start)``,
    so the parts of a policy concatenate to its runs in one ``simulate`` call, bit for bit.
    """

    policies: tuple[tuple[str, Any], ...]
    env: Any
    horizon: int
    runs: int
    seed: int
    block: int
    _: KW_ONLY
    compiler_options: tuple[tuple[str, Any], ...] = ()

    def parts(self) -> list[Part]:
        """Each policy's runs in blocks of ``block``."""
        return plan([(name,) for name, _ in self.policies], self.runs, self.block)

    def settings(self, part: Part) -> Settings:
        """The horizon, seed, environment and the part's policy (its ``repr``, every parameter)."""
        env = describe(self.env) if dataclasses.is_dataclass(self.env) else repr(self.env)
        return {
            "horizon": self.horizon,
            "seed": self.seed,
            "env": env,
            "policy": repr(dict(self.policies)[str(part.point[0])]),
        }

    def __call__(self, part: Part) -> xr.Dataset:
        """The part's runs of its policy."""
        name = str(part.point[0])
        return simulate_here(
            {name: dict(self.policies)[name]},
            self.env,
            self.horizon,
            runs=part.runs,
            seed=self.seed,
            first_run=part.start,
            progress=False,
            compiler_options=dict(self.compiler_options) or None,
        )


def simulate_parts(
    policies: Any,
    env: Any,
    horizon: int,
    *,
    runs: int = 1,
    seed: int = 0,
    client: Any = None,
    block: int | None = None,
    store: str | os.PathLike | None = None,
    progress: bool = True,
    compiler_options: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """:func:`bayesbandit.simulate`, with each policy's runs cut into blocks computed on a Dask cluster.

    The result equals ``bayesbandit.simulate(policies, env, horizon, runs, seed)`` in every
    per-run variable (``regret``, ``reward``, ``action``, ``not_converged``), bit for bit, for
    any ``block`` and any cluster: a run's random numbers derive from its index alone
    (:mod:`bayesbandit.sim.round`). ``compile_time`` and ``run_time`` are summed over the blocks.

    Parameters
    ----------
    policies, env, horizon, runs, seed
        As in :func:`bayesbandit.simulate`.
    client : dask.distributed.Client, optional
        Where the parts run (:func:`local_cluster` for this machine's cores); None: here.
    block : int, optional
        Runs per part (default: each policy's runs split evenly over the cluster's workers;
        all of them with no client). Smaller blocks balance better and lose less to a lost
        worker; each part pays its own dispatch and, on a fresh worker, compilation.
    store : path, optional
        A folder where each finished part is written (``parts/``) and reused by a later call
        with the same settings, so a stopped call resumes.
    progress : bool
        A progress bar over the parts.
    compiler_options : dict, optional
        As in :func:`bayesbandit.simulate`.

    Returns
    -------
    xarray.Dataset
        As :func:`bayesbandit.simulate`'s.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.envs import LinearBandit
    >>> ds = bb.scale.simulate_parts({"lints": bb.LinTS(v=0.5)}, LinearBandit(K=5, d=2), 20, runs=4, block=2, progress=False)
    >>> ds.run.values.tolist()
    [0, 1, 2, 3]
    """
    named = dict(policies) if isinstance(policies, Mapping) else {type(policies).__name__: policies}
    if not named:
        raise InvalidInput(
            "The 'policies' parameter of scale.simulate_parts must name at least one policy. Got an empty mapping instead."
        )
    runs = check_int("scale.simulate_parts", "runs", runs, low=1)
    if block is None:
        workers = len(client.scheduler_info()["workers"]) if client is not None else 1
        block = math.ceil(runs / max(workers, 1))
    grid = SimulateGrid(
        tuple(named.items()),
        env,
        check_int("scale.simulate_parts", "horizon", horizon, low=1),
        runs,
        check_int("scale.simulate_parts", "seed", seed, low=0, high=2**32 - 1),
        check_int("scale.simulate_parts", "block", block, low=1),
        compiler_options=options_key(compiler_options),
    )
    done = run_grid(grid, store=None if store is None else PartStore(store), client=client, progress=progress)
    return xr.concat(list(per_point(done).values()), dim="policy", data_vars="all", coords="minimal", compat="override")
