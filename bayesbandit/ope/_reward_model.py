"""The direct method's reward model: a NumPyro reward program fitted to the logs, cross-fitted.

``q_hat(i, a)`` is the program's mean reward of arm ``a`` in round ``i`` under the parameters
fitted to the logged rows ``(x_{i, a_i}, r_i)``, the same program a model-based policy acts on:

* ``method="laplace"``: the MAP of the weighted potential by damped Newton
  (:func:`bayesbandit.map_estimate`, the machinery GLM-TSL refits with); ``q_hat`` is the mean
  reward at the MAP (the Laplace approximation's plug-in). Pure and ``vmap``-able over row
  weights, which is what the bootstrap with ``refit=True`` uses.
* ``method="nuts"``: NUTS on the same potential (NumPyro's ``NUTS(potential_fn=...)``);
  ``q_hat`` is the posterior mean of the mean reward over the draws.

Cross-fitting (Chernozhukov et al. 2018): rows are split into ``n_folds`` interleaved folds
(row ``i`` in fold ``i mod n_folds``, so every fold spans the whole log in time, which matters
for adaptively collected logs whose early and late rows differ), and the rows of fold ``k`` are
predicted by the fit to the other folds. ``n_folds = 1`` fits and predicts on all rows.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.posteriors import map_estimate
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.ope._logs import Logs
from bayesbandit.precision import require_x64
from bayesbandit.validation import check_choice, check_int

__all__ = ["RewardModel"]


def _predict(bound: BoundModel, theta: Array, arms: Array) -> Array:
    """Mean reward of every arm of every row, shape (n, K), for ``arms`` (n, K, d)."""
    n, k, d = arms.shape
    return bound.mean_reward(theta, arms.reshape(n * k, d)).reshape(n, k)


@dataclass(frozen=True)
class RewardModel:
    """A reward program as the direct method's model (module docstring).

    Parameters
    ----------
    model : NumPyro program or BoundModel
        The reward program (e.g. :func:`bayesbandit.models.logistic`, or a policy's ``model``).
    method : {"laplace", "nuts"}
    n_folds : int, >= 1
        Cross-fitting folds.
    obs_site : str
        The program's observed reward site.
    num_warmup, num_samples : int
        NUTS settings (``method="nuts"``).
    """

    model: Any
    _: KW_ONLY
    method: str = "laplace"
    n_folds: int = 2
    obs_site: str = "y"
    num_warmup: int = 300
    num_samples: int = 300

    def __post_init__(self) -> None:
        check_choice("RewardModel", "method", self.method, ("laplace", "nuts"))
        check_int("RewardModel", "n_folds", self.n_folds, low=1)
        check_int("RewardModel", "num_warmup", self.num_warmup, low=1)
        check_int("RewardModel", "num_samples", self.num_samples, low=1)

    def bound(self, d: int) -> BoundModel:
        """The program bound to ``d`` features."""
        return bound_for(self.model, (d,), obs_site=self.obs_site)

    def folds(self, n: int) -> Array:
        """Each row's fold, ``i mod n_folds``, shape (n,)."""
        return jnp.arange(n) % self.n_folds

    def fit_predict(self, logs: Logs, key: PRNGKey | None = None, counts: Array | None = None) -> Array:
        """Cross-fitted ``q_hat``, shape (n, K); rows weighted by ``counts`` (default ones) in the fits.

        ``key`` drives NUTS (required there; unused by Laplace). Traceable for Laplace (inside
        ``jit`` and ``vmap`` over ``counts``).
        """
        require_x64("RewardModel.fit_predict")
        if self.method == "nuts":
            if key is None:
                raise InvalidInput(
                    "RewardModel.fit_predict: the 'key' argument is required with method='nuts' (it drives the "
                    "sampler). Got None. Fix: pass key=jax.random.PRNGKey(seed)."
                )
            return self._nuts(logs, key)
        x, y = logs.chosen_arms(), logs.reward
        weights = jnp.ones_like(y) if counts is None else jnp.asarray(counts, dtype=y.dtype)
        bound = self.bound(int(x.shape[1]))
        fold = self.folds(x.shape[0])

        def fit(k: Array) -> Array:
            train = weights if self.n_folds == 1 else weights * (fold != k)
            return map_estimate(bound, x, y, train).theta

        thetas = jax.vmap(fit)(jnp.arange(self.n_folds))
        return self._cross_predict(bound, thetas, logs.row_arms(), fold)

    def _cross_predict(self, bound: BoundModel, predict: Any, arms: Array, fold: Array) -> Array:
        """Row ``i``'s prediction from fold ``fold[i]``'s fit; ``predict`` is (folds, p) parameters or a callable."""
        if callable(predict):
            per_fold = jnp.stack([predict(k, arms) for k in range(self.n_folds)])
        else:
            per_fold = jax.vmap(lambda theta: _predict(bound, theta, arms))(predict)
        return jnp.take_along_axis(per_fold, fold[None, :, None], axis=0)[0]

    def _nuts(self, logs: Logs, key: PRNGKey) -> Array:
        from numpyro.infer import MCMC, NUTS

        x, y = logs.chosen_arms(), logs.reward
        bound = self.bound(int(x.shape[1]))
        fold = self.folds(x.shape[0])
        arms = logs.row_arms()
        draws = []
        for k, fold_key in enumerate(jax.random.split(key, self.n_folds)):
            train = jnp.ones_like(y) if self.n_folds == 1 else (fold != k).astype(y.dtype)
            start = map_estimate(bound, x, y, train).theta
            mcmc = MCMC(
                NUTS(potential_fn=lambda theta, w=train: bound.potential(theta, x, y, w)),
                num_warmup=self.num_warmup,
                num_samples=self.num_samples,
                progress_bar=False,
            )
            mcmc.run(fold_key, init_params=start)
            draws.append(mcmc.get_samples())
        predict = jax.jit(jax.vmap(lambda theta, rows: _predict(bound, theta, rows), in_axes=(0, None)))

        def posterior_mean(k: int, rows: Array) -> Array:
            return jnp.mean(predict(draws[k], rows), axis=0)

        return self._cross_predict(bound, posterior_mean, arms, fold)


def check_q_hat(q_hat: Any, logs: Logs, owner: str) -> Array:
    """A given ``q_hat`` array checked against the logs' shape (n, K)."""
    arr = np.asarray(q_hat, dtype=np.float64)
    expected = (logs.num_rounds, logs.num_arms)
    if arr.shape != expected or not np.isfinite(arr).all():
        raise InvalidInput(
            f"{owner}: the 'reward_model' argument, given as an array, must be a finite q_hat of shape {expected}. "
            f"Got shape {arr.shape}. Fix: pass RewardModel(model) or an (n, K) array of predicted mean rewards."
        )
    return jnp.asarray(arr)
