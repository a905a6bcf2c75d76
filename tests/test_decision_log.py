"""The SQLite decision log: every decision and reward, readable as a table, consistent with checkpoints after a kill."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.agent import read_log

RNG = np.random.default_rng(0)


def test_the_log_holds_each_decision_with_its_arms_propensity_and_reward(tmp_path):
    path = tmp_path / "log.sqlite"
    agent = bb.Agent(bb.LinTS(), d=3, seed=0, log=path)
    contexts = [RNG.uniform(-1, 1, (4, 3)) for _ in range(5)]
    decisions = [agent.decide(arms, propensity=200) for arms in contexts]
    for decision in decisions[::-1][:4]:  # the first decision's reward never arrives
        agent.update(decision, 0.5)
    agent.update(1, 2.0, arms=contexts[0])  # a plain update is logged too
    agent.close()
    frame = read_log(path)
    assert list(frame.id) == [d.id for d in decisions] + [frame.id.iloc[-1]]
    assert frame.id.iloc[-1].startswith("update:") and frame.action.iloc[-1] == 1
    np.testing.assert_array_equal(np.stack(frame.arms.iloc[:5]), np.stack(contexts))
    np.testing.assert_allclose(frame.propensity.iloc[:5], [d.propensity for d in decisions])
    assert np.isnan(frame.reward.iloc[0]) and list(frame.reward.iloc[1:]) == [0.5] * 4 + [2.0]
    assert (frame.seq.diff().dropna() > 0).all()
    dataset = read_log(path, as_xarray=True)
    assert dataset.sizes["decision"] == 6 and "propensity" in dataset


_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import bayesbandit as bb
    from bayesbandit.models import logistic

    bb.runtime.enable_x64()
    folder = sys.argv[1]
    rng = np.random.default_rng(int(sys.argv[2]))
    agent = bb.Agent(bb.GLMTSL(logistic(), history="online"), d=3, seed=0, log=folder + "/log.sqlite")
    pending = []
    print("serving", flush=True)
    for t in range(100_000):
        pending.append(agent.decide(rng.uniform(-1, 1, (5, 3))))
        if len(pending) > 3:  # rewards arrive three decisions late, out of order
            agent.update(pending.pop(int(rng.integers(len(pending)))), float(rng.random() < 0.5))
        if t % 10 == 9:
            agent.save(folder + "/agent.bbckpt")
    """
)


def _replayed(log_path):
    """A fresh agent fed the log's rewards in the order they were applied (``seq``): the state the log says."""
    by_id = read_log(log_path).set_index("id")
    with sqlite3.connect(log_path) as reader:
        order = [r[0] for r in reader.execute("SELECT decision_id FROM rewards ORDER BY seq")]
    twin = bb.Agent(bb.GLMTSL(logistic(), history="online"), d=3, seed=0)
    for decision_id in order:
        row = by_id.loc[decision_id]
        twin.update(int(row.action), float(row.reward), arms=row.arms)
    return twin, len(order)


@pytest.mark.parametrize("seed", [1, 2])
def test_after_a_kill_the_loaded_agent_is_the_replay_of_its_log(tmp_path, seed):
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path), str(seed)],
        stdout=subprocess.PIPE,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    try:
        assert child.stdout.readline().strip() == b"serving"
        deadline = time.monotonic() + 60
        while not (tmp_path / "agent.bbckpt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(np.random.default_rng(seed).uniform(0.5, 2.0))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    log_path = tmp_path / "log.sqlite"
    checkpoint = bb.checkpoint.read_checkpoint(tmp_path / "agent.bbckpt")[0]
    twin, rewards = _replayed(log_path)
    assert checkpoint["num_updates"] <= rewards  # the checkpoint never holds a reward the log lacks
    loaded = bb.Agent.load(tmp_path / "agent.bbckpt", bb.GLMTSL(logistic(), history="online"), log=log_path)
    assert loaded.num_updates == rewards
    for a, b in zip(jax.tree.leaves(loaded.state), jax.tree.leaves(twin.state), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert loaded.pending_decisions == len(read_log(log_path)) - rewards
    json.dumps(checkpoint["decisions"])  # the pending decisions are plain JSON in the checkpoint
    loaded.close()


def test_a_replay_draws_after_every_select_before_a_logged_update(tmp_path):
    """Plain selects are not logged, but the plain update after them carries the draw count, so the loaded
    agent's next selections use the live agent's next keys, not those of the selects before the update."""
    arms = RNG.uniform(-1.0, 1.0, (6, 3))
    policy = bb.GLMTSL(logistic(), history="online", num_explore=0)
    live = bb.Agent(policy, arms=arms, seed=3, log=tmp_path / "log.sqlite")
    live.save(tmp_path / "start.bbckpt")
    for _ in range(4):
        action = live.select()
    live.update(action, 1.0)
    live.close()  # commits the log
    assert read_log(tmp_path / "log.sqlite")["draw"].tolist() == [3]
    loaded = bb.Agent.load(tmp_path / "start.bbckpt", policy, log=tmp_path / "log.sqlite")
    np.testing.assert_array_equal(loaded.select(n=20), live.select(n=20))
    loaded.close()
