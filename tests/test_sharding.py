"""``simulate`` and ``bai.replicate`` on two (simulated) CPU devices play exactly the runs they play on one."""

from __future__ import annotations

import jax
import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit import bai
from bayesbandit.oracles import TopK


def play() -> dict[str, np.ndarray]:
    """Runs of every kind of experiment on the devices of this process, and their number."""
    fixed = bb.envs.LogisticBandit(K=12, d=3)
    contextual = bb.envs.ContextualLogisticBandit(K=6, d=3)
    semi = bb.envs.ClusteredSemiBandit(phi=1.0, oracle=TopK(k=5), num_arms=40)
    bai_ds = bai.replicate(
        {"gse": bai.GSE(allocation="g-optimal"), "sh": bai.SequentialHalving()},
        bai.AdaptiveInstance(K=4, omega=0.3),
        budget=40,
        replications=7,
        batch_size=3,
    )
    runs = [
        bb.simulate({"tsl": bb.GLMTSL(logistic(), a=1.0), "lints": bb.LinTS(v=0.5)}, fixed, 60, runs=5, seed=2),
        bb.simulate({"fpl": bb.GLMFPL(logistic(), a=0.5)}, contextual, 60, runs=3, seed=4),
        bb.simulate({"pc2ucb": bb.PC2UCB(oracle=TopK(k=5), alpha=1.0)}, semi, 5, runs=3, seed=1),
        # 50 runs per device at d = 20: large enough batches that XLA:CPU splits batched LAPACK kernels
        # over threads (a LAPACK design inverse beside the Newton solve deadlocked two devices here)
        bb.simulate({"glm_ucb": bb.GLMUCB(logistic(), rho=0.5)}, bb.envs.LogisticBandit(K=100, d=20), 30, runs=100),
    ]
    return {
        "devices": np.array(len(jax.devices())),
        **{f"{i}_{var}": ds[var].values for i, ds in enumerate(runs) for var in ("action", "regret", "reward")},
        **{f"bai_{var}": bai_ds[var].values for var in ("arm", "correct", "pulls")},
    }


def test_two_devices_give_the_single_device_results(fresh_process):
    """The runs of a process with two devices equal those of a process with one (``tests/_fresh.py``: the
    suite's settings with XLA's fusion emitters, as users run)."""
    fresh_process.start("two_devices")  # the two children play side by side
    one = fresh_process.result("one_device", "test_sharding.py:play")
    two = fresh_process.result("two_devices", "test_sharding.py:play")
    assert int(one.pop("devices")) == 1 and int(two.pop("devices")) == 2
    assert one.keys() == two.keys()
    for name in one:
        np.testing.assert_array_equal(one[name], two[name], err_msg=name)
