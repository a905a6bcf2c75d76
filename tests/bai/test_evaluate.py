"""Paired evaluation, the Automobile loader, and the experiments' grid on a tiny case."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.bai import GSE, Automobile, SequentialHalving, SphereInstance, load_automobile, replicate
from bayesbandit.errors import InvalidInput

# the environment, budget and batch of replications of the paired evaluation, which the grid test
# reuses: replicate keeps their compiled programs
ENV, BUDGET, BATCH = SphereInstance(K=8, d=4, noise_var=2.0), 120, 25


def test_paired_evaluation_is_reproducible_and_pairs_replications():
    env = ENV
    algs = {"GSE": GSE(), "same": GSE(), "SH": SequentialHalving()}
    ds = replicate(algs, env, BUDGET, replications=60, seed=3, batch_size=BATCH)
    # other batches of replications, the same results (on the algorithm cheaper to compile)
    again = replicate({"SH": SequentialHalving()}, env, BUDGET, replications=60, seed=3, batch_size=30)
    np.testing.assert_array_equal(ds.arm.sel(algorithm="SH").values, again.arm.sel(algorithm="SH").values)
    # identical algorithms on common random numbers: identical choices, a zero paired difference
    np.testing.assert_array_equal(ds.arm.sel(algorithm="GSE").values, ds.arm.sel(algorithm="same").values)
    assert float(ds.difference.sel(algorithm="GSE", versus="same")) == 0.0
    assert float(ds.difference_se.sel(algorithm="GSE", versus="same")) == 0.0
    p = float(ds.accuracy.sel(algorithm="SH"))
    assert float(ds.accuracy_se.sel(algorithm="SH")) == pytest.approx(np.sqrt(p * (1 - p) / 60))
    c = ds.correct.values.astype(float)
    d = c[0] - c[2]
    assert float(ds.difference.sel(algorithm="GSE", versus="SH")) == pytest.approx(d.mean())
    assert float(ds.difference_se.sel(algorithm="GSE", versus="SH")) == pytest.approx(d.std(ddof=1) / np.sqrt(60))
    assert np.all(ds.pulls.values == 120)
    # equal algorithms share one executable: compiled once, for the first. The module's other tests
    # compile GSE for this environment and budget in batches of 25, 6, 2 and 4, in any order (random
    # order): a batch of 3 is compiled here first whatever ran before.
    assert float(ds.compile_seconds.sel(algorithm="same")) == 0
    pair = replicate({"GSE": GSE(), "same": GSE()}, env, BUDGET, replications=3, seed=3, batch_size=3)
    assert float(pair.compile_seconds.sel(algorithm="GSE")) > 0
    assert float(pair.compile_seconds.sel(algorithm="same")) == 0


def test_compiler_options_reach_xla_and_keep_the_choices():
    algs = {"SH": SequentialHalving()}
    default = replicate(algs, ENV, BUDGET, replications=30, seed=3, batch_size=BATCH)
    quick = replicate(
        algs,
        ENV,
        BUDGET,
        replications=30,
        seed=3,
        batch_size=BATCH,
        compiler_options={"xla_backend_optimization_level": 0},
    )
    np.testing.assert_array_equal(quick.arm.values, default.arm.values)
    assert float(quick.compile_seconds.sel(algorithm="SH")) > 0  # its own executable, not the default's
    with pytest.raises(Exception, match="no_such_xla_option"):  # XLA's own refusal: the options reach it
        replicate(
            algs, ENV, BUDGET, replications=30, seed=3, batch_size=BATCH, compiler_options={"no_such_xla_option": 1}
        )
    with pytest.raises(InvalidInput, match="'compiler_options' parameter of replicate"):
        replicate(algs, ENV, BUDGET, replications=30, seed=3, batch_size=BATCH, compiler_options=["fast"])


class Duplicates(SphereInstance):
    def reset(self, key):
        inst = super().reset(key)
        return inst._replace(arms=inst.arms.at[1].set(inst.arms[0]))


def test_evaluate_refuses_bad_instances_and_budgets():
    with pytest.raises(InvalidInput, match="distinct.*replication 0"):
        replicate({"GSE": GSE()}, Duplicates(K=6, d=3), 60, replications=4)
    with pytest.raises(InvalidInput, match="at least the number of arms"):
        replicate({"GSE": GSE()}, SphereInstance(K=6, d=3), 5, replications=4)
    with pytest.raises(InvalidInput, match="non-empty mapping"):
        replicate([GSE()], SphereInstance(K=6, d=3), 60, replications=4)


CSV = """make,curb-weight,width,engine-size,city-mpg,highway-mpg,price
a,2000,60,100,30,35,10000
b,2000,60,100,30,35,14000
c,2500,62,120,25,30,20000
d,3000,65,150,20,25,?
e,3500,70,200,15,20,40000
f,1800,58,90,35,40,8000
"""


def test_automobile_loader_scales_merges_duplicates_and_drops_missing(tmp_path):
    path = tmp_path / "imports-85.csv"
    path.write_text(CSV)
    x, price = load_automobile(path)
    assert x.shape == (4, 5)  # a and b merged, d dropped (no price)
    assert x.min() == 0.0 and x.max() == 1.0 and price.min() == 0.0 and price.max() == 1.0
    merged = np.argmin(np.abs(x[:, 0] - (2000 - 1800) / (3500 - 1800)))
    assert price[merged] == pytest.approx((12000 - 8000) / (40000 - 8000))
    env = Automobile(K=3, path=str(path))
    inst = env.reset(jax.random.key(0))
    assert len({tuple(r) for r in np.asarray(inst.arms).tolist()}) == 3  # without replacement
    with pytest.raises(InvalidInput, match="at most the number of distinct cars"):
        Automobile(K=5, path=str(path))
    with pytest.raises(InvalidInput, match="not found"):
        load_automobile(tmp_path / "missing.csv")


def _tiny_cells(quick: bool) -> list:
    from bayesbandit.experiments.bai_grid import Cell

    return [Cell("panel", x, ENV, BUDGET) for x in (1, 2)]


def _tiny_algorithms(cell: object, quick: bool) -> dict:
    return {"GSE": GSE(), "SH": SequentialHalving()}


def test_bai_grid_writes_results_plot_and_table(tmp_path, monkeypatch):
    """Two cells of one batch of replications on the paired evaluation's environment and budget:
    the grid's plumbing (parts stored and reused, results, plot, table) on programs already compiled."""
    from bayesbandit.experiments.bai_grid import BAIGrid, Experiment

    tiny = Experiment("tiny", "cell", "GSE", _tiny_cells, _tiny_algorithms)
    paths = tiny.run(tmp_path, runs=BATCH)
    text = paths["summary"].read_text()
    assert "| cell | GSE | SH |" in text and "Paired difference vs GSE" in text
    assert paths["plot"].stat().st_size > 10_000
    import xarray as xr

    with xr.open_dataset(paths["results"]) as ds:
        assert ds.accuracy.shape == (2, 2) and float(ds.difference.sel(algorithm="GSE").max()) == 0.0
        whole = ds.load()
    # stored parts are reused: a second call runs nothing new and gives the same table
    monkeypatch.setattr(BAIGrid, "__call__", lambda *a: pytest.fail("a stored part was run again"))
    assert tiny.run(tmp_path, runs=BATCH)["summary"].read_text() == text
    monkeypatch.undo()
    # blocks of replications give the one evaluation of all of them (paired differences included)
    blocks = tiny.run(tmp_path / "blocks", runs=BATCH, block=BATCH // 2 + 1)
    with xr.open_dataset(blocks["results"]) as ds:
        for var in ("correct", "pulls", "accuracy", "difference", "difference_se"):
            np.testing.assert_array_equal(ds[var].values, whole[var].values, err_msg=var)
    with pytest.raises(InvalidInput, match="last block"):
        tiny.run(tmp_path, runs=BATCH, block=BATCH - 1)


def test_replication_blocks_join_into_one_evaluation():
    from bayesbandit.bai import concat_replications

    algorithms = {"GSE": GSE(), "SH": SequentialHalving()}
    whole = replicate(algorithms, ENV, BUDGET, replications=6, seed=2, batch_size=BATCH)
    head = replicate(algorithms, ENV, BUDGET, replications=2, seed=2, batch_size=BATCH)
    tail = replicate(algorithms, ENV, BUDGET, replications=4, seed=2, batch_size=BATCH, first_replication=2)
    assert tail.replication.values.tolist() == [2, 3, 4, 5]
    joined = concat_replications([tail, head])
    for var in ("correct", "arm", "pulls", "accuracy", "difference", "difference_se", "mean_pulls"):
        np.testing.assert_allclose(joined[var].values, whole[var].values, err_msg=var)
    assert float(joined.seconds.sum()) == pytest.approx(float(head.seconds.sum() + tail.seconds.sum()))
    with pytest.raises(InvalidInput, match="consecutive replications"):
        concat_replications([head, head])


def test_instances_follow_the_paper():
    from bayesbandit.bai import AdaptiveInstance, CornerInstance, GLMInstance, StaticInstance

    a = AdaptiveInstance(K=8).reset(jax.random.key(0))
    assert a.arms.shape == (8, 7) and int(jnp.argmax(a.means)) == 0
    assert float(a.means[-1]) == pytest.approx(np.cos(0.1))
    s = StaticInstance(K=16, gap=0.05).reset(jax.random.key(0))
    np.testing.assert_array_equal(np.asarray(s.arms), np.eye(16))
    sph = SphereInstance(K=32, d=10).reset(jax.random.key(1))
    np.testing.assert_allclose(np.linalg.norm(np.asarray(sph.arms), axis=1), 1.0)
    g = GLMInstance(K=8, d=5).reset(jax.random.key(2))
    assert np.all(np.abs(np.asarray(g.arms)) <= 0.5)
    c = CornerInstance(K=5).reset(jax.random.key(3))
    assert int(jnp.argmax(c.means)) == 0 and c.arms.shape == (5, 2)
    # noise is a variance: the reward's spread is sqrt(noise_var)
    env = SphereInstance(K=4, d=2, noise_var=9.0)
    inst = env.reset(jax.random.key(0))
    r = jax.vmap(lambda k: env.reward(inst, 0, k))(jax.random.split(jax.random.key(1), 4000))
    assert float(jnp.std(r)) == pytest.approx(3.0, rel=0.05)
