"""Checks for JAX policies over fixed or per-round arm sets (``kind = "jax"``, one arm per round).

The mechanical checks share one short run per policy: ``jit(vmap(scan))`` over ``RUNS`` runs of
``ROUNDS`` rounds on a logistic bandit, with runs 0 and 1 on one key, and ``select`` called twice on
each round's key inside the program. They also share one :class:`~bayesbandit.Agent` program per
policy (compiled once, never cleared). :func:`check_learns` continues the same runs, with the same
compiled program, for ``CHUNKS`` chunks (``LEARN_ROUNDS`` rounds; ``select`` once a round).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit.testing._common import (
    cached,
    chunked_program,
    policy_id,
    rejects,
    run_outputs,
    same_tree,
    save_load_continues,
)

__all__ = [
    "POLICY_CHECKS",
    "check_jit_vmap",
    "check_compiles_once",
    "check_same_key_same_actions",
    "check_dtypes_stable",
    "check_bad_inputs",
    "check_save_load",
    "check_learns",
    "problem",
    "run_keys",
    "learning_run",
    "agent_arms",
    "assert_learns",
]

K, D, RUNS = 100, 10, 8
ROUNDS, CHUNKS = 50, 40  # the mechanical checks' horizon; check_learns' run: CHUNKS of them
LEARN_ROUNDS = ROUNDS * CHUNKS
AGENT_K, AGENT_D = 6, 3


def problem(key: jax.Array, *, k: int = K, d: int = D) -> tuple[jax.Array, jax.Array]:
    """A logistic bandit: arms uniform on [-1, 1]^d, theta* ~ N(0, 3/d I); returns (arms, means)."""
    k_arms, k_theta = jax.random.split(key)
    arms = jax.random.uniform(k_arms, (k, d), minval=-1.0, maxval=1.0)
    theta = jax.random.normal(k_theta, (d,)) * jnp.sqrt(3.0 / d)
    return arms, jax.nn.sigmoid(arms @ theta)


def run_keys(seed: int) -> jax.Array:
    """Keys of the ``RUNS`` vmapped runs; runs 0 and 1 share a key (the same-key check)."""
    keys = jax.random.split(jax.random.PRNGKey(seed), RUNS)
    return keys.at[1].set(keys[0])


@cached
def program(policy: Any) -> tuple:
    """(start, chunk, traces): ``CHUNKS`` chunks of ``ROUNDS`` rounds (see ``chunked_program``).
    Each round records the action, its regret, and whether a second ``select`` on the same state and key
    chose the same action (in the first chunk, the mechanical checks'; the later chunks skip that ``select``)."""

    def init_one(key: jax.Array) -> tuple:
        arms, mu = problem(key)
        return policy.init(arms, key=key), (arms, mu, mu.max() - mu.mean())

    def step(env: tuple, state: Any, k: jax.Array, checked: jax.Array) -> tuple:
        arms, mu, _ = env
        k_select, k_reward = jax.random.split(k)
        action, _ = policy.select(state, arms, k_select)
        again = jax.lax.cond(checked, lambda: policy.select(state, arms, k_select)[0], lambda: action)
        reward = jax.random.bernoulli(k_reward, mu[action]).astype(arms.dtype)
        state, _ = policy.update(state, arms, action, reward)
        return state, (action, mu.max() - mu[action], action == again)

    return chunked_program(init_one, step, ROUNDS, CHUNKS)


@cached
def short_run(policy: Any, seed: int = 0) -> tuple:
    """(actions (RUNS, ROUNDS), regret, uniform play's regret per round (RUNS,), final state, repeat flags)."""
    return run_outputs(policy, program(policy), run_keys(seed), 1)


@cached
def learning_run(policy: Any) -> tuple:
    """The same outputs over all ``CHUNKS`` chunks, ``LEARN_ROUNDS`` rounds (check_learns' run)."""
    return run_outputs(policy, program(policy), run_keys(0), CHUNKS)


def agent_arms() -> np.ndarray:
    """The Agent checks' fixed arm set, shape (AGENT_K, AGENT_D)."""
    return np.random.default_rng(0).uniform(-1, 1, (AGENT_K, AGENT_D))


def play(agent: Any, rounds: int, seed: int) -> list:
    """Rounds with Bernoulli rewards from a seeded generator; returns the actions."""
    rng = np.random.default_rng(seed)
    theta, arms = np.array([1.0, -1.0, 0.5]), agent_arms()
    actions = []
    for _ in range(rounds):
        action = agent.select()
        agent.update(action, float(rng.random() < 1 / (1 + np.exp(-arms[action] @ theta))))
        actions.append(action)
    return actions


def _agent(policy: Any, seed: int = 0) -> Any:
    from bayesbandit.agent import Agent

    return Agent(policy, arms=agent_arms(), seed=seed)


def _finite_state(policy: Any, state: Any, rounds: int) -> None:
    for leaf in jax.tree.leaves(state):
        if np.issubdtype(leaf.dtype, np.floating):
            assert np.all(np.isfinite(leaf)), f"{policy_id(policy)}: non-finite state after {rounds} rounds"


# ------------------------------------------------------------------------------ the checks
def check_jit_vmap(policy: Any) -> None:
    """jit(vmap(scan)) over RUNS runs of ROUNDS rounds: shapes, actions in range, finite float state."""
    actions, regret, _, state, _ = short_run(policy)
    name = policy_id(policy)
    assert actions.shape == (RUNS, ROUNDS) and regret.shape == (RUNS, ROUNDS), name
    assert np.all((actions >= 0) & (actions < K)), f"{name}: an action outside [0, K)"
    _finite_state(policy, state, ROUNDS)


def check_compiles_once(policy: Any) -> None:
    """The Agent's select and update compile once over many rounds; the experiment traces once (other
    keys of the same shape reuse its trace: lowering for them traces nothing)."""
    from bayesbandit.agent import Agent

    name = policy_id(policy)
    agent = Agent(policy, arms=agent_arms(), seed=0, compile_ahead=False)  # every compile on first use
    play(agent, 1, 0)  # compiles (or reuses what an equal policy compiled for these shapes)
    first = agent.compiled_programs
    play(agent, 4, 1)
    sizes = agent.compiled_programs
    assert sizes == first, f"{name}: the agent's calls compiled {sizes} times, {first} after round 1 (state drifts?)"
    short_run(policy)
    start, chunk, traces = program(policy)
    state, env, keys = start(run_keys(1))
    chunk.lower(state, env, keys[:, 1], False)
    assert len(traces) == 1 and chunk._cache_size() == 1, f"{name}: the experiment was traced {len(traces)} times"


def check_same_key_same_actions(policy: Any) -> None:
    """Same key, same actions: vmapped runs 0 and 1; two ``select`` calls on one state and key (a key made
    when the policy is traced shows here); two agents with one seed. Other keys, other actions."""
    actions, _, _, state, repeat = short_run(policy)
    name = policy_id(policy)
    assert np.array_equal(actions[0], actions[1]), f"{name}: one key gave two action sequences"
    assert same_tree(jax.tree.map(lambda v: v[0], state), jax.tree.map(lambda v: v[1], state)), name
    assert repeat.all(), f"{name}: select chose two actions from one state and key ({(~repeat).sum()} rounds)"
    assert len({tuple(row) for row in actions[1:]}) == RUNS - 1, f"{name}: distinct keys, same actions"
    a, b = play(_agent(policy, seed=3), 8, 1), play(_agent(policy, seed=3), 8, 1)
    assert a == b, f"{name}: two agents with seed 3 chose {a} and {b}"


def check_dtypes_stable(policy: Any) -> None:
    """update returns a state of the same structure, shapes and dtypes as init's; infos say converged."""
    name = policy_id(policy)
    arms = jnp.asarray(agent_arms())
    key = jax.random.PRNGKey(0)
    for kwargs in ({"arms": arms}, {"d": AGENT_D, "capacity": 8}):
        state0 = jax.eval_shape(lambda k, kw=kwargs: policy.init(**kw, key=k), key)
        action, select_info = jax.eval_shape(lambda s: policy.select(s, arms, key), state0)
        state1, update_info = jax.eval_shape(lambda s, a: policy.update(s, arms, a, jnp.asarray(1.0)), state0, action)
        structure: Any = jax.tree.structure(state0)
        assert structure == jax.tree.structure(state1), f"{name}: update changed the state tree"
        for x, y in zip(jax.tree.leaves(state0), jax.tree.leaves(state1), strict=True):
            assert (x.shape, x.dtype, x.weak_type) == (y.shape, y.dtype, y.weak_type), (
                f"{name} ({list(kwargs)}): a state leaf went from {x} to {y} in one update"
            )
        for info in (select_info, update_info):
            assert info.converged.shape == () and info.converged.dtype == jnp.bool_, f"{name}: {info}"
        assert jnp.issubdtype(action.dtype, jnp.integer) and action.shape == (), f"{name}: action {action}"


def _out_of_support(policy: Any) -> float | None:
    support = policy.reward_support(AGENT_D).constraint
    if support is None:
        return None
    for value in (-1.0, 0.5, 2.0, 1e9, -1e9):
        if not bool(np.all(np.asarray(support.check(np.asarray(value))))):
            return value
    return None


def check_bad_inputs(policy: Any) -> None:
    """NaN, inf, out-of-support rewards, bad shapes, bad actions and an empty arm set raise InvalidInput
    through the Agent, with the state and key unchanged bit for bit."""
    from bayesbandit.agent import Agent

    fixed = _agent(policy)
    play(fixed, 2, 0)
    action = fixed.select()
    for reward in (math.nan, math.inf, -math.inf, [1.0, 0.0], "one"):
        rejects(fixed, f"reward {reward!r}", "update", action, reward)
    outside = _out_of_support(policy)
    if outside is not None:  # None: the policy's rewards may be any real number
        rejects(fixed, f"out-of-support reward {outside}", "update", action, outside)
    for bad in (AGENT_K, -1, 1.5, [0, 1], "a", None):
        rejects(fixed, f"action {bad!r}", "update", bad, 1.0)
    contextual = Agent(policy, d=AGENT_D, seed=0, capacity=4)
    for arms, what in (
        (np.zeros((0, AGENT_D)), "an empty arm set"),
        (np.zeros(AGENT_D), "arms of shape (d,)"),
        (np.zeros((4, AGENT_D + 1)), "arms of the wrong dimension"),
        (np.full((4, AGENT_D), np.nan), "NaN arms"),
    ):
        rejects(contextual, what, "select", arms)


def check_save_load(policy: Any) -> None:
    """An Agent saved and loaded continues bit for bit (same actions, same states)."""
    save_load_continues(policy, _agent(policy), play)


def assert_learns(policy: Any, run: tuple, rounds: int) -> None:
    """On a learning run's outputs (runs 1 to RUNS - 1, distinct keys): a finite state, total regret below
    0.3 of uniform play's, and lower regret per round in the second half than in the first."""
    _, regret, uniform_gap, state, _ = run
    name = policy_id(policy)
    _finite_state(policy, state, rounds)
    regret, uniform_gap = regret[1:], uniform_gap[1:]
    ratio = regret.sum(1).mean() / (rounds * uniform_gap).mean()
    assert ratio < 0.3, f"{name}: regret is {ratio:.2f}x uniform's"
    first, second = regret[:, : rounds // 2].mean(), regret[:, rounds // 2 :].mean()
    assert second < first, f"{name}: regret per round did not fall ({first:.4f} -> {second:.4f})"


def check_learns(policy: Any) -> None:
    """Over LEARN_ROUNDS rounds: regret below 0.3 of uniform play's, lower per round in the second half
    than in the first, and a finite state at the end."""
    assert_learns(policy, learning_run(policy), LEARN_ROUNDS)


POLICY_CHECKS = [
    check_jit_vmap,
    check_compiles_once,
    check_same_key_same_actions,
    check_dtypes_stable,
    check_bad_inputs,
    check_save_load,
    check_learns,
]
"""The checks :func:`~bayesbandit.testing.check_policy` runs on a JAX policy, in order."""
