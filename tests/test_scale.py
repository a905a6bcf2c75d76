"""Experiments cut into parts: the same numbers whatever the split, here, on a Dask cluster, in shards."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import jax
import numpy as np
import pytest
import xarray as xr
from _counted import Counted
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit import scale
from bayesbandit.envs import LinearBandit, LogisticBandit
from bayesbandit.errors import IncompleteGrid, InvalidInput

PER_RUN = ("regret", "reward", "action", "not_converged")


def policies() -> dict[str, object]:
    return {"tsl": bb.GLMTSL(logistic(), a=1.0), "lints": bb.LinTS(v=0.5)}


def blocks_and_whole() -> dict[str, np.ndarray]:
    """One ``simulate`` of 7 runs, the same runs in blocks of 3 (``first_run``), a ``scale.simulate_parts`` of
    blocks of 2, and a ``sweep`` of runs 4-6 beside the whole sweep."""
    env = LogisticBandit(K=8, d=3)
    whole = bb.simulate(policies(), env, 40, runs=7, seed=3)
    blocks = [bb.simulate(policies(), env, 40, runs=min(3, 7 - s), seed=3, first_run=s) for s in range(0, 7, 3)]
    parts = scale.simulate_parts(policies(), env, 40, runs=7, seed=3, block=2, progress=False)
    configs = [bb.LinTS(v=v) for v in (0.1, 1.0)]
    sweep_whole = bb.sim.sweep(configs, LinearBandit(K=6, d=3), 30, runs=7, seed=4)
    sweep_tail = bb.sim.sweep(configs, LinearBandit(K=6, d=3), 30, runs=3, seed=4, first_run=4)
    out = {"sweep_whole": sweep_whole.regret.values[:, 4:], "sweep_tail": sweep_tail.regret.values}
    out["sweep_tail_runs"] = sweep_tail.run.values
    for var in PER_RUN:
        out[f"whole_{var}"] = whole[var].values
        out[f"blocks_{var}"] = xr.concat([b[var] for b in blocks], dim="run").values
        out[f"parts_{var}"] = parts[var].values
    out["parts_runs"] = parts.run.values
    return out


def test_blocks_of_runs_give_the_whole_run_bit_for_bit(fresh_process):
    """In a process with XLA's fusion emitters, as users run (``tests/_fresh.py``); with the suite's loop
    emitter two programs of different batch sizes may round differently."""
    out = fresh_process.result("one_device", "test_scale.py:blocks_and_whole")
    for var in PER_RUN:
        np.testing.assert_array_equal(out[f"blocks_{var}"], out[f"whole_{var}"], err_msg=var)
        np.testing.assert_array_equal(out[f"parts_{var}"], out[f"whole_{var}"], err_msg=var)
    assert out["parts_runs"].tolist() == list(range(7))
    np.testing.assert_array_equal(out["sweep_tail"], out["sweep_whole"])
    assert out["sweep_tail_runs"].tolist() == [4, 5, 6]


def test_a_runs_keys_depend_on_its_index_only():
    whole = bb.sim.key_streams(5, 10)
    tail = bb.sim.key_streams(5, 4, first_run=6)
    for a, b in zip(whole, tail, strict=True):
        np.testing.assert_array_equal(jax.random.key_data(a)[6:], jax.random.key_data(b))
    # Under JAX's default (partitionable) Threefry these are the keys split(k, runs) gave.
    k_env = jax.random.split(jax.random.PRNGKey(5), 3)[0]
    np.testing.assert_array_equal(whole.env, jax.random.split(k_env, 10))


def test_first_run_labels_the_runs_and_is_checked():
    env = LinearBandit(K=4, d=2)
    ds = bb.simulate(bb.LinTS(), env, 5, runs=2, first_run=10)
    assert ds.run.values.tolist() == [10, 11] and ds.attrs["first_run"] == 10
    with pytest.raises(InvalidInput, match="'first_run' parameter of simulate"):
        bb.simulate(bb.LinTS(), env, 5, runs=2, first_run=-1)


def test_shards_partition_the_plan():
    parts = scale.plan([(d, name) for d in (5, 10) for name in "abc"], runs=10, block=4)
    assert len(parts) == 18 and {p.runs for p in parts} == {4, 2}
    for count in (1, 2, 5, 18, 40):
        shards = [scale.shard(parts, k, count) for k in range(count)]
        assert sorted(p for s in shards for p in s) == sorted(parts)
        assert max(map(len, shards)) - min(map(len, shards)) <= 1
    assert scale.parse_shard(" 3/8 ") == (3, 8)
    for bad in ("2/2", "1", "-1/3", "a/b", "0/0"):
        with pytest.raises(InvalidInput, match="K/N"):
            scale.parse_shard(bad)
    with pytest.raises(InvalidInput, match="repeated"):
        scale.plan([("a",), ("a",)], runs=2, block=1)
    assert scale.Part((5, "GLM-TSL (theory)"), 0, 25).path == "5/GLM-TSL_theory/runs-0-25"


def test_concat_runs_sums_times_and_refuses_overlaps():
    env = LinearBandit(K=4, d=2)
    a = bb.simulate(bb.LinTS(), env, 5, runs=2)
    b = bb.simulate(bb.LinTS(), env, 5, runs=3, first_run=2)
    both = scale.concat_runs([b, a])
    assert both.run.values.tolist() == [0, 1, 2, 3, 4] and both.attrs["runs"] == 5
    assert float(both.run_time[0]) == pytest.approx(float(a.run_time[0]) + float(b.run_time[0]))
    assert both.policy_description.values.tolist() == a.policy_description.values.tolist()
    with pytest.raises(InvalidInput, match="overlap"):
        scale.concat_runs([a, a])


def small_grid(log: Path, pause: float = 0.0) -> Counted:
    log.mkdir(exist_ok=True)
    grid = scale.SimulateGrid(tuple(policies().items()), LogisticBandit(K=8, d=3), 40, 6, 3, 2)
    return Counted(grid, str(log), pause)


def test_a_store_resumes_and_shards_complete_each_other(tmp_path):
    grid = small_grid(tmp_path / "log")
    reference = scale.run_grid(grid)
    assert len(grid.computed()) == 6
    store = scale.PartStore(tmp_path / "out")
    with pytest.raises(IncompleteGrid) as err:
        scale.run_grid(grid, store=store, shard_of=(0, 2))
    assert len(err.value.missing) == 3 and len(grid.computed()) == 9
    done = scale.run_grid(grid, store=store, shard_of=(1, 2))  # the last shard finds the others' parts
    assert len(grid.computed()) == 12
    assert list(done) == list(reference)
    for part, ds in done.items():
        xr.testing.assert_equal(ds[list(PER_RUN)], reference[part][list(PER_RUN)])
    assert scale.run_grid(grid, store=store, compute=False).keys() == done.keys()  # nothing recomputed
    assert len(grid.computed()) == 12
    changed = scale.SimulateGrid(grid.grid.policies, grid.grid.env, 40, 6, 4, 2)  # another seed
    with pytest.raises(IncompleteGrid, match="6 of 6 parts"):
        scale.run_grid(changed, store=store, compute=False)


def test_run_grid_refuses_a_client_that_is_not_one():
    with pytest.raises(InvalidInput, match="dask.distributed.Client"):
        scale.run_grid(small_grid(Path("/nonexistent")), client=object())


@pytest.mark.timeout(300)
def test_a_dask_cluster_gives_the_one_process_results_even_when_a_worker_dies(tmp_path):
    pytest.importorskip("distributed")
    reference = scale.run_grid(small_grid(tmp_path / "here"))
    with scale.local_cluster(workers=2) as client:
        assert all(w.startswith("tcp://127.0.0.1:") for w in client.scheduler_info()["workers"])
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        done = scale.run_grid(small_grid(tmp_path / "calm"), client=client)
        for part, ds in reference.items():
            xr.testing.assert_equal(done[part][list(PER_RUN)], ds[list(PER_RUN)])

        # Kill a worker while it computes a part: the part is computed again elsewhere, nothing is lost.
        grid = small_grid(tmp_path / "killed", pause=3.0)
        victim: list[int] = []

        def kill_when_busy() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                started = [int(name.split("@")[1]) for name in grid.computed()]
                busy = [pid for pid in started if pid in pids]
                if busy:
                    victim.append(busy[0])
                    os.kill(busy[0], signal.SIGKILL)
                    return
                time.sleep(0.05)

        import threading

        killer = threading.Thread(target=kill_when_busy)
        killer.start()
        done = scale.run_grid(grid, client=client)
        killer.join()
    assert victim, "no worker was seen computing a part"
    names = grid.computed()
    killed_parts = {name.split("@")[0] for name in names if name.split("@")[1] == str(victim[0])}
    assert killed_parts and all(sum(n.startswith(p + "@") for n in names) == 2 for p in killed_parts)
    for part, ds in reference.items():
        xr.testing.assert_equal(done[part][list(PER_RUN)], ds[list(PER_RUN)])


def test_bad_inputs_name_the_argument_and_the_fix():
    with pytest.raises(InvalidInput, match="'workers' parameter of local_cluster"):
        scale.local_cluster(workers=0)
    with pytest.raises(InvalidInput, match="at least one policy"):
        scale.simulate_parts({}, LinearBandit(K=4, d=2), 5)
    with pytest.raises(InvalidInput, match="'block' parameter of scale.simulate_parts"):
        scale.simulate_parts({"lints": bb.LinTS()}, LinearBandit(K=4, d=2), 5, runs=2, block=0)
    with pytest.raises(InvalidInput, match="'index' parameter of shard"):
        scale.shard([], 3, 2)
