"""The GLM fast path: derivatives of the potential through the observed site's linear predictor.

When the observed log-probability is affine in the reward (:attr:`BoundModel.is_affine`),
each row's log-likelihood is a function of one number, the natural parameter
``A_i(theta) = d log p(y | x_i, theta) / dy``: with ``log p(y | A) = A y - Z(A) + C(y)`` the
normaliser ``Z`` is fixed by ``A`` (and the row's parameter-free settings). When moreover
``A_i`` is affine in ``theta`` (canonical-link GLMs: logistic, Poisson with log link, Gaussian
with known scale, Binomial with logits, in any parameterisation that keeps the predictor
linear, intercepts and several coefficient sites included), ``A_i = j_i^T theta + c_i`` with a
constant row ``j_i`` and

.. math::

    \\nabla U = \\nabla P(\\theta) - J^T (w \\odot h'), \\qquad
    \\nabla^2 U = \\nabla^2 P(\\theta) - J^T \\operatorname{diag}(w \\odot h'') J,

where ``P`` is the negative log prior (Jacobians and factors included), ``J`` stacks the rows
``j_i``, and ``h_i(A) = s_i (y_i A - Z(A)) + const`` is row ``i``'s log-likelihood (``s_i`` the
site's scale, 1 unless the program scales it) as a function of its natural parameter, whose
derivatives are the exponential-family moments of the observed site's distribution:

.. math::

    h_i'(A_i) = s_i (y_i - \\mathbb{E}[y \\mid A_i]), \\qquad h_i''(A_i) = -s_i \\operatorname{Var}[y \\mid A_i],

read from the distribution's ``mean`` and ``variance`` (any real ``y`` is allowed: FPL's
perturbed rewards). A derivative pass is one forward run of the program over the rows and one
matrix product (the gradient's and the Hessian's sums over rows as one contraction,
``J^T [w h', \\operatorname{diag}(-w h'') J]``), instead of the generic path's ``p`` reverse passes
(a forward-over-reverse Hessian); ``P``'s own Hessian is small and separate. ``J`` is taken once per solve, at the prior
median. The result is the same MAP and Hessian to rounding
(``tests/inference/test_linear_predictor.py`` checks 1e-10 over the model zoo and user programs).

It is detected from the program, numerically, at the first fit: the fast derivatives (with
``J`` from the prior median and ``P`` from the prior alone) must equal the generic ones to 1e-9
at three random parameter values, with rewards off the support and weights with a masked row.
A natural parameter that is not affine in the parameters (``J`` would change with them), a
prior or factor that depends on the rows, or a distribution without ``mean`` or ``variance`` or
with moments that do not match its log-probability fails this and keeps the generic path.
When also ``P`` is quadratic with a positive-definite Hessian (a Gaussian prior on every
coordinate, checked at the same three points), ``nabla^2 U`` is positive definite wherever the
weights are non-negative (``h'' = -Var <= 0`` for an exponential family), and Newton factors it
with a plain Cholesky instead of the shifted one (one factorisation per iteration, not two).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from bayesbandit._compile import jit_once
from bayesbandit._typing import Array, ArrayLike
from bayesbandit.inference.program import ProgramRun

__all__ = [
    "BoundProgram",
    "LinearPredictor",
    "detect_linear_predictor",
    "fast_derivatives",
    "generic_derivatives",
    "gaussian_derivatives",
    "predictor_jacobian",
    "row_moments",
]

Derivatives = Callable[[Array], tuple[Array, Array, Array]]

_PROBES = 3  # parameter values at which the structure is checked
_PROBE_ROWS = 5
_RTOL = 1e-9


class BoundProgram(Protocol):
    """What the fast path reads from a bound reward program; :class:`bayesbandit.inference.BoundModel` is one."""

    @property
    def feature_shape(self) -> tuple[int, ...]: ...

    @property
    def is_affine(self) -> bool: ...

    @property
    def reference_rewards(self) -> tuple[float, float]: ...

    @property
    def prior_median(self) -> np.ndarray: ...

    def init_theta(self, dtype: Any = None) -> Array: ...

    def run(self, theta: Array, x: Array) -> ProgramRun: ...

    def obs_log_prob(self, obs: dict, y: Array, mask: Array) -> Array: ...

    def potential(self, theta: ArrayLike, x: ArrayLike, y: ArrayLike, w: ArrayLike | None = None) -> Array: ...

    def prior_potential(self, theta: ArrayLike) -> Array: ...

    def natural_parameter(self, theta: ArrayLike, x: ArrayLike) -> Array: ...


class LinearPredictor(NamedTuple):
    """What :func:`detect_linear_predictor` found about a bound program."""

    gaussian_prior: bool  # the negative log prior is quadratic with a positive-definite Hessian


def generic_derivatives(fn: Callable[[Array], Array]) -> Derivatives:
    """Value, gradient and Hessian of any ``fn`` in one forward-over-reverse pass."""

    def derivatives(theta: Array) -> tuple[Array, Array, Array]:
        def grad_aux(t: Array) -> tuple[Array, tuple[Array, Array]]:
            value, grad = jax.value_and_grad(fn)(t)
            return grad, (value, grad)

        hess, (value, grad) = jax.jacfwd(grad_aux, has_aux=True)(theta)
        return value, grad, hess

    return derivatives


def gaussian_derivatives(mean: Array, chol: Array) -> Derivatives:
    """Derivatives of ``(theta - m)^T L L^T (theta - m) / 2``, the potential of ``N(m, (L L^T)^{-1})``."""
    precision = chol @ chol.T

    def derivatives(theta: Array) -> tuple[Array, Array, Array]:
        z = chol.T @ (theta - mean)
        return 0.5 * (z @ z), chol @ z, precision

    return derivatives


def predictor_jacobian(bound: BoundProgram, x: Array) -> Array:
    """``J``, shape ``(n, p)``: the rows ``j_i = d A_i / d theta`` (constant in ``theta`` on this path).

    Taken at the prior median, so it depends on ``x`` only (a loop invariant of Newton's method).
    """
    theta = bound.init_theta(x.dtype)
    return jax.jacfwd(lambda t: bound.natural_parameter(t, x))(theta)


def row_moments(obs: dict, y: Array, w: Array) -> tuple[Array, Array]:
    """``(w h'(A), -w h''(A))`` per row, from the observed site of one program run (module docstring).

    ``h' = s (y - E[y])`` and ``h'' = -s Var[y]`` from the site's distribution and scale ``s``;
    rows of weight 0 give 0.
    """
    fn = obs["fn"]
    scale = 1.0 if obs["scale"] is None else obs["scale"]
    mean, variance = (jnp.broadcast_to(m, y.shape) for m in (fn.mean, fn.variance))
    mask = w > 0
    return jnp.where(mask, w * scale * (y - mean), 0.0), jnp.where(mask, w * scale * variance, 0.0)


def fast_derivatives(
    bound: BoundProgram, x: Array, y: Array, w: Array, *, prior: Derivatives | None = None
) -> Derivatives:
    """Value, gradient and Hessian of ``U(theta; x, y, w)`` through the linear predictor (module docstring).

    Only valid when :func:`detect_linear_predictor` found the structure. ``prior`` gives the
    derivatives of the part of ``U`` that is not the likelihood (default: the program's negative
    log prior; the online Laplace update passes :func:`gaussian_derivatives` of the last fit).
    """
    J = predictor_jacobian(bound, x)
    mask = w > 0
    prior_derivatives = prior or generic_derivatives(bound.prior_potential)

    def derivatives(theta: Array) -> tuple[Array, Array, Array]:
        log_prior, obs, _ = bound.run(theta, x)
        log_lik = bound.obs_log_prob(obs, y, mask)
        score, curvature = row_moments(obs, y, w)
        p_value, p_grad, p_hess = prior_derivatives(theta)
        if prior is None:
            p_value = -log_prior
        value = p_value - jnp.sum(jnp.where(mask, w * log_lik, 0.0))
        # One contraction over the rows gives both: J^T [w h', diag(-w h'') J], shape (p, 1 + p).
        both = J.T @ jnp.concatenate([score[:, None], curvature[:, None] * J], axis=1)
        return value, p_grad - both[:, 0], p_hess + both[:, 1:]

    return derivatives


def detect_linear_predictor(bound: BoundProgram) -> LinearPredictor | None:
    """Whether the fast path applies to ``bound`` (module docstring); ``None`` when it does not.

    Every probe is computed by one compiled call (vmapped over the probe parameters), once per
    bound program; the comparisons are in NumPy. float64 only (the checks are at ``1e-9``).
    """
    if not bound.is_affine or jnp.result_type(float) != jnp.float64:
        return None
    rng = np.random.default_rng(2)
    # NumPy inputs: concrete even while an enclosing function is being traced.
    x = rng.uniform(-1.0, 1.0, size=(_PROBE_ROWS, *bound.feature_shape))
    center = bound.prior_median
    thetas = center + rng.normal(0.0, 0.5, size=(_PROBES, *center.shape))
    low, high = bound.reference_rewards
    y = rng.choice([low, high], size=_PROBE_ROWS) + rng.normal(0.0, 0.3, size=_PROBE_ROWS)
    w = rng.uniform(0.5, 3.0, size=_PROBE_ROWS) * (np.arange(_PROBE_ROWS) != 1)  # one masked row
    rows = (x, y, w)

    def probe(theta: Array) -> dict[str, Any]:
        x, y, w = (jnp.asarray(a) for a in rows)
        return {
            "fast": fast_derivatives(bound, x, y, w)(theta),
            "generic": generic_derivatives(lambda t: bound.potential(t, x, y, w))(theta),
            "prior_hessian": generic_derivatives(bound.prior_potential)(theta)[2],
        }

    try:
        # Lowered and compiled explicitly: the call runs now with concrete values, even while an
        # enclosing function is being traced (where a bound program is first used).
        compiled = jit_once(jax.vmap(probe)).lower(thetas).compile()
        got = jax.tree.map(np.asarray, compiled(thetas))
    except (NotImplementedError, AttributeError, TypeError):  # no .mean or .variance: the generic path
        return None

    def same(a: np.ndarray, b: np.ndarray) -> bool:
        scale = 1.0 + max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0))
        return bool(
            np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.max(np.abs(a - b), initial=0.0) <= _RTOL * scale
        )

    def constant(a: np.ndarray) -> bool:  # equal across the probe parameters
        return all(same(a[i], a[0]) for i in range(1, len(a)))

    if not all(same(a, b) for a, b in zip(got["fast"], got["generic"], strict=True)):
        return None
    hessian = got["prior_hessian"][0]
    positive = bool(np.all(np.linalg.eigvalsh(0.5 * (hessian + hessian.T)) > 0))
    return LinearPredictor(gaussian_prior=constant(got["prior_hessian"]) and positive)
