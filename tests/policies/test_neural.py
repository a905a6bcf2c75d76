"""Neural reward programs: the MLP program, DeepFPL's step, DeepFL, the neural-linear hand-over, the last layer."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from bayesbandit.diagnostics import compare
from bayesbandit.models import mlp

import bayesbandit as bb
from bayesbandit.errors import InvalidInput, ModelSpecError

D, HIDDEN = 6, 5


def _arms(seed: int, k: int = 4) -> jax.Array:
    return jax.random.uniform(jax.random.PRNGKey(seed), (k, D), minval=-1.0, maxval=1.0, dtype=jnp.float32)


def _forward(params: dict, x: jax.Array, activation=jax.nn.relu) -> tuple[jax.Array, jax.Array]:
    h = activation(x @ params["w_hidden"] + params["b_hidden"])
    return h, h @ params["w_out"] + params["b_out"]


def test_mlp_binds_and_records_its_embedding():
    bound = bb.bind(mlp(hidden=HIDDEN, activation="tanh"), np.zeros((1, D)))
    assert bound.num_params == D * HIDDEN + 2 * HIDDEN + 1 and bound.is_affine
    theta = bound.sample_prior(jax.random.PRNGKey(0))
    params = bound.constrain(theta)
    x = _arms(1).astype(float)
    h, eta = _forward(params, x, jnp.tanh)
    np.testing.assert_allclose(bound.deterministic(theta, x, "embedding"), h, rtol=1e-12)
    np.testing.assert_allclose(bound.mean_reward(theta, x), jax.nn.sigmoid(eta), rtol=1e-12)
    with pytest.raises(ModelSpecError, match="no deterministic site named 'hidden'"):
        bound.deterministic(theta, x, "hidden")
    gaussian = bb.bind(mlp(hidden=HIDDEN, likelihood="gaussian"), np.zeros((1, D)))
    np.testing.assert_allclose(gaussian.mean_reward(theta, x), _forward(params, x)[1], rtol=1e-12)


def test_mlp_prior_draws_scale_with_fan_in():
    bound = bb.bind(mlp(hidden=50), np.zeros((1, 400)))
    params = bound.constrain(bound.sample_prior(jax.random.PRNGKey(0)))
    assert abs(float(np.std(params["w_hidden"])) - 400**-0.5) < 0.002
    assert abs(float(np.std(params["w_out"])) - 50**-0.5) < 0.03


@pytest.mark.parametrize(
    "bad", [{"hidden": 0}, {"activation": "gelu"}, {"likelihood": "poisson"}, {"prior_scale": -1.0}]
)
def test_mlp_rejects_bad_settings(bad):
    with pytest.raises(InvalidInput):
        mlp(**bad)


def test_one_deep_fpl_step_is_one_adam_step_on_the_perturbed_batch():
    """The update equals optax.adam(lr) applied by hand to the BCE-from-logits loss of y + a z."""
    a, lr = 0.7, 3e-3
    policy = bb.DeepFPL(mlp(hidden=HIDDEN), a=a, learning_rate=lr, batch=4)
    bound = policy.bound(D)
    state = policy.init(d=D, key=jax.random.PRNGKey(0))
    update = jax.jit(policy.update)  # one program for the six steps, not one per operation
    rows = [(_arms(s), s % 4, float(s % 2)) for s in range(6)]  # 6 rows: the batch of 4 wraps around
    for arms, action, reward in rows[:-1]:
        state, _ = update(state, arms, jnp.asarray(action), jnp.asarray(reward))
    arms, action, reward = rows[-1]
    new_state, info = update(state, arms, jnp.asarray(action), jnp.asarray(reward))

    recent = [(np.asarray(ar[ac]), r) for ar, ac, r in rows[-4:]]
    x = jnp.asarray(np.stack([r[0] for r in recent]))
    y = jnp.asarray([r[1] for r in recent], jnp.float32)
    slots = np.array([s % 4 for s in range(2, 6)])  # ring buffer: row s sits in slot s % 4
    x_slot, y_slot = jnp.zeros_like(x).at[slots].set(x), jnp.zeros_like(y).at[slots].set(y)
    _, key_noise = jax.random.split(state.key)
    y_tilde = y_slot + a * jax.random.normal(key_noise, (4,), jnp.float32)

    def loss(theta):
        _, eta = _forward(bound.unravel(theta), x_slot)
        return jnp.mean(jax.nn.softplus(eta) - y_tilde * eta)

    optimizer = optax.adam(lr)
    grad = jax.grad(loss)(state.fit.theta)
    updates, _ = optimizer.update(grad, state.fit.opt_state, state.fit.theta)
    expected = optax.apply_updates(state.fit.theta, updates)
    np.testing.assert_allclose(new_state.fit.theta, expected, rtol=2e-5, atol=1e-7)
    assert new_state.fit.theta.dtype == jnp.float32 and bool(info.converged)
    np.testing.assert_allclose(info.loss, loss(state.fit.theta), rtol=1e-5)


def test_deep_fl_is_deep_fpl_with_a_zero():
    model = mlp(hidden=HIDDEN)
    fl, fpl0 = bb.DeepFL(model, batch=8), bb.DeepFPL(model, a=0.0, batch=8)
    states = [p.init(d=D, key=jax.random.PRNGKey(3)) for p in (fl, fpl0)]
    calls = [(jax.jit(p.select), jax.jit(p.update)) for p in (fl, fpl0)]  # each policy's own programs
    for s in range(30):
        arms, key = _arms(s), jax.random.PRNGKey(100 + s)
        actions = [select(st, arms, key)[0] for (select, _), st in zip(calls, states, strict=True)]
        assert int(actions[0]) == int(actions[1])
        states = [
            update(st, arms, actions[0], jnp.asarray(float(s % 3 == 0)))[0]
            for (_, update), st in zip(calls, states, strict=True)
        ]
    for x, y in zip(jax.tree.leaves(states[0]), jax.tree.leaves(states[1]), strict=True):
        assert np.array_equal(x, y)
    with pytest.raises(InvalidInput, match="'a' parameter of DeepFL"):
        bb.DeepFL(model, a=0.5)


def test_deep_fpl_perturbation_changes_the_step_and_explores_uniformly_first():
    model = mlp(hidden=HIDDEN)
    state0 = bb.DeepFPL(model, a=1.0).init(d=D, key=jax.random.PRNGKey(0))
    step = jax.jit(lambda policy: policy.update(state0, _arms(0), jnp.asarray(1), jnp.asarray(1.0))[0])
    a, b = (step(bb.DeepFPL(model, a=scale)) for scale in (1.0, 0.0))  # one program: ``a`` is a pytree leaf
    assert not np.allclose(a.fit.theta, b.fit.theta)
    policy = bb.DeepFPL(model, num_explore=50)
    keys = jax.vmap(jax.random.PRNGKey)(jnp.arange(200))  # PRNGKey(s) for s in range(200), in one program
    picks = jax.vmap(lambda key: policy.select(state0, _arms(0, k=5), key)[0])(keys)
    assert set(picks.tolist()) == set(range(5))  # uniform while exploring, whatever the network prefers


def test_init_needs_a_key():
    with pytest.raises(InvalidInput, match="needs a key"):
        bb.DeepFPL(mlp(hidden=HIDDEN)).init(d=D)


def test_neural_linear_hands_the_training_rows_to_the_head_and_freezes_the_network():
    m = 12
    policy = bb.RepGLMFPL(mlp(hidden=HIDDEN), explore_rounds=m, a=0.5)
    state = policy.init(d=D, capacity=40, key=jax.random.PRNGKey(0))
    rng = np.random.default_rng(0)
    select, update = jax.jit(policy.select), jax.jit(policy.update)  # eagerly, every lax.cond would compile
    for t in range(m + 5):
        arms = _arms(t)
        action, info = select(state, arms, jax.random.PRNGKey(t))
        assert bool(info.exploring) == (t <= m)
        before = state.network.fit.theta
        state, _ = update(state, arms, action, jnp.asarray(float(rng.random() < 0.5)))
        frozen = np.array_equal(before, state.network.fit.theta)
        assert frozen == (t >= m), f"round {t}: network {'frozen' if frozen else 'trained'}"
    x, y, w = policy.head_rows(state)
    assert int(np.sum(w)) == m + 5
    explored_x, explored_y, _ = policy.posterior_rows(state)
    h = policy.bound(D).deterministic(state.network.fit.theta, explored_x, "embedding")
    np.testing.assert_allclose(x[:m, :HIDDEN], h, rtol=1e-6)
    np.testing.assert_allclose(x[: m + 5, HIDDEN], 1.0)
    np.testing.assert_array_equal(y[:m], explored_y)


def test_last_layer_posterior_compares_with_nuts():
    """The last-layer Laplace posterior on a trained embedding, against NUTS (bayesbandit.diagnostics)."""
    rng = np.random.default_rng(1)
    policy = bb.LastLayerLaplaceTS(mlp(hidden=4), explore_rounds=60)
    state = policy.init(d=D, capacity=200, key=jax.random.PRNGKey(0))
    theta = rng.normal(size=D)
    select, update = jax.jit(policy.select), jax.jit(policy.update)
    for t in range(150):
        arms = _arms(t)
        action, _ = select(state, arms, jax.random.PRNGKey(t))
        p = 1 / (1 + np.exp(-np.asarray(arms[int(action)], float) @ theta))
        state, _ = update(state, arms, action, jnp.asarray(float(rng.random() < p)))
    rows = policy.head_rows(state)  # what is asserted is Laplace against NUTS: no FPL ensemble
    comparison = compare(
        policy.head_program(), *rows, methods=("laplace", "nuts"), num_draws=300, num_warmup=300, num_chains=2
    )
    laplace = comparison.table.loc["laplace"]
    assert np.isfinite(laplace["kl"]) and laplace["kl"] < 0.5, comparison.table
    assert 0.7 < laplace["coverage90"] <= 1.0


def test_neural_linear_settings_are_checked():
    with pytest.raises(InvalidInput):
        bb.RepGLMFPL(mlp(hidden=HIDDEN), explore_rounds=-1)
    with pytest.raises(InvalidInput):
        bb.LastLayerLaplaceTS(mlp(hidden=HIDDEN), optimizer="lbfgs-ish")
    with pytest.raises(ModelSpecError, match="embedding"):
        bb.RepGLMFPL(mlp(hidden=HIDDEN), embedding_site="features").init(d=D, key=jax.random.PRNGKey(0))
