"""Binding a NumPyro reward program into pure, jittable functions.

A *reward model* is a NumPyro program ``model(x, y=None)`` with continuous latent sites (each
with a prior) and exactly one observed site (default name ``"y"``) whose distribution has batch
shape ``(n,)`` and whose ``.mean`` is the expected reward of each row of ``x``.

:func:`bind` turns it into a :class:`BoundModel`: latent sites are flattened into one
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.flatten_util import ravel_pytree
from jax.scipy.special import gammaln
from numpyro import handlers
from numpyro.distributions import biject_to
from numpyro.distributions.util import sum_rightmost

from bayesbandit._typing import Array, ArrayLike, Model
from bayesbandit.errors import ModelSpecError

__all__ = ["BoundModel", "bind"]

_SUPPORT_CANDIDATES = (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, 1.5, 5.0)
_INSPECT_ROWS = (3, 4)


@dataclass(frozen=True)
class _SiteInfo:
    name: str
    shape: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class _Structure:
    """What :func:`bind` learned by tracing the program (not part of the model's identity)."""

    latents: tuple[_SiteInfo, ...]
    unravel: Callable[[Array], dict[str, Array]]
    init_theta: np.ndarray
    support: Any
    support_name: str
    y_ref: tuple[float, float]
    is_affine: bool


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
    obs_site: str = "y"
    _structure: _Structure = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self._structure is None:
            # Binding may first happen inside a jitted function: inspect with concrete values.
            with jax.ensure_compile_time_eval():
                structure = _inspect(self.model, self.feature_shape, self.obs_site)
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

    def init_theta(self, dtype: Any = jnp.float64) -> Array:
        """A starting point for optimisation: the prior median, unconstrained, flattened."""
        return jnp.asarray(self._structure.init_theta, dtype=dtype)

    def unravel(self, theta: ArrayLike) -> dict[str, Array]:
        """Split a flat unconstrained ``theta`` of shape ``(p,)`` into per-site arrays."""
        return self._structure.unravel(jnp.asarray(theta))

    # ----------------------------------------------------------------------------- functions
    def _run(self, theta: Array, x: Array) -> tuple[Array, dict, dict[str, Array]]:
        return _run_program(self.model, self.obs_site, self._structure.unravel, theta, x)

    def _obs_log_prob(self, obs: dict, y: Array, mask: Array) -> Array:
        fn = obs["fn"]
        y0, y1 = self._structure.y_ref
        if self.is_affine:
            l0 = _log_prob(fn, jnp.full(y.shape, y0, dtype=y.dtype))
            l1 = _log_prob(fn, jnp.full(y.shape, y1, dtype=y.dtype))
            ll = l0 + (y - y0) * (l1 - l0) / (y1 - y0)
        else:
            ll = _log_prob(fn, jnp.where(mask, y, y0))
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
        _, obs, _ = self._run(jnp.asarray(theta, dtype=x.dtype), x)
        return self._obs_log_prob(obs, y, jnp.ones(y.shape, bool))

    def potential(self, theta: ArrayLike, x: ArrayLike, y: ArrayLike, w: ArrayLike | None = None) -> Array:
        """Weighted negative log joint ``U(theta; x, y, w)`` in unconstrained space (a scalar).

        Parameters
        ----------
        theta : array, shape (p,)
        x : array, shape (n, *feature_shape)
        y : array, shape (n,)
            Rewards (any real value for affine likelihoods).
        w : array, shape (n,), optional
            Non-negative row weights; zero masks a row. Defaults to ones.
        """
        x = jnp.asarray(x)
        y = jnp.asarray(y, dtype=x.dtype)
        w = jnp.ones(y.shape, x.dtype) if w is None else jnp.asarray(w, dtype=x.dtype)
        log_prior, obs, _ = self._run(jnp.asarray(theta, dtype=x.dtype), x)
        mask = w > 0
        ll = self._obs_log_prob(obs, y, mask)
        return -(log_prior + jnp.sum(jnp.where(mask, w * ll, 0.0)))

    def mean_reward(self, theta: ArrayLike, x: ArrayLike) -> Array:
        """Expected reward of each row of ``x`` under parameters ``theta``, shape ``(n,)``."""
        x = jnp.asarray(x)
        _, obs, _ = self._run(jnp.asarray(theta, dtype=x.dtype), x)
        return jnp.broadcast_to(obs["fn"].mean, x.shape[:1])

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
        _, obs, _ = self._run(jnp.asarray(theta, dtype=x.dtype), x)
        y0, y1 = self._structure.y_ref
        ones = jnp.ones(x.shape[:1], x.dtype)
        return (_log_prob(obs["fn"], y1 * ones) - _log_prob(obs["fn"], y0 * ones)) / (y1 - y0)

    def constrain(self, theta: ArrayLike) -> dict[str, Array]:
        """Latent site values (constrained space) at a flat unconstrained ``theta``."""
        theta = jnp.asarray(theta)
        x = jnp.zeros((1, *self.feature_shape), dtype=theta.dtype)
        _, _, values = self._run(theta, x)
        return values


def bind(model: Model | BoundModel, x_example: ArrayLike, *, obs_site: str = "y") -> BoundModel:
    """Bind a NumPyro reward program to the shape of its features.

    Parameters
    ----------
    model : callable
        NumPyro program ``model(x, y=None)`` with continuous latent sites and exactly one
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
        If the program has no (or several) observed sites, a discrete latent site, a latent
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
    return bound_for(model, tuple(int(s) for s in x_example.shape[1:]), obs_site)


@functools.lru_cache(maxsize=256)
def bound_for(model: Model | BoundModel, feature_shape: tuple[int, ...], obs_site: str = "y") -> BoundModel:
    """Cached :class:`BoundModel` for a program and a feature shape (what policies use)."""
    if isinstance(model, BoundModel):
        if model.feature_shape != feature_shape:
            raise ModelSpecError(f"model is bound to features of shape {model.feature_shape}, not {feature_shape}.")
        return model
    return BoundModel(model, feature_shape, obs_site)


def _log_prob(fn: Any, value: Array) -> Array:
    """``fn.log_prob(value)``, with derivatives that are right at every parameter value.

    NumPyro evaluates Bernoulli and Binomial log-probabilities with logits through
    ``clip(x, 0) + log1p(exp(-|x|)) - x y``, whose autodiff derivative at exactly ``x = 0`` is
    wrong (``clip`` and ``abs`` have zero derivative at their kinks: ``-y`` instead of
    ``1/2 - y``, and a zero second derivative). The prior mode ``theta = 0`` puts every logit
    there, so Newton's first step from it would see a wrong gradient and Hessian. These two
    families use ``softplus`` instead (same values, smooth derivatives).
    """
    if isinstance(fn, dist.BernoulliLogits):
        return value * fn.logits - jax.nn.softplus(fn.logits)
    if isinstance(fn, dist.BinomialLogits):
        n = fn.total_count
        log_binom = gammaln(n + 1) - gammaln(value + 1) - gammaln(n - value + 1)
        return log_binom + value * fn.logits - n * jax.nn.softplus(fn.logits)
    return fn.log_prob(value)


def _run_program(
    model: Model, obs_site: str, unravel: Callable[[Array], dict[str, Array]], theta: Array, x: Array
) -> tuple[Array, dict, dict[str, Array]]:
    """Trace the program at unconstrained ``theta``.

    Returns the log prior plus Jacobian and factor terms (every sample site except the observed
    one), the observed site's trace entry, and the constrained latent values.
    """
    unconstrained = unravel(theta)
    log_dets: list[Array] = []

    def constrain(site):
        name = site["name"]
        if site["type"] != "sample" or site["is_observed"] or name not in unconstrained:
            return None
        u = unconstrained[name]
        transform = biject_to(site["fn"].support)
        value = transform(u)
        log_det = transform.log_abs_det_jacobian(u, value)
        log_dets.append(
            jnp.sum(sum_rightmost(log_det, jnp.ndim(log_det) - jnp.ndim(value) + len(site["fn"].event_shape)))
        )
        return value

    # The fill only makes the reward site observed; its log-probability is computed elsewhere.
    y_fill = jnp.zeros(x.shape[:1], dtype=x.dtype)
    with numpyro.validation_enabled(False), handlers.trace() as tr, handlers.substitute(substitute_fn=constrain):
        model(x, y_fill)
    log_prior = sum(log_dets, jnp.zeros((), dtype=x.dtype))
    values = {}
    for name, site in tr.items():
        if site["type"] != "sample" or name == obs_site:
            continue
        lp = jnp.sum(site["fn"].log_prob(site["value"]))
        if site["scale"] is not None:
            lp = lp * site["scale"]
        log_prior = log_prior + lp
        if not site["is_observed"]:
            values[name] = site["value"]
    return log_prior, tr[obs_site], values


# --------------------------------------------------------------------------------- inspection
def _trace(model: Model, x: np.ndarray, y: Any, seed: int) -> dict:
    try:
        with numpyro.validation_enabled(False):
            return handlers.trace(handlers.seed(model, rng_seed=seed)).get_trace(x, y)
    except Exception as exc:  # the user's program failed: say so, keep the cause
        raise ModelSpecError(
            f"the reward program failed when called as model(x, y) with x of shape {x.shape}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _inspect(model: Model, feature_shape: tuple[int, ...], obs_site: str) -> _Structure:
    if not callable(model):
        raise ModelSpecError(f"a reward model must be a NumPyro program model(x, y=None); got {type(model).__name__}.")
    rng = np.random.default_rng(0)
    traces = []
    for n in _INSPECT_ROWS:
        x = rng.uniform(-1.0, 1.0, size=(n, *feature_shape))
        tr_free = _trace(model, x, None, 0)
        if obs_site not in tr_free or tr_free[obs_site]["type"] != "sample":
            found = [k for k, s in tr_free.items() if s["type"] == "sample"]
            raise ModelSpecError(
                f"the reward program has no sample site named '{obs_site}' (sample sites: {found}); "
                f"name the reward site '{obs_site}' or pass obs_site=."
            )
        y = np.asarray(tr_free[obs_site]["value"])
        tr = _trace(model, x, y, 0)
        traces.append((x, tr))

    x, tr = traces[0]
    obs = tr[obs_site]
    if not obs["is_observed"]:
        raise ModelSpecError(f"site '{obs_site}' is not observed when the program is called with y: pass obs=y to it.")
    others = [
        k
        for k, s in tr.items()
        if s["type"] == "sample" and s["is_observed"] and k != obs_site and not isinstance(s["fn"], dist.Unit)
    ]
    if others:
        raise ModelSpecError(
            f"the reward program has observed sites {others} besides '{obs_site}'; exactly one observed "
            "site (the reward) is allowed."
        )
    for xn, trn in traces:
        fn = trn[obs_site]["fn"]
        if tuple(fn.event_shape) != () or tuple(fn.batch_shape) != (xn.shape[0],):
            raise ModelSpecError(
                f"observed site '{obs_site}' must have one scalar reward per row: expected batch shape "
                f"({xn.shape[0]},) and event shape (), got {tuple(fn.batch_shape)} and {tuple(fn.event_shape)}."
            )

    latents = []
    init_values = {}
    for name, site in tr.items():
        if site["type"] != "sample" or site["is_observed"]:
            continue
        if site["fn"].support.is_discrete:
            raise ModelSpecError(
                f"latent site '{name}' is discrete ({type(site['fn']).__name__}); only continuous latent "
                "sites are supported: marginalise it out or make it observed."
            )
        shapes = {tuple(np.shape(t[name]["value"])) if name in t else None for _, t in traces}
        if len(shapes) != 1:
            raise ModelSpecError(
                f"latent site '{name}' changes shape with the number of rows ({sorted(map(str, shapes))}); "
                "per-row latent variables are not supported."
            )
        latents.append(_SiteInfo(name, tuple(np.shape(site["value"]))))
        median = _prior_median(site)
        init_values[name] = np.asarray(biject_to(site["fn"].support).inv(median), dtype=np.float64)
    if not latents:
        raise ModelSpecError("the reward program has no latent sample site: there is nothing to learn.")

    latents.sort(key=lambda site: site.name)  # ravel_pytree flattens a dict in sorted-key order
    flat, unravel = ravel_pytree({k: jnp.asarray(v) for k, v in init_values.items()})
    fn = obs["fn"]
    support = fn.support
    y_ref, is_affine = _reference_points(model, obs_site, feature_shape, unravel, flat, fn)
    return _Structure(
        latents=tuple(latents),
        unravel=unravel,
        init_theta=np.asarray(flat, dtype=np.float64),
        support=support,
        support_name=f"{type(fn).__name__}: {_describe_support(support)}",
        y_ref=y_ref,
        is_affine=is_affine,
    )


def _prior_median(site: dict) -> np.ndarray:
    samples = site["fn"].sample(jax.random.PRNGKey(0), (101,))
    return np.median(np.asarray(samples), axis=0)


def _describe_support(support: Any) -> str:
    names = {
        "_Boolean": "{0, 1}",
        "_IntegerNonnegative": "{0, 1, 2, ...}",
        "_IntegerPositive": "{1, 2, ...}",
        "_Real": "the real line",
        "_Positive": "(0, inf)",
        "_Nonnegative": "[0, inf)",
        "_UnitInterval": "[0, 1]",
    }
    return names.get(type(support).__name__, str(support))


def _reference_points(model, obs_site, feature_shape, unravel, flat, fn):
    """Pick two support points and decide numerically whether log p(y | theta) is affine in y.

    The residual of a third support point from the two-point interpolation is a parameter-free
    constant exactly when the log-probability is affine in y; it is compared across random
    parameter values. With only two support points (Bernoulli) any function is affine on them.
    """
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.uniform(-1.0, 1.0, size=(4, *feature_shape)))
    thetas = [jnp.asarray(np.asarray(flat) + rng.normal(0, 0.7, size=flat.shape)) for _ in range(3)]
    dists = [_run_program(model, obs_site, unravel, t, x)[1]["fn"] for t in thetas]
    ones = jnp.ones(x.shape[:1])

    def log_prob(d, c):
        with numpyro.validation_enabled(False):
            return np.asarray(d.log_prob(c * ones))

    points = [
        c
        for c in _SUPPORT_CANDIDATES
        if all(
            bool(np.all(np.asarray(d.support.check(c * ones)))) and np.all(np.isfinite(log_prob(d, c))) for d in dists
        )
    ]
    if len(points) < 2:
        raise ModelSpecError(
            f"could not find two reward values with finite log-probability in the support of observed site "
            f"'{obs_site}' ({type(fn).__name__}); tried {list(_SUPPORT_CANDIDATES)}."
        )
    y0, y1 = sorted(points[:2])
    if len(points) == 2:
        return (y0, y1), True
    y2 = points[2]
    residuals = np.asarray(
        [log_prob(d, y2) - log_prob(d, y0) - (y2 - y0) * (log_prob(d, y1) - log_prob(d, y0)) / (y1 - y0) for d in dists]
    )
    spread = np.max(np.abs(residuals - residuals[0]))
    return (y0, y1), bool(spread <= 1e-8 * (1.0 + np.max(np.abs(residuals))))
