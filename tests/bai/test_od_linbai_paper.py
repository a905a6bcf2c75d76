"""OD-LinBAI pulls and eliminates as Yang and Tan's Algorithm 1, checked against a plain-NumPy implementation of
it fed the same rewards (the stack of rewards of ``bayesbandit.bai._protocol``), phase by phase.

The cell is the adaptive instance at K = 16 (d = 15: arms e_1..e_15 and the disturbing arm
(cos 0.1, sin 0.1, 0, ...)), B = 160, where Azizi et al. (2022, Fig. 2) compare the algorithms. There
Algorithm 1 has R = ceil(log2 15) = 4 phases keeping ceil(15/2^r) = 8, 4, 2, 1 arms, and each phase
spends by design

    m = (B - min(K, d(d+1)/2) - sum_{r=1}^{R-1} ceil(d/2^r)) / R = (160 - 16 - (8 + 4 + 2)) / 4 = 32.5

pulls, arm a getting ceil(pi_r(a) m) for the G-optimal design pi_r of the surviving arms projected onto
their span; the estimate is least squares on the phase's pulls only.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bayesbandit.bai.od_linbai as od_linbai
from bayesbandit.bai import AdaptiveInstance, ODLinBAI
from bayesbandit.bai._protocol import stack_rewards, streams
from bayesbandit.bai.evaluation import replication_keys

ENV = AdaptiveInstance(K=16)
INSTANCE = ENV.reset(jax.random.key(0))
ARMS = np.asarray(INSTANCE.arms)
BUDGET = 160
MOST_PULLS = 3 + 5 + 11 + 17  # of one arm: ceil(m/15), ceil(m/7), ceil(m/3), ceil(m/2)


def g_values(z, w):
    """x_i^T V(w)^{-1} x_i for every row of ``z``, with V(w) = sum_i w_i z_i z_i^T."""
    return np.einsum("ij,jk,ik->i", z, np.linalg.inv((z.T * w) @ z), z)


def wolfe_atwood(z, support, tol):
    """Frank-Wolfe with away steps on log det V(w) over the rows in ``support``, from their uniform design,
    until max g <= p (1 + tol) on them."""
    p = z.shape[1]
    w = support / support.sum()
    while True:
        g = np.where(support, g_values(z, w), -np.inf)
        up = int(np.argmax(g))
        if g[up] <= p * (1 + tol):
            return w
        down = int(np.argmin(np.where(w > 0, g, np.inf)))
        if p - g[down] > g[up] - p:  # away from the support arm of smallest g, at most down to 0
            step = min((1 - g[down] / p) / (g[down] - 1), w[down] / (1 - w[down]))
            w = (1 + step) * w
            w[down] -= step
            w[w < 1e-15] = 0.0
        else:
            step = (g[up] / p - 1) / (g[up] - 1)
            w = (1 - step) * w
            w[up] += step
        w /= w.sum()


def g_optimal(z, tol=1e-10):
    """An exact G-optimal design of the rows of ``z`` (spanning R^p): Wolfe-Atwood on all of them, then again on
    those it left more than 1e-6 of weight, checked optimal over all of them (Kiefer-Wolfowitz: max g = p), so no
    arm keeps a weight that is only the solver's rounding (a ceiling would turn it into a pull)."""
    p = z.shape[1]
    w = wolfe_atwood(z, wolfe_atwood(z, np.ones(len(z), bool), tol) > 1e-6, tol)
    assert np.max(g_values(z, w)) <= p * (1 + tol), "the design without the negligible weights is not optimal"
    return w


def algorithm_1(arms, budget, rewards):
    """Yang and Tan (2022), Algorithm 1; ``rewards[a, j]`` is the j-th pull of arm a.

    Returns the recommended arm and, per phase, (surviving arms, pulls of each, least-squares theta in the
    arms' coordinates, pi_r).
    """
    k = arms.shape[0]
    d = np.linalg.matrix_rank(arms)
    rounds = math.ceil(math.log2(d))
    m = (budget - min(k, d * (d + 1) // 2) - sum(math.ceil(d / 2**r) for r in range(1, rounds))) / rounds
    alive, pulled, phases = np.arange(k), np.zeros(k, int), []
    for r in range(1, rounds + 1):
        _, s, vt = np.linalg.svd(arms[alive], full_matrices=False)
        basis = vt[s > 1e-10 * s[0]].T  # the span of the surviving arms
        z = arms[alive] @ basis
        pi = g_optimal(z)
        pulls = np.ceil(pi * m - 1e-9).astype(int)
        assert np.all(pulled[alive] + pulls <= rewards.shape[1]), "more pulls than the table of rewards holds"
        sums = np.array([rewards[a, pulled[a] : pulled[a] + n].sum() for a, n in zip(alive, pulls)])
        pulled[alive] += pulls
        theta = basis @ np.linalg.solve((z.T * pulls) @ z, z.T @ sums)
        phases.append((alive, pulls, theta, pi))
        alive = np.sort(alive[np.argsort(-(arms[alive] @ theta))[: math.ceil(d / 2**r)]])
    return int(alive[0]), phases


def reward_table(run_key):
    """The replication's rewards: ``table[a, j]`` is the j-th pull of arm a for every algorithm given ``run_key``."""
    arm, pull = np.meshgrid(np.arange(ARMS.shape[0]), np.arange(MOST_PULLS), indexing="ij")
    rewards = stack_rewards(ENV, INSTANCE, streams(run_key)[0], jnp.asarray(arm.ravel()), jnp.asarray(pull.ravel()))
    return np.asarray(rewards).reshape(arm.shape)


def test_the_reference_follows_the_paper_on_the_adaptive_instance():
    """The schedule of the module docstring, the designs optimal (g = d_r) on at most d_r(d_r+1)/2 arms, and the
    disturbing arm never pulled in phase 1: the design of e_1..e_15 and x is uniform on e_1..e_15 (45 pulls)."""
    table = reward_table(replication_keys(0, 1)[1][0])
    _, phases = algorithm_1(ARMS, BUDGET, table)
    assert [len(alive) for alive, *_ in phases] == [16, 8, 4, 2]
    for alive, pulls, _, pi in phases:
        _, s, vt = np.linalg.svd(ARMS[alive], full_matrices=False)
        z = ARMS[alive] @ vt[s > 1e-10 * s[0]].T
        dim = z.shape[1]
        assert np.max(g_values(z, pi)) <= dim * (1 + 1e-9) and np.sum(pi > 0) <= dim * (dim + 1) // 2
        assert np.all(pulls == np.ceil(pi * 32.5 - 1e-9))
    first = phases[0][1]
    assert first.tolist() == [3] * 15 + [0] and sum(int(p.sum()) for _, p, *_ in phases) <= BUDGET


def test_each_phase_pulls_the_papers_arms_as_often_as_the_paper(monkeypatch):
    """identify run eagerly with its allocation recorded: the same arms pulled the same number of times in
    every phase, the same survivors, estimates and recommendation as Algorithm 1 on the same rewards."""
    recorded = []
    allocate = od_linbai.allocate

    def recording(x, n, *, dim, tol):
        counts = allocate(x, n, dim=dim, tol=tol)
        rows = [int(np.flatnonzero(np.all(ARMS == row, axis=1))[0]) for row in np.asarray(x)]
        recorded.append(np.zeros(len(ARMS), int))
        recorded[-1][rows] = np.asarray(counts)
        return counts

    monkeypatch.setattr(od_linbai, "allocate", recording)
    for key in replication_keys(0, 2)[1]:
        recorded.clear()
        arm, info = ODLinBAI().identify(ENV, INSTANCE, BUDGET, key)
        table = reward_table(key)
        expected, phases = algorithm_1(ARMS, BUDGET, table)
        assert len(recorded) == len(phases) == 4
        for t, (alive, pulls, theta, _) in enumerate(phases):
            per_arm = np.zeros(len(ARMS), int)
            per_arm[alive] = pulls
            np.testing.assert_array_equal(recorded[t], per_arm, err_msg=f"phase {t + 1}")
            assert np.flatnonzero(np.asarray(info.survivors[t])).tolist() == alive.tolist()
            np.testing.assert_allclose(np.asarray(info.theta[t]), theta, atol=1e-10)
        assert int(arm) == expected


@pytest.fixture(scope="module")
def replications():
    """300 replications keyed as ``replicate`` keys them (seed 0), under jit(vmap), with their reward tables."""
    keys = replication_keys(0, 300)[1]
    arm, info = jax.jit(jax.vmap(lambda key: ODLinBAI().identify(ENV, INSTANCE, BUDGET, key)))(keys)
    return [
        (int(arm[r]), jax.tree.map(lambda leaf, r=r: np.asarray(leaf[r]), info), reward_table(keys[r]))
        for r in range(len(keys))
    ]


def test_survivors_pulls_and_estimates_are_algorithm_1s_replication_by_replication(replications):
    """Per phase: the same survivors and least-squares estimate; in all, the same pulls of every arm and the same
    recommendation. Each phase spends what the paper's m gives: 45, then 40 (8 arms spanning R^8) or 35 (7 arms
    spanning R^7, the disturbing arm not pulled), 36 or 33, 34 pulls."""
    spent = set()
    for arm, info, table in replications:
        expected, phases = algorithm_1(ARMS, BUDGET, table)
        total = np.zeros(len(ARMS), int)
        for t, (alive, pulls, theta, _) in enumerate(phases):
            assert np.flatnonzero(info.survivors[t]).tolist() == alive.tolist()
            np.testing.assert_allclose(info.theta[t], theta, atol=1e-10)
            total[alive] += pulls
        np.testing.assert_array_equal(info.counts, total)
        assert arm == expected and int(info.pulls) == total.sum() <= BUDGET
        spent.add(tuple(int(p.sum()) for _, p, *_ in phases))
    assert {s[0] for s in spent} == {45} and {s[1] for s in spent} <= {35, 40} and {s[3] for s in spent} == {34}
    assert {s[2] for s in spent} <= {33, 36}
