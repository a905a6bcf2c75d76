"""Large vmapped batches of Newton solves run to completion.

Two independent batched Cholesky factorisations scheduled concurrently (the jittered factor's
fallback, when it was a ``lax.cond``) deadlocked XLA:CPU: ``simulate`` with 100 runs at d = 20
never returned. The run happens in a child process with a time limit, so a deadlock fails the
test instead of hanging the suite.
"""

import os
import subprocess
import sys

RUN = """
import bayesbandit as bb
from bayesbandit.envs import LogisticBandit
from bayesbandit.models import logistic

bb.runtime.enable_x64()
ds = bb.simulate(bb.GLMTSL(logistic(), a=1.0), LogisticBandit(K=30, d=20), horizon=40, runs=100, progress=False)
print(int(ds.sizes["run"]), int(ds.not_converged.sum()), bool(ds.regret.notnull().all()))
"""


def test_simulate_with_100_runs_at_d_20_completes():
    env = dict(os.environ) | {"JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs, not_converged, finite = proc.stdout.split()
    assert (runs, not_converged, finite) == ("100", "0", "True")
