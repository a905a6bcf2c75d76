"""The deep contextual bandit environment: rewards from labels, the oracle, common random numbers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesbandit.datasets.images import ImageData
from bayesbandit.envs import ImageClassBandit
from bayesbandit.errors import InvalidInput


def _data(classes: int = 4, per_class: int = 5) -> ImageData:
    labels = np.repeat(np.arange(classes), per_class)
    images = np.eye(classes, dtype=np.float32)[labels] + 0.01 * np.arange(labels.size)[:, None]
    return ImageData(images, labels, "one-hot classes")


def test_rewards_follow_the_labels_and_the_oracle_sees_the_best_image():
    env = ImageClassBandit(data=_data(), K=3, p_target=0.9, p_other=0.1)
    state = env.reset(jax.random.PRNGKey(0))
    target = int(state.target)
    hits, rewards = [], []
    for t in range(400):
        arms = np.asarray(env.arms(state, t))
        labels = arms[:, :4].argmax(1)
        for action in range(3):
            reward, outcome = env.pull(state, jnp.asarray(action), jax.random.PRNGKey(t), t)
            assert float(outcome.expected_reward) == pytest.approx(0.9 if labels[action] == target else 0.1)
            assert float(outcome.best_expected_reward) == pytest.approx(0.9 if (labels == target).any() else 0.1)
            hits.append(labels[action] == target)
            rewards.append(float(reward))
    hits, rewards = np.array(hits), np.array(rewards)
    assert abs(rewards[hits].mean() - 0.9) < 0.05 and abs(rewards[~hits].mean() - 0.1) < 0.05


def test_optimum_is_the_corrected_formula_and_matches_simulation():
    env = ImageClassBandit(data=_data(), K=3)
    q = (1 - 1 / 4) ** 3
    assert env.optimum() == pytest.approx(0.25 * q + 0.75 * (1 - q))
    keys = jax.random.split(jax.random.PRNGKey(1), 4000)

    def best(key):
        state = env.reset(key)
        return env.pull(state, jnp.asarray(0), key, 0)[1].best_expected_reward

    assert float(jax.vmap(best)(keys).mean()) == pytest.approx(env.optimum(), abs=0.015)


def test_same_round_key_same_rewards_and_targets_are_uniform():
    env = ImageClassBandit(data=_data(), K=5)
    state = env.reset(jax.random.PRNGKey(3))
    first = [float(env.pull(state, jnp.asarray(a), jax.random.PRNGKey(7), 2)[0]) for a in range(5)]
    again = [float(env.pull(state, jnp.asarray(a), jax.random.PRNGKey(7), 2)[0]) for a in range(5)]
    assert first == again
    targets = jax.vmap(lambda k: env.reset(k).target)(jax.random.split(jax.random.PRNGKey(0), 4000))
    np.testing.assert_allclose(np.bincount(np.asarray(targets), minlength=4) / 4000, 0.25, atol=0.03)


def test_settings_are_checked():
    with pytest.raises(InvalidInput, match="ImageData"):
        ImageClassBandit(data=np.zeros((3, 4)))
    with pytest.raises(InvalidInput, match="K"):
        ImageClassBandit(data=_data(), K=0)
    with pytest.raises(InvalidInput, match="p_target"):
        ImageClassBandit(data=_data(), p_target=1.5)
