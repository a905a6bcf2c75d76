"""Off-policy estimators as pure functions of per-round terms (Open Bandit Pipeline's formulas).

Notation, for round ``i`` of ``n``: logged action ``a_i``, reward ``r_i``, logged propensity
``p_i``, target action distribution ``pi_e(. | i)``, reward model ``q_hat(i, .)``, importance
weight ``w_i = pi_e(a_i | i) / p_i``, and ``q_pi(i) = sum_a pi_e(a | i) q_hat(i, a)`` (OBP's
``np.average(q_hat, weights=pi_e)``, which divides by ``sum_a pi_e(a | i)``). Each estimator is
OBP's (``obp/ope/estimators.py``, single slot, ``position = 0``):

==============================  ===============================================================
estimator                       value
==============================  ===============================================================
``IPS(clip=lam)``               ``mean(min(w, lam) r)``                          (IPW, ``lambda_``)
``SNIPS()``                     ``mean(w r) / mean(w)``                          (SNIPW)
``DM()``                        ``mean(q_pi)``                                   (DirectMethod)
``DR(clip=lam)``                ``mean(q_pi + min(w, lam) (r - q_hat(a)))``      (DoublyRobust)
``SNDR()``                      ``mean(q_pi) + mean(w (r - q_hat(a))) / mean(w)``  (SNDR)
``SwitchDR(threshold=tau)``     ``mean(q_pi + 1{w <= tau} w (r - q_hat(a)))``    (Switch-DR)
``DRos(shrinkage=lam)``         ``mean(q_pi + lam w / (w^2 + lam) (r - q_hat(a)))``  (DR-os)
==============================  ===============================================================

Switch-DR follows OBP (Wang et al. 2017): the importance-weighted correction is *kept* where
``w <= tau`` and dropped above it (PyBandits keeps it above the threshold instead; we follow
OBP). DR-os is Su et al. (2020)'s shrinkage ``lam w / (w^2 + lam)``; ``lam = inf`` gives DR,
``lam = 0`` gives DM (OBP's default; where ``w = 0`` OBP's formula is ``0/0`` at ``lam = 0``,
we take the limit, weight 0).

Every value is a function of weighted means of a few per-round columns (:meth:`Estimator.columns`,
:meth:`Estimator.combine`): with weights ``c`` (counts of a bootstrap resample, or ones) the
means are ``sum_i c_i col_i / sum_i c_i``, so a bootstrap is one matrix product of resample
counts by columns, and self-normalised estimators resample their normaliser too.
:meth:`Estimator.round_terms` gives OBP's ``_estimate_round_rewards`` (the per-round terms
whose mean is the value, used for the CLT standard error ``std / sqrt(n)``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, NamedTuple

import jax.numpy as jnp

from bayesbandit._typing import Array
from bayesbandit.errors import InvalidInput

__all__ = ["Parts", "parts", "Estimator", "IPS", "SNIPS", "DM", "DR", "SNDR", "SwitchDR", "DRos", "DEFAULT_ESTIMATORS"]


class Parts(NamedTuple):
    """Per-round primitives every estimator is built from, each shape (n,)."""

    w: Array  # importance weight pi_e(a_i | i) / p_i
    reward: Array  # r_i
    q_action: Array  # q_hat(i, a_i)
    q_pi: Array  # sum_a pi_e(a | i) q_hat(i, a) / sum_a pi_e(a | i)


def parts(action: Array, reward: Array, pscore: Array, pi_e: Array, *, q_hat: Array | None = None) -> Parts:
    """The :class:`Parts` of one target: ``pi_e`` and ``q_hat`` of shape (n, K) (``q_hat`` None: zeros)."""
    rows = jnp.arange(action.shape[0])
    w = pi_e[rows, action] / pscore
    if q_hat is None:
        zero = jnp.zeros_like(w)
        return Parts(w, reward, zero, zero)
    q_pi = jnp.sum(pi_e * q_hat, axis=1) / jnp.sum(pi_e, axis=1)
    return Parts(w, reward, q_hat[rows, action], q_pi)


def _check_level(owner: str, name: str, value: float, *, low: float) -> float:
    value = float(value)
    if not (value >= low) or math.isnan(value):
        raise InvalidInput(
            f"The '{name}' parameter of {owner} must be a number >= {low:g} (inf allowed). Got {value!r}. "
            f"Fix: pass {name}= a value >= {low:g}."
        )
    return value


@dataclass(frozen=True)
class Estimator:
    """An off-policy estimator (module docstring). Frozen and hashable: static under ``jit``."""

    name: ClassVar[str]
    needs_model: ClassVar[bool] = False

    @property
    def label(self) -> str:
        """The name with the parameters that differ from their defaults, e.g. ``"IPS(clip=10)"``."""
        args = [
            f"{f.name}={getattr(self, f.name):g}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != f.default
        ]
        return self.name + (f"({', '.join(args)})" if args else "")

    def columns(self, p: Parts) -> Array:
        """Per-round columns, shape (n, m), whose weighted means :meth:`combine` maps to the value."""
        raise NotImplementedError

    def combine(self, means: Array) -> Array:
        """The value from the columns' means (shape (..., m)); default the first mean."""
        return means[..., 0]

    def value(self, p: Parts, counts: Array | None = None) -> Array:
        """The estimate, with rows weighted by ``counts`` (a resample's multiplicities; None: ones)."""
        cols = self.columns(p)
        if counts is None:
            return self.combine(jnp.mean(cols, axis=0))
        return self.combine(counts @ cols / jnp.sum(counts))

    def round_terms(self, p: Parts) -> Array:
        """OBP's per-round estimated rewards, shape (n,): their mean is :meth:`value`."""
        return self.columns(p)[:, 0]


@dataclass(frozen=True)
class IPS(Estimator):
    """Inverse propensity scoring with weights clipped at ``clip`` (OBP's IPW, ``lambda_``)."""

    _: KW_ONLY
    clip: float = math.inf
    name: ClassVar[str] = "IPS"

    def __post_init__(self) -> None:
        _check_level("IPS", "clip", self.clip, low=0.0)

    def columns(self, p: Parts) -> Array:
        return (jnp.minimum(p.w, self.clip) * p.reward)[:, None]


@dataclass(frozen=True)
class SNIPS(Estimator):
    """Self-normalised IPS: ``mean(w r) / mean(w)`` (OBP's SNIPW)."""

    name: ClassVar[str] = "SNIPS"

    def columns(self, p: Parts) -> Array:
        return jnp.stack([p.w * p.reward, p.w], axis=1)

    def combine(self, means: Array) -> Array:
        return means[..., 0] / means[..., 1]

    def round_terms(self, p: Parts) -> Array:
        return p.w * p.reward / jnp.mean(p.w)


@dataclass(frozen=True)
class DM(Estimator):
    """The direct method: the reward model's value of the target, ``mean(q_pi)``."""

    name: ClassVar[str] = "DM"
    needs_model: ClassVar[bool] = True

    def columns(self, p: Parts) -> Array:
        return p.q_pi[:, None]


@dataclass(frozen=True)
class DR(Estimator):
    """Doubly robust: ``mean(q_pi + min(w, clip) (r - q_hat(a)))`` (Dudik et al. 2011; OBP's DoublyRobust)."""

    _: KW_ONLY
    clip: float = math.inf
    name: ClassVar[str] = "DR"
    needs_model: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_level("DR", "clip", self.clip, low=0.0)

    def columns(self, p: Parts) -> Array:
        return (p.q_pi + jnp.minimum(p.w, self.clip) * (p.reward - p.q_action))[:, None]


@dataclass(frozen=True)
class SNDR(Estimator):
    """Self-normalised DR: ``mean(q_pi) + mean(w (r - q_hat(a))) / mean(w)``."""

    name: ClassVar[str] = "SNDR"
    needs_model: ClassVar[bool] = True

    def columns(self, p: Parts) -> Array:
        return jnp.stack([p.q_pi, p.w * (p.reward - p.q_action), p.w], axis=1)

    def combine(self, means: Array) -> Array:
        return means[..., 0] + means[..., 1] / means[..., 2]

    def round_terms(self, p: Parts) -> Array:
        return p.q_pi + p.w * (p.reward - p.q_action) / jnp.mean(p.w)


@dataclass(frozen=True)
class SwitchDR(Estimator):
    """Switch-DR: the DR correction kept where ``w <= threshold`` (OBP; Wang et al. 2017)."""

    _: KW_ONLY
    threshold: float = math.inf
    name: ClassVar[str] = "Switch-DR"
    needs_model: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_level("SwitchDR", "threshold", self.threshold, low=0.0)

    def columns(self, p: Parts) -> Array:
        return (p.q_pi + jnp.where(p.w <= self.threshold, p.w, 0.0) * (p.reward - p.q_action))[:, None]


@dataclass(frozen=True)
class DRos(Estimator):
    """DR with optimistic shrinkage: weight ``lam w / (w^2 + lam)`` (Su et al. 2020; OBP's DoublyRobustWithShrinkage)."""

    _: KW_ONLY
    shrinkage: float = 0.0
    name: ClassVar[str] = "DR-os"
    needs_model: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_level("DRos", "shrinkage", self.shrinkage, low=0.0)

    def columns(self, p: Parts) -> Array:
        if math.isinf(self.shrinkage):
            shrunk = p.w
        else:  # 0 where lam w = 0 (OBP's formula is 0/0 there when lam = 0 and w = 0)
            numerator = self.shrinkage * p.w
            shrunk = jnp.where(numerator == 0, 0.0, numerator / jnp.where(numerator == 0, 1.0, p.w**2 + self.shrinkage))
        return (p.q_pi + shrunk * (p.reward - p.q_action))[:, None]


DEFAULT_ESTIMATORS: tuple[Estimator, ...] = (
    IPS(),
    SNIPS(),
    DM(),
    DR(),
    SNDR(),
    SwitchDR(threshold=100.0),
    DRos(shrinkage=100.0),
)
"""The estimators :func:`bayesbandit.ope.evaluate` runs by default."""
