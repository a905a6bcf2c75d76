"""64-bit mode is the user's choice: both modes, each where it works.

The rest of the suite runs with 64-bit mode on (``conftest.py`` calls ``bb.runtime.enable_x64()``).
Here a fresh interpreter, where nothing turned it on, checks that the policies that work in
float32 (ridge policies, GLM-FPL on a first-order solver) learn in it, and that the Newton-based
inference refuses to run instead of returning a silently wrong factor.
"""

import json
import os
import subprocess
import sys

import pytest

FLOAT32_RUN = """
import json
import jax, numpy as np, optax
import bayesbandit as bb
from bayesbandit.envs import LinearBandit, LogisticBandit
from bayesbandit.models import logistic

out = {"x64": bool(jax.config.jax_enable_x64), "regret": {}, "uniform": {}, "halves": {}, "not_converged": 0}
problems = {  # each policy on a problem of its family
    "lin_ts": (bb.LinTS(v=0.5), LinearBandit(K=20, d=4, noise=0.5)),
    "lin_ucb": (bb.LinUCB(alpha=0.5), LinearBandit(K=20, d=4, noise=0.5)),
    "fpl_first_order": (
        bb.GLMFPL(logistic(), a=0.5, solver=bb.inference.FirstOrder(optimizer=optax.adam(0.05), num_steps=5)),
        LogisticBandit(K=20, d=4, theta_cov="unit"),
    ),
}
for name, (policy, env) in problems.items():
    ds = bb.simulate({name: policy}, env, horizon=800, runs=4, seed=0)
    means = np.asarray(jax.vmap(env.reset)(bb.sim.key_streams(0, 4).env).means)
    out["uniform"][name] = float((800 * (means.max(1) - means.mean(1))).mean())
    out["dtypes"] = [str(ds.regret.dtype), str(ds.reward.dtype)]
    regret = ds.regret.isel(policy=0)
    out["regret"][name] = float(regret.sum("round").mean())
    out["halves"][name] = [float(regret.isel(round=s).mean()) for s in (slice(0, 400), slice(400, 800))]
    out["not_converged"] += int(ds.not_converged.sum())
refused = []
for name, call in [
    ("GLMTSL.init", lambda: bb.GLMTSL(logistic()).init(np.zeros((3, 2)))),
    ("map_estimate", lambda: bb.map_estimate(logistic(), np.zeros((3, 2)), np.zeros(3))),
    ("laplace", lambda: bb.laplace(logistic(), np.zeros((3, 2)), np.zeros(3))),
]:
    try:
        call()
    except bb.errors.PrecisionError as exc:
        refused.append(name if "enable_x64" in str(exc) else name + ": message lacks the fix")
out["refused"] = refused
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def float32_run():
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"} | {"JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", FLOAT32_RUN], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_float32_is_what_runs_without_enable_x64(float32_run):
    assert float32_run["x64"] is False
    assert float32_run["dtypes"] == ["float32", "float32"]


@pytest.mark.parametrize("policy", ["lin_ts", "lin_ucb", "fpl_first_order"])
def test_float32_policies_learn(float32_run, policy):
    """Regret below half of uniform play's on the same instances, and falling per round."""
    assert float32_run["regret"][policy] < 0.5 * float32_run["uniform"][policy], float32_run
    first, second = float32_run["halves"][policy]
    assert second < first
    assert float32_run["not_converged"] == 0


def test_newton_inference_refuses_float32_with_the_fix_in_the_message(float32_run):
    assert float32_run["refused"] == ["GLMTSL.init", "map_estimate", "laplace"]
