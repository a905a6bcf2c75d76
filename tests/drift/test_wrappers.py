"""Discounted and SlidingWindow: what they compute, what they refuse, and that they help when the best arm switches."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic, mlp

import bayesbandit as bb
from bayesbandit.errors import InvalidInput
from bayesbandit.oracles import TopK


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: bb.drift.Discounted(bb.LinTS(), gamma=0.0), "gamma"),
        (lambda: bb.drift.Discounted(bb.LinTS(), gamma=1.5), "gamma"),
        (lambda: bb.drift.Discounted(bb.DeepFL(mlp(hidden=4)), gamma=0.9), "Discounts"),
        (lambda: bb.drift.Discounted(bb.SubTS(index="exact"), gamma=0.9), "Discounts"),
        (lambda: bb.drift.SlidingWindow(bb.LinTS(), window=0), "window"),
        (lambda: bb.drift.SlidingWindow(bb.DeepFL(mlp(hidden=4)), window=10), "Forgets"),
        (lambda: bb.drift.SlidingWindow(bb.GLMTSL(logistic(), history="online"), window=10).init(d=3), "Forgets"),
    ],
    ids=["gamma 0", "gamma 1.5", "neural", "host", "window 0", "neural window", "online window"],
)
def test_refused(make, match):
    with pytest.raises(InvalidInput, match=match):
        make()


def test_capabilities_follow_the_wrapped_policy():
    comb = bb.drift.SlidingWindow(bb.C2UCB(oracle=TopK(k=2), alpha=0.5), window=5)
    glm = bb.drift.Discounted(bb.GLMUCB(logistic(), rho=0.5), gamma=0.9)
    assert isinstance(comb, bb.contract.Combinatorial) and not isinstance(comb, bb.contract.ModelBased)
    assert isinstance(glm, bb.contract.ModelBased) and isinstance(glm, bb.contract.ExactLaw)
    assert not isinstance(glm, bb.contract.Combinatorial) and isinstance(glm, bb.drift.Discounted)
    assert comb.action_shape == (2,) and glm == bb.drift.Discounted(bb.GLMUCB(logistic(), rho=0.5), gamma=0.9)


def _scanned(policy, state, rows):
    """The state after ``update`` on each row ``(arms, action, feedback)``, one ``lax.scan``."""
    step = lambda s, row: (policy.update(s, *row)[0], None)  # noqa: E731
    return jax.jit(lambda s: jax.lax.scan(step, s, rows)[0])(state)


def test_sliding_window_is_the_posterior_of_the_last_window_rounds():
    """Contextual arms every round: after 30 rounds with window 7, SlidingWindow's statistics equal those of the
    last 7 observations alone (LinTS, and C2UCB with its super arms), to 1e-10."""
    window, rounds, d = 7, 30, 3
    arms = jax.random.normal(jax.random.PRNGKey(0), (rounds, 8, d))
    rng = np.random.default_rng(0)
    for inner, shape in ((bb.LinTS(lam=1.0), ()), (bb.C2UCB(oracle=TopK(k=2), blocks=2, alpha=0.5), (4,))):
        policy = bb.drift.SlidingWindow(inner, window=window)
        actions = np.stack([rng.choice(8 * (2 if shape else 1), shape or None, replace=False) for _ in range(rounds)])
        rewards = rng.normal(size=(rounds, *shape))
        state = _scanned(policy, policy.init(d=d), (arms, actions, rewards))
        direct = inner.init(d=d)
        for t in range(rounds - window, rounds):
            direct, _ = inner.update(direct, arms[t], actions[t], rewards[t])
        np.testing.assert_allclose(state.inner.precision, direct.precision, atol=1e-10)
        np.testing.assert_allclose(state.inner.b, direct.b, atol=1e-10)
        assert int(state.size) == rounds


def test_sliding_window_glm_rows():
    """GLM-TSL with a row buffer: the rows outside the window have weight 0, the last ``window`` weight 1."""
    policy = bb.drift.SlidingWindow(bb.GLMTSL(logistic()), window=5)
    arms = jax.random.normal(jax.random.PRNGKey(1), (12, 4, 2))
    actions, rewards = jnp.arange(12) % 4, (jnp.arange(12) % 3 == 0).astype(float)
    state = policy.init(d=2, capacity=16)
    step = lambda s, row: policy.update(s, *row)  # noqa: E731
    state, info = jax.jit(lambda s: jax.lax.scan(step, s, (arms, actions, rewards)))(state)
    assert np.all(info.converged)
    np.testing.assert_array_equal(state.inner.history.w, [0] * 7 + [1] * 5 + [0] * 4)
    np.testing.assert_array_equal(state.inner.history.y[7:12], rewards[7:])


def test_unrecorded_update_leaves_the_state():
    arms = jnp.eye(3)
    for policy in (bb.drift.Discounted(bb.LinTS(), gamma=0.5), bb.drift.SlidingWindow(bb.LinTS(), window=2)):
        state = policy.init(arms)
        state, _ = policy.update(state, arms, 1, 1.0)
        new, info = jax.jit(policy.update)(state, arms, 7, 1.0)
        assert not bool(info.recorded)
        assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(new), jax.tree.leaves(state), strict=True))


def test_wrappers_run_under_simulate():
    policies = {
        "D-LinTS": bb.drift.Discounted(bb.LinTS(lam=1.0, v=0.5), gamma=0.95),
        "SW-GLMTSL": bb.drift.SlidingWindow(bb.GLMTSL(logistic()), window=20),
    }
    ds = bb.simulate(policies, bb.envs.LogisticBandit(K=8, d=3), horizon=40, runs=3, seed=0)
    assert ds.regret.shape == (2, 3, 40) and np.isfinite(ds.regret.values).all()


RUNS, HORIZON, K = 32, 600, 5


def _switching_regret(policy):
    """Per-run regret over HORIZON rounds of one-hot arms whose means reverse at HORIZON / 2 (Gaussian noise 0.5)."""
    arms = jnp.eye(K)
    before = jnp.linspace(0.8, 0.0, K)

    def run(key):
        def step(state, inputs):
            t, k = inputs
            means = jnp.where(t < HORIZON // 2, before, before[::-1])
            k_select, k_reward = jax.random.split(k)
            action, _ = policy.select(state, arms, k_select)
            reward = means[action] + 0.5 * jax.random.normal(k_reward)
            state, _ = policy.update(state, arms, action, reward)
            return state, means.max() - means[action]

        keys = jax.random.split(key, HORIZON)
        return jax.lax.scan(step, policy.init(arms), (jnp.arange(HORIZON), keys))[1].sum()

    return np.asarray(jax.jit(jax.vmap(run))(jax.random.split(jax.random.PRNGKey(0), RUNS)))


def test_forgetting_beats_remembering_when_the_best_arm_switches():
    """Paired over 32 runs (same keys): discounted and windowed LinTS end with lower regret than LinTS."""
    plain = _switching_regret(bb.LinTS(lam=1.0, v=0.5))
    for wrapped in (
        bb.drift.Discounted(bb.LinTS(lam=1.0, v=0.5), gamma=0.97),
        bb.drift.SlidingWindow(bb.LinTS(lam=1.0, v=0.5), window=60),
    ):
        gain = plain - _switching_regret(wrapped)
        se = gain.std(ddof=1) / np.sqrt(RUNS)
        assert gain.mean() > 3 * se, f"{wrapped}: regret lower by {gain.mean():.1f} +- {se:.1f}"
