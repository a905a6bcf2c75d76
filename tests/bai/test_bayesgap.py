"""BayesGap: the posterior against closed-form Bayesian linear regression, a whole run against an
independent NumPy implementation (Gaussian-process form, posterior recomputed from scratch each
round), the budget, and accuracy on an easy instance."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.bai import GLMInstance, SphereInstance, StaticInstance, is_correct
from bayesbandit.bai._protocol import stack_rewards, streams
from bayesbandit.bai.bayesgap import BayesGap, exploration, kernel_features, observe, prior
from bayesbandit.errors import InvalidInput

KERNELS = [("linear", 1.0), ("exp", 1.0), ("matern", 2.0)]


def numpy_gram(kernel, x, ell):
    x = np.asarray(x)
    if kernel == "linear":
        return x @ x.T
    r = np.sqrt(np.sum((x[:, None] - x[None]) ** 2, axis=-1))
    if kernel == "exp":
        return np.exp(-(r**2) / ell)
    return (1 + math.sqrt(3) * r / ell) * np.exp(-math.sqrt(3) * r / ell)


@pytest.mark.parametrize("kernel, ell", KERNELS)
def test_features_reproduce_the_gram_matrix(kernel, ell):
    x = np.random.default_rng(0).normal(size=(7, 3))
    phi = kernel_features(kernel, jnp.asarray(x), ell)
    np.testing.assert_allclose(np.asarray(phi @ phi.T), numpy_gram(kernel, x, ell), atol=1e-12)


def test_matern_is_the_three_halves_kernel():
    x = jnp.array([[0.0, 0.0], [3.0, 4.0]])  # r = 5 = 2.5 l
    phi = kernel_features("matern", x, 2.0)
    s = math.sqrt(3) * 2.5
    assert float((phi @ phi.T)[0, 1]) == pytest.approx((1 + s) * math.exp(-s), rel=1e-12)


@pytest.mark.parametrize("kernel, ell", KERNELS)
def test_rank_one_posterior_matches_closed_form_regression(kernel, ell, rng):
    x = rng.normal(size=(6, 4))
    phi = kernel_features(kernel, jnp.asarray(x), ell)
    prior_var, noise_var = 2500.0, 0.7
    pulls = np.array([0, 3, 3, 5, 1, 0, 2])
    rewards = rng.normal(size=pulls.size)
    post = prior(phi, prior_var)
    for a, y in zip(pulls, rewards):
        post = observe(post, phi, jnp.asarray(a), jnp.asarray(y), noise_var)
    f = np.asarray(phi)[pulls]
    cov = np.linalg.inv(np.eye(f.shape[1]) / prior_var + f.T @ f / noise_var)
    theta = cov @ f.T @ rewards / noise_var
    np.testing.assert_allclose(np.asarray(post.cov), cov, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(np.asarray(post.theta), theta, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(np.asarray(post.means), np.asarray(phi) @ theta, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(
        np.asarray(post.variances),
        np.einsum("kp,pq,kq->k", np.asarray(phi), cov, np.asarray(phi)),
        rtol=1e-7,
        atol=1e-9,
    )


def reference_bayesgap(gram, rewards, budget, prior_var, noise_var):
    """BayesGap on the Gaussian process with kernel ``gram``: arm posteriors from scratch each round."""
    k = gram.shape[0]
    pulls = list(range(k))
    counts = np.ones(k, int)
    ys = [rewards[i, 0] for i in range(k)]

    def posterior():
        g_s = prior_var * gram[:, pulls]
        solve = np.linalg.solve(
            prior_var * gram[np.ix_(pulls, pulls)] + noise_var * np.eye(len(pulls)), np.c_[ys, g_s.T]
        )
        means = g_s @ solve[:, 0]
        var = prior_var * np.diag(gram) - np.einsum("kn,nk->k", g_s, solve[:, 1:])
        return means, np.sqrt(np.maximum(var, 0))

    def max_except(v):
        return np.array([np.max(np.delete(v, i)) for i in range(k)])

    means, stds = posterior()
    up3, lo3 = means + 3 * stds, means - 3 * stds
    gaps = np.maximum(max_except(up3) - lo3, up3 - max_except(lo3))
    hardness = np.sum((gaps / 2) ** -2.0)
    beta = math.sqrt(((budget - k) / noise_var + np.sum(1 / np.diag(gram)) / prior_var) / (4 * hardness))
    leaders, indices = [], []
    for _ in range(budget - k):
        means, stds = posterior()
        upper, lower = means + beta * stds, means - beta * stds
        b = max_except(upper) - lower
        lead = int(np.argmin(b))
        rival = int(np.argmax(np.where(np.arange(k) == lead, -np.inf, upper)))
        arm = lead if stds[lead] > stds[rival] else rival
        leaders.append(lead)
        indices.append(b[lead])
        pulls.append(arm)
        ys.append(rewards[arm, counts[arm]])
        counts[arm] += 1
    return leaders[int(np.argmin(indices))], leaders[-1], counts, beta


@pytest.mark.parametrize("kernel, ell", KERNELS)
def test_run_matches_an_independent_numpy_bayesgap(kernel, ell):
    """Same rewards (the stack), same pulls, same recommendation J(t*), t* = argmin_t B_J(t)(t); the
    seeds are chosen so that J(t*) is not the last round's leader, so tracking the minimum matters."""
    env = SphereInstance(K=6, d=3, noise_var=1.0)
    budget, alg = 30, BayesGap(kernel=kernel, length_scale=ell)
    for seed in range(40):
        inst = env.reset(jax.random.key(seed))
        key = jax.random.key(1000 + seed)
        reward_key, _ = streams(key)
        arms, index = np.meshgrid(np.arange(6), np.arange(budget), indexing="ij")
        table = np.asarray(stack_rewards(env, inst, reward_key, arms.ravel(), index.ravel())).reshape(6, budget)
        gram = numpy_gram(kernel, np.asarray(inst.arms), ell)
        best, last, counts, beta = reference_bayesgap(gram, table, budget, 2500.0, 1.0)
        if best != last:
            break
    else:
        pytest.fail("no seed where the minimum of B_J(t) is reached before the last round")
    arm, info = alg.identify(env, inst, budget, key)
    assert int(arm) == best != last
    np.testing.assert_array_equal(np.asarray(info.counts), counts)
    phi = kernel_features(kernel, inst.arms, ell)
    post = prior(phi, 2500.0)
    for i in range(6):
        post = observe(post, phi, jnp.asarray(i), jnp.asarray(table[i, 0]), 1.0)
    assert float(exploration(post, phi, budget, 2500.0, 1.0, 0.0)) == pytest.approx(beta, rel=1e-8)
    f = np.repeat(np.asarray(phi), counts, axis=0)
    y = np.concatenate([table[i, : counts[i]] for i in range(6)])
    theta = np.linalg.solve(np.eye(f.shape[1]) / 2500.0 + f.T @ f, f.T @ y)
    np.testing.assert_allclose(np.asarray(info.theta[0]), theta, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("kernel, ell", KERNELS)
def test_spends_exactly_the_budget_and_learns(kernel, ell):
    """StaticInstance(K=8, gap=1, noise_var=1), B = 80, 200 replications: every run spends exactly B
    with every arm pulled, and the accuracy is far above chance (1/8, +3 sd = 0.20)."""
    env = StaticInstance(K=8, gap=1.0, noise_var=1.0)
    inst = env.reset(jax.random.key(0))
    alg = BayesGap(kernel=kernel, length_scale=ell)
    arms, info = jax.jit(jax.vmap(lambda k: alg.identify(env, inst, 80, k)))(jax.random.split(jax.random.key(7), 200))
    assert np.all(np.asarray(info.pulls) == 80)
    assert np.all(np.asarray(info.counts).sum(axis=1) == 80)
    assert np.all(np.asarray(info.counts) >= 1)
    assert info.survivors.shape == (200, 1, 8) and bool(jnp.all(info.survivors))
    accuracy = float(jnp.mean(jax.vmap(lambda a: is_correct(inst, a))(arms)))
    assert accuracy >= 0.85


def test_rejects_bad_arguments():
    env = StaticInstance(K=4)
    inst = env.reset(jax.random.key(0))
    with pytest.raises(InvalidInput, match="kernel"):
        BayesGap(kernel="rbf")
    with pytest.raises(InvalidInput, match="length_scale"):
        BayesGap(kernel="exp", length_scale=0.0)
    with pytest.raises(InvalidInput, match="noise_var"):
        BayesGap(noise_var=-1.0)
    with pytest.raises(InvalidInput, match="epsilon"):
        BayesGap(epsilon=-0.1)
    with pytest.raises(InvalidInput, match="budget"):
        BayesGap().identify(env, inst, 4, jax.random.key(0))
    with pytest.raises(InvalidInput, match="budget"):
        BayesGap().identify(env, inst, 3, jax.random.key(0))
    glm = GLMInstance(K=4, d=2)
    with pytest.raises(InvalidInput, match="noise_var"):
        BayesGap().identify(glm, glm.reset(jax.random.key(0)), 20, jax.random.key(0))
