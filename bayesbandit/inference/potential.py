"""The potential of a reward program: :func:`bind` and the pure functions of :class:`BoundModel`.

A reward program (the contract is in :mod:`bayesbandit.inference.structure`) is traced once per
feature shape; :func:`bind` turns it into a :class:`BoundModel`: latent sites are flattened into one
unconstrained vector ``theta`` (via :func:`jax.flatten_util.ravel_pytree` and
``numpyro.distributions.biject_to``), and the weighted negative log joint is

.. math::

    U(\\theta; x, y, w) = -\\log p(z(\\theta)) - \\log|J(\\theta)|
                          - \\sum_{i: w_i > 0} w_i \\log p(y_i \\mid x_i, z(\\theta)),

where row weights apply to the observed site only (never to the Jacobian factors of
constrained latents, nor to user factors). A weight ``w_i`` counts row ``i`` as ``w_i`` identical
observations; ``w_i = 0`` masks the row (it is masked, not scaled, so a saturated likelihood
cannot produce ``0 * inf``).

Affine likelihoods
------------------
When ``log p(y | eta) = A(eta) y + B(eta) + C(y)`` (Bernoulli, Binomial, Poisson, Gaussian with
known scale, exponential...), the parameter-dependent part is affine in ``y``. The binding
detects this numerically and then evaluates the observed log-probability by interpolation
between two support points ``y0 < y1``:

.. math::

    \\ell(y) = \\ell(y_0) + (y - y_0) \\frac{\\ell(y_1) - \\ell(y_0)}{y_1 - y_0},

which has exactly the gradient and Hessian in ``theta`` of the true log-likelihood, is defined
for any real ``y`` (averaged rewards of compressed histories, FPL's perturbed rewards), and never
feeds an out-of-support value to a distribution. The slope ``(l1 - l0)/(y1 - y0) = A(eta)`` is
the distribution's natural parameter.
"""

from __future__ import annotations

import functools
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from jax.flatten_util import ravel_pytree
from numpyro import handlers
from numpyro.distributions import biject_to

from bayesbandit._typing import Array, ArrayLike, Model, PRNGKey
from bayesbandit.errors import ModelSpecError
from bayesbandit.inference.linear_predictor import (
    Derivatives,
    LinearPredictor,
    detect_linear_predictor,
    fast_derivatives,
    generic_derivatives,
)
from bayesbandit.inference.program import ProgramRun, deterministic_value, expected_reward, log_prob, run_program
from bayesbandit.inference.structure import ProgramStructure, inspect_program

__all__ = ["BoundModel", "bind", "bound_for"]


@dataclass(frozen=True)
class BoundModel:
    """A NumPyro reward program bound to a feature shape: pure functions of a flat ``theta``.

    Build it with :func:`bind`. It is hashable (by program, feature shape and observed-site
    name), so it can be a static field of a jitted policy, and it pickles by re-binding.

    Attributes
    ----------
    model : callable
        The NumPyro program ``model(x, y=None)``.
    feature_shape : tuple of int
        Shape of one row of ``x`` (``(d,)`` for feature vectors).
    obs_site : str
        Name of the observed site.
    """

    model: Model
    feature_shape: tuple[int, ...]
    _: KW_ONLY
    obs_site: str = "y"
    _structure: ProgramStructure = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self._structure is None:
            # Binding may first happen inside a jitted function: inspect with concrete values, outside
            # that trace (the inspection's own compiled programs then trace with no constant folding).
            with jax.core.eval_context():
                structure = inspect_program(self.model, self.feature_shape, self.obs_site)
            object.__setattr__(self, "_structure", structure)

    def __reduce__(self):
        return (BoundModel, (self.model, self.feature_shape, self.obs_site))

    # ----------------------------------------------------------------------------- structure
    @property
    def num_params(self) -> int:
        """Length ``p`` of the flat unconstrained parameter vector."""
        return int(self._structure.init_theta.shape[0])

    @property
    def site_names(self) -> tuple[str, ...]:
        """Names of the latent sites, in the order they are flattened."""
        return tuple(s.name for s in self._structure.latents)

    @property
    def site_shapes(self) -> dict[str, tuple[int, ...]]:
        """Shape of each latent site's (constrained) value."""
        return {s.name: s.shape for s in self._structure.latents}

    @property
    def is_affine(self) -> bool:
        """Whether the observed log-probability is affine in ``y`` up to parameter-free terms.

        Exactly then per-arm sufficient statistics (counts and reward means) give the same
        gradient and Hessian as the full history.
        """
        return self._structure.is_affine

    @functools.cached_property
    def linear_predictor(self) -> LinearPredictor | None:
        """The GLM fast path's structure when the program has it, else ``None``.

        Detected numerically on first use (:mod:`bayesbandit.inference.linear_predictor`):
        the likelihood depends on the parameters only through a natural parameter affine in them.
        """
        return detect_linear_predictor(self)

    @property
    def support(self) -> Any:
        """The observed site's support (a ``numpyro.distributions.constraints`` object)."""
        return self._structure.support

    @property
    def support_name(self) -> str:
        """Human-readable name of the observed distribution and its support, for messages."""
        return self._structure.support_name

    @property
    def reference_rewards(self) -> tuple[float, float]:
        """Two support points ``(y0, y1)`` used by the affine interpolation."""
        return self._structure.y_ref

    def site_slices(self) -> dict[str, slice]:
        """Each latent site's block of the flat unconstrained ``theta``, in flattening order."""
        stops = np.cumsum([s.size for s in self._structure.latents])
        return {
            s.name: slice(int(stop - s.size), int(stop)) for s, stop in zip(self._structure.latents, stops, strict=True)
        }

    def constrained_mask(self) -> np.ndarray:
        """Which coordinates of the flat ``theta`` belong to constrained sites, bool shape ``(p,)``.

        Their unconstrained values are transforms of bounded or positive quantities (``log sigma``
        for a scale): far from zero they mean a scale of 0 or infinity.
        """
        return np.concatenate([np.full(s.size, s.constrained) for s in self._structure.latents])

    @property
    def prior_median(self) -> np.ndarray:
        """The prior median, unconstrained and flattened (a float64 NumPy array of shape ``(p,)``).

        Concrete even while a function is being traced; :meth:`init_theta` gives the same point
        as a JAX array.
        """
        return self._structure.init_theta

    def init_theta(self, dtype: Any = None) -> Array:
        """A starting point for optimisation: the prior median, unconstrained, flattened.

        ``dtype`` defaults to JAX's default float (float64 in 64-bit mode).
        """
        return jnp.asarray(self._structure.init_theta, dtype=dtype or jnp.result_type(float))

    def sample_prior(self, key: PRNGKey, dtype: Any = None) -> Array:
        """A draw of the flat unconstrained parameters from the program's prior (jittable).

        The starting point of a policy that draws its initial parameters (a network's weights
        must not start at the symmetric prior median).
        """
        dtype = dtype or jnp.result_type(float)
        x = jnp.zeros((1, *self.feature_shape), dtype=dtype)
        with numpyro.validation_enabled(False):
            trace = handlers.trace(handlers.seed(self.model, rng_seed=key)).get_trace(x, None)
        unconstrained = {
            s.name: biject_to(trace[s.name]["fn"].support).inv(trace[s.name]["value"]).astype(dtype)
            for s in self._structure.latents
        }
        return ravel_pytree(unconstrained)[0]

    def unravel(self, theta: ArrayLike) -> dict[str, Array]:
        """Split a flat unconstrained ``theta`` of shape ``(p,)`` into per-site arrays."""
        return self._structure.unravel(jnp.asarray(theta))

    # ----------------------------------------------------------------------------- functions
    def run(self, theta: Array, x: Array) -> ProgramRun:
        """One run of the program at a flat unconstrained ``theta`` on rows ``x``, before any reward is seen.

        Returns the log prior (the latent sites' log densities, the log-Jacobians of their
        transforms and the program's factors), the observed site's trace entry (its distribution
        ``obs["fn"]`` with batch shape ``(n,)`` and its scale ``obs["scale"]``, ``None`` for 1) and
        the constrained latent values. Every function of this class is built on it; the GLM fast
        path (:mod:`bayesbandit.inference.linear_predictor`) reads the observed distribution's
        moments from ``obs``.
        """
        return run_program(self.model, self.obs_site, self._structure.unravel, theta, x)

    def obs_log_prob(self, obs: dict, y: Array, mask: Array) -> Array:
        """Per-row log-probability of rewards ``y`` under the observed site ``obs`` of a :meth:`run`, shape ``(n,)``.

        For affine likelihoods this is the interpolation ``l(y)`` between the reference rewards
        (module docstring: any real ``y``, and ``mask`` is not needed); otherwise the
        distribution's log-probability, with the rows where ``mask`` is false evaluated at
        ``y0`` so that no out-of-support reward reaches the distribution (callers drop those
        rows). Multiplied by the site's scale when the program scales it.
        """
        fn = obs["fn"]
        y0, y1 = self._structure.y_ref
        if self.is_affine:
            l0 = log_prob(fn, jnp.full(y.shape, y0, dtype=y.dtype))
            l1 = log_prob(fn, jnp.full(y.shape, y1, dtype=y.dtype))
            ll = l0 + (y - y0) * (l1 - l0) / (y1 - y0)
        else:
            ll = log_prob(fn, jnp.where(mask, y, y0))
        if obs["scale"] is not None:
            ll = ll * obs["scale"]
        return ll

    def log_likelihood(self, theta: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
        """Per-row log-likelihood ``log p(y_i | x_i, theta)``, shape ``(n,)``.

        For affine likelihoods this is the interpolated form (module docstring), equal to the
        true log-likelihood on the support up to a parameter-free term.
        """
        x = jnp.asarray(x)
        y = jnp.asarray(y, dtype=x.dtype)
        _, obs, _ = self.run(jnp.asarray(theta, dtype=x.dtype), x)
        return self.obs_log_prob(obs, y, jnp.ones(y.shape, bool))

    def potential(
        self,
        theta: ArrayLike,
        x: ArrayLike,
        y: ArrayLike,
        w: ArrayLike | None = None,
        *,
        prior_shift: ArrayLike | None = None,
    ) -> Array:
        """Weighted negative log joint ``U(theta; x, y, w)`` in unconstrained space (a scalar).

        Parameters
        ----------
        theta : array, shape (p,)
        x : array, shape (n, *feature_shape)
        y : array, shape (n,)
            Rewards (any real value for affine likelihoods).
        w : array, shape (n,), optional
            Non-negative row weights; zero masks a row. Defaults to ones.
        prior_shift : array, shape (p,), optional
            Translate the prior by ``delta``: the prior term is ``P(theta - delta)``
            (:meth:`prior_potential`), the likelihood is unchanged. GLM-FPL anchors its prior at a
            prior draw this way (:func:`bayesbandit.inference.perturb_prior`).
        """
        x = jnp.asarray(x)
        y = jnp.asarray(y, dtype=x.dtype)
        w = jnp.ones(y.shape, x.dtype) if w is None else jnp.asarray(w, dtype=x.dtype)
        theta = jnp.asarray(theta, dtype=x.dtype)
        log_prior, obs, _ = self.run(theta, x)
        if prior_shift is not None:
            log_prior = -self.prior_potential(theta - jnp.asarray(prior_shift, x.dtype))
        mask = w > 0
        ll = self.obs_log_prob(obs, y, mask)
        return -(log_prior + jnp.sum(jnp.where(mask, w * ll, 0.0)))

    def prior_potential(self, theta: ArrayLike) -> Array:
        """Negative log prior ``P(theta)`` in unconstrained space: latent sites, Jacobians, factors."""
        theta = jnp.asarray(theta)
        x = jnp.zeros((1, *self.feature_shape), dtype=theta.dtype)
        return -self.run(theta, x)[0]

    def potential_derivatives(
        self,
        x: ArrayLike,
        y: ArrayLike,
        w: ArrayLike | None = None,
        *,
        method: str = "auto",
        prior_shift: ArrayLike | None = None,
    ) -> Derivatives:
        """``theta -> (U, grad U, hess U)`` on the weighted rows ``(x, y, w)``, the prior translated by
        ``prior_shift`` when given (:meth:`potential`).

        ``method="auto"`` takes the GLM fast path when the program has a linear predictor
        (:attr:`linear_predictor`), else the generic forward-over-reverse Hessian
        (``method="generic"``); both give the same values to rounding.
        """
        x = jnp.asarray(x)
        y = jnp.asarray(y, dtype=x.dtype)
        w = jnp.ones(y.shape, x.dtype) if w is None else jnp.asarray(w, dtype=x.dtype)
        if method == "auto" and self.linear_predictor is not None:
            if prior_shift is None:
                return fast_derivatives(self, x, y, w)
            shift = jnp.asarray(prior_shift, x.dtype)
            return fast_derivatives(self, x, y, w, prior=generic_derivatives(lambda t: self.prior_potential(t - shift)))
        return generic_derivatives(lambda t: self.potential(t, x, y, w, prior_shift=prior_shift))

    def mean_reward(self, theta: ArrayLike, x: ArrayLike) -> Array:
        """Expected reward of each row of ``x`` under parameters ``theta``, shape ``(n,)``."""
        x = jnp.asarray(x)
        _, obs, _ = self.run(jnp.asarray(theta, dtype=x.dtype), x)
        return jnp.broadcast_to(expected_reward(obs["fn"]), x.shape[:1])

    def reward_variance(self, theta: ArrayLike, x: ArrayLike) -> Array:
        """Variance of the reward of each row of ``x`` under parameters ``theta``, shape ``(n,)``.

        Divided by the observed site's scale when the program scales it, so that a reward noise
        of this variance adds to the potential a random linear term whose covariance is the
        likelihood's Fisher information for a canonical-link GLM (GLM-FPL's reward noise).
        """
        x = jnp.asarray(x)
        _, obs, _ = self.run(jnp.asarray(theta, dtype=x.dtype), x)
        variance = jnp.broadcast_to(obs["fn"].variance, x.shape[:1])
        return variance if obs["scale"] is None else variance / obs["scale"]

    def sample_rewards(self, theta: ArrayLike, x: ArrayLike, key: PRNGKey) -> Array:
        """One reward for each row of ``x`` drawn from the observed site at parameters ``theta``, shape ``(n,)``.

        The distribution's own values: integers for a discrete reward.
        """
        x = jnp.asarray(x)
        _, obs, _ = self.run(jnp.asarray(theta, dtype=x.dtype), x)
        return jnp.broadcast_to(obs["fn"].sample(key), x.shape[:1])

    def natural_parameter(self, theta: ArrayLike, x: ArrayLike) -> Array:
        """Natural parameter ``A(eta_i) = d log p(y | x_i) / dy`` of each row, shape ``(n,)``.

        For a canonical-link GLM (logistic, Poisson, Gaussian with unit scale) this is the
        linear predictor ``x_i^T theta``. Defined only for affine likelihoods.
        """
        if not self.is_affine:
            raise ModelSpecError(
                f"the natural parameter of observed site '{self.obs_site}' is undefined: its "
                "log-probability is not affine in y."
            )
        x = jnp.asarray(x)
        _, obs, _ = self.run(jnp.asarray(theta, dtype=x.dtype), x)
        y0, y1 = self._structure.y_ref
        ones = jnp.ones(x.shape[:1], x.dtype)
        return (log_prob(obs["fn"], y1 * ones) - log_prob(obs["fn"], y0 * ones)) / (y1 - y0)

    def deterministic(self, theta: ArrayLike, x: ArrayLike, name: str) -> Array:
        """The program's deterministic site ``name`` (say a network's hidden activations) for rows ``x``.

        Raises
        ------
        ModelSpecError
            If the program records no deterministic site of that name.
        """
        x = jnp.asarray(x)
        return deterministic_value(self.model, self._structure.unravel, jnp.asarray(theta, dtype=x.dtype), x, name)

    def constrain(self, theta: ArrayLike) -> dict[str, Array]:
        """Latent site values (constrained space) at a flat unconstrained ``theta``."""
        theta = jnp.asarray(theta)
        x = jnp.zeros((1, *self.feature_shape), dtype=theta.dtype)
        _, _, values = self.run(theta, x)
        return values


def bind(model: Model | BoundModel, x_example: ArrayLike, *, obs_site: str = "y") -> BoundModel:
    """Bind a NumPyro reward program to the shape of its features.

    Parameters
    ----------
    model : callable
        NumPyro program ``model(x, y=None)`` with continuous latent sites (and, optionally,
        per-row discrete sites marked ``infer={"enumerate": "parallel"}``, summed out) and exactly one
        observed site named ``obs_site`` whose batch shape is ``(n,)``.
    x_example : array, shape (n, *feature_shape)
        Example features; only the shape of one row is used.
    obs_site : str
        Name of the observed reward site.

    Returns
    -------
    BoundModel

    Raises
    ------
    ModelSpecError
        If the program has no (or several) observed sites, a discrete latent site that cannot
        be summed out (:mod:`bayesbandit.inference.enumeration`), a latent
        whose shape depends on the number of rows, an observed site of the wrong shape, or a
        non-finite log joint at its prior median.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> bm = bb.bind(logistic(), jnp.zeros((5, 3)))
    >>> bm.num_params, bm.site_names, bm.is_affine
    (3, ('theta',), True)
    """
    x_example = np.asarray(x_example)
    if x_example.ndim < 2:
        raise ModelSpecError(
            f"x_example must have shape (n, *feature_shape) with at least 2 dimensions; got shape {x_example.shape}."
        )
    if isinstance(model, BoundModel):
        if model.feature_shape != tuple(x_example.shape[1:]):
            raise ModelSpecError(
                f"model is bound to features of shape {model.feature_shape}, not {tuple(x_example.shape[1:])}."
            )
        return model
    return bound_for(model, tuple(int(s) for s in x_example.shape[1:]), obs_site=obs_site)


@functools.lru_cache(maxsize=256)
def bound_for(model: Model | BoundModel, feature_shape: tuple[int, ...], *, obs_site: str = "y") -> BoundModel:
    """Cached :class:`BoundModel` for a program and a feature shape (what policies use)."""
    if isinstance(model, BoundModel):
        if model.feature_shape != feature_shape:
            raise ModelSpecError(f"model is bound to features of shape {model.feature_shape}, not {feature_shape}.")
        return model
    return BoundModel(model, feature_shape, obs_site=obs_site)
