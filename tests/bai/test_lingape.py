"""LinGapE: the l1 solver against scipy's linprog and hand-checked designs, whole runs of both
variants against an independent NumPy implementation (A re-inverted every round, the l1 problem
solved by linprog), the budget and final estimate, and accuracy on an easy instance."""

import math
from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

from bayesbandit._numerics import _random_below
from bayesbandit.bai import GLMInstance, SphereInstance, StaticInstance, is_correct
from bayesbandit.bai._protocol import stack_rewards, streams
from bayesbandit.bai.lingape import RATIO_RTOL, SUPPORT_TOL, LinGapE, arm_ratios, l1_min
from bayesbandit.design import project
from bayesbandit.errors import InvalidInput


def linprog_l1(x, y):
    """min ||w||_1 s.t. x^T w = y, as an LP in (u, v) = (w+, w-)."""
    k = x.shape[0]
    res = linprog(np.ones(2 * k), A_eq=np.hstack([x.T, -x.T]), b_eq=y, bounds=(0, None), method="highs")
    assert res.status == 0
    return res.x[:k] - res.x[k:]


def unit_rows(rng, k, d):
    x = rng.normal(size=(k, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("k, d", [(8, 5), (64, 10), (6, 9)])
def test_l1_min_matches_linprog(k, d, rng):
    """Objective within 1e-7 (relative) of HiGHS and feasible to 1e-9, on pair differences, dense and
    sparse combinations; d > K runs in the arms' span coordinates, as LinGapE calls it."""
    xs, ys = [], []
    for r in range(12):
        x = unit_rows(rng, k, d)
        z = np.asarray(project(x).coords)
        i, j = rng.choice(k, 2, replace=False)
        coef = [np.eye(k)[i] - np.eye(k)[j], rng.normal(size=k), rng.normal(size=k) * (rng.random(k) < 0.3)][r % 3]
        xs.append(z)
        ys.append(z.T @ (coef + 0.01 * np.eye(k)[0]))
    w = np.asarray(jax.jit(jax.vmap(l1_min))(jnp.asarray(np.stack(xs)), jnp.asarray(np.stack(ys))))
    for z, y, w_r in zip(xs, ys, w):
        best = np.abs(linprog_l1(z, y)).sum()
        assert np.abs(w_r).sum() == pytest.approx(best, rel=1e-7)
        np.testing.assert_allclose(z.T @ w_r, y, atol=1e-9)


def test_one_hot_design_is_half_half():
    """With d = K one-hot arms, x_i - x_j = e_i - e_j is its own sparsest combination: p* = (1/2, 1/2)."""
    x = jnp.eye(6)
    p = np.asarray(jax.jit(arm_ratios)(x, 1, 4))
    np.testing.assert_allclose(p, [0, 0.5, 0, 0, 0.5, 0], atol=1e-9)


def test_adaptive_instance_design_pulls_the_informative_arm():
    """e_1 - (cos w, sin w, 0...) = (1 - cos w) e_1 - sin w e_2: p* on (e_1, e_2) in ratio
    (1 - cos w) : sin w, not the 2-sparse (1/2, 1/2) on the compared arms (Xu et al. 2018, sec. 5)."""
    w = 0.1
    x = jnp.vstack([jnp.eye(4), jnp.array([[math.cos(w), math.sin(w), 0.0, 0.0]])])
    p = np.asarray(arm_ratios(x, 0, 4))
    norm = 1 - math.cos(w) + math.sin(w)
    np.testing.assert_allclose(p, [(1 - math.cos(w)) / norm, math.sin(w) / norm, 0, 0, 0], atol=1e-9)


def pick(score, key, rtol=0.0):
    """The tie (``>= best - rtol |best|``, in index order) at the random index of ``random_argmax``'s rule."""
    best = np.max(score)
    ties = np.flatnonzero(score >= best - rtol * abs(best))
    return int(ties[int(_random_below(key, jnp.asarray(ties.size)))])


def numpy_lingape(alg, env, inst, budget, key):
    """LinGapE from the paper's formulas: A re-inverted and log det recomputed every round, the
    greedy criterion y^T (A + x x^T)^{-1} y by direct inversion, the l1 design by linprog."""
    x = np.asarray(inst.arms)
    k, d = x.shape
    reward_key, own_key = streams(key)
    table = np.asarray(
        stack_rewards(env, inst, reward_key, jnp.repeat(jnp.arange(k), budget), jnp.tile(jnp.arange(budget), k))
    ).reshape(k, budget)
    sigma, lam, s_bound = math.sqrt(env.noise_var), alg.reg, alg.norm_bound
    counts = np.ones(k, int)
    a_mat = lam * np.eye(d) + x.T @ x
    b = x.T @ table[:, 0]
    for t in range(k, budget):
        keys = jax.random.split(jax.random.fold_in(own_key, t), 3)
        a_inv = np.linalg.inv(a_mat)
        est = x @ a_inv @ b
        i = pick(est, keys[0])
        if alg.confidence == "det":
            c_t = sigma * math.sqrt(2 * math.log(k**2 / alg.delta) + np.linalg.slogdet(a_mat)[1] - d * math.log(lam))
        else:
            big_l2 = np.max(np.sum(x**2, axis=1))
            c_t = sigma * math.sqrt(d * math.log(k**2 * (1 + t * big_l2 / lam) / alg.delta))
        c_t += math.sqrt(lam) * s_bound
        diff = x - x[i]
        index = est - est[i] + np.sqrt(np.einsum("kd,de,ke->k", diff, a_inv, diff)) * c_t
        index[i] = -np.inf
        j = pick(index, keys[1])
        y = x[i] - x[j]
        if alg.greedy:
            crit = np.array([y @ np.linalg.inv(a_mat + np.outer(xk, xk)) @ y for xk in x])
            arm = pick(-crit, keys[2])
        else:
            p = np.abs(linprog_l1(x, y))
            p /= p.sum()
            ratio = np.where(p > SUPPORT_TOL, counts / np.where(p > SUPPORT_TOL, p, 1.0), np.inf)
            arm = pick(-ratio, keys[2], RATIO_RTOL)
        a_mat += np.outer(x[arm], x[arm])
        b += x[arm] * table[arm, counts[arm]]
        counts[arm] += 1
    theta = np.linalg.solve(a_mat, b)
    return pick(x @ theta, jax.random.fold_in(own_key, budget)), counts, theta


@pytest.mark.parametrize(
    "alg",
    [LinGapE(), LinGapE(greedy=True), LinGapE(greedy=True, confidence="simple", reg=1.0, norm_bound=2.0)],
    ids=["lingape", "greedy", "greedy-simple"],
)
def test_run_matches_numpy_reference(alg):
    env = SphereInstance(K=6, d=3, noise_var=1.0)
    budget = 40
    run = jax.jit(lambda inst, key: alg.identify(env, inst, budget, key))
    for r in range(3):
        inst = env.reset(jax.random.key(10 + r))
        key = jax.random.key(20 + r)
        arm, info = run(inst, key)
        ref_arm, ref_counts, ref_theta = numpy_lingape(alg, env, inst, budget, key)
        np.testing.assert_array_equal(np.asarray(info.counts), ref_counts)
        assert int(arm) == ref_arm
        np.testing.assert_allclose(np.asarray(info.theta[0]), ref_theta, rtol=1e-7, atol=1e-9)


@cache
def static_runs(greedy):
    env = StaticInstance(K=8, gap=1.0, noise_var=1.0)
    inst = env.reset(jax.random.key(0))
    keys = jax.random.split(jax.random.key(3), 200)
    arms, info = jax.jit(jax.vmap(lambda k: LinGapE(greedy=greedy).identify(env, inst, 80, k)))(keys)
    return env, inst, keys, arms, info


@pytest.mark.parametrize("greedy", [False, True])
def test_spends_exactly_the_budget_and_reports_the_final_ridge_estimate(greedy):
    env, inst, keys, arms, info = static_runs(greedy)
    assert np.all(np.asarray(info.pulls) == 80)
    counts = np.asarray(info.counts)
    assert np.all(counts.sum(axis=1) == 80) and np.all(counts >= 1)
    assert info.survivors.shape == (200, 1, 8) and bool(jnp.all(info.survivors))
    for r in range(3):
        reward_key, _ = streams(keys[r])
        arm_of = np.repeat(np.arange(8), counts[r])
        index = np.concatenate([np.arange(c) for c in counts[r]])
        sums = np.bincount(arm_of, np.asarray(stack_rewards(env, inst, reward_key, arm_of, index)), minlength=8)
        theta = sums / (1e-8 + counts[r])  # one-hot arms: the ridge estimate is per-arm
        np.testing.assert_allclose(np.asarray(info.theta[r, 0]), theta, rtol=1e-9)
        assert int(arms[r]) == int(np.argmax(theta))


@pytest.mark.parametrize("greedy", [False, True])
def test_learns_an_easy_instance(greedy):
    """Gap 1 at noise sd 1 with 10 pulls an arm: ~95% correct; chance is 1/8. 0.8 is 10 binomial
    standard errors below the estimate and far above chance."""
    _, inst, _, arms, _ = static_runs(greedy)
    accuracy = float(jnp.mean(jax.vmap(lambda a: is_correct(inst, a))(arms)))
    assert accuracy > 0.8


def test_runs_on_redrawn_instances_with_more_features_than_arms():
    """Batched instances, d > K (the span has K dimensions), Bernoulli rewards with noise_var given."""
    env = GLMInstance(K=4, d=6)
    insts = jax.vmap(env.reset)(jax.random.split(jax.random.key(0), 8))
    alg = LinGapE(noise_var=0.25)
    arms, info = jax.jit(jax.vmap(lambda inst, k: alg.identify(env, inst, 24, k)))(
        insts, jax.random.split(jax.random.key(1), 8)
    )
    assert np.all(np.asarray(info.pulls) == 24) and info.theta.shape == (8, 1, 6)
    assert np.all(np.isfinite(np.asarray(info.theta)))
    theta = np.asarray(info.theta[:, 0])
    x = np.asarray(insts.arms)
    null = np.linalg.svd(x)[2][:, 4:]  # (R, 2, d): directions no arm reaches; the ridge estimate has none
    assert np.max(np.abs(np.einsum("rd,rnd->rn", theta, null))) < 1e-8


def test_invalid_arguments_are_rejected():
    with pytest.raises(InvalidInput, match="delta"):
        LinGapE(delta=1.0)
    with pytest.raises(InvalidInput, match="greedy"):
        LinGapE(greedy=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="confidence"):
        LinGapE(confidence="code")
    env = StaticInstance(K=8)
    with pytest.raises(InvalidInput, match="budget"):
        LinGapE().identify(env, env.reset(jax.random.key(0)), 7, jax.random.key(0))
    glm = GLMInstance(K=4, d=3)
    with pytest.raises(InvalidInput, match="noise_var"):
        LinGapE().identify(glm, glm.reset(jax.random.key(0)), 20, jax.random.key(0))
