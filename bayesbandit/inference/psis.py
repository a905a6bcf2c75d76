r"""Is the Laplace approximation good? Pareto-smoothed importance sampling against the exact posterior.

GLM-TSL samples the Laplace approximation ``q = N(theta_hat, H^{-1})`` of a reward program's
posterior (:func:`bayesbandit.laplace`). Whether that Gaussian is close to the posterior it stands
for is checked without MCMC by importance sampling with ``q`` as the proposal and the program's exact
unnormalised posterior ``exp(-U(theta))`` as the target (Yao, Vehtari, Simpson and Gelman 2018, "Yes,
but did it work?: Evaluating variational inference", Section 3; Vehtari, Simpson, Gelman, Yao and
Gabry 2024, "Pareto smoothed importance sampling"):

.. math::

    \theta_s = \hat\theta + L^{-T} \xi_s, \quad \xi_s \sim N(0, I), \qquad
    \log r_s = -U(\theta_s) - \log q(\theta_s), \qquad
    \log q(\theta_s) = -\tfrac{p}{2} \log 2\pi + \sum_j \log L_{jj} - \tfrac12 \lVert \xi_s \rVert^2,

with ``H = L L^T`` the Hessian of the potential ``U`` at ``theta_hat``
(:meth:`~bayesbandit.inference.BoundModel.potential`, in unconstrained space; the posterior's
normalising constant is unknown and cancels once the weights are normalised). The generalized
Pareto distribution fitted to the ``M = min(S / 5, 3 sqrt(S))`` largest ratios has shape ``k``:
the ratios have finite moments of order below ``1 / k`` (Yao et al. 2018, eq. 4). Its estimate
``k_hat`` grades the approximation:

* ``k_hat < 0.5``: the ratios have a finite variance; ``q`` is close to the posterior and its draws
  can be used as they are;
* ``0.5 <= k_hat <= 0.7``: the variance is infinite but the Pareto-smoothed weights still give
  reliable estimates: ``q`` is usable but imperfect, and draws resampled in proportion to the
  smoothed weights (:func:`resampled_draws`) are closer to the posterior than ``q``'s own;
* ``k_hat > 0.7``: importance sampling is unreliable and ``q`` is far from the posterior (a skewed,
  heavy-tailed or funnel-shaped posterior, or a fit that did not reach the mode).

With ``S`` draws the estimate is trustworthy up to ``min(1 - 1 / log10(S), 0.7)`` (Vehtari et al.
2024, Section 3.2.4): ``S = 4000`` (the default) is the smallest round number at which that bound
is the 0.7 of the table, not ``0.697`` (``S = 2000``).

:func:`laplace_psis` draws and evaluates the potentials in one compiled, vectorised JAX call
(compiled once per program, number of draws and data shape) and fits the Pareto tail on the host
with ArviZ (:func:`arviz.psislw`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import TRACE_LOCK
from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._typing import Array, ArrayLike, Model, PRNGKey
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.posteriors import _data
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.precision import require_x64
from bayesbandit.validation import check_int, check_key

__all__ = ["LaplacePSIS", "laplace_psis", "resampled_draws", "K_HAT_GOOD", "K_HAT_POOR", "DEFAULT_DRAWS"]

K_HAT_GOOD = 0.5
"""Below this Pareto ``k_hat`` the Laplace approximation is close to the posterior (Yao et al. 2018)."""

K_HAT_POOR = 0.7
"""Above this Pareto ``k_hat`` the Laplace approximation is poor and importance sampling unreliable."""

DEFAULT_DRAWS = 4000
"""Draws of :func:`laplace_psis` by default (module docstring: where the 0.7 threshold holds)."""

_ROWS_PER_BATCH = 2**22  # draws x rows evaluated at once by the potentials' map (memory, not speed)


class LaplacePSIS(NamedTuple):
    """What :func:`laplace_psis` returns: the grade of the Laplace approximation and its reweighted draws.

    Attributes
    ----------
    k_hat : float
        The Pareto shape estimate (module docstring: ``< 0.5`` good, ``0.5 .. 0.7`` usable,
        ``> 0.7`` poor); ``-inf`` when every ratio is equal to rounding (the Laplace approximation
        is the posterior, as for a Gaussian-linear program), ``inf`` when no ratio is finite.
    ess : float
        Effective sample size of the smoothed weights, ``1 / sum_s w_s^2`` (``S`` for equal weights).
    log_weights : ndarray, shape (S,)
        The Pareto-smoothed, normalised log weights (``logsumexp = 0``).
    draws : ndarray, shape (S, p)
        The Laplace draws, unconstrained (:meth:`~bayesbandit.inference.BoundModel.constrain` maps one).
    """

    k_hat: float
    ess: float
    log_weights: np.ndarray
    draws: np.ndarray


def laplace_psis(
    key: PRNGKey,
    model: Model | BoundModel,
    rows: tuple[ArrayLike, ArrayLike, ArrayLike],
    fit: Any,
    *,
    num_draws: int = DEFAULT_DRAWS,
) -> LaplacePSIS:
    """Pareto-smoothed importance sampling of the Laplace approximation against the exact posterior.

    The proposal is ``q = N(theta_hat, (L L^T)^{-1})``, the target ``exp(-U(theta; x, y, w))``
    on the weighted rows; the log ratios, the Pareto fit and the thresholds are in the module
    docstring (Yao et al. 2018, Section 3, eq. 4). Safe to call beside serving agents: the program
    is traced under :data:`bayesbandit.runtime.trace_lock`, compiled and run outside it.

    Parameters
    ----------
    key : PRNGKey
        Key of the Laplace draws.
    model : NumPyro program or BoundModel
        The reward program (bound to the rows' feature shape).
    rows : tuple (x, y, w)
        The weighted rows the posterior is built from: ``x`` of shape ``(n, *feature_shape)``,
        ``y`` and ``w`` of shape ``(n,)`` (weight 0 masks a row), as
        :meth:`bayesbandit.policies.glm.GLMPolicy.posterior_rows` returns them.
    fit : NewtonFit or Laplace
        The mode and the lower Cholesky factor of the Hessian there: a GLM policy state's ``fit``
        (:class:`~bayesbandit.inference.NewtonFit`), or :func:`bayesbandit.laplace`'s result.
    num_draws : int, >= 100
        Draws ``S`` (default 4000: module docstring). Cost ``O(S n p)``: 40-120 ms for
        ``p = 10``, ``n = 500`` on a shared 2-core machine (the first call also compiles, 1-4 s).

    Returns
    -------
    LaplacePSIS
        ``k_hat``, ``ess``, the smoothed ``log_weights`` and the ``draws``.

    Raises
    ------
    InvalidInput
        Malformed rows, a ``fit`` that is not a finite mode with a lower Cholesky factor of the
        program's size, a bad key or ``num_draws``.
    PrecisionError
        JAX's 64-bit mode is off.

    Examples
    --------
    >>> import jax, numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> x = np.random.default_rng(0).normal(size=(200, 3))
    >>> y = (x @ np.array([1.0, -1.0, 0.5]) > 0).astype(float)
    >>> fit = bb.laplace(logistic(), x, y)
    >>> check = bb.inference.laplace_psis(jax.random.PRNGKey(0), logistic(), (x, y, np.ones(200)), fit)
    >>> bool(check.k_hat < 0.7), check.draws.shape
    (True, (4000, 3))
    """
    require_x64("laplace_psis")
    check_key("laplace_psis", key)
    num_draws = check_int("laplace_psis", "num_draws", num_draws, low=100)
    if not isinstance(rows, tuple | list) or len(rows) != 3:
        raise InvalidInput(
            f"The 'rows' argument of laplace_psis must be a tuple (x, y, w). Got {type(rows).__name__} instead. "
            "Fix: pass (x, y, np.ones(n)) for unweighted rows, or a policy's posterior_rows(state)."
        )
    x, y, w = _data(model, *rows, "laplace_psis", in_hull=True)
    bound = bound_for(model, tuple(x.shape[1:]))
    mean, chol = _mode_and_factor(fit, bound.num_params)
    batch = max(1, min(num_draws, _ROWS_PER_BATCH // x.shape[0]))
    draws, log_ratios = _run_compiled(_draws_and_log_ratios, (bound, num_draws, batch), key, mean, chol, x, y, w)
    return _smoothed(np.asarray(draws), np.asarray(log_ratios))


def resampled_draws(key: PRNGKey, result: LaplacePSIS, n: int) -> Array:
    """``n`` draws of the Laplace proposal resampled in proportion to their smoothed importance weights.

    Sampling-importance-resampling (Rubin 1988) with the Pareto-smoothed weights ``w_s`` of
    :func:`laplace_psis`: ``theta^(i) = theta_{J_i}``, ``P(J_i = s) = w_s``, independently. As
    ``S`` grows their law tends to the posterior wherever ``k_hat <= 0.7`` (Vehtari et al. 2024,
    Section 3); where ``0.5 < k_hat <= 0.7`` they correct the skew and tails the Gaussian misses.
    The draws repeat (at most about ``result.ess`` distinct ones carry the weight): keep ``n``
    below ``ess``. With ``k_hat > 0.7`` they inherit the unreliable weights: use NUTS
    (:func:`bayesbandit.diagnostics.compare`).

    Parameters
    ----------
    key : PRNGKey
    result : LaplacePSIS
        What :func:`laplace_psis` returned.
    n : int, >= 1
        Draws wanted.

    Returns
    -------
    array, shape (n, p)
        Unconstrained parameter draws.

    Raises
    ------
    InvalidInput
        ``result`` is not a :class:`LaplacePSIS` with finite normalisable weights, or a bad key or ``n``.

    Examples
    --------
    >>> import jax, numpy as np
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bb.runtime.enable_x64()
    >>> x, y = np.ones((3, 1)), np.ones(3)  # three successes: a right-skewed posterior of the log-odds
    >>> fit = bb.laplace(logistic(prior_scale=3.0), x, y)
    >>> check = bb.inference.laplace_psis(jax.random.PRNGKey(0), logistic(prior_scale=3.0), (x, y, np.ones(3)), fit)
    >>> bb.inference.resampled_draws(jax.random.PRNGKey(1), check, 500).shape
    (500, 1)
    """
    check_key("resampled_draws", key)
    n = check_int("resampled_draws", "n", n, low=1)
    if not isinstance(result, LaplacePSIS):
        raise InvalidInput(
            f"The 'result' argument of resampled_draws must be a LaplacePSIS. Got {type(result).__name__} instead. "
            "Fix: pass what bayesbandit.inference.laplace_psis returned."
        )
    weights = np.exp(np.asarray(result.log_weights, np.float64))
    total = weights.sum()
    if not (np.isfinite(total) and total > 0):
        raise InvalidInput(
            f"resampled_draws: the weights of 'result' do not normalise (their sum is {total!r}): the potential was "
            "not finite at any Laplace draw. Fix: check the program and its fit; compare it with NUTS "
            "(bayesbandit.diagnostics.compare)."
        )
    index = jax.random.choice(key, weights.shape[0], (n,), replace=True, p=jnp.asarray(weights / total))
    return jnp.asarray(result.draws)[index]


def _mode_and_factor(fit: Any, p: int) -> tuple[Array, Array]:
    """``(theta_hat, L)`` of a NewtonFit or a Laplace, checked: finite, shapes ``(p,)`` and ``(p, p)``,
    ``L`` lower triangular with a positive diagonal."""
    mode = getattr(fit, "mean", getattr(fit, "theta", None))
    chol = getattr(fit, "chol", None)
    ok = mode is not None and chol is not None
    if ok:
        mode, chol = np.asarray(mode, np.float64), np.asarray(chol, np.float64)
        ok = mode.shape == (p,) and chol.shape == (p, p) and np.isfinite(mode).all() and np.isfinite(chol).all()
        ok = ok and bool(np.all(np.diag(chol) > 0)) and np.allclose(chol, np.tril(chol))
    if not ok:
        raise InvalidInput(
            f"The 'fit' argument of laplace_psis must hold a finite mode of shape ({p},) and the lower Cholesky factor "
            f"of the Hessian there, shape ({p}, {p}), with a positive diagonal. Got {type(fit).__name__} instead. "
            "Fix: pass a GLM policy state's fit (NewtonFit, solver DenseNewton) or bayesbandit.laplace(...)."
        )
    return jnp.asarray(mode), jnp.asarray(chol)


def laplace_log_ratios(
    bound: BoundModel,
    key: PRNGKey,
    mean: Array,
    chol: Array,
    rows: tuple[Array, Array, Array],
    *,
    num_draws: int,
    scale: ArrayLike = 1.0,
    batch: int | None = None,
) -> tuple[Array, Array]:
    """Draws of ``q = N(mean, scale^2 (L L^T)^{-1})`` and their log ratios ``-U(theta_s) - log q(theta_s)`` (jittable).

    ``theta_s = mean + scale L^{-T} xi_s`` and ``log q(theta_s) = -p/2 log 2 pi - p log scale +
    sum_j log L_jj - ||xi_s||^2 / 2`` (module docstring with ``scale = 1``); the potentials are
    evaluated ``batch`` draws at a time (all at once by default). Returns shapes ``(S, p)`` and ``(S,)``.
    """
    x, y, w = rows
    xi = jax.random.normal(key, (num_draws, mean.shape[0]), dtype=mean.dtype)
    scale = jnp.asarray(scale, mean.dtype)
    draws = mean + scale * solve_lower_transpose(chol, xi.T).T
    p = mean.shape[0]
    log_q = (
        -0.5 * p * math.log(2.0 * math.pi)
        - p * jnp.log(scale)
        + jnp.sum(jnp.log(jnp.diag(chol)))
        - 0.5 * jnp.sum(xi**2, axis=1)
    )
    potentials = jax.lax.map(lambda theta: bound.potential(theta, x, y, w), draws, batch_size=batch)
    return draws, -potentials - log_q


def _draws_and_log_ratios(
    bound: BoundModel, num_draws: int, batch: int, key: PRNGKey, mean: Array, chol: Array, x: Array, y: Array, w: Array
) -> tuple[Array, Array]:
    """:func:`laplace_log_ratios` with ``scale = 1``, its static arguments first (for :func:`_run_compiled`)."""
    return laplace_log_ratios(bound, key, mean, chol, (x, y, w), num_draws=num_draws, batch=batch)


def _smoothed(draws: np.ndarray, log_ratios: np.ndarray) -> LaplacePSIS:
    """The Pareto-smoothed weights of the log ratios (ArviZ), their ``k_hat`` and ESS (module docstring)."""
    num_draws = log_ratios.shape[0]
    log_ratios = np.where(np.isfinite(log_ratios), log_ratios, -np.inf)  # a non-finite potential weighs nothing
    top = log_ratios.max()
    if not np.isfinite(top):
        return LaplacePSIS(math.inf, 0.0, log_ratios, draws)
    finite = log_ratios[np.isfinite(log_ratios)]
    if finite.size == num_draws and top - finite.min() <= 1e-9 * max(1.0, abs(top)):
        return LaplacePSIS(-math.inf, float(num_draws), np.full(num_draws, -math.log(num_draws)), draws)
    log_weights, k_hat = _arviz().psislw(log_ratios.copy(), reff=1.0)
    return LaplacePSIS(float(k_hat), float(1.0 / np.sum(np.exp(2.0 * log_weights))), log_weights, draws)


def _arviz() -> Any:
    """ArviZ, imported at first use (importing bayesbandit loads none of it) without its refactor notice."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning)
        import arviz

    return arviz


@functools.lru_cache(maxsize=64)
def _executable(function: Callable[..., Any], static: tuple, treedef: Any, specs: tuple) -> Any:
    """``function`` with its leading ``static`` arguments, compiled for arguments of ``specs`` (shapes, dtypes)."""
    args = jax.tree.unflatten(treedef, [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs])
    with TRACE_LOCK:  # NumPyro's handlers are process-global: one trace at a time (bayesbandit.runtime.trace_lock)
        lowered = jax.jit(functools.partial(function, *static)).lower(*args)
    return lowered.compile()


def _run_compiled(function: Callable[..., Any], static: tuple[Hashable, ...], *args: Any) -> Any:
    """``function(*static, *args)``, compiled once per (function, ``static``, argument shapes and dtypes): traced
    under the trace lock, compiled and run outside it, so a thread beside serving agents may call it."""
    leaves, treedef = jax.tree.flatten(args)
    leaves = [jnp.asarray(leaf) for leaf in leaves]
    specs = tuple((leaf.shape, leaf.dtype) for leaf in leaves)
    return _executable(function, static, treedef, specs)(*jax.tree.unflatten(treedef, leaves))
