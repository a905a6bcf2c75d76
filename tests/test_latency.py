"""``enable_low_latency`` changes how compiled calls run, never what they compute, and refuses to come late.

Both settings are read when JAX creates its backend, so each case runs in its own process: an
Agent plays the same rounds with and without them and must make the same decisions and reach
the same state, bit for bit; called after a computation, it raises and changes nothing.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np

PLAY = textwrap.dedent(
    """
    import sys
    import jax
    import numpy as np
    import bayesbandit as bb
    from bayesbandit.models import logistic

    if sys.argv[2] == "low-latency":
        bb.runtime.enable_low_latency()
    bb.runtime.enable_x64()
    rng = np.random.default_rng(0)
    arms = rng.uniform(-1.0, 1.0, (30, 4))
    theta = rng.normal(0.0, 1.0, 4)
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0, history="online"), arms=arms, seed=3)
    actions = []
    for u in np.random.default_rng(1).random(40):
        arm = agent.select()
        agent.update(arm, float(u < 1.0 / (1.0 + np.exp(-arms[arm] @ theta))))
        actions.append(arm)
    out = {"actions": np.array(actions)}
    out.update({f"state_{i}": np.asarray(leaf) for i, leaf in enumerate(jax.tree.leaves(agent.state))})
    if sys.argv[2] == "default":  # a computation has run: too late now
        try:
            bb.runtime.enable_low_latency()
        except bb.errors.ConfigurationError as error:
            out["late"] = np.array(str(error))
    np.savez(sys.argv[1], **out)
    """
)


def _play(path, mode: str) -> dict[str, np.ndarray]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}  # the suite's XLA flags; enable_low_latency adds its own
    subprocess.run([sys.executable, "-c", PLAY, str(path), mode], env=env, check=True, timeout=300)
    return dict(np.load(path))


def test_low_latency_settings_change_no_decision_and_refuse_to_come_late(tmp_path):
    default = _play(tmp_path / "default.npz", "default")
    fast = _play(tmp_path / "fast.npz", "low-latency")
    late = str(default.pop("late"))
    assert "before any JAX computation" in late
    assert default.keys() == fast.keys()
    for name in default:
        np.testing.assert_array_equal(default[name], fast[name], err_msg=name)
    assert len(set(default["actions"])) > 1  # the agents really played
