"""Posterior approximations of a reward program on data: MAP, Laplace, perturbed-history MAP.

* :func:`map_estimate`: the MAP of the weighted potential by damped Newton
  (:func:`bayesbandit.inference.newton_minimize`), with the Hessian's factor at it;
* :func:`laplace`: the Gaussian ``N(MAP, H^{-1})`` that GLM-TSL samples from (Kveton et al.
  2020, eqs. 4-5);
* :func:`perturbed_map`: the MAP of a randomly perturbed prior and history, one GLM-FPL draw:
  the prior anchored at a prior draw (:func:`perturb_prior`) and rewards with fresh Gaussian
  noise of the reward's variance (:func:`perturb_rewards`, for weighted histories too), or the
  paper's constant noise (eq. 6); for a likelihood not affine in the reward, random bootstrap
  weights (:func:`perturb_weights`).

All need float64 (:mod:`bayesbandit.precision`) and compile once per (model, shapes).
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._gaussian_linear import solve_lower_transpose
from bayesbandit._linalg import cho_solve
from bayesbandit._typing import Array, ArrayLike, Model, PRNGKey
from bayesbandit.errors import InvalidInput, ModelSpecError
from bayesbandit.inference.newton import NewtonInfo, NewtonResult, newton_minimize
from bayesbandit.inference.potential import BoundModel, bound_for
from bayesbandit.precision import require_x64
from bayesbandit.validation import MAX_ABS, check_choice, check_key, support_hull

__all__ = [
    "map_estimate",
    "Laplace",
    "laplace",
    "perturb_prior",
    "perturb_rewards",
    "perturb_weights",
    "perturb_history",
    "PerturbedProblem",
    "resolve_perturbation",
    "PERTURBATIONS",
    "NOISES",
    "perturbed_map",
]


def map_estimate(
    model: Model | BoundModel,
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike | None = None,
    *,
    init: ArrayLike | None = None,
    max_steps: int = 50,
    tol: float = 1e-12,
) -> NewtonResult:
    """Maximum a posteriori estimate of a reward model's unconstrained parameters.

    Minimises the weighted potential ``U(theta; x, y, w)`` of :meth:`BoundModel.potential`
    (negative log joint: prior, Jacobians of constrained sites, weighted log-likelihood).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
    w : array, shape (n,), optional
        Row weights (counts); zero masks a row.
    init : array, shape (p,), optional
        Warm start; defaults to the prior median.
    max_steps, tol : see :func:`bayesbandit.inference.newton_minimize`.

    Returns
    -------
    NewtonResult
        ``theta`` (p,), ``chol`` of the Hessian at ``theta`` (p, p), and ``info``. Check
        ``info.converged``: a run that hits ``max_steps`` or meets a non-finite value says so.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import linear_gaussian
    >>> x = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = jnp.array([1.0, -1.0, 0.0])
    >>> fit = bb.map_estimate(linear_gaussian(), x, y)
    >>> bool(fit.info.converged), [round(float(v), 3) for v in fit.theta]
    (True, [0.5, -0.5])
    """
    require_x64("map_estimate")
    x, y, w = _data(model, x, y, w, "map_estimate", in_hull=True)
    bound = bound_for(model, tuple(x.shape[1:]))
    theta0 = bound.init_theta(x.dtype) if init is None else jnp.asarray(init, dtype=x.dtype)
    return _map_jit(bound, x, y, w, theta0, max_steps, jnp.asarray(tol, x.dtype))


def _data(
    model: Model | BoundModel, x_in: ArrayLike, y_in: ArrayLike, w_in: ArrayLike | None, who: str, *, in_hull: bool
) -> tuple[Array, Array, Array]:
    """``(x, y, w)`` as float64 arrays, checked when concrete (inside ``jit`` they are the caller's)."""
    x = jnp.asarray(x_in, dtype=jnp.float64)
    y = jnp.asarray(y_in, dtype=x.dtype)
    w = jnp.ones(y.shape, x.dtype) if w_in is None else jnp.asarray(w_in, dtype=x.dtype)
    if any(isinstance(a, jax.core.Tracer) for a in (x, y, w)):
        return x, y, w
    xn, yn, wn = np.asarray(x), np.asarray(y), np.asarray(w)  # concrete: checked on the host
    if xn.ndim < 2 or xn.shape[0] == 0:
        raise InvalidInput(
            f"The 'x' argument of {who} must have shape (n, d) with n >= 1. Got shape {xn.shape} instead."
        )
    for name, arr in (("y", yn), ("w", wn)):
        if arr.shape != xn.shape[:1]:
            raise InvalidInput(
                f"The '{name}' argument of {who} must have shape {xn.shape[:1]}. Got shape {arr.shape} instead."
            )
    for name, arr in (("x", xn), ("y", yn), ("w", wn)):
        if not np.isfinite(arr).all() or np.abs(arr).max() > MAX_ABS:
            raise InvalidInput(
                f"The '{name}' argument of {who} must be finite with magnitudes <= {MAX_ABS:g}. Fix: clean or rescale it."
            )
    if (wn < 0).any():
        raise InvalidInput(f"The 'w' argument of {who} must be non-negative (counts). Got minimum {wn.min()}.")
    if in_hull:
        lo, hi = support_hull(bound_for(model, tuple(xn.shape[1:])).support)
        used = yn[wn > 0]
        if ((used < lo) | (used > hi)).any():
            raise InvalidInput(
                f"The 'y' argument of {who} has rewards outside [{lo:g}, {hi:g}], the range of the model's reward. "
                "Fix: pass rewards the model can produce."
            )
    return x, y, w


@partial(jax.jit, static_argnums=(0, 5))
def _map_jit(
    bound: BoundModel,
    x: Array,
    y: Array,
    w: Array,
    theta0: Array,
    max_steps: int,
    tol: Array,
    prior_shift: Array | None = None,
) -> NewtonResult:
    """Compiled once per (model, shapes, max_steps): eager callers do not retrace Newton's loop.

    Derivatives through the linear predictor when the program has one (the GLM fast path)."""
    return newton_minimize(
        lambda t: bound.potential(t, x, y, w, prior_shift=prior_shift),
        theta0,
        max_steps=max_steps,
        tol=tol,
        derivatives=bound.potential_derivatives(x, y, w, prior_shift=prior_shift),
    )


class Laplace(NamedTuple):
    """Gaussian ``N(mean, (L L^T)^{-1})`` over the unconstrained parameters.

    ``L`` is the lower Cholesky factor of the precision ``H = nabla^2 U(mean)``; sampling uses a
    triangular solve, ``theta = mean + a L^{-T} xi`` with ``xi ~ N(0, I)``, never an inverse.
    """

    mean: Array  # (p,)
    chol: Array  # (p, p) lower Cholesky factor of the precision
    info: NewtonInfo

    def sample(self, key: PRNGKey, sample_shape: tuple[int, ...] = (), *, a: ArrayLike = 1.0) -> Array:
        """Draw ``theta ~ N(mean, a^2 H^{-1})``; returns shape ``sample_shape + (p,)``."""
        xi = jax.random.normal(key, (*sample_shape, self.mean.shape[0]), dtype=self.mean.dtype)
        offsets = solve_lower_transpose(self.chol, xi.reshape(-1, self.mean.shape[0]).T).T
        return self.mean + a * offsets.reshape(xi.shape)

    def covariance(self) -> Array:
        """The covariance ``H^{-1}``, shape ``(p, p)`` (for inspection; sampling never forms it)."""
        return cho_solve(self.chol, jnp.eye(self.mean.shape[0], dtype=self.mean.dtype))


def laplace(
    model: Model | BoundModel,
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike | None = None,
    *,
    init: ArrayLike | None = None,
    max_steps: int = 50,
    tol: float = 1e-12,
) -> Laplace:
    """Laplace approximation of a reward model's posterior (in unconstrained space).

    .. math::

        p(\\theta \\mid D) \\approx N(\\bar\\theta, H^{-1}), \\quad
        \\bar\\theta = \\arg\\min U(\\theta), \\quad H = \\nabla^2 U(\\bar\\theta),

    which is what GLM-TSL samples from (Kveton et al. 2020, eqs. 4-5, with ``a = 1``).

    Parameters
    ----------
    model : NumPyro program or BoundModel
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
    w : array, shape (n,), optional
    init, max_steps, tol : see :func:`bayesbandit.map_estimate`.

    Returns
    -------
    Laplace

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> x = jax.random.normal(jax.random.PRNGKey(0), (50, 2))
    >>> post = bb.laplace(logistic(), x, (x[:, 0] > 0).astype(float))
    >>> post.sample(jax.random.PRNGKey(1), (4,)).shape
    (4, 2)
    """
    fit = map_estimate(model, x, y, w, init=init, max_steps=max_steps, tol=tol)
    return Laplace(fit.theta, fit.chol, fit.info)


def perturb_rewards(key: PRNGKey, y: Array, w: Array, a: ArrayLike) -> Array:
    """Add fresh Gaussian noise to a weighted history.

    A row of weight ``w`` and reward ``y`` stands for ``w`` observations whose mean is ``y``.
    Adding ``N(0, a^2)`` to each of them shifts their mean by ``N(0, a^2 / w)``, so

    .. math::  \\tilde y = y + a\\, \\xi / \\sqrt{w}, \\qquad \\xi \\sim N(0, 1),

    which for per-arm sufficient statistics (``w = n_i``, ``y`` the mean reward of arm ``i``)
    is the paper's ``Y_i + N(0, n_i a^2)`` on the reward sum. Rows of weight zero are untouched.

    Parameters
    ----------
    key : PRNGKey
    y : array, shape (n,)
    w : array, shape (n,)
    a : float or array of shape (n,)
        Perturbation scale of one observation (per row when an array).
    """
    xi = jax.random.normal(key, y.shape, dtype=y.dtype)
    return jnp.where(w > 0, y + a * xi / jnp.sqrt(jnp.where(w > 0, w, 1.0)), y)


def perturb_weights(key: PRNGKey, w: Array, s: ArrayLike) -> Array:
    """Random bootstrap weights for a weighted history (the weighted likelihood bootstrap).

    Each observation is weighted by an independent draw of mean 1 and standard deviation ``s``
    from a Gamma distribution; a row of weight ``w`` stands for ``w`` observations, whose
    weights sum to

    .. math::  \\tilde w \\sim \\mathrm{Gamma}(\\text{shape} = w / s^2, \\text{scale} = s^2),

    of mean ``w`` and variance ``w s^2``. ``s = 1`` weights every observation by an ``Exp(1)``
    draw: Rubin's (1981) Bayesian bootstrap, Newton and Raftery's (1994) weighted likelihood
    bootstrap, whose weighted MAPs are approximately posterior draws. ``s = 0`` leaves ``w``
    unchanged (follow-the-leader); rows of weight zero stay zero.

    Parameters
    ----------
    key : PRNGKey
    w : array, shape (n,)
    s : float
        Standard deviation of one observation's weight.
    """
    s2 = jnp.asarray(s, w.dtype) ** 2
    random = s2 > 0
    shape = jnp.where((w > 0) & random, w / jnp.where(random, s2, 1.0), 1.0)
    draw = jax.random.gamma(key, shape, dtype=w.dtype) * s2
    return jnp.where(w > 0, jnp.where(random, draw, w), 0.0)


def perturb_prior(key: PRNGKey, bound: BoundModel, *, a: ArrayLike = 1.0, dtype: Any = None) -> Array:
    """The translation ``delta = a (theta_0 - m)`` that anchors the prior at a scaled prior draw.

    ``theta_0`` is a draw of the unconstrained parameters from the program's prior
    (:meth:`~bayesbandit.inference.BoundModel.sample_prior`) and ``m`` the prior median
    (:meth:`~bayesbandit.inference.BoundModel.init_theta`). The perturbed prior term is
    ``P(theta - delta)`` (``prior_shift`` of :meth:`~bayesbandit.inference.BoundModel.potential`):
    for a Gaussian prior ``N(m, S)`` and ``a = 1`` it is ``N(theta_0, S)``, the randomised prior
    of Osband et al. (2018), whose MAP with no data is a prior draw; for any prior, a parameter no
    observation reaches keeps the spread of the prior's draws.
    """
    dtype = dtype or jnp.result_type(float)
    return jnp.asarray(a, dtype) * (bound.sample_prior(key, dtype) - bound.init_theta(dtype))


PERTURBATIONS = ("auto", "rewards", "weights")
"""The values of ``perturbation``: perturb the rewards, the observations' weights, or choose by the program (``"auto"``)."""

NOISES = ("posterior", "paper")
"""The values of GLM-FPL's ``noise``: perturbations scaled to the posterior (prior anchored at a draw,
reward noise of the reward's variance), or Kveton et al.'s eq. 6 (constant reward noise, fixed prior)."""


def resolve_perturbation(bound: BoundModel, perturbation: str, owner: str) -> str:
    """``"rewards"`` or ``"weights"``: what a perturbed-history estimate perturbs for this program.

    ``"auto"`` perturbs the rewards when the observed log-probability is affine in the reward
    and its natural parameter linear in ``theta`` (a canonical-link GLM: logistic, Poisson,
    Gaussian with a known scale), Kveton et al.'s GLM-FPL: the potential is exact for any real
    perturbed reward (module docstring of :mod:`bayesbandit.inference.potential`) and convex.
    Otherwise it perturbs the weights (:func:`perturb_weights`). A non-canonical link leaves the
    perturbed potential without a minimum: with a Bernoulli reward ``y = 1.7`` and the cloglog link
    the log-likelihood ``1.7 log p - 0.7 log(1 - p)`` grows like ``0.7 e^eta``, faster than a
    Gaussian prior's ``-eta^2 / 2`` falls (GLM-FPL with perturbed rewards converged in 55% of rounds
    on ``bayesbandit.models.likelihoods.bernoulli_cloglog``).

    Raises
    ------
    ModelSpecError
        ``"rewards"`` asked of a program whose log-probability is not affine in the reward:
        perturbed rewards would leave its support or be scored by another likelihood.
    """
    if perturbation == "auto":
        return "rewards" if bound.is_affine and bound.linear_predictor is not None else "weights"
    if perturbation == "rewards" and not bound.is_affine:
        raise ModelSpecError(
            f"{owner} cannot perturb the rewards of observed site '{bound.obs_site}' ({bound.support_name}): its "
            "log-probability is not affine in the reward, so a reward plus Gaussian noise leaves the support or "
            "changes the likelihood itself, and the perturbed fits stop exploring. Fix: perturbation='weights' "
            "(random bootstrap weights on the history; perturbation='auto' chooses it for this program)."
        )
    return perturbation


class PerturbedProblem(NamedTuple):
    """What a perturbed-history MAP minimises: ``U(theta; x, y, w)`` with the prior translated by ``prior_shift``."""

    y: Array  # (n,) rewards, perturbed or not
    w: Array  # (n,) weights, perturbed or not
    prior_shift: Array | None  # (p,) the prior's translation; None: the prior as written


def perturb_history(
    key: PRNGKey,
    bound: BoundModel,
    x: Array,
    y: Array,
    w: Array,
    center: Array,
    *,
    perturbation: str,
    noise: str,
    a: ArrayLike,
    weight_sd: ArrayLike,
) -> PerturbedProblem:
    """The perturbed problem of GLM-FPL (:class:`bayesbandit.GLMFPL` derives it); ``perturbation`` is resolved.

    * ``noise="posterior"``: the prior translated by :func:`perturb_prior` (scale ``a``), and either
      the rewards perturbed by ``N(0, a^2 Var[Y | x_l, center])`` per observation
      (:meth:`~bayesbandit.inference.BoundModel.reward_variance` at ``center``, the current fit;
      :func:`perturb_rewards`) or the weights by :func:`perturb_weights` (``weight_sd``).
    * ``noise="paper"``: Kveton et al.'s eq. 6, rewards plus ``N(0, a^2)`` (or the weights as
      above) under the prior as written; ``key`` is used as it is.
    """
    shift = None
    if noise == "posterior":
        key_prior, key = jax.random.split(key)
        shift = perturb_prior(key_prior, bound, a=a, dtype=x.dtype)
    if perturbation == "weights":
        return PerturbedProblem(y, perturb_weights(key, w, weight_sd), shift)
    scale = a if noise == "paper" else a * jnp.sqrt(bound.reward_variance(center, x))
    return PerturbedProblem(perturb_rewards(key, y, w, scale), w, shift)


def perturbed_map(
    key: PRNGKey,
    model: Model | BoundModel,
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike | None = None,
    *,
    a: ArrayLike = 1.0,
    noise: str = "posterior",
    perturbation: str = "auto",
    weight_sd: ArrayLike = 1.0,
    init: ArrayLike | None = None,
    max_steps: int = 50,
    tol: float = 1e-12,
) -> NewtonResult:
    """MAP estimate of a randomly perturbed history and prior: one GLM-FPL draw.

    .. math::

        \\tilde\\theta = \\arg\\min_\\theta\\; P(\\theta - \\delta)
            - \\sum_\\ell \\tilde w_\\ell \\log p(\\tilde y_\\ell \\mid x_\\ell, \\theta),

    with the perturbations of :func:`perturb_history` (:class:`bayesbandit.GLMFPL` derives why
    they make ``tilde theta`` an approximate posterior draw): with ``noise="posterior"``, the prior
    anchored at a scaled prior draw (``delta``, :func:`perturb_prior`) and rewards plus
    ``N(0, a^2 Var[Y | x_l, theta_c])`` noise; with ``noise="paper"``, Kveton et al.'s eq. 6,
    ``delta = 0`` and rewards plus ``N(0, a^2)``. Perturbed rewards are real numbers outside the
    likelihood's support and are not clipped: the potential stays exact there for a likelihood
    affine in the reward (:mod:`bayesbandit.inference.potential`). For any other likelihood the
    weights are perturbed instead (:func:`perturb_weights`, standard deviation ``weight_sd`` per
    observation) and the rewards stay in the support; ``perturbation`` chooses
    (:func:`resolve_perturbation`).

    Parameters
    ----------
    key : PRNGKey
        Fresh for each call; the same key gives the same perturbation.
    model : NumPyro program or BoundModel
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
    w : array, shape (n,), optional
    a : float
        Perturbation scale: relative to the posterior's with ``noise="posterior"`` (``a = 1``),
        the reward noise's standard deviation with ``noise="paper"``; ``a = 0`` is
        follow-the-leader.
    noise : {"posterior", "paper"}
    perturbation : {"auto", "rewards", "weights"}
    weight_sd : float
        Standard deviation of one observation's bootstrap weight (``1``: the Bayesian bootstrap).
    init : array, shape (p,), optional
        The warm start, and ``theta_c``, where the reward variance is taken; default: the MAP of
        the unperturbed history.
    max_steps, tol : see :func:`bayesbandit.map_estimate`.

    Returns
    -------
    NewtonResult
    """
    check_key("perturbed_map", key)  # first, as in JAX: perturbed_map(key, model, x, y, w, a=...)
    check_choice("perturbed_map", "perturbation", perturbation, PERTURBATIONS)
    check_choice("perturbed_map", "noise", noise, NOISES)
    require_x64("perturbed_map")
    x, y, w = _data(model, x, y, w, "perturbed_map", in_hull=True)
    bound = bound_for(model, tuple(x.shape[1:]))
    tol_ = jnp.asarray(tol, x.dtype)
    if init is None:
        theta0 = _map_jit(bound, x, y, w, bound.init_theta(x.dtype), max_steps, tol_).theta
    else:
        theta0 = jnp.asarray(init, dtype=x.dtype)
    kind = resolve_perturbation(bound, perturbation, "perturbed_map")
    problem = perturb_history(key, bound, x, y, w, theta0, perturbation=kind, noise=noise, a=a, weight_sd=weight_sd)
    return _map_jit(bound, x, problem.y, problem.w, theta0, max_steps, tol_, problem.prior_shift)
