"""``sweep``: a hyper-parameter grid compiled once, each configuration equal to its own ``simulate``."""

from __future__ import annotations

import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.envs import LinearBandit
from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import TopK
from bayesbandit.sim import sweep


def sweep_and_simulate() -> dict[str, np.ndarray]:
    """A LinTS grid's regret by ``sweep`` (two batches, the last padded) and by ``simulate`` per configuration."""
    env = LinearBandit(K=6, d=3)
    configs = [bb.LinTS(lam=lam, v=v) for lam in (0.5, 2.0) for v in (0.1, 1.0)]
    ds = sweep(configs, env, horizon=30, runs=3, seed=4, batch=3)
    alone = [bb.simulate(policy, env, horizon=30, runs=3, seed=4).regret.isel(policy=0) for policy in configs]
    return {
        "sweep": ds.regret.values,
        "sizes": np.array([ds.sizes[dim] for dim in ("config", "run", "round")]),
        "simulate": np.stack([regret.values for regret in alone]),
    }


def test_each_configuration_matches_simulate_on_the_same_seed(fresh_process):
    """Bit for bit, in a process with XLA's fusion emitters, as users run (``tests/_fresh.py``)."""
    out = fresh_process.result("one_device", "test_grid_sweep.py:sweep_and_simulate")
    assert out["sizes"].tolist() == [4, 3, 30]
    np.testing.assert_array_equal(out["sweep"], out["simulate"])


def test_a_comb_grid_matches_simulate_and_scores_the_total_reward():
    oracle = TopK(k=5)
    env = ClusteredSemiBandit(phi=1.2, oracle=oracle, num_arms=50)
    configs = [bb.PC2UCB(oracle=oracle, lam=lam, alpha=1.0) for lam in (0.1, 10.0)]
    ds = sweep(configs, env, horizon=8, runs=2, seed=1)
    alone = bb.simulate(configs[1], env, horizon=8, runs=2, seed=1)
    np.testing.assert_allclose(ds.reward.isel(config=1), alone.reward.isel(policy=0).sum("reward_dim_0"))


def test_policies_of_different_structure_are_refused():
    oracle = TopK(k=2)
    env = ClusteredSemiBandit(phi=1.0, oracle=oracle, num_arms=20)
    with pytest.raises(InvalidInput, match="structure"):
        sweep([bb.C2UCB(oracle=oracle), bb.C2UCB(oracle=TopK(k=3))], env, horizon=2, runs=1)
    with pytest.raises(InvalidInput, match="only N = 20"):
        sweep([bb.C2UCB(oracle=TopK(k=25))], env, horizon=2, runs=1)


def test_two_classes_with_the_same_tree_shape_never_share_an_executable():
    """C2UCB and RoundTS have tree structures that compare equal; each sweep must still run its own class."""
    oracle = TopK(k=5)
    env = ClusteredSemiBandit(phi=0.8, oracle=oracle, num_arms=50)
    ucb, ts = bb.C2UCB(oracle=oracle, lam=0.01, alpha=0.01), bb.RoundTS(oracle=oracle, lam=0.01, v=0.01)
    first = sweep([ucb], env, horizon=5, runs=3, seed=2).reward.isel(config=0)
    second = sweep([ts], env, horizon=5, runs=3, seed=2).reward.isel(config=0)
    both = bb.simulate({"ucb": ucb, "ts": ts}, env, horizon=5, runs=3, seed=2).reward.sum("reward_dim_0")
    np.testing.assert_allclose(first, both.sel(policy="ucb"))
    np.testing.assert_allclose(second, both.sel(policy="ts"))
    assert not np.allclose(first, second)


def test_compiler_options_reach_xla_and_keep_the_results():
    env, configs = LinearBandit(K=5, d=2), [bb.LinTS(v=v) for v in (0.1, 1.0)]
    default = sweep(configs, env, horizon=20, runs=3)
    quick = sweep(configs, env, horizon=20, runs=3, compiler_options={"xla_backend_optimization_level": 0})
    np.testing.assert_allclose(quick.regret.values, default.regret.values, rtol=1e-5, atol=1e-5)
    with pytest.raises(Exception, match="no_such_xla_option"):  # XLA's own refusal: the options reach it
        sweep(configs, env, horizon=20, runs=3, compiler_options={"no_such_xla_option": 1})
    with pytest.raises(InvalidInput, match="'compiler_options' parameter of sweep"):
        sweep(configs, env, horizon=20, runs=3, compiler_options="fast")
