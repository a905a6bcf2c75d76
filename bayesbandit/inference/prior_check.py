"""Does the program's joint MAP exist? Checked once per bound program, before a MAP-based policy runs.

MAP-based policies (Newton or first-order) follow the mode of the posterior. Some programs have
none: with a centred hierarchical scale (``tau ~ HalfCauchy(1)``, ``theta ~ Normal(0, tau)``)
the density of ``theta`` at 0 grows without bound as ``tau -> 0``, so the log joint is unbounded
whatever the data, every fit runs ``log tau`` towards minus infinity, and a bandit on it never
learns. :func:`check_prior_mode` finds this with the data left out (the prior alone): a damped
Newton solve from the prior median that does not converge within 50 steps while moving a
constrained site's unconstrained value away from its start has found no mode, and a
:class:`~bayesbandit.errors.ModelSpecError` names the site and gives the remedy.
"""

from __future__ import annotations

import functools

import numpy as np

from bayesbandit._compile import jit_once
from bayesbandit.errors import ModelSpecError
from bayesbandit.inference.newton import NewtonResult, newton_minimize
from bayesbandit.inference.potential import BoundModel
from bayesbandit.precision import x64_enabled

__all__ = ["check_prior_mode"]

_MAX_STEPS = 50
_DRIFT = 3.0  # unconstrained units a site must have moved for a failed solve to count as "no mode"


@functools.lru_cache(maxsize=128)
def _prior_fit(bound: BoundModel) -> NewtonResult:
    # The prior (with its Jacobians and factors) alone: the reward's likelihood is not in the program.
    fit = jit_once(lambda t: newton_minimize(bound.prior_potential, t, max_steps=_MAX_STEPS, tol=1e-10))
    return fit(bound.init_theta())


def check_prior_mode(bound: BoundModel, owner: str) -> None:
    """Raise :class:`~bayesbandit.errors.ModelSpecError` if the program's prior has no mode.

    Needs 64-bit mode (the check is skipped without it).

    Parameters
    ----------
    bound : BoundModel
    owner : str
        Who asks (a policy's name), for the message.
    """
    if not x64_enabled():
        return
    result = _prior_fit(bound)
    if bool(result.info.converged):
        return
    start, end = np.asarray(bound.init_theta()), np.asarray(result.theta)
    moved = np.abs(end - start) * bound.constrained_mask()
    if not np.isfinite(end).all() or moved.max(initial=0.0) > _DRIFT:
        index = int(np.nanargmax(np.where(np.isfinite(moved), moved, np.inf)))
        site = next(name for name, block in bound.site_slices().items() if block.start <= index < block.stop)
        raise ModelSpecError(
            f"{owner} follows the mode of the posterior, and this program has none: with no data at all its log "
            f"density grows without bound as site '{site}' goes to the edge of its range (a Newton solve from the "
            f"prior median moved its unconstrained value from {start[index]:.3g} to {end[index]:.3g} without "
            "converging). A centred hierarchical scale does this: with theta ~ Normal(0, tau), the density of "
            "theta at 0 grows without bound as tau -> 0, whatever the data. Fix: write theta = tau * z with "
            "z ~ Normal(0, 1) (non-centred: the mode exists), give the scale a prior that vanishes at 0 "
            "(dist.Gamma(2.0, 2.0), dist.LogNormal(0.0, 1.0)), or fix it to a value."
        )
