"""Combinatorial policies: the two arm-wise TS forms agree in law, round-wise TS shares its sample,
and Wen et al.'s CombLinUCB / CombLinTS are C2UCB / round-wise TS reparameterised, step for step."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.envs.clustered import ClusteredSemiBandit
from bayesbandit.oracles import TopK


def _fitted_state(policy, arms, rounds=5, seed=0):
    """A state after a few rounds on Gaussian rewards, so that widths differ across arms."""
    rng = np.random.default_rng(seed)
    state = policy.init(arms)
    key = jax.random.PRNGKey(seed)
    for _ in range(rounds):
        key, sub = jax.random.split(key)
        action, _ = policy.select(state, arms, sub)
        state, _ = policy.update(state, arms, action, jnp.asarray(rng.standard_normal(action.shape)))
    return state


@pytest.fixture(scope="module")
def twin_arms():
    """Four distinct arms, each twice (identical features at positions i and i + 4)."""
    base = np.random.default_rng(1).standard_normal((4, 3))
    return jnp.asarray(np.concatenate([base, base]))


def _score_draws(policy, state, arms, n=4000):
    keys = jax.random.split(jax.random.PRNGKey(9), n)
    return np.asarray(jax.jit(jax.vmap(lambda k: policy.scores(state, arms, k)))(keys))[:, 0, :]  # (n, N)


def test_arm_wise_ts_forms_agree_in_law_and_round_wise_ts_shares_its_sample(twin_arms):
    cheap = bb.ArmTS(oracle=TopK(k=2), lam=1.0, v=0.7)
    literal = bb.ArmTS(oracle=TopK(k=2), lam=1.0, v=0.7, literal=True)
    round_wise = bb.RoundTS(oracle=TopK(k=2), lam=1.0, v=0.7)
    state = _fitted_state(cheap, twin_arms)
    a, b, r = (_score_draws(p, state, twin_arms) for p in (cheap, literal, round_wise))
    se_mean = a.std(0) / np.sqrt(a.shape[0])
    np.testing.assert_array_less(np.abs(a.mean(0) - b.mean(0)), 5 * np.sqrt(2) * se_mean)
    np.testing.assert_allclose(a.var(0), b.var(0), rtol=0.12)  # 4000 draws: sd of a variance ratio ~ 3%
    np.testing.assert_allclose(a.var(0), r.var(0), rtol=0.12)  # the same marginal law as round-wise TS
    for draws in (a, b):
        twins = [np.corrcoef(draws[:, i], draws[:, i + 4])[0, 1] for i in range(4)]
        assert np.all(np.abs(twins) < 0.08), twins  # independent across identical arms
    twins = [np.corrcoef(r[:, i], r[:, i + 4])[0, 1] for i in range(4)]
    np.testing.assert_allclose(twins, 1.0, atol=1e-6)  # one shared sample: perfectly correlated


def _play_both(first, second, env, rounds=10, seed=0):
    """Both policies on one instance with the same keys; returns their action sequences."""
    instance = env.reset(jax.random.PRNGKey(seed))
    arms = env.arms(instance)
    policies = (first, second)
    states = [p.init(arms) for p in policies]
    select = [jax.jit(p.select) for p in policies]
    update = [jax.jit(p.update) for p in policies]
    pull = jax.jit(env.pull)
    out = [[], []]
    for t in range(rounds):
        select_key, pull_key = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(seed), t))
        for i in range(2):
            action = select[i](states[i], arms, select_key)[0]
            feedback, _ = pull(instance, action, pull_key, t)
            states[i], _ = update[i](states[i], arms, action, feedback)
            out[i].append(np.asarray(action).tolist())
    return out


@pytest.mark.parametrize("prior_var, noise_var, c", [(1.0, 1.0, 1.0), (10.0, 0.1, 0.5), (0.1, 10.0, 2.0)])
def test_comb_lin_ucb_is_c2ucb_reparameterised_step_for_step(prior_var, noise_var, c):
    env = ClusteredSemiBandit(phi=0.9, oracle=TopK(k=10), num_arms=200, d=11)
    wen = bb.CombLinUCB(oracle=TopK(k=10), prior_var=prior_var, noise_var=noise_var, c=c)
    qin = bb.C2UCB(oracle=TopK(k=10), lam=noise_var / prior_var, alpha=c * np.sqrt(noise_var))
    a, b = _play_both(wen, qin, env)
    assert a == b


@pytest.mark.parametrize("prior_var, noise_var", [(1.0, 1.0), (10.0, 0.1), (0.1, 10.0)])
def test_comb_lin_ts_is_round_wise_ts_reparameterised_step_for_step(prior_var, noise_var):
    env = ClusteredSemiBandit(phi=0.9, oracle=TopK(k=10), num_arms=200, d=11)
    wen = bb.CombLinTS(oracle=TopK(k=10), prior_var=prior_var, noise_var=noise_var)
    agrawal = bb.RoundTS(oracle=TopK(k=10), lam=noise_var / prior_var, v=np.sqrt(noise_var))
    a, b = _play_both(wen, agrawal, env)
    assert a == b


def test_pc2ucb_scores_lie_between_c2ucb_and_its_inflated_width(twin_arms):
    pc2ucb = bb.PC2UCB(oracle=TopK(k=2), lam=1.0, alpha=0.8, c=1.0)
    c2ucb = bb.C2UCB(oracle=TopK(k=2), lam=1.0, alpha=0.8)
    state = _fitted_state(c2ucb, twin_arms)
    low = np.asarray(c2ucb.scores(state, twin_arms, jax.random.PRNGKey(0)))
    high = np.asarray(bb.C2UCB(oracle=TopK(k=2), lam=1.0, alpha=1.6).scores(state, twin_arms, jax.random.PRNGKey(0)))
    draws = _score_draws(pc2ucb, state, twin_arms, n=500)
    assert np.all(draws >= low[0] - 1e-9) and np.all(draws <= high[0] + 1e-9)
    assert np.abs(np.corrcoef(draws[:, 0], draws[:, 4])[0, 1]) < 0.2  # fresh per arm


def test_greedy_is_random_in_round_one_then_follows_the_estimate(twin_arms):
    greedy = bb.CombGreedy(oracle=TopK(k=2), lam=1.0)
    state = greedy.init(twin_arms)
    first = {tuple(np.asarray(greedy.select(state, twin_arms, jax.random.PRNGKey(s))[0])) for s in range(20)}
    assert len(first) > 3  # random scores: many different first super arms
    state = _fitted_state(greedy, twin_arms)
    later = {tuple(np.asarray(greedy.select(state, twin_arms, jax.random.PRNGKey(s))[0])) for s in range(20)}
    assert len(later) == 1  # deterministic after round one


def test_blocks_keep_independent_models():
    """Feedback on block 0 leaves block 1's statistics at the prior."""
    policy = bb.C2UCB(oracle=TopK(k=1), blocks=2, lam=2.0, alpha=1.0)
    arms = jnp.eye(3)
    state = policy.init(arms)
    state, info = policy.update(state, arms, jnp.array([1, 1]), jnp.array([1.0, 0.0]))  # block 0 picks arm 1 twice
    assert bool(info.converged)
    np.testing.assert_allclose(state.precision[1], 2.0 * np.eye(3))
    np.testing.assert_allclose(state.precision[0], 2.0 * np.eye(3) + 2 * np.outer(arms[1], arms[1]))


def test_update_rejects_out_of_range_picks_inside_jit():
    policy = bb.C2UCB(oracle=TopK(k=2), lam=1.0)
    arms = jnp.eye(3)
    state = policy.init(arms)
    new, info = jax.jit(policy.update)(state, arms, jnp.array([0, 7]), jnp.array([1.0, 1.0]))
    assert not bool(info.recorded) and not bool(info.converged)
    np.testing.assert_array_equal(new.precision, state.precision)
