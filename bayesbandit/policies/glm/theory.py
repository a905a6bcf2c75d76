"""Theory-driven hyper-parameters of the GLM policies and their UCB baselines.

Kveton et al. (2020), Theorems 1-2, with the "most optimistic" ``mu_dot_min = 0.25`` the
paper uses in its experiments (Section 5.1) and ``sigma = 0.5`` (the sub-Gaussian proxy of a
Bernoulli reward). Natural logarithms throughout.

.. math::

    c_1 = \\frac{\\sigma}{\\dot\\mu_{min}} \\sqrt{d \\log(n/d) + 2 \\log n}, \\qquad
    a_{TSL} = c_1 \\sqrt{\\dot\\mu_{max}}, \\qquad a_{FPL} = c_1 \\dot\\mu_{max}.

The UCB widths are not given in the paper; they follow the original papers: Filippi et al.
(2010, Section 4.1) for GLM-UCB and Li, Lu and Zhou (2017, Theorem 2) for UCB-GLM, both with
``delta = 1/n`` and evaluated once at ``t = n`` (a constant width).
"""

from __future__ import annotations

import math

from bayesbandit.validation import check_int

__all__ = ["c1", "tsl_theory_a", "fpl_theory_a", "glm_ucb_theory_rho", "ucb_glm_theory_alpha"]


def c1(d: int, horizon: int, *, sigma: float = 0.5, mu_dot_min: float = 0.25) -> float:
    """Confidence radius ``c_1`` of Theorems 1-2 (defined for ``horizon >= d``)."""
    check_int("theory", "d", d, low=1)
    check_int("theory", "horizon", horizon, low=d)
    return sigma / mu_dot_min * math.sqrt(d * math.log(horizon / d) + 2.0 * math.log(horizon))


def tsl_theory_a(
    d: int, horizon: int, *, sigma: float = 0.5, mu_dot_min: float = 0.25, mu_dot_max: float = 0.25
) -> float:
    """GLM-TSL's theory inflation ``a = c_1 sqrt(mu_dot_max)`` (Theorem 1). ``d=10, n=50000`` gives 10.33.

    >>> round(tsl_theory_a(10, 50_000), 2)
    10.33
    """
    return c1(d, horizon, sigma=sigma, mu_dot_min=mu_dot_min) * math.sqrt(mu_dot_max)


def fpl_theory_a(
    d: int, horizon: int, *, sigma: float = 0.5, mu_dot_min: float = 0.25, mu_dot_max: float = 0.25
) -> float:
    """GLM-FPL's theory perturbation ``a = c_1 mu_dot_max`` (Theorem 2). ``d=10, n=50000`` gives 5.17.

    >>> round(fpl_theory_a(10, 50_000), 2)
    5.17
    """
    return c1(d, horizon, sigma=sigma, mu_dot_min=mu_dot_min) * mu_dot_max


def glm_ucb_theory_rho(
    d: int,
    horizon: int,
    max_norm: float,
    *,
    k_mu: float = 0.25,
    c_mu: float = 0.25,
    r_max: float = 1.0,
    sigma0: float = 1.0,
) -> float:
    """GLM-UCB's width (Filippi et al. 2010, Section 4.1):

    .. math::

        \\rho = \\frac{2 k_\\mu \\kappa R_{max}}{c_\\mu} \\sqrt{2 d \\log n \\log(2 d n / \\delta)}, \\quad
        \\kappa = \\sqrt{3 + 2 \\log(1 + 2 c_m^2 / \\sigma_0^2)}, \\quad \\delta = 1/n,

    with ``c_m = max_norm`` the largest arm norm.
    """
    check_int("glm_ucb_theory_rho", "horizon", horizon, low=2)
    delta = 1.0 / horizon
    kappa = math.sqrt(3.0 + 2.0 * math.log(1.0 + 2.0 * max_norm**2 / sigma0**2))
    return (
        2.0 * k_mu * kappa * r_max / c_mu * math.sqrt(2.0 * d * math.log(horizon) * math.log(2.0 * d * horizon / delta))
    )


def ucb_glm_theory_alpha(d: int, horizon: int, *, sigma: float = 0.5, kappa: float = 0.25) -> float:
    """UCB-GLM's width (Li, Lu and Zhou 2017, Theorem 2), ``delta = 1/n``:

    .. math::  \\alpha = \\frac{\\sigma}{\\kappa} \\sqrt{\\frac{d}{2} \\log(1 + 2n/d) + \\log(1/\\delta)}.

    >>> round(ucb_glm_theory_alpha(10, 50_000), 1)
    15.1
    """
    check_int("ucb_glm_theory_alpha", "horizon", horizon, low=1)
    return sigma / kappa * math.sqrt(d / 2.0 * math.log(1.0 + 2.0 * horizon / d) + math.log(horizon))
