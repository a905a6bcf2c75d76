"""bb.Agent: no retrace, checkpoints that continue bit-for-bit and refuse the wrong policy, atomic saves."""

import os

import jax
import numpy as np
import pytest
from _asserts import assert_trees_equal
from bayesbandit.models import logistic, probit

import bayesbandit as bb
from bayesbandit.agent._engine import draw_data, draw_key
from bayesbandit.errors import CheckpointError
from bayesbandit.history import ArmHistory, RowHistory

ARMS = np.random.default_rng(0).uniform(-1, 1, (5, 3))
THETA = np.array([1.5, -1.0, 0.5])


def _reward(rng, x):
    return float(rng.random() < 1 / (1 + np.exp(-x @ THETA)))


def play(agent, rounds, seed, contextual=False):
    """Play ``rounds`` rounds with rewards (and contexts) from a seeded generator; return arms."""
    rng = np.random.default_rng(seed)
    chosen = []
    for _ in range(rounds):
        if contextual:
            arms = rng.uniform(-1, 1, (4, 3))
            arm = agent.select(arms)
            x = arms[arm]
        else:
            arm = agent.select()
            x = ARMS[arm]
        agent.update(arm, _reward(rng, x))
        chosen.append(arm)
    return chosen


# Fixed arm sets are covered for every policy by the contract suite (check_save_load); here the
# contextual agent, whose row buffer grows between the save and the end of the run.
AGENTS = [
    ("contextual_tsl", lambda: bb.GLMTSL(logistic(), a=1.0), dict(d=3, capacity=8), True),
]


@pytest.mark.parametrize("name, policy, kwargs, contextual", AGENTS, ids=[a[0] for a in AGENTS])
def test_save_load_continues_bit_for_bit(tmp_path, name, policy, kwargs, contextual):
    agent = bb.Agent(policy(), seed=0, **kwargs)
    play(agent, 6, seed=1, contextual=contextual)
    path = tmp_path / "agent.bb"
    agent.save(path)
    loaded = bb.Agent.load(path, policy())
    assert_trees_equal(agent.state, loaded.state)
    # 6 more rounds each (the contextual buffer of capacity 8 grows on the way)
    a = play(agent, 6, seed=2, contextual=contextual)
    b = play(loaded, 6, seed=2, contextual=contextual)
    assert a == b
    assert_trees_equal(agent.state, loaded.state)
    assert agent.num_updates == loaded.num_updates == 12
    history = agent.state.history
    assert isinstance(history, RowHistory if contextual else ArmHistory)
    if contextual:
        assert history.capacity == 16 and int(history.size) == 12
    # 12 selects and updates with new values (states, keys, rewards) compiled once each; the
    # contextual buffer grew once (8 -> 16 rows), a new shape, hence one more compile


def test_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)
    play(agent, 3, seed=1)
    path = tmp_path / "agent.bb"
    agent.save(path)
    saved = bb.Agent.load(path, agent.policy).state
    play(agent, 3, seed=2)

    def boom(*args, **kwargs):
        raise OSError("disk full")

    for target in ("os.replace", "os.fsync"):
        with monkeypatch.context() as m:
            m.setattr(target, boom)
            with pytest.raises(OSError, match="disk full"):
                agent.save(path)
        assert sorted(os.listdir(tmp_path)) == ["agent.bb"], target  # no temporary file left
        assert_trees_equal(bb.Agent.load(path, agent.policy).state, saved)
    agent.save(path)  # a save that completes replaces it
    assert_trees_equal(bb.Agent.load(path, agent.policy).state, agent.state)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A checkpoint of a GLM-TSL agent after 4 rounds, and the bytes of the file."""
    path = tmp_path_factory.mktemp("ckpt") / "tsl.bb"
    agent = bb.Agent(bb.GLMTSL(logistic(), a=1.0), arms=ARMS, seed=0)
    play(agent, 4, seed=1)
    agent.save(path)
    return path, path.read_bytes()


MISMATCHES = [
    (lambda: bb.GLMFPL(logistic(), a=1.0), {}, "written for policy .*GLMTSL, not .*GLMFPL"),
    (lambda: bb.GLMTSL(logistic(), a=2.0), {}, r"other hyper-parameters: a=1\.0 \(given 2\.0\)"),
    (lambda: bb.GLMTSL(logistic(), a=1.0, solver=bb.inference.DenseNewton(max_steps=5)), {}, "solver="),
    (lambda: bb.GLMTSL(logistic(prior_scale=3.0), a=1.0), {}, "another reward program"),
    (lambda: bb.GLMTSL(probit(), a=1.0), {}, "another reward program"),
    (lambda: bb.GLMTSL(logistic(), a=1.0), {"arms": ARMS + 0.5}, "another arm set"),
    (lambda: bb.LinTS(), {}, "written for policy .*GLMTSL, not .*LinTS"),
]


@pytest.mark.parametrize("policy, kwargs, match", MISMATCHES)
def test_loading_for_another_policy_program_or_arm_set_is_refused(saved, policy, kwargs, match):
    path, _ = saved
    with pytest.raises(CheckpointError, match=match):
        bb.Agent.load(path, policy(), **kwargs)
    bb.Agent.load(path, bb.GLMTSL(logistic(), a=1.0), arms=ARMS)  # the right one loads


def test_every_flipped_bit_is_refused(saved, tmp_path):
    """A checkpoint with any single bit flipped raises CheckpointError (checked at every bit)."""
    _, data = saved
    policy = bb.GLMTSL(logistic(), a=1.0)
    target = tmp_path / "flipped.bb"
    for byte in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[byte] ^= 1 << bit
            target.write_bytes(bytes(damaged))
            with pytest.raises(CheckpointError):
                bb.Agent.load(target, policy)


def test_checkpoint_holds_no_pickle_and_loading_runs_no_pickle(saved, monkeypatch):
    path, data = saved
    assert b"\x80\x04\x95" not in data and b"\x80\x05\x95" not in data  # pickle protocol 4/5 frames
    import pickle

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint load must not unpickle")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    bb.Agent.load(path, bb.GLMTSL(logistic(), a=1.0))


def test_bad_files_raise_checkpoint_error(tmp_path):
    policy = bb.GLMTSL(logistic(), a=1.0)
    for name, content in {"garbage.bb": b"this is not a checkpoint", "empty.bb": b""}.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(CheckpointError):
            bb.Agent.load(tmp_path / name, policy)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        bb.Agent.load(tmp_path / "missing.bb", policy)


def _request_thread_compiles(monkeypatch):
    """The names of the threads in which XLA compiles from now on (a list that fills as it happens)."""
    import threading

    names = []
    compile_ = jax.stages.Lowered.compile

    def recorded(self, *args, **kwargs):
        names.append(threading.current_thread().name)
        return compile_(self, *args, **kwargs)

    monkeypatch.setattr(jax.stages.Lowered, "compile", recorded)
    return names


def test_a_growing_buffer_is_compiled_ahead_and_gives_the_same_results(monkeypatch):
    """A contextual full-history agent compiles its calls for the doubled buffer in the background once the
    buffer is half full: when it grows, nothing compiles in the thread that selects and updates, and the
    results are those of an agent that compiles on demand. (The policy, a = 2.25, is this test's alone: an
    equal policy's agents share compiled programs.)"""

    def play_slowly(agent, rounds, rng):
        actions = []
        for _ in range(rounds):
            arms = rng.uniform(-1, 1, (4, 3))
            actions.append(agent.select(arms))
            agent.update(actions[-1], float(rng.random() < 0.5))
            agent.wait_compiled()  # as if rounds came slower than a compile
        return actions

    ahead = bb.Agent(bb.GLMTSL(logistic(), a=2.25), d=3, capacity=4, seed=0)
    rng = np.random.default_rng(5)
    ahead.warm_up(num_arms=4)
    compiles = _request_thread_compiles(monkeypatch)
    ahead_actions = play_slowly(ahead, 20, rng)  # the buffer grows 4 -> 8 -> 16 -> 32
    assert ahead.state.history.capacity == 32
    assert compiles and all(name.startswith("bayesbandit-compile") for name in compiles), compiles
    on_demand = bb.Agent(bb.GLMTSL(logistic(), a=2.25), d=3, capacity=4, seed=0, compile_ahead=False)
    assert play_slowly(on_demand, 20, np.random.default_rng(5)) == ahead_actions
    assert_trees_equal(ahead.state, on_demand.state)


def test_warm_up_with_rows_compiles_every_buffer_size_before_serving(monkeypatch):
    """``warm_up(rows=...)`` compiles each row-buffer size up to ``rows``: growing 4 -> 32 rows then traces and
    compiles nothing at all, in any thread."""
    agent = bb.Agent(bb.GLMTSL(logistic(), a=2.75), d=3, capacity=4, seed=0)
    agent.warm_up(num_arms=4, rows=64)
    compiles = _request_thread_compiles(monkeypatch)
    rng = np.random.default_rng(5)
    for _ in range(20):
        arms = rng.uniform(-1, 1, (4, 3))
        agent.update(agent.decide(arms), float(rng.random() < 0.5))
    agent.wait_compiled()
    assert agent.state.history.capacity == 32
    assert compiles == []


def test_a_warmed_up_agent_compiles_nothing_while_it_serves(monkeypatch):
    """After ``warm_up`` a fixed-arm agent's decisions (with propensities), updates, and a save and load of
    an equal agent compile nothing, and choose what an agent compiling on demand chooses."""
    ahead = bb.Agent(bb.GLMTSL(logistic(), a=1.5), arms=ARMS, seed=0)
    ahead.warm_up(propensity=True)
    compiles = _request_thread_compiles(monkeypatch)
    actions = play(ahead, 4, seed=3)
    decision = ahead.decide(propensity=True)
    ahead.update(decision, 1.0)
    assert compiles == []
    on_demand = bb.Agent(bb.GLMTSL(logistic(), a=1.5), arms=ARMS, seed=0, compile_ahead=False)
    assert play(on_demand, 4, seed=3) == actions
    other = on_demand.decide(propensity=True)
    assert (other.action, other.propensity) == (decision.action, decision.propensity)
    on_demand.update(other, 1.0)
    assert_trees_equal(ahead.state, on_demand.state)


@pytest.mark.parametrize("contextual", [False, True], ids=["fixed", "contextual"])
def test_update_info_is_the_policys_own(contextual):
    """The compiled update returns its Info packed in one buffer; the agent's ``last_update_info`` is
    that Info, leaf for leaf, as the policy's own ``update`` makes it (row buffers growing included)."""
    bb.runtime.enable_x64()
    policy = bb.GLMTSL(logistic(), a=1.0)
    agent = bb.Agent(policy, d=3, seed=1, capacity=4) if contextual else bb.Agent(policy, arms=ARMS, seed=1)
    rng = np.random.default_rng(2)
    for _ in range(12):  # the contextual buffer grows 4 -> 8 -> 16: three packed layouts
        arms = rng.uniform(-1, 1, (5, 3)) if contextual else ARMS
        before = agent.state
        action = agent.select(arms) if contextual else agent.select()
        reward = float(rng.random() < 0.5)
        agent.update(action, reward)
        if policy.capacity(before) is not None:
            before = policy.reserve(before, 1)
        _, expected = jax.jit(policy.update)(before, arms, np.int32(action), np.float64(reward))
        got = agent.last_update_info
        assert type(got) is type(expected)
        for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


ROUND_POLICIES = [  # no initial exploration: the agent counts it in decisions, the pure policy in rewards
    ("glm_tsl_full", lambda: bb.GLMTSL(logistic(), a=1.0, num_explore=0)),
    ("glm_tsl_online", lambda: bb.GLMTSL(logistic(), a=1.0, history="online", num_explore=0)),
    ("glm_fpl", lambda: bb.GLMFPL(logistic(), a=1.0, num_explore=0)),
    ("lin_ts", lambda: bb.LinTS(num_explore=0)),
]


@pytest.mark.parametrize("name, policy", ROUND_POLICIES, ids=[p[0] for p in ROUND_POLICIES])
def test_the_agent_chooses_what_the_policy_chooses(name, policy):
    """Through every interleaving (select then update; selections in a row; decisions rewarded out of order;
    a decay and a save and load in between) the agent chooses what the pure policy API chooses from the same
    states and keys (``fold_in(seed key, draw)``), and ends in its state."""

    policy = policy()
    agent = bb.Agent(policy, arms=ARMS, seed=4)
    agent.wait_compiled()  # it traces in the background; this test traces the policy in this thread
    key, init_key = jax.random.split(jax.random.PRNGKey(4))
    state = policy.init(ARMS, d=3, key=init_key)
    select, update = jax.jit(policy.select), jax.jit(policy.update)
    rng = np.random.default_rng(0)
    draws = 0

    def policy_select():
        nonlocal draws
        action, info = select(state, ARMS, draw_key(key, draw_data(draws)))
        draws += 1
        for ours, theirs in zip(jax.tree.leaves(agent.last_select_info), jax.tree.leaves(info), strict=True):
            np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-10, atol=1e-12)
        return int(action)

    def both_update(action, reward, target=None):
        nonlocal state
        agent.update(action if target is None else target, reward)
        state, _ = update(state, ARMS, np.int32(action), np.float64(reward))

    for step in range(30):
        pattern = step % 5
        if pattern in (0, 1):  # select, update
            action = agent.select()
            assert action == policy_select(), f"step {step}"
            both_update(action, float(rng.random() < 0.5))
        elif pattern == 2:  # two selections, then their rewards in the other order
            first = agent.decide()
            assert first.action == policy_select(), f"step {step}"
            second = agent.decide()
            assert second.action == policy_select(), f"step {step}"
            both_update(second.action, 1.0, second)
            both_update(first.action, 0.0, first)
        elif pattern == 3:  # forgetting replaces the state: the next select computes afresh
            agent.decay(0.9)
            state = policy.discount(state, 0.9, refit=True)
            action = agent.select()
            assert action == policy_select(), f"step {step}"
            both_update(action, float(rng.random() < 0.5))
        else:
            agent.save(path := os.path.join(os.environ.get("TMPDIR", "/tmp"), f"round-{name}-{os.getpid()}.bb"))
            agent = bb.Agent.load(path, policy)
            agent.wait_compiled()
            os.unlink(path)
    for ours, theirs in zip(jax.tree.leaves(agent.state), jax.tree.leaves(state), strict=True):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-10, atol=1e-12)
