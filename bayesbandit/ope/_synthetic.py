"""OBP-style synthetic logs (a JAX port of ``obp.dataset.SyntheticBanditDataset``, binary rewards).

As in OBP (``obp/dataset/synthetic.py``, ``logistic_reward_function`` with ``degree = 1`` and
the default ``action_context = I_K``):

* contexts ``x_i ~ N(0, I_dx)``; features with a bias, ``x~ = (1, x)`` and ``a~ = (1, e_a)``;
* ``eta(x, a) = theta_x^T x~ + theta_a^T a~ + x~^T M a~`` with every coefficient
  ``U(-1, 1)`` (``sample_random_uniform_coefficients``), drawn once per instance;
* OBP's ``z_score`` line, ``eta - mean(eta) / std(eta)`` (operator precedence: the mean is
  divided, not the difference; we follow OBP), then ``q(x, a) = sigmoid(eta)``;
* rewards ``r ~ Bernoulli(q(x, a))``, the behaviour policy ``pi_b = softmax(beta q(x, .))``,
  ``a ~ pi_b``, ``pscore = pi_b(a | x)``.

The random streams are JAX's, so the numbers differ from OBP's NumPy draws; the law is the same.
Arms are :func:`bayesbandit.ope.obp_arms` of the contexts.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bayesbandit._typing import PRNGKey
from bayesbandit.ope._logs import Logs, obp_arms
from bayesbandit.validation import check_int, check_scalar

__all__ = ["synthetic_logs"]


def synthetic_logs(
    key: PRNGKey,
    n: int,
    *,
    n_actions: int = 10,
    dim_context: int = 5,
    beta: float = 1.0,
    instance_key: PRNGKey | None = None,
) -> Logs:
    """``n`` rounds of OBP's synthetic logistic bandit under its softmax behaviour policy (module docstring).

    ``instance_key`` draws the reward coefficients (default: a part of ``key``); fix it to draw
    replicate logs of one instance. The logs carry ``pi_b``, ``context`` and ``expected_reward``
    (for the ground truth, :func:`bayesbandit.ope.ground_truth`). Jittable in ``key``.
    """
    n = check_int("synthetic_logs", "n", n, low=1)
    n_actions = check_int("synthetic_logs", "n_actions", n_actions, low=2)
    dim_context = check_int("synthetic_logs", "dim_context", dim_context, low=1)
    check_scalar("synthetic_logs", "beta", beta, low=-1e6, high=1e6)
    k_coef, k_context, k_action, k_reward = jax.random.split(key, 4)
    k_cx, k_ca, k_m = jax.random.split(k_coef if instance_key is None else instance_key, 3)
    context = jax.random.normal(k_context, (n, dim_context))
    x = jnp.concatenate([jnp.ones((n, 1)), context], axis=1)
    a = jnp.concatenate([jnp.ones((n_actions, 1)), jnp.eye(n_actions)], axis=1)
    theta_x = jax.random.uniform(k_cx, (dim_context + 1,), minval=-1.0, maxval=1.0)
    theta_a = jax.random.uniform(k_ca, (n_actions + 1,), minval=-1.0, maxval=1.0)
    coupling = jax.random.uniform(k_m, (dim_context + 1, n_actions + 1), minval=-1.0, maxval=1.0)
    eta = (x @ theta_x)[:, None] + (a @ theta_a)[None, :] + x @ coupling @ a.T
    eta = eta - jnp.mean(eta) / jnp.std(eta)
    q = jax.nn.sigmoid(eta)
    pi_b = jax.nn.softmax(beta * q, axis=1)
    action = jax.random.categorical(k_action, jnp.log(pi_b), axis=1)
    rows = jnp.arange(n)
    reward = (jax.random.uniform(k_reward, (n,)) < q[rows, action]).astype(q.dtype)
    return Logs(
        obp_arms(context, n_actions),
        action.astype(jnp.int32),
        reward,
        pi_b[rows, action],
        jnp.arange(n, dtype=q.dtype),
        pi_b=pi_b,
        context=context,
        expected_reward=q,
    )
