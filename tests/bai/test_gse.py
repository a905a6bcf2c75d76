"""GSE and Sequential Halving: exact budgets, the identities the paper states, GLM programs, bad input."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic, poisson, probit

from bayesbandit.bai import (
    GSE,
    AdaptiveInstance,
    GLMInstance,
    SequentialHalving,
    SphereInstance,
    StaticInstance,
    is_correct,
)
from bayesbandit.bai._protocol import stack_rewards
from bayesbandit.bai._stages import halving_sizes, num_stages, stage_budgets
from bayesbandit.envs import Instance
from bayesbandit.errors import InvalidInput

ALLOCATIONS = ["g-optimal", "wynn", "greedy", "uniform", "fw-literal"]
# CI runs the default design; the others run with -m slow (each compiles a whole GSE program)
CI_ALLOCATIONS = [a if a == "g-optimal" else pytest.param(a, marks=pytest.mark.slow) for a in ALLOCATIONS]


def run_many(algorithm, env, budget, reps, seed=0, fixed=None):
    """Paired replications: (arms, correct, infos)."""

    def one(key):
        k_inst, k_run = jax.random.split(key)
        instance = env.reset(k_inst) if fixed is None else fixed
        arm, info = algorithm.identify(env, instance, budget, k_run)
        return arm, is_correct(instance, arm), info

    return jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(seed), reps))


@pytest.mark.parametrize(
    "num_arms, eta, expected", [(8, 2, 3), (9, 2, 4), (125, 5, 3), (15625, 5, 6), (2, 2, 1), (3, 3, 1)]
)
def test_stage_count_is_exact_for_powers_of_eta(num_arms, eta, expected):
    """An integer loop: float logs give 4 stages for K = 125, eta = 5."""
    assert num_stages(num_arms, eta) == expected
    sizes = halving_sizes(num_arms, eta)
    assert len(sizes) == expected and sizes[0] == num_arms
    assert -(-sizes[-1] // eta) == 1  # one arm survives the last stage, and not earlier
    assert all(b == -(-a // eta) for a, b in zip(sizes, sizes[1:]))


def test_stage_budgets_spread_or_drop_the_leftover():
    assert stage_budgets(83, 3, "spread") == (27, 28, 28) and sum(stage_budgets(83, 3, "spread")) == 83
    assert stage_budgets(83, 3, "drop") == (27, 27, 27)


# K = 11 (not a power of 2) and budgets that the 4 stages do not divide: the programs of the
# learning test, shared with the budget test of the default design
SPHERE, BUDGETS, SPHERE_REPS = SphereInstance(K=11, d=5, noise_var=1.0), (101, 1013), 300
# K = 13 one-hot arms (stages of 13, 7, 4, 2 arms) and a budget the 4 stages do not divide
STATIC, STATIC_BUDGET, STATIC_REPS = StaticInstance(K=13, gap=0.2), 203, 200


@functools.cache
def sphere_run(allocation, budget):
    """GSE on new sphere instances each replication: (arms, correct, infos)."""
    return run_many(GSE(allocation=allocation), SPHERE, budget, SPHERE_REPS)


@functools.cache
def static_run(algorithm):
    """``algorithm`` on one static instance, paired replications: (arms, correct, infos)."""
    return run_many(algorithm, STATIC, STATIC_BUDGET, STATIC_REPS, fixed=STATIC.reset(jax.random.key(0)))


@pytest.mark.parametrize("allocation", CI_ALLOCATIONS)
def test_every_gse_run_spends_exactly_the_budget(allocation):
    """K = 11 (not a power of 2), a budget not divisible by the 4 stages, random sphere instances."""
    _, _, info = sphere_run(allocation, BUDGETS[0])
    assert np.all(np.asarray(info.pulls) == BUDGETS[0])
    assert np.all(np.asarray(info.counts).sum(axis=1) == BUDGETS[0])
    survivors = np.asarray(info.survivors).sum(axis=2)
    assert np.all(survivors == np.array(halving_sizes(11, 2)))


def test_sequential_halving_spends_exactly_the_budget_and_drop_spends_s_floor():
    _, _, info = static_run(SequentialHalving())
    assert np.all(np.asarray(info.pulls) == STATIC_BUDGET)
    _, _, info = static_run(GSE(allocation="uniform", leftover="drop"))
    assert np.all(np.asarray(info.pulls) == 4 * (STATIC_BUDGET // 4))


@pytest.mark.parametrize("allocation", CI_ALLOCATIONS)
def test_on_the_static_instance_every_gse_design_is_sequential_halving(allocation):
    """One-hot arms: the G-optimal design is uniform, OLS gives the arm means; same pulls, same
    rewards from the stack, same ties, hence the same choice in every paired replication (K = 13
    and a budget whose stages do not divide evenly)."""
    sh, _, _ = static_run(SequentialHalving())
    gse, _, _ = static_run(GSE(allocation=allocation))
    np.testing.assert_array_equal(np.asarray(gse), np.asarray(sh))


class GaussianArms(SphereInstance):
    """Standard normal features (arms in general position) and ``theta = 1/3``."""

    def reset(self, key):
        arms = jax.random.normal(key, (self.K, self.d))
        theta = jnp.ones(self.d) / 3
        return Instance(arms, theta, arms @ theta, jnp.max(arms @ theta))


# K = 8 arms in general position in R^10: saturated stages, and rank deficient (d > K)
NARROW, NARROW_BUDGET, NARROW_REPS = GaussianArms(K=8, d=10, noise_var=4.0), 120, 100


@functools.cache
def narrow_run(algorithm):
    """``algorithm`` on new narrow instances each replication: (arms, correct, infos)."""
    return run_many(algorithm, NARROW, NARROW_BUDGET, NARROW_REPS)


def test_gse_lin_uniform_equals_sequential_halving_when_every_stage_is_saturated():
    """K <= d arms in general position: every stage has as many dimensions as arms, so OLS fits each
    arm's mean exactly and GSE-Lin ranks as SH does, on new random instances each replication."""
    sh, _, _ = narrow_run(SequentialHalving())
    gse, _, _ = narrow_run(GSE(allocation="uniform"))
    np.testing.assert_array_equal(np.asarray(gse), np.asarray(sh))
    # K linearly independent arms: the G-optimal design is uniform too (g = K = d_t), so it agrees
    gopt, _, _ = narrow_run(GSE(allocation="g-optimal"))
    np.testing.assert_array_equal(np.asarray(gopt), np.asarray(sh))
    # while on a non-saturated instance (K > d) the two differ
    wide = GaussianArms(K=16, d=4, noise_var=4.0)
    sh_wide, _, _ = run_many(SequentialHalving(), wide, 160, 64)
    gse_wide, _, _ = run_many(GSE(allocation="uniform"), wide, 160, 64)
    assert np.any(np.asarray(gse_wide) != np.asarray(sh_wide))


def test_gse_learns_and_its_accuracy_grows_with_the_budget():
    acc = [float(np.mean(sphere_run("g-optimal", b)[1])) for b in BUDGETS]
    assert acc[1] > acc[0] + 0.1
    assert acc[1] > 0.5  # chance is 1/11


def test_the_g_optimal_design_drops_the_disturbing_arm_of_the_adaptive_instance():
    """Stage 1 of the adaptive instance: the design's support is e_1..e_d (g = d), so the disturbing
    arm x_{d+1} gets no pull, while the paper's literal Frank-Wolfe (stalled at uniform) pulls it.
    K = 4 and B = 40 under jit, as in GSE's example (one compiled program each)."""
    env = AdaptiveInstance(K=4)
    inst = env.reset(jax.random.key(0))
    counts = {}
    for allocation in ("g-optimal", "fw-literal"):
        identify = jax.jit(GSE(allocation=allocation).identify, static_argnums=(0, 2))
        counts[allocation] = identify(env, inst, 40, jax.random.key(1))[1].counts
    assert int(counts["g-optimal"][-1]) < int(counts["fw-literal"][-1])


@pytest.mark.parametrize(
    "family, model",
    [
        ("logistic", logistic(prior_scale=10.0)),
        pytest.param("probit", probit(prior_scale=10.0), marks=pytest.mark.slow),
        pytest.param("poisson", poisson(prior_scale=10.0), marks=pytest.mark.slow),
    ],
)
def test_gse_fits_any_reward_program(family, model):
    """The MAP of a logistic, probit or Poisson program per stage, through bind and Newton: spends
    B exactly and identifies far above chance (1/8)."""
    env = GLMInstance(K=8, d=3, family=family, theta_var=4.0)
    _, correct, info = run_many(GSE(model=model), env, 400, 100)
    assert np.all(np.asarray(info.pulls) == 400)
    assert float(np.mean(correct)) > 0.5
    assert np.asarray(info.theta).shape == (100, 3, 3)


def test_rank_deficient_arms_are_projected_onto_their_span():
    """d = 10 > K = 8 (as in the paper's logistic panel): stage 1 works in the 8-dim span; GSE
    learns (chance is 1/8). The runs of the saturated-stages test."""
    _, correct, info = narrow_run(GSE())
    assert float(np.mean(correct)) > 0.5 and np.all(np.asarray(info.pulls) == NARROW_BUDGET)


def test_the_stack_of_rewards_gives_the_same_draw_to_the_same_pull_whatever_the_order():
    env = SphereInstance(K=5, d=3)
    inst = env.reset(jax.random.key(0))
    key = jax.random.key(7)
    a = stack_rewards(env, inst, key, jnp.array([0, 1, 0, 2]), jnp.array([0, 0, 1, 0]))
    b = stack_rewards(env, inst, key, jnp.array([2, 0, 1, 0]), jnp.array([0, 1, 0, 0]))
    np.testing.assert_array_equal(np.asarray(a)[[3, 2, 1, 0]], np.asarray(b))
    assert len(set(np.asarray(a).tolist())) == 4


def test_bad_input_raises_named_errors():
    env = SphereInstance(K=8, d=3)
    inst = env.reset(jax.random.key(0))
    key = jax.random.key(1)
    with pytest.raises(InvalidInput, match="'budget'.*at least the number of arms"):
        GSE().identify(env, inst, 7, key)
    with pytest.raises(InvalidInput, match="'budget'.*Python int"):
        GSE().identify(env, inst, 80.0, key)
    dup = inst._replace(arms=inst.arms.at[3].set(inst.arms[1]))
    with pytest.raises(InvalidInput, match="distinct.*Arm 1"):
        GSE().identify(env, dup, 80, key)
    nan = inst._replace(arms=inst.arms.at[2, 1].set(jnp.nan))
    for algorithm in (GSE(), SequentialHalving()):
        with pytest.raises(InvalidInput, match="finite"):
            algorithm.identify(env, nan, 80, key)
    with pytest.raises(InvalidInput, match="allocation"):
        GSE(allocation="optimal")
    with pytest.raises(InvalidInput, match="eta"):
        GSE(eta=1)


def test_with_more_dimensions_than_arms_gse_log_parts_from_gse_lin_only_at_least_squares_ties():
    """What the logistic results at d >= K rest on: every stage is saturated, GSE-Lin's scores are sample
    means and tie often; GSE-Log keeps other arms than GSE-Lin (almost) only where those scores tie."""
    from bayesbandit.experiments.bai_logistic import where_they_part

    parted = where_they_part(10, 10, replications=200)
    assert parted["part"] >= 20, parted
    assert parted["at_a_tie"] >= 0.9 * parted["part"], parted


def test_scores_equal_to_rounding_are_ties_broken_at_random():
    from bayesbandit.bai._stages import eliminate

    alive = jnp.arange(4)
    scores = jnp.array([1.0, 0.5, 0.5 + 1e-15, 0.2])  # arms 1 and 2: the same sample mean, rounded apart
    kept = jax.vmap(lambda key: eliminate(alive, scores, 2, key))(jax.random.split(jax.random.key(0), 400))
    assert bool(jnp.all(kept[:, 0] == 0))
    share = float(jnp.mean(kept[:, 1] == 1))
    assert 0.4 < share < 0.6 and bool(jnp.all((kept[:, 1] == 1) | (kept[:, 1] == 2)))
    clear = jnp.array([1.0, 0.5, 0.5 + 1e-6, 0.2])  # a real difference is not a tie
    assert bool(
        jnp.all(
            jax.vmap(lambda key: eliminate(alive, clear, 2, key))(jax.random.split(jax.random.key(1), 50))
            == jnp.array([0, 2])
        )
    )
