"""ChangePoint and its tests: the statistics against NumPy, detection delay, false alarms, the restart."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

import bayesbandit as bb
from bayesbandit.drift import CUSUM, GLR, ChangePoint, KnownChanges
from bayesbandit.drift.change_point import glr_statistic
from bayesbandit.errors import InvalidInput
from bayesbandit.testing._common import same_tree


def numpy_glr(y, family="bernoulli", sigma=0.5):
    """SMPyBandits' loop (every split s), written directly."""

    def kl(x, m):
        if family == "gaussian":
            return (x - m) ** 2 / (2 * sigma**2)
        x, m = min(max(x, 0.0), 1.0), min(max(m, 1e-10), 1 - 1e-10)
        out = 0.0
        if x > 0:
            out += x * math.log(x / m)
        if x < 1:
            out += (1 - x) * math.log((1 - x) / (1 - m))
        return out

    n, whole, best = len(y), np.mean(y), 0.0
    for s in range(1, n):
        best = max(best, s * kl(np.mean(y[:s]), whole) + (n - s) * kl(np.mean(y[s:]), whole))
    return best


@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
def test_glr_statistic_equals_the_direct_computation(family):
    rng = np.random.default_rng(0)
    for n in (2, 3, 17, 60):
        y = np.r_[rng.random(n // 2) < 0.3, rng.random(n - n // 2) < 0.7].astype(float)
        padded = np.r_[y, rng.random(7)]  # entries past the count are ignored
        got = float(glr_statistic(jnp.asarray(padded), n, family=family))
        np.testing.assert_allclose(got, numpy_glr(y, family), rtol=1e-9, atol=1e-12)
    assert float(glr_statistic(jnp.zeros(5), 1)) == 0.0


def test_glr_ring_buffer_tests_the_last_window_rewards_with_the_count_threshold():
    test = GLR(delta=0.05, window=8, every=1)
    stats = test.init(2, jnp.float64)
    y = np.r_[np.zeros(7), np.ones(6)]
    for r in y:
        stats, alarm, margin = test.update(stats, jnp.asarray(1), jnp.asarray(r), jnp.asarray(True))
    kept = y[-8:]
    expected = numpy_glr(kept) - (math.log(3) + 1.5 * math.log(len(y)) - math.log(0.05))
    np.testing.assert_allclose(float(margin), expected, rtol=1e-9)
    assert int(stats.counts[1]) == 13 and int(stats.counts[0]) == 0


def test_cusum_statistics_equal_the_recursion_of_liu_et_al():
    test = CUSUM(epsilon=0.05, h=100.0, M=5)
    rng = np.random.default_rng(1)
    y = (rng.random(40) < np.r_[np.full(20, 0.8), np.full(20, 0.2)]).astype(float)
    stats = test.init(3, jnp.float64)
    for r in y:
        stats, _, _ = test.update(stats, jnp.asarray(2), jnp.asarray(r), jnp.asarray(True))
    u0, gp, gm = y[:5].mean(), 0.0, 0.0
    for r in y[5:]:
        gp, gm = max(0.0, gp + u0 - r - 0.05), max(0.0, gm + r - u0 - 0.05)
    np.testing.assert_allclose([float(stats.upper[2]), float(stats.lower[2])], [gp, gm], atol=1e-12)
    assert float(stats.head[2]) == y[:5].sum() and float(stats.upper[0]) == 0.0


def _stream_alarms(test, means, runs, seed):
    """Feed ``runs`` Bernoulli streams with the given per-round means to ``test``; first alarm round per run."""
    rewards = jax.random.uniform(jax.random.PRNGKey(seed), (runs, len(means))) < jnp.asarray(means)

    def one(ys):
        def step(carry, y):
            stats, first, t = carry
            stats, alarm, _ = test.update(stats, jnp.asarray(0), y.astype(jnp.float64), jnp.asarray(True))
            return (stats, jnp.where(alarm & (first < 0), t, first), t + 1), None

        (_, first, _), _ = jax.lax.scan(step, (test.init(1, jnp.float64), jnp.asarray(-1), jnp.asarray(0)), ys)
        return first

    return np.asarray(jax.jit(jax.vmap(one))(rewards))


@pytest.mark.parametrize(
    "test", [GLR(delta=0.01, window=400), CUSUM(epsilon=0.1, h=math.log(1000.0), M=100)], ids=["GLR", "CUSUM"]
)
def test_a_change_is_detected_quickly_and_a_stationary_stream_rarely_alarms(test):
    change = 300
    first = _stream_alarms(test, [0.2] * change + [0.8] * 300, runs=200, seed=0)
    delay = first[first >= change] - change
    detected = 0.95 if isinstance(test, GLR) else 0.85  # CUSUM's false alarms come before the change
    assert np.mean(first >= change) > detected and np.median(delay) < 40 and delay.max() < 150, (first, delay)
    quiet = _stream_alarms(test, [0.5] * 600, runs=200, seed=1)
    # GLR: below delta's guarantee; CUSUM (no level): about exp(2 eps h / sigma^2) ~ 250 rounds between false
    # alarms on a Bernoulli(1/2) stream (Siegmund's approximation), so well under one in 500 live rounds
    assert np.mean(quiet >= 0) < (0.05 if isinstance(test, GLR) else 0.6)


def test_glr_false_alarm_rate_is_below_delta():
    """Over 1,000 stationary streams the fraction with any alarm stays below delta (the test's guarantee)."""
    first = _stream_alarms(GLR(delta=0.05, window=300), [0.4] * 300, runs=1000, seed=2)
    assert np.mean(first >= 0) <= 0.05


def test_a_restart_returns_the_inner_state_to_a_fresh_init():
    bb.runtime.enable_x64()
    arms = jnp.eye(3)
    policy = ChangePoint(bb.GLMTSL(logistic(), a=1.0), test=GLR(delta=0.01, every=1))
    state = policy.init(arms)
    update = jax.jit(policy.update)
    restarted = []
    for t in range(400):
        action = jnp.asarray(t % 3)
        reward = jnp.asarray(float(t < 200 or t % 3 != 0))  # arm 0 pays 1 until round 200, then 0
        state, info = update(state, arms, action, reward)
        restarted.append(bool(info.restarted))
        if info.restarted:
            break
    assert any(restarted) and 200 <= len(restarted) < 260, len(restarted)
    assert same_tree(state.inner, policy.policy.init(arms)) and int(state.alarms) == 1
    assert int(state.stats.counts.sum()) == 0  # the test restarts too
    assert policy.posterior_rows(state)[2].sum() == 0  # every row before the alarm has weight 0


def test_known_changes_restart_at_the_given_rounds_under_simulate():
    bb.runtime.enable_x64()
    policy = ChangePoint(bb.GLMTSL(logistic(), a=1.0), test=KnownChanges(change_points=(30, 70)))
    ds = bb.simulate(
        {"oracle": policy},
        bb.envs.BernoulliBandit(means=(0.2, 0.8)),
        horizon=100,
        runs=2,
        record=lambda r: {"restarted": r.update_info.restarted, "alarms": r.update_info.alarms},
    )
    assert np.array_equal(np.nonzero(ds.restarted.values[0, 0])[0], [29, 69])
    assert int(ds.alarms.values[0, 1, -1]) == 2


def test_bad_arguments_raise_invalid_input():
    with pytest.raises(InvalidInput, match="delta"):
        GLR(delta=1.5)
    with pytest.raises(InvalidInput, match="family"):
        GLR(family="poisson")
    with pytest.raises(InvalidInput, match="restart"):
        ChangePoint(bb.LinTS(), restart="arm")
    with pytest.raises(InvalidInput, match="test"):
        ChangePoint(bb.LinTS(), test="glr")
    with pytest.raises(InvalidInput, match="change_points"):
        KnownChanges(change_points=(5, 3))
