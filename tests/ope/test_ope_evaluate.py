"""``evaluate``: the Dataset's layout, bootstrap coverage on i.i.d. logs, and bad inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from bayesbandit.models import logistic

from bayesbandit import ope
from bayesbandit.errors import InvalidInput

N, K = 300, 4


def _target(logs):
    """A fixed softmax target over the true mean rewards (temperature 3)."""
    return jax.nn.softmax(3.0 * logs.expected_reward, axis=1)


@pytest.mark.parametrize("level, band", [(0.95, (0.87, 1.0)), (0.5, (0.3, 0.7))])
def test_bootstrap_intervals_cover_at_their_level_on_iid_logs(level, band):
    """150 replicate OBP-style logs of one instance: coverage of IPS's and DR's bootstrap intervals."""
    instance = jax.random.PRNGKey(11)
    estimators = (ope.IPS(), ope.DR())

    def one(key):
        logs = ope.synthetic_logs(key, N, n_actions=K, dim_context=3, beta=-2.0, instance_key=instance)
        pi = _target(logs)[None]
        q_hat = jnp.clip(logs.expected_reward + 0.1, 0, 1)  # a biased model: DR must still cover
        values = ope.bootstrap_values(jax.random.fold_in(key, 1), logs, pi, q_hat, estimators, 200)
        lo, hi = ope.percentile_interval(values, level)
        return lo[0], hi[0], ope.ground_truth(logs, pi)[0]

    lo, hi, truth = (np.asarray(a) for a in jax.jit(jax.vmap(one))(jax.random.split(jax.random.PRNGKey(0), 150)))
    coverage = ((lo <= truth[:, None]) & (truth[:, None] <= hi)).mean(0)
    assert np.all((band[0] <= coverage) & (coverage <= band[1])), coverage


@pytest.fixture(scope="module")
def small():
    logs = ope.synthetic_logs(jax.random.PRNGKey(1), N, n_actions=K, dim_context=3)
    uniform = np.full((N, K), 1 / K)
    return logs, {"softmax": np.asarray(_target(logs)), "uniform": uniform}


def test_the_result_is_a_dataset_over_targets_and_estimators(small):
    logs, targets = small
    ds = ope.evaluate(
        logs, targets, reward_model=ope.RewardModel(logistic()), intervals=(ope.Bootstrap(num=60), ope.Betting())
    )
    labels = [e.label for e in ope.DEFAULT_ESTIMATORS]
    assert dict(ds.sizes) == {"target": 2, "estimator": len(labels)}
    assert list(ds.target.values) == ["softmax", "uniform"] and list(ds.estimator.values) == labels
    for name in ("value", "se", "bootstrap_lo", "bootstrap_hi", "betting_lo", "betting_hi"):
        assert ds[name].dims == ("target", "estimator")
    assert np.all(ds.bootstrap_lo <= ds.value) and np.all(ds.value <= ds.bootstrap_hi)
    betting = ds.betting_lo.sel(estimator="IPS")
    assert np.all(np.isfinite(betting)) and np.isnan(ds.betting_lo.sel(estimator="DR")).all()
    assert np.allclose(ds.truth, ope.ground_truth(logs, jnp.stack([jnp.asarray(t) for t in targets.values()])))
    assert np.all(ds.target_se_max == 0)
    again = ope.evaluate(
        logs, targets, reward_model=ope.RewardModel(logistic()), intervals=(ope.Bootstrap(num=60), ope.Betting())
    )
    assert again.equals(ds)  # same key, same result
    fig = ope.plot_estimates(ds)
    assert len(fig.axes) == 2


def test_bad_arguments_raise_naming_them(small):
    logs, targets = small
    with pytest.raises(InvalidInput, match="'reward_model'.*Fix:"):
        ope.evaluate(logs, targets, estimators=[ope.DR()])
    with pytest.raises(InvalidInput, match="'targets'.*Fix:"):
        ope.evaluate(logs, {"bad": np.full((N, K), 0.3)}, estimators=[ope.IPS()])
    with pytest.raises(InvalidInput, match="'targets'.*Fix:"):
        ope.evaluate(logs, {}, estimators=[ope.IPS()])
    with pytest.raises(InvalidInput, match="'estimators'.*Fix:"):
        ope.evaluate(logs, targets, estimators=[ope.IPS(), ope.IPS()])
    with pytest.raises(InvalidInput, match="'intervals'.*Fix:"):
        ope.evaluate(logs, targets, estimators=[ope.IPS()], intervals=["bootstrap"])
    with pytest.raises(InvalidInput, match="'logs'.*Fix:"):
        ope.evaluate(logs.to_obp(), targets, estimators=[ope.IPS()])
    with pytest.raises(InvalidInput, match="'reward_model'.*Fix:"):
        ope.evaluate(logs, targets, estimators=[ope.DM()], reward_model=np.zeros((N, K + 1)))
    with pytest.raises(InvalidInput, match="'clip'.*Fix:"):
        ope.IPS(clip=-1.0)
    with pytest.raises(InvalidInput, match="'method'"):
        ope.RewardModel(logistic(), method="vi")
    with pytest.raises(InvalidInput, match="'reward_range'.*Fix:"):
        ope.Betting(reward_range=(1.0, 0.0))


def test_overlap_diagnostics_see_the_logging_policy_and_a_target_outside_its_support():
    """Target = logging policy: ESS = n, max weight 1, no unsupported mass. A target on an action the
    logging policy never takes has exactly that action's probability as unsupported mass."""
    logs = ope.synthetic_logs(jax.random.PRNGKey(3), N, n_actions=K, dim_context=3, beta=-2.0)
    never = jnp.zeros_like(logs.pi_b).at[:, 0].set(1.0)  # the logging policy never plays action 0 ...
    pi_b = jnp.where(never == 1.0, 0.0, logs.pi_b)
    pi_b = pi_b / pi_b.sum(1, keepdims=True)
    action = jnp.where(logs.action == 0, 1, logs.action)
    logs = logs._replace(pi_b=pi_b, action=action, pscore=pi_b[jnp.arange(N), action])
    half = 0.5 * never + 0.5 * pi_b  # ... and this target plays it half of the time
    diagnostics = {k: np.asarray(v) for k, v in ope.overlap(logs, jnp.stack([pi_b, half])).items()}
    np.testing.assert_allclose(diagnostics["effective_sample_size"][0], N, rtol=1e-12)
    np.testing.assert_allclose(diagnostics["max_weight"][0], 1.0, rtol=1e-12)
    np.testing.assert_allclose(diagnostics["unsupported_mass"], [0.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(diagnostics["max_weight"][1], 0.5, rtol=1e-12)  # IPS sees half the target
    ds = ope.evaluate(logs, {"logging": pi_b, "half": half}, estimators=[ope.IPS()], intervals=())
    np.testing.assert_allclose(ds["unsupported_mass"].values, [0.0, 0.5], atol=1e-12)
