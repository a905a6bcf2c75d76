"""OD-LinBAI: its budget never exceeds B, round 1 keeps ceil(d/2) arms, d <= 2 is one round, it learns."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.bai import CornerInstance, SphereInstance, is_correct
from bayesbandit.bai.od_linbai import ODLinBAI, allocate, caratheodory, schedule
from bayesbandit.design import fw_away, g_values, project
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput
from bayesbandit.testing import bai as checks


def run(env, budget, reps, seed=0):
    def one(key):
        instance_key, run_key = jax.random.split(key)
        instance = env.reset(instance_key)
        arm, info = ODLinBAI().identify(env, instance, budget, run_key)
        return is_correct(instance, arm), info

    return jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(seed), reps))


def test_schedule_matches_the_formula_by_hand():
    # d = 10: R = 4 rounds; reserve = min(16, 55) + ceil(10/2) + ceil(10/4) + ceil(10/8) = 16 + 5 + 3 + 2
    plan = schedule(16, 10, 320)
    assert plan.sizes == (16, 5, 3, 2)
    assert plan.per_round == (320 - 26) / 4 == 73.5  # a real number, as in the paper
    assert plan.max_rows == (74 + 16, 74 + 5, 74 + 3, 74 + 2)
    # K > d(d+1)/2: the reserve of round 1 is d(d+1)/2 = 10, not K
    assert schedule(64, 4, 100) == schedule(64, 4, 100)._replace(sizes=(64, 2), per_round=(100 - 10 - 2) / 2)
    for d in (1, 2):
        assert len(schedule(8, d, 50).sizes) == 1


@pytest.mark.parametrize("num_arms, dim", [(3, 1), (8, 2), (16, 10), (64, 4), (200, 7), (9, 9)])
def test_the_smallest_budget_leaves_one_pull_a_round_after_the_reserve(num_arms, dim):
    rounds = len(schedule(num_arms, dim, 1000).sizes)
    reserve = min(num_arms, dim * (dim + 1) // 2) + sum(-(-dim // 2**r) for r in range(1, rounds))
    assert schedule(num_arms, dim, reserve + rounds).per_round == 1.0
    with pytest.raises(InvalidInput, match=f"at least {reserve + rounds}"):
        schedule(num_arms, dim, reserve + rounds - 1)


def test_too_small_a_budget_is_rejected_with_the_minimum():
    env = SphereInstance(K=16, d=10)
    with pytest.raises(InvalidInput, match="at least 30"):
        ODLinBAI().identify(env, env.reset(jax.random.key(0)), 29, jax.random.key(1))
    with pytest.raises(InvalidInput, match="design_tol"):
        ODLinBAI(design_tol=0.0)


def test_caratheodory_keeps_the_information_matrix_on_few_arms():
    """Frank-Wolfe leaves almost every arm of a dense sphere in the support; the reduction keeps
    sum w x x^T (hence g) on at most d(d+1)/2 + 1 arms."""
    z = project(SphereInstance(K=100, d=4).reset(jax.random.key(0)).arms).coords
    weights = fw_away(z).weights
    assert int(jnp.sum(weights > 1e-6)) > 50
    reduced = caratheodory(z, weights, 11)
    assert int(jnp.sum(reduced > 0)) <= 11
    assert float(jnp.min(reduced)) >= 0.0
    np.testing.assert_allclose(float(jnp.sum(reduced)), 1.0, atol=1e-12)
    np.testing.assert_allclose((z * reduced[:, None]).T @ z, (z * weights[:, None]).T @ z, atol=1e-12)
    np.testing.assert_allclose(float(jnp.max(g_values(z, reduced))), float(jnp.max(g_values(z, weights))), rtol=1e-9)


@pytest.mark.parametrize("num_arms, dim, n", [(100, 4, 1), (100, 4, 37.5), (64, 10, 73.25), (5, 5, 9)])
def test_ceiling_allocation_overspends_less_than_the_support(num_arms, dim, n):
    """``sum_x ceil(pi(x) m) < m + |supp pi|``, and the support is at most ``d(d+1)/2 + 1`` arms."""
    x = SphereInstance(K=num_arms, d=dim).reset(jax.random.key(num_arms + int(n))).arms
    counts = allocate(x, n, dim=dim, tol=0.01)
    assert n <= int(jnp.sum(counts)) < n + int(jnp.sum(counts > 0))
    assert int(jnp.sum(counts > 0)) <= min(num_arms, dim * (dim + 1) // 2 + 1)


@pytest.mark.parametrize(("num_arms", "dim", "budget"), [(64, 4, 14), (64, 4, 103), (16, 10, 97), (200, 7, 131)])
def test_the_rounds_spend_at_most_the_budget_and_within_a_round_of_it(num_arms, dim, budget):
    """Less than ``R m + reserve + 1 = B + 1`` pulls in all (module docstring), and at least ``R m``."""
    plan = schedule(num_arms, dim, budget)
    _, info = run(SphereInstance(K=num_arms, d=dim), budget, 50, seed=budget)
    assert int(jnp.max(info.pulls)) <= budget
    assert int(jnp.min(info.pulls)) >= len(plan.sizes) * plan.per_round


def test_ceiling_is_not_fooled_by_rounding_errors():
    # the uniform design on 10 one-hot arms: 0.1 * 30 is 3.0000000000000004 in floating point
    counts = allocate(jnp.eye(10), 30, dim=10, tol=0.01)
    assert [int(c) for c in counts] == [3] * 10


def test_never_spends_more_than_the_budget_and_rounds_shrink_as_the_paper_says():
    # K = 64 > d(d+1)/2 = 10: round 1 keeps ceil(4/2) = 2 arms, round 2 one; smallest budget 10 + 2 + 2
    env = SphereInstance(K=64, d=4)
    _, info = run(env, 14, 20)
    assert info.survivors.shape == (20, 2, 64)
    assert bool(jnp.all(info.survivors[:, 0]))
    assert bool(jnp.all(jnp.sum(info.survivors[:, 1], axis=1) == 2))
    assert int(jnp.max(info.pulls)) <= 14
    assert bool(jnp.all(jnp.sum(info.counts, axis=1) == info.pulls))


def test_two_dimensions_is_one_round():
    env = CornerInstance(K=8)
    _, info = run(env, 40, 10)
    assert info.survivors.shape == (10, 1, 8)
    assert int(jnp.max(info.pulls)) <= 40


def test_the_rank_not_the_width_sets_the_rounds():
    # five features spanning a plane: d = 2, one round
    basis = np.linalg.qr(np.random.default_rng(0).normal(size=(5, 2)))[0]
    arms = jnp.asarray(np.stack([np.cos(a) * basis[:, 0] + np.sin(a) * basis[:, 1] for a in np.linspace(0, 3, 6)]))
    theta = jnp.asarray(basis[:, 0])
    instance = Instance(arms, theta, arms @ theta, jnp.max(arms @ theta))
    # the instance is a constant of the traced function, so its rank is known when the rounds are fixed
    _, info = jax.jit(lambda key: ODLinBAI().identify(SphereInstance(K=6, d=5), instance, 30, key))(jax.random.key(0))
    assert info.survivors.shape == (1, 6)


def test_learns_a_sphere_instance():
    """K = 16 arms in R^10, B = 320, noise variance 1: about 0.8 correct (chance 1/16); 200
    replications give a standard error of 0.03, so 0.6 is far below the rate and far above chance."""
    correct, info = run(SphereInstance(K=16, d=10, noise_var=1.0), 320, 200, seed=3)
    assert float(jnp.mean(correct)) >= 0.6
    assert int(jnp.max(info.pulls)) <= 320


def test_one_hot_arms_are_sequential_halving_with_exact_budgets():
    """d = K = 8: three rounds keeping 4, 2, 1. The uniform design is G-optimal, and m = 50 / 3
    gives each arm ceil(m / 8) = 3, ceil(m / 4) = 5, ceil(m / 2) = 9 pulls: 24 + 20 + 18 = 62 of the
    budget 14 + 50. The contract suite's run (``bayesbandit.testing.bai``: 64 replications on
    one-hot arms, budget 64)."""
    assert (checks.K, checks.BUDGET) == (8, 14 + 50)
    _, info, _ = checks._run(ODLinBAI())
    assert info.survivors.shape == (checks.REPLICATIONS, 3, 8)
    assert [int(s) for s in np.sum(info.survivors[0], axis=1)] == [8, 4, 2]
    expected = 3 + 5 * info.survivors[:, 1].astype(int) + 9 * info.survivors[:, 2].astype(int)
    np.testing.assert_array_equal(info.counts, expected)
    assert np.all(info.pulls == 62)
