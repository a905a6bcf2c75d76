"""Every estimator equals a NumPy transcription of Open Bandit Pipeline's formulas (obp/ope/estimators.py) to 1e-9."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

from bayesbandit import ope

# ---------------------------------------------------------------------------------------------
# OBP's `_estimate_round_rewards`, transcribed from obp/ope/estimators.py (single slot: position 0,
# action_dist of shape (n, K, 1), estimated_rewards_by_reg_model of shape (n, K, 1)).


def obp_ipw(reward, action, pscore, action_dist, lambda_=np.inf):
    position = np.zeros(action_dist.shape[0], dtype=int)
    iw = action_dist[np.arange(action.shape[0]), action, position] / pscore
    if isinstance(iw, np.ndarray):
        iw = np.minimum(iw, lambda_)
    return reward * iw


def obp_snipw(reward, action, pscore, action_dist):
    position = np.zeros(action_dist.shape[0], dtype=int)
    iw = action_dist[np.arange(action.shape[0]), action, position] / pscore
    return reward * iw / iw.mean()


def obp_dm(action_dist, estimated_rewards_by_reg_model):
    position = np.zeros(action_dist.shape[0], dtype=int)
    n = position.shape[0]
    q_hat_at_position = estimated_rewards_by_reg_model[np.arange(n), :, position]
    pi_e_at_position = action_dist[np.arange(n), :, position]
    return np.average(q_hat_at_position, weights=pi_e_at_position, axis=1)


def _dr_base(action, pscore, action_dist, q):
    position = np.zeros(action_dist.shape[0], dtype=int)
    n = action.shape[0]
    iw = action_dist[np.arange(n), action, position] / pscore
    q_hat_at_position = q[np.arange(n), :, position]
    q_hat_factual = q[np.arange(n), action, position]
    pi_e_at_position = action_dist[np.arange(n), :, position]
    estimated_rewards = np.average(q_hat_at_position, weights=pi_e_at_position, axis=1)
    return iw, q_hat_factual, estimated_rewards


def obp_dr(reward, action, pscore, action_dist, q, lambda_=np.inf):
    iw, q_hat_factual, estimated_rewards = _dr_base(action, pscore, action_dist, q)
    if isinstance(iw, np.ndarray):
        iw = np.minimum(iw, lambda_)
    return estimated_rewards + iw * (reward - q_hat_factual)


def obp_sndr(reward, action, pscore, action_dist, q):
    iw, q_hat_factual, estimated_rewards = _dr_base(action, pscore, action_dist, q)
    return estimated_rewards + iw * (reward - q_hat_factual) / iw.mean()


def obp_switch_dr(reward, action, pscore, action_dist, q, lambda_=np.inf):
    iw, q_hat_factual, estimated_rewards = _dr_base(action, pscore, action_dist, q)
    switch_indicator = np.array(iw <= lambda_, dtype=int)
    return estimated_rewards + switch_indicator * iw * (reward - q_hat_factual)


def obp_dr_os(reward, action, pscore, action_dist, q, lambda_=0.0):
    iw, q_hat_factual, estimated_rewards = _dr_base(action, pscore, action_dist, q)
    if lambda_ < np.inf:
        with warnings.catch_warnings():  # 0/0 where lambda_ = 0 and iw = 0, as in OBP
            warnings.simplefilter("ignore", RuntimeWarning)
            iw_hat = (lambda_ * iw) / (iw**2 + lambda_)
    else:
        iw_hat = iw
    return estimated_rewards + iw_hat * (reward - q_hat_factual)


# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case():
    logs = ope.synthetic_logs(jax.random.PRNGKey(3), 600, n_actions=6, dim_context=4, beta=-3.0)
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(600, 6)) * 2
    pi_e = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    pi_e[:, 0] = 0.0  # a zero-probability action, as a deterministic target has
    pi_e /= pi_e.sum(1, keepdims=True)
    q = np.clip(np.asarray(logs.expected_reward) + rng.normal(0, 0.1, (600, 6)), 0, 1)
    return logs, pi_e, q


CASES = [
    (ope.IPS(), lambda r, a, p, pi, q: obp_ipw(r, a, p, pi)),
    (ope.IPS(clip=3.0), lambda r, a, p, pi, q: obp_ipw(r, a, p, pi, 3.0)),
    (ope.SNIPS(), lambda r, a, p, pi, q: obp_snipw(r, a, p, pi)),
    (ope.DM(), lambda r, a, p, pi, q: obp_dm(pi, q)),
    (ope.DR(), lambda r, a, p, pi, q: obp_dr(r, a, p, pi, q)),
    (ope.DR(clip=3.0), lambda r, a, p, pi, q: obp_dr(r, a, p, pi, q, 3.0)),
    (ope.SNDR(), lambda r, a, p, pi, q: obp_sndr(r, a, p, pi, q)),
    (ope.SwitchDR(threshold=2.0), lambda r, a, p, pi, q: obp_switch_dr(r, a, p, pi, q, 2.0)),
    (ope.SwitchDR(), lambda r, a, p, pi, q: obp_switch_dr(r, a, p, pi, q)),
    (ope.DRos(), lambda r, a, p, pi, q: obp_dr_os(r, a, p, pi, q)),
    (ope.DRos(shrinkage=5.0), lambda r, a, p, pi, q: obp_dr_os(r, a, p, pi, q, 5.0)),
    (ope.DRos(shrinkage=np.inf), lambda r, a, p, pi, q: obp_dr_os(r, a, p, pi, q, np.inf)),
]


@pytest.mark.parametrize("estimator, reference", CASES, ids=[c[0].label for c in CASES])
def test_estimator_equals_obp(case, estimator, reference):
    logs, pi_e, q = case
    fed = logs.to_obp()
    round_rewards = reference(fed["reward"], fed["action"], fed["pscore"], pi_e[..., None], q[..., None])
    p = ope.parts(logs.action, logs.reward, logs.pscore, pi_e, q_hat=q)
    ours = np.asarray(estimator.round_terms(p))
    finite = np.isfinite(round_rewards)  # DR-os at lambda = 0 is 0/0 in OBP where w = 0; ours takes the limit (DM)
    assert np.isfinite(ours).all() and finite.mean() > 0.7
    np.testing.assert_allclose(ours[finite], round_rewards[finite], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours[~finite], np.asarray(p.q_pi)[~finite], rtol=0, atol=1e-12)
    round_rewards = np.where(finite, round_rewards, np.asarray(p.q_pi))
    assert abs(float(estimator.value(p)) - round_rewards.mean()) < 1e-9
    ds = ope.evaluate(logs, {"pi": pi_e}, estimators=[estimator], reward_model=q, intervals=())
    assert abs(float(ds.value.item()) - round_rewards.mean()) < 1e-9


def test_the_controls_differ_where_obp_and_its_variants_differ(case):
    """Switch-DR keeps the correction where w <= tau (OBP), not above it (PyBandits): a swapped test would fail."""
    logs, pi_e, q = case
    p = ope.parts(logs.action, logs.reward, logs.pscore, pi_e, q_hat=q)
    kept_above = np.asarray(p.q_pi + np.where(p.w > 2.0, p.w, 0.0) * (p.reward - p.q_action)).mean()
    assert abs(float(ope.SwitchDR(threshold=2.0).value(p)) - kept_above) > 1e-3


def test_ground_truth_and_round_trip(case):
    logs, pi_e, _ = case
    truth = (pi_e * np.asarray(logs.expected_reward)).sum(1).mean()  # OBP's calc_ground_truth_policy_value
    assert abs(float(ope.ground_truth(logs, pi_e[None])[0]) - truth) < 1e-12
    fed = logs.to_obp()
    assert fed["pi_b"].shape == (600, 6, 1) and fed["position"] is None
    again = ope.Logs.from_obp(fed)
    for name in ("arms", "action", "reward", "pscore", "t", "pi_b", "context", "expected_reward"):
        np.testing.assert_array_equal(np.asarray(getattr(again, name)), np.asarray(getattr(logs, name)))


def test_synthetic_logs_follow_obps_law():
    """Softmax(beta q) behaviour: the logged actions' frequencies match the mean of pi_b, and rewards q."""
    logs = ope.synthetic_logs(jax.random.PRNGKey(0), 20_000, n_actions=4, dim_context=3, beta=2.0)
    pi_b, q = np.asarray(logs.pi_b), np.asarray(logs.expected_reward)
    np.testing.assert_allclose(pi_b, np.exp(2 * q) / np.exp(2 * q).sum(1, keepdims=True), atol=1e-12)
    freq = np.bincount(np.asarray(logs.action), minlength=4) / 20_000
    np.testing.assert_allclose(freq, pi_b.mean(0), atol=4 * np.sqrt(0.25 / 20_000))
    rows = np.arange(20_000)
    assert abs(np.asarray(logs.reward).mean() - q[rows, np.asarray(logs.action)].mean()) < 4 * np.sqrt(0.25 / 20_000)
