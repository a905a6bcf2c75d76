"""The policy contract suite (scikit-learn's ``check_estimator`` is the model).

Every policy joins by one line in :data:`CASES`; ``test_policy_contract.py`` runs every check
of :data:`CHECKS` on every case, and ``test_policy_checks_fail.py`` shows that each check fails
on a policy (or a library) broken in the way the check is about.

A check is a function ``check_*(case)`` that raises ``AssertionError`` naming the broken
property. Checks share one compiled experiment per case (``lax.scan`` over rounds inside
``vmap`` over 8 runs) and one played ``Agent`` per case, so each policy compiles a handful of
programs in all.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from _asserts import snapshot
from bayesbandit.models import logistic, mlp

import bayesbandit as bb
import bayesbandit.agent._calls as agent_calls
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import ExclusiveAssignment, TopK

K, D, HORIZON, RUNS = 100, 10, 2000, 8
AGENT_K, AGENT_D = 6, 3


@dataclass(frozen=True)
class Case:
    """A policy under test: a name and a factory (called fresh where a check needs a new object)."""

    name: str
    make: Callable[[], Any]

    def __repr__(self) -> str:
        return self.name


# One line per policy: the whole contract suite runs on it.
CASES = [
    Case("glm_tsl", lambda: bb.GLMTSL(logistic(), a=1.0)),
    Case("glm_tsl_online", lambda: bb.GLMTSL(logistic(), a=1.0, history="online")),
    Case("glm_fpl", lambda: bb.GLMFPL(logistic(), a=0.5)),
    Case("glm_ucb", lambda: bb.GLMUCB(logistic(), rho=0.5)),
    Case("ucb_glm", lambda: bb.UCBGLM(logistic(), alpha=0.5)),
    Case("eps_greedy", lambda: bb.EpsilonGreedy(logistic(), epsilon=0.05)),
    Case("lin_ts", lambda: bb.LinTS(lam=1.0, v=0.5)),
    Case("lin_ucb", lambda: bb.LinUCB(lam=1.0, alpha=1.0)),
    Case("deep_fpl", lambda: bb.DeepFPL(mlp(hidden=16), a=0.5, learning_rate=1e-2, batch=128)),
    Case("deep_fl", lambda: bb.DeepFL(mlp(hidden=16), learning_rate=1e-2, batch=128)),
    Case("rep_glm_fpl", lambda: bb.RepGLMFPL(mlp(hidden=8), explore_rounds=100, a=0.5)),
    Case("last_layer_ts", lambda: bb.LastLayerLaplaceTS(mlp(hidden=8), explore_rounds=100)),
]


# ------------------------------------------------------------------------------ shared runs
def problem(key: jax.Array, k: int = K, d: int = D) -> tuple[jax.Array, jax.Array]:
    """A logistic bandit: arms uniform on [-1, 1]^d, theta* ~ N(0, 3/d I); returns (arms, means)."""
    k_arms, k_theta = jax.random.split(key)
    arms = jax.random.uniform(k_arms, (k, d), minval=-1.0, maxval=1.0)
    theta = jax.random.normal(k_theta, (d,)) * jnp.sqrt(3.0 / d)
    return arms, jax.nn.sigmoid(arms @ theta)


def run_keys(seed: int) -> jax.Array:
    """Keys of the 8 vmapped runs; runs 0 and 1 share a key (the same-key check)."""
    keys = jax.random.split(jax.random.PRNGKey(seed), RUNS)
    return keys.at[1].set(keys[0])


@functools.cache
def experiment(case: Case) -> tuple[Callable, list]:
    """(jitted vmapped experiment, trace counter) for one case; cached across checks."""
    policy = case.make()
    traces: list[int] = []

    def one_run(key):
        k_problem, k_rounds = jax.random.split(key)
        arms, mu = problem(k_problem)
        state = policy.init(arms, key=k_problem)

        def step(state, k):
            k_select, k_reward = jax.random.split(k)
            action, _ = policy.select(state, arms, k_select)
            reward = jax.random.bernoulli(k_reward, mu[action]).astype(arms.dtype)
            state, _ = policy.update(state, arms, action, reward)
            return state, (action, mu.max() - mu[action])

        state, (actions, regret) = jax.lax.scan(step, state, jax.random.split(k_rounds, HORIZON))
        return actions, regret, mu.max() - mu.mean(), state

    def counted(keys):
        traces.append(1)  # runs once per trace, never on a cached call
        return jax.vmap(one_run)(keys)

    return jax.jit(counted), traces


@functools.cache
def results(case: Case, seed: int = 0) -> tuple:
    fn, _ = experiment(case)
    try:
        out = fn(run_keys(seed))
    except Exception as exc:  # a policy that does not trace fails the contract, not the test harness
        raise AssertionError(f"{case.name}: the policy does not run under jit(vmap(scan)): {exc!r}") from exc
    return jax.tree.map(np.asarray, out)


def agent_arms() -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, (AGENT_K, AGENT_D))


def play(agent: bb.Agent, rounds: int, seed: int) -> list:
    """Rounds with Bernoulli rewards from a seeded generator; returns the actions."""
    rng = np.random.default_rng(seed)
    theta = np.array([1.0, -1.0, 0.5])
    actions = []
    for _ in range(rounds):
        action = agent.select()
        x = agent_arms()[action]
        agent.update(action, float(rng.random() < 1 / (1 + np.exp(-x @ theta))))
        actions.append(action)
    return actions


def _same_tree(a: Any, b: Any) -> bool:
    if jax.tree.structure(a) != jax.tree.structure(b):
        return False
    return all(
        x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
        for x, y in zip(snapshot(a), snapshot(b), strict=True)
    )


# ------------------------------------------------------------------------------ the checks
def check_jit_vmap(case: Case) -> None:
    """jit(vmap(scan)) over 8 runs: shapes, actions in range, finite float state, rounds counted."""
    actions, regret, _, state = results(case)
    assert actions.shape == (RUNS, HORIZON) and regret.shape == (RUNS, HORIZON), case.name
    assert np.all((actions >= 0) & (actions < K)), f"{case.name}: an action outside [0, K)"
    for leaf in jax.tree.leaves(state):
        if np.issubdtype(leaf.dtype, np.floating):
            assert np.all(np.isfinite(leaf)), f"{case.name}: non-finite state after {HORIZON} rounds"


def check_compiles_once(case: Case) -> None:
    """The Agent's select and update compile once over many rounds; the experiment traces once
    (other keys of the same shape reuse its trace: lowering for them traces nothing)."""
    agent = bb.Agent(case.make(), arms=agent_arms(), seed=0)
    play(agent, 1, seed=0)  # compiles (or reuses what an equal policy compiled for these shapes)
    first = (agent._select._cache_size(), agent._update._cache_size())
    play(agent, 4, seed=1)
    sizes = (agent._select._cache_size(), agent._update._cache_size())
    assert sizes == first, f"{case.name}: select/update compiled {sizes} times, {first} after round 1 (state drifts?)"
    fn, traces = experiment(case)
    results(case)
    fn.lower(run_keys(1))
    assert len(traces) == 1 and fn._cache_size() == 1, f"{case.name}: the experiment was traced {len(traces)} times"


def check_same_key_same_actions(case: Case) -> None:
    """Same key, same actions (vmapped runs 0 and 1; two agents with one seed); other keys differ."""
    actions, _, _, state = results(case)
    assert np.array_equal(actions[0], actions[1]), f"{case.name}: one key gave two action sequences"
    assert _same_tree(jax.tree.map(lambda v: v[0], state), jax.tree.map(lambda v: v[1], state)), case.name
    assert len({tuple(row) for row in actions[1:]}) == RUNS - 1, f"{case.name}: distinct keys, same actions"
    a = play(bb.Agent(case.make(), arms=agent_arms(), seed=3), 8, seed=1)
    agent_calls._jitted.cache_clear()  # compile the second agent apart: randomness drawn at trace time shows
    b = play(bb.Agent(case.make(), arms=agent_arms(), seed=3), 8, seed=1)
    assert a == b, f"{case.name}: two agents with seed 3 chose {a} and {b}"


def check_dtypes_stable(case: Case) -> None:
    """update returns a state of the same structure, shapes and dtypes as init's; infos say converged."""
    policy = case.make()
    arms = jnp.asarray(agent_arms())
    key = jax.random.PRNGKey(0)
    for kwargs in ({"arms": arms}, {"d": AGENT_D, "capacity": 8}):
        state0 = jax.eval_shape(lambda k, kw=kwargs: policy.init(**kw, key=k), key)
        action, select_info = jax.eval_shape(lambda s: policy.select(s, arms, key), state0)
        state1, update_info = jax.eval_shape(lambda s, a: policy.update(s, arms, a, jnp.asarray(1.0)), state0, action)
        assert jax.tree.structure(state0) == jax.tree.structure(state1), f"{case.name}: update changed the state tree"
        for x, y in zip(jax.tree.leaves(state0), jax.tree.leaves(state1), strict=True):
            assert (x.shape, x.dtype, x.weak_type) == (y.shape, y.dtype, y.weak_type), (
                f"{case.name} ({list(kwargs)}): a state leaf went from {x} to {y} in one update"
            )
        for info in (select_info, update_info):
            assert info.converged.shape == () and info.converged.dtype == jnp.bool_, f"{case.name}: {info}"
        assert jnp.issubdtype(action.dtype, jnp.integer) and action.shape == (), f"{case.name}: action {action}"


def check_learns(case: Case) -> None:
    """Regret well below uniform's, and lower per round in the second half than in the first."""
    _, regret, uniform_gap, _ = results(case)
    regret, uniform_gap = regret[1:], uniform_gap[1:]  # 7 distinct runs
    ratio = regret.sum(1).mean() / (HORIZON * uniform_gap).mean()
    assert ratio < 0.3, f"{case.name}: regret is {ratio:.2f}x uniform's"
    first, second = regret[:, : HORIZON // 2].mean(), regret[:, HORIZON // 2 :].mean()
    assert second < first, f"{case.name}: regret per round did not fall ({first:.4f} -> {second:.4f})"


def _rejects(agent: bb.Agent, call: Callable[[bb.Agent], Any], what: str) -> None:
    before, key = snapshot(agent.state), np.array(jax.random.key_data(agent._key), copy=True)
    try:
        call(agent)
    except InvalidInput:
        pass
    except Exception as exc:
        raise AssertionError(f"{type(agent.policy).__name__}: {what} raised {exc!r}, not InvalidInput") from exc
    else:
        raise AssertionError(f"{type(agent.policy).__name__}: {what} was accepted")
    after = snapshot(agent.state)
    assert len(before) == len(after) and all(
        np.array_equal(x, y, equal_nan=True) for x, y in zip(before, after, strict=True)
    ), f"{type(agent.policy).__name__}: {what} changed the state"
    assert np.array_equal(np.asarray(jax.random.key_data(agent._key)), key), f"{what} moved the key"


def _out_of_support(policy: Any) -> float | None:
    support = policy.reward_support(AGENT_D).constraint
    if support is None:
        return None
    for value in (-1.0, 0.5, 2.0, 1e9, -1e9):
        if not bool(np.all(np.asarray(support.check(np.asarray(value))))):
            return value
    return None


def check_bad_inputs(case: Case) -> None:
    """NaN, inf, out-of-support rewards, bad shapes, bad actions and an empty arm set raise
    InvalidInput through the Agent, with the state and key unchanged bit for bit."""
    fixed = bb.Agent(case.make(), arms=agent_arms(), seed=0)
    play(fixed, 2, seed=0)
    action = fixed.select()
    for reward in (math.nan, math.inf, -math.inf, [1.0, 0.0], "one"):
        _rejects(fixed, lambda a, r=reward: a.update(action, r), f"reward {reward!r}")
    outside = _out_of_support(case.make())
    if outside is not None:  # None: the policy's rewards may be any real number
        _rejects(fixed, lambda a: a.update(action, outside), f"out-of-support reward {outside}")
    for bad in (AGENT_K, -1, 1.5, [0, 1], "a", None):
        _rejects(fixed, lambda a, b=bad: a.update(b, 1.0), f"action {bad!r}")
    contextual = bb.Agent(case.make(), d=AGENT_D, seed=0, capacity=4)
    for arms, what in (
        (np.zeros((0, AGENT_D)), "an empty arm set"),
        (np.zeros(AGENT_D), "arms of shape (d,)"),
        (np.zeros((4, AGENT_D + 1)), "arms of the wrong dimension"),
        (np.full((4, AGENT_D), np.nan), "NaN arms"),
    ):
        _rejects(contextual, lambda a, x=arms: a.select(x), what)


def check_save_load(case: Case, tmp_path: Any) -> None:
    """An agent saved and loaded continues bit for bit (same actions, same states)."""
    agent = bb.Agent(case.make(), arms=agent_arms(), seed=0)
    play(agent, 5, seed=1)
    path = tmp_path / f"{case.name}.bb"
    agent.save(path)
    loaded = bb.Agent.load(path, case.make())
    assert _same_tree(agent.state, loaded.state), f"{case.name}: the loaded state differs"
    a, b = play(agent, 5, seed=2), play(loaded, 5, seed=2)
    assert a == b, f"{case.name}: after loading, actions {b} instead of {a}"
    assert _same_tree(agent.state, loaded.state), f"{case.name}: the states diverged after loading"


CHECKS = [
    check_jit_vmap,
    check_compiles_once,
    check_same_key_same_actions,
    check_dtypes_stable,
    check_learns,
    check_bad_inputs,
    check_save_load,
]


# ------------------------------------------------------------------------------ host policies
# Index-backed policies (kind = "host") over catalogues with ids: one line each, the host checks below.
HOST_CASES = [
    Case("sub_ts", lambda: bb.SubTS(beta=0.5, shortlist=20)),
    Case("sub_ts_exact", lambda: bb.SubTS(beta=0.5, index="exact")),
    Case("sub_ts_hnsw", lambda: bb.SubTS(beta=0.5, shortlist=20, index="hnsw")),
    Case("sub_elim", lambda: bb.SubElim(beta=0.2, eta=0.01, shortlist=20)),
    Case("sub_elim_exact", lambda: bb.SubElim(beta=0.2, eta=0.01, index="exact")),
]
HOST_ENV = bb.envs.SyntheticCatalogue(initial_arms=1000, d=6, horizon=3000, add_count=0)


@functools.cache
def host_results(case: Case, seed: int = 0) -> Any:
    return bb.sim.simulate_catalogue({case.name: case.make()}, HOST_ENV, runs=3, seed=seed).sel(policy=case.name)


def check_host_learns(case: Case) -> None:
    """Over the last quarter, regret per round below half of uniform play's."""
    ds = host_results(case)
    uniform = np.mean([run.means.max() - run.means.mean() for run in (HOST_ENV.reset(0, r) for r in range(3))])
    late = float(ds.regret.isel(round=slice(-750, None)).mean())
    assert late < 0.5 * uniform, f"{case.name}: late regret per round {late:.3f}, uniform {uniform:.3f}"


def check_host_same_seed_same_actions(case: Case) -> None:
    """The same seed gives the same actions; another seed, others."""
    a = host_results(case).action.values
    b = bb.sim.simulate_catalogue({case.name: case.make()}, HOST_ENV, runs=3, seed=0).action.values[0]
    assert np.array_equal(a, b), f"{case.name}: one seed gave two action sequences"
    assert not np.array_equal(a, host_results(case, seed=1).action.values), f"{case.name}: two seeds, one sequence"


def check_host_bad_inputs(case: Case) -> None:
    """Duplicate, NaN and wrong-dimension arms, unknown ids: a named exception, the state unchanged."""
    policy = case.make()
    rng = np.random.default_rng(0)
    state = policy.init(bb.Catalogue(np.arange(40), rng.standard_normal((40, 3))))

    def probe() -> Any:
        return policy.select(state, None, np.random.default_rng(5))[0]

    before = probe()
    calls = [
        (lambda: policy.add_arms(state, np.array([3]), rng.standard_normal((1, 3))), "an id already held"),
        (lambda: policy.add_arms(state, np.array([50, 50]), rng.standard_normal((2, 3))), "a repeated id"),
        (lambda: policy.add_arms(state, np.array([50]), np.full((1, 3), np.nan)), "a NaN feature"),
        (lambda: policy.add_arms(state, np.array([50]), np.ones((1, 4))), "a wrong dimension"),
        (lambda: policy.update(state, None, 999, 1.0), "an unknown arm in update"),
        (lambda: policy.remove_arms(state, np.array([999])), "an unknown arm in remove_arms"),
    ]
    for call, what in calls:
        try:
            call()
        except InvalidInput:
            pass
        else:
            raise AssertionError(f"{case.name}: {what} was accepted")
        assert probe() == before, f"{case.name}: {what} changed the state"


def check_host_catalogue_changes(case: Case) -> None:
    """An arm added while running is played once it is the best by far; a removed one never again."""
    policy = case.make()
    rng = np.random.default_rng(1)
    theta = np.ones(4) / 2
    features = rng.standard_normal((300, 4)) * 0.1
    state = policy.init(bb.Catalogue(np.arange(300), features))
    for _ in range(200):
        item, _ = policy.select(state, None, rng)
        policy.update(state, None, item, float(features[item] @ theta + 0.1 * rng.standard_normal()))
    star = np.ones((1, 4))
    policy.add_arms(state, np.array([1000]), star)
    played = []
    for _ in range(300):
        item, _ = policy.select(state, None, rng)
        x = star[0] if item == 1000 else features[item]
        policy.update(state, None, item, float(x @ theta + 0.1 * rng.standard_normal()))
        played.append(item)
    assert 1000 in played, f"{case.name}: a new arm twice as good as any was never played in 300 rounds"
    try:
        policy.remove_arms(state, np.array([1000]))
    except InvalidInput:
        return  # additions only (Sub-Elim), said and checked in check_host_bad_inputs
    for _ in range(50):
        item, _ = policy.select(state, None, rng)
        assert item != 1000, f"{case.name}: a removed arm was played"
        policy.update(state, None, item, 0.0)


HOST_CHECKS = [
    check_host_learns,
    check_host_same_seed_same_actions,
    check_host_bad_inputs,
    check_host_catalogue_changes,
]


# ------------------------------------------------------------------------------ combinatorial policies
# Super-arm policies (semi-bandit feedback, bayesbandit.contract.Combinatorial): one line each, the checks below.
COMB_K, COMB_N, COMB_D, COMB_HORIZON = 3, 20, 4, 300

COMB_CASES = [
    Case("c2ucb", lambda: bb.C2UCB(oracle=TopK(COMB_K), lam=1.0, alpha=0.5)),
    Case("pc2ucb", lambda: bb.PC2UCB(oracle=TopK(COMB_K), lam=1.0, alpha=0.5, c=1.0)),
    Case("round_ts", lambda: bb.RoundTS(oracle=TopK(COMB_K), lam=1.0, v=0.3)),
    Case("arm_ts", lambda: bb.ArmTS(oracle=TopK(COMB_K), lam=1.0, v=0.3)),
    Case("arm_ts_literal", lambda: bb.ArmTS(oracle=TopK(COMB_K), lam=1.0, v=0.3, literal=True)),
    Case("comb_greedy", lambda: bb.CombGreedy(oracle=TopK(COMB_K), lam=1.0)),
    Case("comb_lin_ucb", lambda: bb.CombLinUCB(oracle=TopK(COMB_K), prior_var=1.0, noise_var=0.25, c=1.0)),
    Case("comb_lin_ts", lambda: bb.CombLinTS(oracle=TopK(COMB_K), prior_var=1.0, noise_var=0.09)),
    Case("c2ucb_blocks", lambda: bb.C2UCB(oracle=ExclusiveAssignment(2), blocks=2, lam=1.0, alpha=0.5)),
]


def comb_problem(key: jax.Array, blocks: int) -> tuple[jax.Array, jax.Array]:
    """``N`` arms on the unit sphere in ``R^d`` and one ``theta*`` per block; returns (arms, means (M, N))."""
    k_arms, k_theta = jax.random.split(key)
    arms = jax.random.normal(k_arms, (COMB_N, COMB_D))
    arms = arms / jnp.linalg.norm(arms, axis=1, keepdims=True)
    theta = jax.random.normal(k_theta, (blocks, COMB_D)) / jnp.sqrt(COMB_D)
    return arms, theta @ arms.T


@functools.cache
def comb_experiment(case: Case) -> tuple[Callable, list]:
    """(jitted vmapped experiment, trace counter): Gaussian rewards (sd 0.3), regret against the oracle."""
    policy = case.make()
    traces: list[int] = []

    def one_run(key):
        k_problem, k_rounds = jax.random.split(key)
        arms, means = comb_problem(k_problem, policy.blocks)
        flat = means.reshape(-1)
        best = jnp.sum(flat[policy.oracle(means, jax.random.PRNGKey(0))])
        state = policy.init(arms)

        def step(state, k):
            k_select, k_reward = jax.random.split(k)
            action, _ = policy.select(state, arms, k_select)
            reward = flat[action] + 0.3 * jax.random.normal(k_reward, action.shape)
            state, _ = policy.update(state, arms, action, reward)
            return state, (action, best - jnp.sum(flat[action]))

        state, (actions, regret) = jax.lax.scan(step, state, jax.random.split(k_rounds, COMB_HORIZON))
        uniform = best - policy.action_shape[0] * jnp.mean(flat)
        return actions, regret, uniform, state

    def counted(keys):
        traces.append(1)
        return jax.vmap(one_run)(keys)

    return jax.jit(counted), traces


@functools.cache
def comb_results(case: Case, seed: int = 0) -> tuple:
    fn, _ = comb_experiment(case)
    try:
        out = fn(run_keys(seed))
    except Exception as exc:
        raise AssertionError(f"{case.name}: the policy does not run under jit(vmap(scan)): {exc!r}") from exc
    return jax.tree.map(np.asarray, out)


def comb_play(agent: bb.Agent, rounds: int, seed: int) -> list:
    """Rounds with Gaussian per-arm rewards from a seeded generator; returns the actions."""
    rng = np.random.default_rng(seed)
    arms, means = (np.asarray(a) for a in comb_problem(jax.random.PRNGKey(7), agent.policy.blocks))
    actions = []
    for _ in range(rounds):
        action = agent.select()
        agent.update(action, means.reshape(-1)[action] + 0.3 * rng.standard_normal(action.shape))
        actions.append(action.tolist())
    return actions


def comb_agent(case: Case, seed: int = 0) -> bb.Agent:
    return bb.Agent(case.make(), arms=np.asarray(comb_problem(jax.random.PRNGKey(7), 1)[0]), seed=seed)


def check_comb_runs_compiled(case: Case) -> None:
    """jit(vmap(scan)), traced once: super arms of the right shape, distinct copies in range, finite state."""
    actions, _, _, state = comb_results(case)
    policy = case.make()
    size, copies = policy.action_shape[0], policy.blocks * COMB_N
    assert actions.shape == (RUNS, COMB_HORIZON, size), f"{case.name}: actions of shape {actions.shape}"
    assert np.all((actions >= 0) & (actions < copies)), f"{case.name}: an index outside [0, M N)"
    assert all(len(set(row)) == size for row in actions.reshape(-1, size).tolist()), f"{case.name}: a repeated pick"
    assert all(np.all(np.isfinite(x)) for x in jax.tree.leaves(state) if np.issubdtype(x.dtype, np.floating))
    fn, traces = comb_experiment(case)
    other = jax.tree.map(np.asarray, fn(run_keys(1)))
    assert not np.array_equal(actions, other[0]), f"{case.name}: other keys gave the same actions"
    assert len(traces) == 1 and fn._cache_size() == 1, f"{case.name}: the experiment was traced {len(traces)} times"


def check_comb_same_key_same_actions(case: Case) -> None:
    """Same key, same super arms (vmapped runs 0 and 1; two agents with one seed)."""
    actions = comb_results(case)[0]
    assert np.array_equal(actions[0], actions[1]), f"{case.name}: one key gave two action sequences"
    a = comb_play(comb_agent(case, seed=3), 6, seed=1)
    agent_calls._jitted.cache_clear()
    b = comb_play(comb_agent(case, seed=3), 6, seed=1)
    assert a == b, f"{case.name}: two agents with seed 3 chose differently"


def check_comb_learns(case: Case) -> None:
    """Regret well below uniform play's, and lower per round in the second half than in the first."""
    _, regret, uniform, _ = comb_results(case)
    regret, uniform = regret[1:], uniform[1:]
    ratio = regret.sum(1).mean() / (COMB_HORIZON * uniform).mean()
    assert ratio < 0.3, f"{case.name}: regret is {ratio:.2f}x uniform's"
    first, second = regret[:, : COMB_HORIZON // 2].mean(), regret[:, COMB_HORIZON // 2 :].mean()
    assert second < first, f"{case.name}: regret per round did not fall ({first:.4f} -> {second:.4f})"


def check_comb_bad_inputs(case: Case) -> None:
    """Too few arms for a super arm, feedback of the wrong length or NaN, bad actions, NaN features:
    InvalidInput through the Agent, the state unchanged."""
    agent = comb_agent(case)
    comb_play(agent, 2, seed=0)
    action = agent.select()
    size = action.size
    for feedback, what in (
        (np.ones(size + 1), "feedback of the wrong length"),
        (np.ones(1), "one reward for a super arm"),
        (np.full(size, np.nan), "NaN feedback"),
    ):
        _rejects(agent, lambda a, f=feedback: a.update(action, f), what)
    for bad, what in (
        (action[:-1], "a short super arm"),
        (np.full(size, agent.policy.blocks * COMB_N), "an index past M N"),
        (np.zeros(size, np.int64), "a repeated index"),
    ):
        _rejects(agent, lambda a, b=bad: a.update(b, np.ones(size)), what)
    tiny = bb.Agent(case.make(), d=COMB_D, seed=0)
    _rejects(tiny, lambda a: a.select(np.ones((COMB_K - 1, COMB_D))), "fewer arms than a super arm needs")
    _rejects(tiny, lambda a: a.select(np.full((COMB_N, COMB_D), np.nan)), "NaN features")


def check_comb_save_load(case: Case, tmp_path: Any) -> None:
    """An agent saved and loaded continues bit for bit."""
    agent = comb_agent(case)
    comb_play(agent, 4, seed=1)
    path = tmp_path / f"{case.name}.bb"
    agent.save(path)
    loaded = bb.Agent.load(path, case.make())
    assert _same_tree(agent.state, loaded.state), f"{case.name}: the loaded state differs"
    assert comb_play(agent, 4, seed=2) == comb_play(loaded, 4, seed=2), f"{case.name}: diverged after loading"


COMB_CHECKS = [
    check_comb_runs_compiled,
    check_comb_same_key_same_actions,
    check_comb_learns,
    check_comb_bad_inputs,
    check_comb_save_load,
]


def clear_caches() -> None:
    """Forget the shared experiments (with JAX's compiled programs: see ``conftest.py``)."""
    for cached in (experiment, results, host_results, comb_experiment, comb_results):
        cached.cache_clear()


def run_check(check: Callable, case: Case, tmp_path: Any) -> None:
    """Call ``check`` with what it needs."""
    if check in (check_save_load, check_comb_save_load):
        check(case, tmp_path)
    else:
        check(case)


__all__ = [
    "Case",
    "CASES",
    "CHECKS",
    "HOST_CASES",
    "HOST_CHECKS",
    "COMB_CASES",
    "COMB_CHECKS",
    "run_check",
    "clear_caches",
]
