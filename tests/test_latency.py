"""``enable_low_latency`` changes how compiled calls run, never what they compute, and refuses to come late.

Both settings are read when JAX creates its backend, so the plays run in fresh processes: an Agent
plays the same rounds with the low-latency settings and without, each process with XLA's own
emitters (the suite's faster loop emitter can round one operation differently in two programs,
``tests/_fresh.py``), and must make the same decisions and reach the same state, bit for bit;
called here, after computations, it raises and changes nothing.
"""

import os

import jax
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb


def play() -> dict[str, np.ndarray]:
    """Forty rounds of GLM-TSL on a fixed logistic problem: the actions and the final state's leaves."""
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
    return out


def test_low_latency_settings_change_no_decision(fresh_process):
    """The rounds of a process with the suite's settings equal those of one with low latency too (``tests/_fresh.py``)."""
    fresh_process.start("low_latency")  # the two children run side by side
    fresh_process.start("one_device")
    default = fresh_process.result("one_device", "test_latency.py:play")
    fast = fresh_process.result("low_latency", "test_latency.py:play")
    assert default.keys() == fast.keys()
    for name in default:
        np.testing.assert_array_equal(default[name], fast[name], err_msg=name)
    assert len(set(default["actions"])) > 1  # the agents really played


def test_low_latency_refuses_to_come_late_and_changes_nothing():
    jax.block_until_ready(jax.numpy.ones(2) + 1)  # a computation has run: too late now
    flags, dispatch = os.environ.get("XLA_FLAGS"), jax.config.read("jax_cpu_enable_async_dispatch")
    with pytest.raises(bb.errors.ConfigurationError, match="before any JAX computation"):
        bb.runtime.enable_low_latency()
    assert os.environ.get("XLA_FLAGS") == flags and jax.config.read("jax_cpu_enable_async_dispatch") == dispatch
