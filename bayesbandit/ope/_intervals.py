"""Confidence intervals for off-policy values: a vmapped bootstrap, and a betting interval valid on adaptive logs.

:class:`Bootstrap` (percentile bootstrap, Efron 1979; OBP's ``estimate_confidence_interval_by_bootstrap``)
resamples rounds with replacement: resample ``b``'s multiplicities ``c_b`` (a multinomial
``(n; 1/n, ..., 1/n)`` draw, from ``n`` uniform indices) weight every per-round column, so all
resamples of every estimator and target are one product ``C @ columns`` (``C`` of shape
``(B, n)``). With ``refit=True`` the reward model is refitted on each resample's weighted rows
(``vmap`` of the Laplace fit over ``c_b``), so the interval carries the model's own sampling
variability, which OBP's bootstrap (model held fixed) leaves out. The bootstrap treats rounds
as independent: on logs of a learning policy it is a heuristic.

:class:`Betting` is valid when the logs are adaptive: the logging policy may depend on the
whole past (Thompson sampling's logs), only the propensity of each logged action must be its
probability given the past (or, for :func:`bayesbandit.propensities.select_logged`'s rule,
given the past and the serve-time draws), with contexts i.i.d. and a fixed target. It is the
IPS betting confidence sequence of Waudby-Smith, Wu, Ramdas, Karampatziakis and Mineiro (2022,
"Anytime-valid off-policy inference for contextual bandits", arXiv:2210.10768, Section 3),
evaluated at ``n``. With rewards rescaled to ``[0, 1]``, ``phi_i = w_i r_i >= 0`` has conditional
mean ``v`` given the past, so for every ``nu``

.. math::

    K_n(\\nu) = \\prod_{i \\le n} \\big(1 + \\lambda_i (\\phi_i - \\nu)\\big)

with predictable ``lambda_i in [0, 1/2]`` is a non-negative martingale at ``nu = v`` (a
supermartingale when positivity fails and the conditional mean is below ``v``), and Ville's
inequality gives ``P(K_n(v) >= 2 / alpha) <= alpha / 2``. ``K_n`` decreases in ``nu``, so the
lower bound is the root of ``log K_n(nu) = log(2 / alpha)`` (bisection). The upper bound applies
the same to ``psi_i = w_i (1 - r_i)``, whose conditional mean is ``1 - v`` (``sum_a pi_e = 1``).
Bets are the predictable plug-in of Waudby-Smith & Ramdas (2023, JRSS-B, eqs. 26-27) tuned for
the fixed ``n``: ``lambda_i = min(1/2, sqrt(2 log(2/alpha) / (n sigma_{i-1}^2)))``,
``sigma_t^2 = (1/4 + sum_{j <= t} (phi_j - mu_j)^2) / (t + 1)``, ``mu_t = (1/2 + sum_{j <= t}
phi_j) / (t + 1)``. The interval needs rewards in a known range (``reward_range``) and is built
from the IPS terms, so it is reported on the IPS row.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass

import jax
import jax.numpy as jnp

from bayesbandit._typing import Array, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int, check_scalar

__all__ = ["Bootstrap", "Betting", "bootstrap_counts", "percentile_interval", "betting_interval"]


@dataclass(frozen=True)
class Bootstrap:
    """Percentile bootstrap over rounds (module docstring).

    Parameters
    ----------
    num : int
        Resamples ``B``.
    level : float in (0, 1)
        Coverage level of the interval.
    refit : bool
        Refit the Laplace reward model on every resample.
    """

    _: KW_ONLY
    num: int = 1000
    level: float = 0.95
    refit: bool = False

    def __post_init__(self) -> None:
        check_int("Bootstrap", "num", self.num, low=2)
        check_scalar("Bootstrap", "level", self.level, low=0.0, high=1.0, low_open=True, high_open=True)


@dataclass(frozen=True)
class Betting:
    """The IPS betting interval, valid on adaptively collected logs (module docstring).

    Parameters
    ----------
    level : float in (0, 1)
    reward_range : (float, float)
        Known bounds ``lo < hi`` of every reward.
    """

    _: KW_ONLY
    level: float = 0.95
    reward_range: tuple[float, float] = (0.0, 1.0)

    def __post_init__(self) -> None:
        check_scalar("Betting", "level", self.level, low=0.0, high=1.0, low_open=True, high_open=True)
        lo, hi = (float(v) for v in self.reward_range)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidInput(
                f"The 'reward_range' parameter of Betting must be finite bounds (lo, hi) with lo < hi. "
                f"Got {self.reward_range!r}. Fix: pass the range every reward lies in, e.g. (0, 1)."
            )


def bootstrap_counts(key: PRNGKey, n: int, num: int) -> Array:
    """``num`` resamples' multiplicities, shape (num, n): counts of ``n`` uniform draws of ``0, ..., n-1``."""
    indices = jax.random.randint(key, (num, n), 0, n)
    return jax.vmap(lambda idx: jnp.zeros(n).at[idx].add(1.0))(indices)


def percentile_interval(values: Array, level: float) -> tuple[Array, Array]:
    """The ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of resampled values along axis 0."""
    tail = (1.0 - level) / 2
    return jnp.quantile(values, tail, axis=0), jnp.quantile(values, 1.0 - tail, axis=0)


def _bets(phi: Array, alpha: float) -> Array:
    """Predictable plug-in bets ``lambda_i`` for ``phi`` (module docstring), shape (n,)."""
    n = phi.shape[0]
    t = jnp.arange(1, n + 1, dtype=phi.dtype)
    mu = (0.5 + jnp.cumsum(phi)) / (t + 1)
    sigma2 = (0.25 + jnp.cumsum((phi - mu) ** 2)) / (t + 1)
    previous = jnp.concatenate([jnp.asarray([0.25], phi.dtype), sigma2[:-1]])
    return jnp.minimum(0.5, jnp.sqrt(2 * math.log(2 / alpha) / (n * previous)))


def _lower(phi: Array, alpha: float, steps: int = 60) -> Array:
    """The betting lower bound in [0, 1] of the conditional mean of ``phi >= 0``."""
    bets = _bets(phi, alpha)
    threshold = math.log(2 / alpha)

    def wealth(nu: Array) -> Array:
        return jnp.sum(jnp.log1p(bets * (phi - nu)))

    def step(bounds: tuple[Array, Array], _: None) -> tuple[tuple[Array, Array], None]:
        lo, hi = bounds
        mid = (lo + hi) / 2
        rejected = wealth(mid) >= threshold  # mid is below the bound
        return (jnp.where(rejected, mid, lo), jnp.where(rejected, hi, mid)), None

    (lower, _), _ = jax.lax.scan(step, (jnp.zeros((), phi.dtype), jnp.ones((), phi.dtype)), None, length=steps)
    return lower


def betting_interval(
    w: Array, reward: Array, *, level: float = 0.95, reward_range: tuple[float, float] = (0.0, 1.0)
) -> tuple[Array, Array]:
    """The betting interval ``(lower, upper)`` for the target's value from IPS weights and rewards (module docstring). Jittable."""
    lo, hi = reward_range
    scaled = jnp.clip((reward - lo) / (hi - lo), 0.0, 1.0)
    alpha = 1.0 - level
    lower = _lower(w * scaled, alpha)
    upper = 1.0 - _lower(w * (1.0 - scaled), alpha)
    return lo + (hi - lo) * lower, lo + (hi - lo) * upper
