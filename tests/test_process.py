"""Agents across processes: a forked child is refused at once, pickling is refused, spawn continues exactly.

The scenarios fork and spawn processes, so they run in a fresh interpreter under a time limit
(``tests/_fresh.py``): a regression fails here as a timeout instead of hanging the suite.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import warnings

import numpy as np
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.errors import ProcessError
from bayesbandit.index import AnnoyIndex, HNSWIndex

ARMS = np.random.default_rng(0).uniform(-1, 1, (12, 3))


def make_agent():
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=4)
    for reward in (1.0, 0.0, 1.0):
        agent.update(agent.select(), reward)
    return agent


def play(agent, rounds=5):
    actions = []
    for t in range(rounds):
        arm = int(agent.select())
        agent.update(arm, float(t % 2))
        actions.append(arm)
    return actions


def continue_from(path):
    return play(bb.Agent.load(path, bb.GLMTSL(logistic(), a=1.0)))


def forked_child_is_refused(agent):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            agent.select()
            message = "answered"
        except ProcessError as exc:
            message = "refused: " + str(exc)
        os.write(write, message.encode())
        os._exit(0)
    os.waitpid(pid, 0)
    message = os.read(read, 4096).decode()
    assert message.startswith("refused"), message
    assert "spawn" in message and "Agent.load" in message, message


def pickling_is_refused(agent):
    with mp.get_context("fork").Pool(1) as pool:
        try:
            pool.apply(play, (agent,))
        except ProcessError as exc:
            assert "cannot be pickled" in str(exc) and "spawn" in str(exc)
        else:
            raise AssertionError("an Agent was sent to another process")


def spawn_continues_exactly(agent):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "agent.ckpt")
        agent.save(path)
        with mp.get_context("spawn").Pool(1) as pool:
            child = pool.apply(continue_from, (path,))
    assert child == play(agent), (child,)


def index_works_in_forked_child(index):
    rng = np.random.default_rng(1)
    index.add(np.arange(500), rng.standard_normal((500, 6)))
    more, query = rng.standard_normal((300, 6)), rng.standard_normal(6)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        index.add(np.arange(500, 800), more)  # a rebuild, in the child
        os.write(write, index.query(query, 5).tobytes())
        os._exit(0)
    os.waitpid(pid, 0)
    child = np.frombuffer(os.read(read, 4096), dtype=np.int64)
    index.add(np.arange(500, 800), more)
    np.testing.assert_array_equal(child, index.query(query, 5))


def agents_across_processes() -> dict[str, np.ndarray]:
    """Every scenario above, in order; one that fails raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # JAX's own warning at os.fork()
        agent = make_agent()
        forked_child_is_refused(agent)
        pickling_is_refused(agent)
        spawn_continues_exactly(agent)
        index_works_in_forked_child(AnnoyIndex(6, n_trees=4, min_changes=0))
        index_works_in_forked_child(HNSWIndex(6))
    return {"scenarios": np.array(5)}


def test_agents_across_processes(fresh_process):
    """A forked child's call raises ProcessError naming spawn and Agent.load; a fork-context pool refuses
    to pickle the agent; a spawned worker loading the parent's checkpoint plays the parent's next rounds;
    Annoy and HNSW indexes keep working (and growing) in a forked child."""
    out = fresh_process.result("jax_threefry", "test_process.py:agents_across_processes")
    assert int(out["scenarios"]) == 5
