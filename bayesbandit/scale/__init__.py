"""Experiments beyond one process: parts computed anywhere, with the numbers of the whole run.

Every run's random numbers derive from its global index and the seed
(:func:`bayesbandit.sim.key_streams`), never from which runs are played beside it, so an
experiment cut into parts, a :class:`Part` being one grid point and a block of its runs, gives
the same numbers, bit for bit, however the parts are split over processes and machines. On top
of that:

* :func:`run_grid` computes a :class:`Grid`'s parts here or as tasks on a Dask cluster
  (``dask.distributed.Client``; :func:`local_cluster` for this machine), stores each as it
  finishes (:class:`PartStore`, atomic netCDF files with the settings they were computed with),
  reuses stored ones (a stopped run resumes), reruns the tasks of a lost worker, and shows
  progress;
* :func:`shard` gives job ``K`` of ``N`` of a batch scheduler (a Slurm array) its parts;
  shards write into one folder, or their folders are merged (``bayesbandit merge``);
* :func:`simulate_parts` is :func:`bayesbandit.simulate` with each policy's runs cut into blocks on a
  cluster;
* one JAX program over several processes or hosts is :func:`bayesbandit.sharding.initialize`
  (SPMD: every process runs the same code, the runs are split over every process's devices).

The user guide's page "More than one machine" gives the commands.
"""

from bayesbandit.scale._parts import Part, parse_shard, plan, shard
from bayesbandit.scale._run import Grid, concat_runs, local_cluster, per_point, run_grid
from bayesbandit.scale._simulate import SimulateGrid, simulate_parts
from bayesbandit.scale._store import PartStore, Settings, load_stored, store

__all__ = [
    "Part",
    "plan",
    "shard",
    "parse_shard",
    "Grid",
    "run_grid",
    "concat_runs",
    "per_point",
    "local_cluster",
    "SimulateGrid",
    "simulate_parts",
    "PartStore",
    "Settings",
    "load_stored",
    "store",
]
