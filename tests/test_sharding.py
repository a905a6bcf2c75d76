"""``simulate`` and ``bai.evaluate`` on two (simulated) CPU devices play exactly the runs they play on one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax
    import numpy as np
    import bayesbandit as bb
    from bayesbandit.models import logistic
    from bayesbandit.oracles import TopK

    bb.runtime.enable_x64()
    fixed = bb.envs.LogisticBandit(K=12, d=3)
    contextual = bb.envs.ContextualLogisticBandit(K=6, d=3)
    semi = bb.envs.ClusteredSemiBandit(phi=1.0, oracle=TopK(k=5), num_arms=40)
    from bayesbandit import bai

    bai_ds = bai.evaluate(
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
    np.savez(
        sys.argv[1],
        devices=len(jax.devices()),
        **{f"{i}_{var}": ds[var].values for i, ds in enumerate(runs) for var in ("action", "regret", "reward")},
        **{f"bai_{var}": bai_ds[var].values for var in ("arm", "correct", "pulls")},
    )
    """
)


def _play(path, devices: int) -> dict[str, np.ndarray]:
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
    env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}  # the suite's flags, plus the devices
    subprocess.run([sys.executable, "-c", SCRIPT, str(path)], env=env, check=True, timeout=300)
    return dict(np.load(path))


def test_two_devices_give_the_single_device_results(tmp_path):
    one = _play(tmp_path / "one.npz", 1)
    two = _play(tmp_path / "two.npz", 2)
    assert int(one.pop("devices")) == 1 and int(two.pop("devices")) == 2
    assert one.keys() == two.keys()
    for name in one:
        np.testing.assert_array_equal(one[name], two[name], err_msg=name)
