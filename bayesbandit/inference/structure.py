"""The reward-model contract, checked by tracing the program (what :func:`bayesbandit.bind` learns).

A reward model is a NumPyro program ``model(x, y=None)`` with continuous latent sites (each
with a prior), optionally per-row discrete sites marked ``infer={"enumerate": "parallel"}``
(summed out: :mod:`bayesbandit.inference.enumeration`), and exactly one observed site (default name ``"y"``) whose distribution has batch
shape ``(n,)`` and whose ``.mean`` (for a categorical or ordinal reward, its expected label) is
the expected reward of each row of ``x``. The program must be traceable by ``jax.jit``.
:func:`inspect_program` traces it abstractly at two row counts, raises a
:class:`~bayesbandit.errors.ModelSpecError` naming the site for every breach of the contract,
and returns a :class:`ProgramStructure`: the latent sites, how to unflatten them, a starting
point, the reward's support, and whether the observed log-probability is affine in the reward.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.flatten_util import ravel_pytree
from numpyro.distributions import biject_to, constraints

from bayesbandit._compile import jit_once
from bayesbandit._typing import Array, Model
from bayesbandit.errors import ModelSpecError
from bayesbandit.inference.enumeration import is_enumerated
from bayesbandit.inference.program import log_prob, run_program, trace_at, trace_program

__all__ = ["SiteInfo", "ProgramStructure", "inspect_program", "describe_support"]

# Reward values tried as support points, in order of preference (the first two valid ones are
# the interpolation's reference points; every further valid one is a check of affinity).
_SUPPORT_CANDIDATES = (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, 1.5, 5.0, 0.25, 0.75, 0.1, 0.9, 4.0, 7.0, -2.0, -0.5)
_AFFINE_PROBES = 6  # random parameter values at which affinity is checked
_AFFINE_RTOL = 1e-9
_INSPECT_ROWS = (3, 4)


@dataclass(frozen=True)
class SiteInfo:
    """A latent site: its name, the shape of its (constrained) value, and the size and whether
    its support is constrained (mapped to the real line by a transform) in the flat vector."""

    name: str
    shape: tuple[int, ...]
    _: KW_ONLY
    size: int = 1
    constrained: bool = False


@dataclass(frozen=True, eq=False)
class ProgramStructure:
    """What :func:`bind` learned by tracing the program (not part of the model's identity)."""

    latents: tuple[SiteInfo, ...]
    unravel: Callable[[Array], dict[str, Array]]
    init_theta: np.ndarray
    support: Any
    support_name: str
    y_ref: tuple[float, float]
    is_affine: bool


def inspect_program(model: Model, feature_shape: tuple[int, ...], obs_site: str) -> ProgramStructure:
    """Check ``model`` against the reward-model contract and learn its structure.

    The program is traced abstractly (:func:`jax.make_jaxpr`: shapes, types and distributions,
    no operation run) at two row counts, without and with a reward; what needs numbers (each
    latent site's prior median, the reward's support) comes from one compiled run.

    Raises
    ------
    ModelSpecError
        Naming the site: no observed site ``obs_site``, several observed sites, a discrete
        latent not marked for enumeration, an enumerated one shared by rows or on which a site
        other than the reward depends, a latent whose shape changes with the number of rows, a reward site of the
        wrong shape, no latent at all, or a program that fails when called.
    """
    if not callable(model):
        raise ModelSpecError(f"a reward model must be a NumPyro program model(x, y=None); got {type(model).__name__}.")
    rng = np.random.default_rng(0)
    traces = []
    for n in _INSPECT_ROWS:
        x = rng.uniform(-1.0, 1.0, size=(n, *feature_shape))
        tr_free = _abstract_trace(model, x, None)
        if obs_site not in tr_free or tr_free[obs_site]["type"] != "sample":
            found = [k for k, s in tr_free.items() if s["type"] == "sample"]
            raise ModelSpecError(
                f"the reward program has no sample site named '{obs_site}' (sample sites: {found}); "
                f"name the reward site '{obs_site}' or pass obs_site=."
            )
        y = tr_free[obs_site]["value"]
        tr = _abstract_trace(model, x, jax.ShapeDtypeStruct(np.shape(y), y.dtype))
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

    latents, enumerated = [], []
    for name, site in tr.items():
        if site["type"] != "sample" or site["is_observed"]:
            continue
        if is_enumerated(site):
            _check_enumerated(name, [t[name] for _, t in traces], [xn.shape[0] for xn, _ in traces])
            enumerated.append(name)
            continue
        if site["fn"].support.is_discrete:
            raise ModelSpecError(
                f"latent site '{name}' is discrete ({type(site['fn']).__name__}) and not marked for enumeration. "
                f"Fix: for a per-row discrete site, mark it numpyro.sample('{name}', ..., "
                "infer={'enumerate': 'parallel'}) so that it is summed out; otherwise marginalise it out in the "
                "program or make it observed."
            )
        shapes = {tuple(np.shape(t[name]["value"])) if name in t else None for _, t in traces}
        if len(shapes) != 1:
            raise ModelSpecError(
                f"latent site '{name}' changes shape with the number of rows ({sorted(map(str, shapes))}); "
                "per-row latent variables are not supported."
            )
        constrained = site["fn"].support not in (constraints.real, constraints.real_vector)
        latents.append(SiteInfo(name, tuple(np.shape(site["value"])), size=0, constrained=constrained))
    if not latents:
        raise ModelSpecError("the reward program has no latent sample site: there is nothing to learn.")

    latents.sort(key=lambda site: site.name)  # ravel_pytree flattens a dict in sorted-key order
    init_values, support = _numbers(model, x, obs_site, tuple(site.name for site in latents))
    latents = [dataclasses.replace(site, size=int(init_values[site.name].size)) for site in latents]
    if not jax.tree.leaves(obs["fn"].support):  # a support without parameters: the constraint object itself
        support = obs["fn"].support
    flat, unravel = ravel_pytree({k: jnp.asarray(v) for k, v in init_values.items()})
    if enumerated:
        _check_only_reward_depends_on(enumerated, model, obs_site, unravel, flat, x, tr)
    fn = obs["fn"]
    y_ref, is_affine = _reference_points(model, obs_site, feature_shape, unravel, flat, fn, support)
    return ProgramStructure(
        latents=tuple(latents),
        unravel=unravel,
        init_theta=np.asarray(flat, dtype=np.float64),
        support=support,
        support_name=f"{type(fn).__name__}: {describe_support(support)}",
        y_ref=y_ref,
        is_affine=is_affine,
    )


def _traced(build: Callable[[Any], dict], arg: Any) -> dict:
    """What ``build(arg)`` returns, traced, not run (:func:`jax.make_jaxpr`; ``arg``: a value or a shape
    and dtype). Values and distribution parameters in it are tracers: read only their shapes, dtypes and types."""
    box: dict[str, dict] = {}

    def run(arg: Any) -> None:
        box["out"] = build(arg)

    jax.make_jaxpr(run)(arg)
    return box["out"]


def _abstract_trace(model: Model, x: np.ndarray, y: Any) -> dict:
    """The program's trace on rows ``x`` and reward ``y`` (None, or its shape and dtype), traced, not run."""
    return _traced(lambda y: trace_program(model, x, y, 0), y)


def _check_enumerated(name: str, sites: list[dict], rows: list[int]) -> None:
    """Refuse an enumerated site that is not one discrete value per row with a finite support."""
    fn = sites[0]["fn"]
    if not fn.has_enumerate_support:
        raise ModelSpecError(
            f"latent site '{name}' is marked for enumeration but its distribution ({type(fn).__name__}) has no "
            "finite support to sum over. Fix: use a distribution with a finite support (Bernoulli, Categorical, "
            "DiscreteUniform) or marginalise the site out in the program."
        )
    shapes = [tuple(site["fn"].batch_shape) + tuple(site["fn"].event_shape) for site in sites]
    if any(shape != (n,) for shape, n in zip(shapes, rows, strict=True)):
        raise ModelSpecError(
            f"latent site '{name}' is marked for enumeration but is not one value per row (shapes {shapes} for "
            f"{rows} rows): only per-row discrete sites are summed out, since a discrete value shared by all rows "
            "couples them and the policies' likelihood is a sum over rows. Fix: draw it inside the rows' plate "
            "(numpyro.plate('rows', x.shape[0])), or write the marginal likelihood in the program, for a mixture "
            "dist.MixtureSameFamily(dist.Categorical(weights), components)."
        )


def _check_only_reward_depends_on(
    enumerated: list[str], model: Model, obs_site: str, unravel: Callable, flat: Array, x: np.ndarray, tr: dict
) -> None:
    """Refuse a site other than the reward whose distribution changes when the enumerated sites take every value."""
    enumerated_trace = _traced(lambda theta: trace_at(model, unravel, theta, jnp.asarray(x))[0], flat)
    for name, site in enumerated_trace.items():
        if site["type"] != "sample" or name == obs_site or name in enumerated:
            continue
        if tuple(site["fn"].batch_shape) != tuple(tr[name]["fn"].batch_shape):
            raise ModelSpecError(
                f"site '{name}' depends on the enumerated site(s) {enumerated}: only the reward site "
                f"'{obs_site}' may depend on them (each then has one value per combination, not one value). "
                f"Fix: make '{name}' independent of {enumerated}, or write its marginal in the program."
            )


def _numbers(model: Model, x: np.ndarray, obs_site: str, names: tuple[str, ...]) -> tuple[dict[str, np.ndarray], Any]:
    """Each latent site's prior median (unconstrained, float64) and the reward's support, from one compiled run.

    A site's median is taken over 101 draws from its prior given the upstream sites' values of
    one seeded run of the program.
    """

    @jit_once
    def numbers(x: Array) -> tuple[dict[str, Array], Any]:
        tr = trace_program(model, x, None, 0)
        medians = {}
        for name in names:
            fn = tr[name]["fn"]
            median = jnp.median(fn.sample(jax.random.PRNGKey(0), (101,)), axis=0)
            medians[name] = biject_to(fn.support).inv(median)
        return medians, tr[obs_site]["fn"].support

    with jax.core.eval_context():
        medians, support = numbers(x)
    return {k: np.asarray(v, dtype=np.float64) for k, v in medians.items()}, jax.tree.map(np.asarray, support)


def describe_support(support: Any) -> str:
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


def _reference_points(model, obs_site, feature_shape, unravel, flat, fn, support):
    """Pick two support points and decide numerically whether log p(y | theta) is affine in y.

    ``log p(y | theta) = A(theta) y + B(theta) + C(y)`` holds exactly when, for every further
    support point ``y_k``, the residual of ``log p(y_k)`` from the straight line through
    ``(y0, log p(y0))`` and ``(y1, log p(y1))`` does not depend on ``theta``. The residuals at
    every valid candidate point are compared across several random parameter values and rows;
    a single parameter-dependent residual rules the shortcut out.

    Only a boolean support (Bernoulli) has no third point; there every function is affine on the
    support. Any other support with fewer than three valid points is *not* taken as affine
    (nothing could prove it), and the binding keeps the exact per-row likelihood.
    """
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.uniform(-1.0, 1.0, size=(4, *feature_shape)))
    thetas = [jnp.asarray(np.asarray(flat) + rng.normal(0, 0.7, size=flat.shape)) for _ in range(_AFFINE_PROBES)]
    probe = jit_once(functools.partial(_probe, model, obs_site, unravel))  # one program for every theta and reward
    probes = [[probe(t, x, np.full(x.shape[:1], c)) for c in _SUPPORT_CANDIDATES] for t in thetas]
    inside = np.asarray([[p[0] for p in row] for row in probes])  # (theta, candidate): the reward is in the support
    log_p = np.asarray([[p[1] for p in row] for row in probes])  # (theta, candidate, row)
    valid = [k for k in range(len(_SUPPORT_CANDIDATES)) if inside[:, k].all() and np.isfinite(log_p[:, k]).all()]
    if len(valid) < 2:
        raise ModelSpecError(
            f"could not find two reward values with finite log-probability in the support of observed site "
            f"'{obs_site}' ({type(fn).__name__}); tried {list(_SUPPORT_CANDIDATES)}."
        )
    (y0, k0), (y1, k1) = sorted((_SUPPORT_CANDIDATES[k], k) for k in valid[:2])
    if len(valid) == 2:
        return (y0, y1), support is constraints.boolean
    for k in valid[2:]:
        yk = _SUPPORT_CANDIDATES[k]
        residuals = log_p[:, k] - log_p[:, k0] - (yk - y0) * (log_p[:, k1] - log_p[:, k0]) / (y1 - y0)
        spread = np.max(np.abs(residuals - residuals[0]))
        if not spread <= _AFFINE_RTOL * (1.0 + np.max(np.abs(residuals))):
            return (y0, y1), False
    return (y0, y1), True


def _probe(model: Model, obs_site: str, unravel: Callable[[Array], dict[str, Array]], theta: Array, x: Array, y: Array):
    """Whether rewards ``y`` lie in the observed site's support, and their log-probability ``log p(y | x, theta)``."""
    fn = run_program(model, obs_site, unravel, theta, x)[1]["fn"]
    with numpyro.validation_enabled(False):
        return jnp.all(jnp.asarray(fn.support.check(y))), log_prob(fn, y)
