"""The common policy contract, driven by one table of policies.

Learning, determinism, jit/vmap and no-retrace are checked on the same compiled experiment per
policy (``lax.scan`` over rounds, ``vmap`` over 8 runs), so each policy compiles once.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _asserts import assert_trees_equal
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.history import ArmHistory, RowHistory

# (name, factory). Each policy's experiment compiles once (a few seconds of CPU) and is shared by
# every test below.
POLICIES = [
    ("glm_tsl", lambda m: bb.GLMTSL(m, a=1.0)),
    ("glm_fpl", lambda m: bb.GLMFPL(m, a=0.5)),
    ("glm_ucb", lambda m: bb.GLMUCB(m, rho=0.5)),
    ("ucb_glm", lambda m: bb.UCBGLM(m, alpha=0.5)),
    ("eps_greedy", lambda m: bb.EpsilonGreedy(m, epsilon=0.05)),
    ("lin_ts", lambda m: bb.LinTS(lam=1.0, v=0.5)),
    ("lin_ucb", lambda m: bb.LinUCB(lam=1.0, alpha=1.0)),
]
MAKERS = dict(POLICIES)
NAMES = list(MAKERS)

K, D, HORIZON, RUNS = 100, 10, 2000, 8


def _problem(key):
    """A logistic bandit: arms uniform on [-1, 1]^d, theta* ~ N(0, 3/d I)."""
    k_arms, k_theta = jax.random.split(key)
    arms = jax.random.uniform(k_arms, (K, D), minval=-1.0, maxval=1.0, dtype=jnp.float64)
    theta = jax.random.normal(k_theta, (D,), dtype=jnp.float64) * jnp.sqrt(3.0 / D)
    return arms, jax.nn.sigmoid(arms @ theta)


@functools.cache
def experiment(name):
    """(jitted vmapped experiment, trace counter) for one policy; cached across tests."""
    policy = MAKERS[name](logistic())
    traces = []

    def one_run(key):
        k_problem, k_rounds = jax.random.split(key)
        arms, mu = _problem(k_problem)
        state = policy.init(arms)

        def step(state, k):
            k_select, k_reward = jax.random.split(k)
            arm, info = policy.select(state, arms, k_select)
            reward = jax.random.bernoulli(k_reward, mu[arm]).astype(jnp.float64)
            return policy.update(state, arm, reward), (arm, mu.max() - mu[arm])

        state, (chosen, regret) = jax.lax.scan(step, state, jax.random.split(k_rounds, HORIZON))
        return chosen, regret, mu.max() - mu.mean(), state

    def counted(keys):
        traces.append(1)  # runs once per trace, never on a cached call
        return jax.vmap(one_run)(keys)

    return jax.jit(counted), traces


def run_keys(seed):
    """Keys of the 8 vmapped runs; runs 0 and 1 share a key (the same-seed check)."""
    keys = jax.random.split(jax.random.PRNGKey(seed), RUNS)
    return keys.at[1].set(keys[0])


@functools.cache
def results(name, seed=0):
    fn, _ = experiment(name)
    return jax.tree.map(np.asarray, fn(run_keys(seed)))


@pytest.mark.parametrize("name", NAMES)
def test_learns_a_logistic_bandit(name):
    """Cumulative regret at n=2000 well below uniform's n * (max mu - mean mu), averaged over 7
    distinct runs, and lower per-round regret in the second half than in the first."""
    chosen, regret, uniform_gap = (v[1:] for v in results(name)[:3])
    assert chosen.shape == (RUNS - 1, HORIZON) and regret.shape == (RUNS - 1, HORIZON)
    assert np.all((chosen >= 0) & (chosen < K)) and np.all(regret >= 0)
    ratio = regret.sum(1).mean() / (HORIZON * uniform_gap).mean()
    assert ratio < 0.3, f"{name}: regret is {ratio:.2f}x uniform's"
    first, second = regret[:, : HORIZON // 2].mean(), regret[:, HORIZON // 2 :].mean()
    assert second < first


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_arms_under_vmap(name):
    """Runs 0 and 1 of the vmapped experiment share a key: identical arms and final state;
    the other runs (distinct keys) differ."""
    chosen, regret, _, state = results(name)
    np.testing.assert_array_equal(chosen[0], chosen[1])
    assert_trees_equal(jax.tree.map(lambda v: v[0], state), jax.tree.map(lambda v: v[1], state))
    assert len({tuple(row) for row in chosen[1:]}) == RUNS - 1


@pytest.mark.parametrize("name", NAMES)
def test_compiles_once(name):
    """A second call with new values (other keys, same shapes) reuses the compiled experiment."""
    fn, traces = experiment(name)
    first = results(name)
    other = jax.tree.map(np.asarray, fn(run_keys(1)))
    assert not np.array_equal(first[0], other[0])
    assert len(traces) == 1 and fn._cache_size() == 1


@pytest.mark.parametrize("name", NAMES)
def test_final_state_is_finite_and_counts_rounds(name):
    state = results(name)[3]
    assert np.all(np.asarray(state.t) == HORIZON)
    for leaf in jax.tree_util.tree_leaves(state):
        leaf = np.asarray(leaf)
        if np.issubdtype(leaf.dtype, np.floating):
            assert np.all(np.isfinite(leaf))
    if hasattr(state, "history"):
        assert isinstance(state.history, ArmHistory)
        np.testing.assert_array_equal(np.asarray(state.history.counts).sum(1), HORIZON)
        assert np.all(np.asarray(state.fit.info.converged))


@pytest.mark.parametrize("name", NAMES)
def test_initial_rounds_pull_linearly_independent_arms(name):
    """The first d pulls form a basis of R^d (greedy pivoted QR on a spanning arm set)."""
    chosen = results(name)[0]
    for run in (0, 2):
        arms, _ = _problem(jax.random.split(run_keys(0)[run])[0])
        first = np.asarray(arms)[chosen[run, :D]]
        assert np.linalg.matrix_rank(first) == D


def test_contextual_policy_uses_a_row_buffer_and_matches_fixed_arms():
    """A contextual GLM-TSL (init(d=...), features in update) behaves as the fixed-arm one:
    same arms chosen and the same MAP (compressed vs row history, to 1e-8)."""
    policy = bb.GLMTSL(logistic(), a=1.0)
    arms = jax.random.uniform(jax.random.PRNGKey(3), (6, 3), minval=-1, maxval=1, dtype=jnp.float64)
    mu = jax.nn.sigmoid(arms @ jnp.array([1.0, -1.0, 0.5]))
    n = 30

    def run(contextual, key):
        state = policy.init(d=3, capacity=n) if contextual else policy.init(arms)

        def step(state, k):
            k_select, k_reward = jax.random.split(k)
            arm, _ = policy.select(state, arms, k_select)
            reward = jax.random.bernoulli(k_reward, mu[arm]).astype(jnp.float64)
            return policy.update(state, arms[arm] if contextual else arm, reward), arm

        return jax.lax.scan(step, state, jax.random.split(key, n))

    key = jax.random.PRNGKey(4)
    (s_ctx, a_ctx), (s_fix, a_fix) = jax.jit(lambda k: (run(True, k), run(False, k)))(key)
    assert isinstance(s_ctx.history, RowHistory) and isinstance(s_fix.history, ArmHistory)
    np.testing.assert_array_equal(np.asarray(a_ctx), np.asarray(a_fix))
    np.testing.assert_allclose(np.asarray(s_ctx.fit.theta), np.asarray(s_fix.fit.theta), rtol=1e-8, atol=1e-10)
