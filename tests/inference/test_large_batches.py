"""Large vmapped batches of Newton solves run to completion.

Two independent batched Cholesky factorisations scheduled concurrently (the jittered factor's
fallback, when it was a ``lax.cond``) deadlocked XLA:CPU: ``simulate`` with 100 runs at d = 20
never returned. The run happens in a child process with a time limit (``tests/_fresh.py``), so a
deadlock fails the test instead of hanging the suite.
"""

import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.envs import LogisticBandit


def simulate_100_runs_at_d_20() -> dict[str, np.ndarray]:
    """Forty rounds of GLM-TSL, 100 runs at d = 20: the runs, the runs that did not converge, and whether all are finite."""
    ds = bb.simulate(bb.GLMTSL(logistic(), a=1.0), LogisticBandit(K=30, d=20), horizon=40, runs=100, progress=False)
    return {
        "runs": np.array(ds.sizes["run"]),
        "not_converged": np.asarray(ds.not_converged.sum()),
        "finite": np.asarray(ds.regret.notnull().all()),
    }


def test_simulate_with_100_runs_at_d_20_completes(fresh_process):
    out = fresh_process.result("jax_threefry", "inference/test_large_batches.py:simulate_100_runs_at_d_20")
    assert (int(out["runs"]), int(out["not_converged"]), bool(out["finite"])) == (100, 0, True)
