"""bb.simulate: result layout, common random numbers, learning, host loop, memory, netCDF."""

import dataclasses

import jax
import numpy as np
import pytest
import xarray as xr
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit import envs
from bayesbandit.sim import cumulative_regret, init_run, scan, summary_markdown
from bayesbandit.sim.scan import run_blocks

ENV = envs.LinearBandit(K=8, d=3, noise=0.5)
H = 200  # one horizon and run count throughout, so compiled executables are reused


@pytest.fixture(scope="module")
def results():
    policies = {"ts": bb.LinTS(v=0.5), "ts_copy": bb.LinTS(v=0.5), "ucb": bb.LinUCB(alpha=1.0)}
    return bb.simulate(policies, ENV, horizon=H, runs=3, seed=1, progress=False, record=_record_means)


def _record_means(rnd):
    return {"best": rnd.outcome.best_expected_reward, "expected": rnd.outcome.expected_reward}


def test_dims_and_attrs(results):
    assert results.regret.dims == ("policy", "run", "round")
    assert results.regret.shape == (3, 3, H)
    assert results.action.dtype == np.int32
    assert list(results.policy.values) == ["ts", "ts_copy", "ucb"]
    assert results.best.shape == (3, 3, H)
    for var in ("compile_time", "run_time", "wall_time"):
        assert results[var].dims == ("policy",) and np.all(results[var].values >= 0)
    assert results.attrs["horizon"] == H and results.attrs["runs"] == 3 and results.attrs["seed"] == 1
    assert "LinearBandit" in results.attrs["env"]
    assert np.all(results.regret.values >= 0)


def test_common_random_numbers(results):
    # identical policies under different names: identical everything
    for var in ("regret", "reward", "action"):
        np.testing.assert_array_equal(results[var].sel(policy="ts"), results[var].sel(policy="ts_copy"))
    # different policies: the same instances (the oracle's best mean) in every round
    np.testing.assert_array_equal(results.best.sel(policy="ts"), results.best.sel(policy="ucb"))
    # same arm in the same (run, round): the same reward realisation
    same = results.action.sel(policy="ts") == results.action.sel(policy="ucb")
    assert int(same.sum()) > 0
    np.testing.assert_array_equal(
        results.reward.sel(policy="ts").values[same.values], results.reward.sel(policy="ucb").values[same.values]
    )
    # a separate call with the same seed reproduces the result
    again = bb.simulate(bb.LinUCB(alpha=1.0), ENV, horizon=H, runs=3, seed=1, progress=False, record=_record_means)
    np.testing.assert_array_equal(again.regret.isel(policy=0), results.regret.sel(policy="ucb"))


def test_numeric_hyperparameters_share_the_executable():
    ds = bb.simulate(
        {"a": bb.LinUCB(alpha=0.3), "b": bb.LinUCB(alpha=2.0)},
        ENV,
        horizon=H,
        runs=3,
        progress=False,
        record=_record_means,
    )
    assert ds.compile_time.sel(policy="b") == 0.0
    assert not np.array_equal(ds.action.sel(policy="a"), ds.action.sel(policy="b"))


def test_learning_policy_beats_uniform(results):
    # uniform play: per-round expected regret max mu - mean mu on the same instances
    states = jax.vmap(ENV.reset)(bb.sim.key_streams(1, 3).env)
    means = np.asarray(states.means)  # (runs, K), fixed arms
    uniform = H * (means.max(1) - means.mean(1))
    final = cumulative_regret(results).sel(policy="ucb").isel(round=-1).values
    assert final.mean() < 0.5 * uniform.mean()


@dataclasses.dataclass(frozen=True)
class NoJit:
    """A host policy: simulate runs it in the host loop (it jits its own pure parts, as an
    index-backed policy would)."""

    inner: object
    kind = "host"

    def init(self, *args, **kwargs):
        return self.inner.init(*args, **kwargs)

    def select(self, state, arms, key):
        return _jitted(self.inner.select)(state, arms, key)

    def update(self, state, arms, action, feedback):
        return _jitted(self.inner.update)(state, arms, action, feedback)

    def reward_support(self, d):
        return self.inner.reward_support(d)


_JITTED = {}


def _jitted(method):
    return _JITTED.setdefault(method, jax.jit(method))


@pytest.mark.parametrize("env", [ENV, envs.ContextualLogisticBandit(K=5, d=3)], ids=["fixed", "contextual"])
def test_host_loop_matches_scan(env):
    policy = bb.LinTS(v=0.5)
    kwargs = dict(horizon=6, runs=2, seed=3, progress=False, num_chunks=2)
    scan = bb.simulate({"p": policy}, env, **kwargs)
    host = bb.simulate({"p": NoJit(policy)}, env, **kwargs)
    assert host.regret.dims == scan.regret.dims
    np.testing.assert_array_equal(host.action.values, scan.action.values)
    np.testing.assert_allclose(host.regret.values, scan.regret.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host.reward.values, scan.reward.values, rtol=1e-12, atol=1e-12)


def test_chunking_does_not_change_results(results):
    kwargs = dict(horizon=H, runs=3, seed=1, progress=False, record=_record_means)
    a = bb.simulate(bb.LinTS(v=0.5), ENV, num_chunks=7, **kwargs)  # 7 chunks of 29, the last one padded
    np.testing.assert_array_equal(a.action.values[0], results.action.sel(policy="ts").values)
    assert a.sizes["round"] == H


@pytest.mark.parametrize(
    "runs, devices, block, expected", [(7, 1, 3, (3, 3)), (7, 1, None, (1, 7)), (10, 2, 2, (3, 2))]
)
def test_run_blocks_are_balanced(runs, devices, block, expected):
    count, size = run_blocks(runs, devices, block)
    assert (count, size) == expected
    assert devices * count * size >= runs and devices * count * size - runs < devices * count


def test_runs_in_blocks_give_the_same_results(monkeypatch):
    """A CPU device playing its runs in blocks (7 runs: 3 blocks of 3, two runs padded) plays the same runs."""
    kwargs = dict(horizon=30, runs=7, seed=2, progress=False)
    policy = bb.GLMTSL(logistic(), a=1.0)
    env = envs.LogisticBandit(K=6, d=3)
    whole = bb.simulate(policy, env, **kwargs)
    monkeypatch.setattr(scan, "CPU_BLOCK", 3)
    blocks = bb.simulate(policy, env, **kwargs)
    assert blocks.compile_time.item() > 0  # its own executable, not the one-batch program's
    np.testing.assert_array_equal(blocks.action.values, whole.action.values)
    np.testing.assert_array_equal(blocks.regret.values, whole.regret.values)  # bit for bit
    np.testing.assert_array_equal(blocks.not_converged.values, whole.not_converged.values)


@pytest.mark.parametrize("policy", [bb.GLMTSL(logistic(), a=1.0), bb.LinTS()], ids=["tsl", "lints"])
def test_state_size_independent_of_horizon_for_fixed_arms(policy):
    """For a fixed arm set the policy state (sufficient statistics) does not grow with the horizon."""
    env = envs.LogisticBandit(K=20, d=4)
    key = jax.random.PRNGKey(0)
    shapes = [jax.eval_shape(lambda k, c=c: init_run(k, k, policy, env, c), key) for c in (100, 50_000)]
    assert jax.tree.structure(shapes[0]) == jax.tree.structure(shapes[1])
    assert [(x.shape, x.dtype) for x in jax.tree.leaves(shapes[0])] == [
        (x.shape, x.dtype) for x in jax.tree.leaves(shapes[1])
    ]
    assert max(x.size for x in jax.tree.leaves(shapes[0][1])) <= 20 * 4


def test_netcdf_round_trip(results, tmp_path):
    path = tmp_path / "r.nc"
    results.to_netcdf(path)
    with xr.open_dataset(path) as back:
        back = back.load()
    xr.testing.assert_identical(back.drop_vars("policy_description"), results.drop_vars("policy_description"))
    assert list(back.policy_description.values) == list(results.policy_description.values)


def test_summary_and_plot(results, tmp_path):
    df = bb.sim.summarize(results)
    assert list(df.index) == ["ts", "ts_copy", "ucb"]
    assert {"regret", "regret_se", "compile_s", "run_s", "wall_s", "rounds_per_s"} <= set(df.columns)
    np.testing.assert_allclose(df.loc["ts", "regret"], results.regret.sel(policy="ts").sum("round").mean())
    md = summary_markdown(df)
    assert md.splitlines()[0].startswith("| policy | regret")
    path = tmp_path / "r.png"
    bb.sim.plot_regret(results, path)
    assert path.stat().st_size > 1000
    results.bandit.plot(tmp_path / "r2.png")
    assert (tmp_path / "r2.png").exists()


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"horizon": 0}, "'horizon' parameter of simulate"),
        ({"runs": 0}, "'runs' parameter of simulate"),
        ({"horizon": 2.5}, "'horizon' parameter of simulate"),
        ({"seed": -1}, "'seed' parameter of simulate"),
        ({"policies": {}}, "at least one policy"),
        ({"policies": object()}, "expected a bandit policy"),
        ({"env": object()}, "'env' parameter of simulate"),
        ({"progress": "yes"}, "'progress' parameter of simulate"),
        ({"compiler_options": "fast"}, "'compiler_options' parameter of simulate"),
        ({"record": 3}, "'record' parameter of simulate"),
        ({"num_chunks": 0}, "'num_chunks' parameter of simulate"),
    ],
)
def test_bad_arguments(bad, match):
    kwargs = dict(policies=bb.LinTS(), env=ENV, horizon=10, runs=1) | bad
    with pytest.raises(bb.errors.InvalidInput, match=match):
        bb.simulate(**kwargs)


@dataclasses.dataclass(frozen=True)
class Plain:
    """A jittable policy that is not a registered pytree: simulate closes over it."""

    inner: object
    kind = "jax"

    def init(self, *args, **kwargs):
        return self.inner.init(*args, **kwargs)

    def select(self, state, arms, key):
        return self.inner.select(state, arms, key)

    def update(self, state, arms, action, feedback):
        return self.inner.update(state, arms, action, feedback)

    def reward_support(self, d):
        return self.inner.reward_support(d)


def test_policy_that_is_not_a_pytree(results):
    ds = bb.simulate({"plain": Plain(bb.LinTS(v=0.5))}, ENV, horizon=H, runs=3, seed=1, progress=False)
    np.testing.assert_array_equal(ds.action.isel(policy=0).values, results.action.sel(policy="ts").values)


def test_glm_policy_learns_on_contextual_features():
    """GLM-TSL with a row-buffer history (capacity = horizon) on arms redrawn every round: the
    contextual path of ``simulate`` learns (regret of the last third below the first third) and
    beats uniform choice on the same instances."""
    env = envs.ContextualLogisticBandit(K=10, d=3)
    horizon = 300
    ds = bb.simulate({"tsl": bb.GLMTSL(logistic(), a=1.0)}, env, horizon, runs=4, seed=3, progress=False)
    regret = ds["regret"].sel(policy="tsl").values  # (runs, horizon)
    assert np.all(np.isfinite(regret)) and int(ds["not_converged"].sum()) == 0
    third = horizon // 3
    assert regret[:, -third:].mean() < 0.6 * regret[:, :third].mean()
    _, state = init_run(jax.random.PRNGKey(0), jax.random.PRNGKey(0), bb.GLMTSL(logistic()), env, horizon)
    assert isinstance(state.history, bb.history.RowHistory) and state.history.capacity == horizon
