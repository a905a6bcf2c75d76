"""``compare``: Laplace, FPL and NUTS on the same bound model and data, with distances and flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import bayesbandit as bb
from bayesbandit.errors import InvalidInput
from bayesbandit.inference.posteriors import NOISES
from bayesbandit.validation import check_choice, check_int, check_scalar, support_hull

from ._arviz import az
from ._convert import flat_parameter_names, to_inference_data
from ._fit import MethodFit, fit_fpl, fit_laplace, fit_nuts
from ._metrics import gaussian_kl, interval_coverage, marginal_w1

__all__ = ["Comparison", "Thresholds", "compare", "METHODS"]

METHODS = ("laplace", "fpl", "nuts")
"""The methods :func:`compare` fits: the Laplace approximation, the FPL ensemble, NUTS."""
_KEY_INDEX = {"laplace": 0, "fpl": 1, "nuts": 2, "init": 3}  # one key per method, whatever is asked


@dataclass(frozen=True, kw_only=True)
class Thresholds:
    """When :func:`compare` raises a flag.

    Attributes
    ----------
    kl_max : float
        An approximation is poor when ``KL(N_nuts || N_method) > kl_max``. ``0.1`` is the KL
        between two unit-variance Gaussians whose means differ by ``0.45`` sd (or between
        ``N(0, 1)`` and ``N(0, s^2)`` with ``s ~ 1.6`` or ``s ~ 0.67``). Its Monte Carlo floor
        (the bias of the NUTS Gaussian fitted from ``N`` effective draws) is about
        ``p (p + 3) / (4 N)``: ``0.01`` for ``p = 5``, ``N = 1000``.
    coverage_tol : float
        An approximation is poor when its central 90% intervals cover a fraction of the NUTS
        draws outside ``0.9 +/- coverage_tol`` (averaged over parameters). ``0.05`` is about
        five Monte Carlo standard errors of that average for 1,000 effective draws.
    rhat_max : float
        NUTS did not converge when the largest rank-normalised split R-hat exceeds this
        (``1.01``, Vehtari et al. 2021).
    ess_per_chain : float
        NUTS did not converge when the smallest bulk or tail ESS is below
        ``ess_per_chain * num_chains`` (Vehtari et al. recommend 400 for 4 chains: 100 each).
    max_divergences : int
        NUTS is unreliable when it reports more divergent transitions than this (``0``).
    """

    kl_max: float = 0.1
    coverage_tol: float = 0.05
    rhat_max: float = 1.01
    ess_per_chain: float = 100.0
    max_divergences: int = 0

    def __post_init__(self) -> None:
        check_scalar("Thresholds", "kl_max", self.kl_max, low=0.0, high_open=True)
        check_scalar("Thresholds", "coverage_tol", self.coverage_tol, low=0.0, high=0.9)
        check_scalar("Thresholds", "rhat_max", self.rhat_max, low=1.0, high_open=True)
        check_scalar("Thresholds", "ess_per_chain", self.ess_per_chain, low=0.0, high_open=True)
        check_int("Thresholds", "max_divergences", self.max_divergences, low=0)


@dataclass
class Comparison:
    """Result of :func:`compare` (see there for the maths).

    Attributes
    ----------
    idata : dict of str to arviz.InferenceData
        Per method: ``posterior`` (the program's latent sites, constrained, dims
        ``("chain", "draw", ...)``), ``unconstrained_posterior`` (same sites, unconstrained) and,
        for NUTS, ``sample_stats`` (``diverging``, ``energy``, ``acceptance_rate``...). The
        independent draws of Laplace and FPL are split into 4 chains
        (:func:`to_inference_data` with ``independent=True``), so ``arviz.summary`` gives them an
        R-hat near 1 and an ESS near ``num_draws``.
    table : pandas.DataFrame
        One row per approximation (index ``method``), columns ``kl``, ``w1_max``,
        ``coverage90``, ``mean_shift_max``, ``sd_ratio_min``, ``sd_ratio_max``, ``poor``,
        ``degenerate``, ``time_s``. Empty distances (NaN) when NUTS was not run (and a flag says
        so). ``degenerate`` marks a row whose distances are not meaningful: draws that are not
        finite, or that do not spread along some parameter (an infinite ``kl``); a flag names the
        cause and the rows of the data behind it.
    params : pandas.DataFrame
        Posterior mean and sd of every constrained parameter (rows ``theta[0]``, ``sigma``...)
        under each method (columns ``(method, "mean" | "sd")``).
    nuts_diagnostics : pandas.DataFrame or None
        ``arviz.summary(kind="diagnostics")`` of the NUTS posterior: ``r_hat``, ``ess_bulk``,
        ``ess_tail``, MCSE per parameter.
    rhat_max, ess_bulk_min, ess_tail_min : float
        Worst R-hat and ESS over parameters (NaN without NUTS).
    divergences : int
        Divergent NUTS transitions after warm-up (-1 without NUTS).
    flags : list of str
        Plain-language warnings; empty when all is well.
    draws : dict of str to array, shape (chain, draw, p)
        Flat unconstrained draws per method (what the distances are computed on; one chain for
        Laplace and FPL).
    param_names : list of str
        Labels of the ``p`` flat unconstrained parameters.
    thresholds : Thresholds
    """

    idata: dict[str, az.InferenceData]
    table: pd.DataFrame
    params: pd.DataFrame
    nuts_diagnostics: pd.DataFrame | None
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    flags: list[str]
    draws: dict[str, np.ndarray]
    param_names: list[str]
    _: KW_ONLY
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def methods(self) -> tuple[str, ...]:
        """Methods fitted, in the order asked."""
        return tuple(self.idata)

    def __repr__(self) -> str:
        flags = "\n".join(f"  - {f}" for f in self.flags) or "  (none)"
        return (
            f"Comparison(methods={list(self.methods)}, p={len(self.param_names)})\n"
            f"{self.table.to_string(float_format=lambda v: f'{v:.4g}')}\n"
            f"NUTS: max R-hat {self.rhat_max:.4f}, min bulk ESS {self.ess_bulk_min:.0f}, "
            f"min tail ESS {self.ess_tail_min:.0f}, divergences {self.divergences}\n"
            f"flags:\n{flags}"
        )


def _as_float(name: str, value, shape: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        what = f"an array of dtype {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__
        raise InvalidInput(
            f"compare: '{name}' must be a numeric array of shape {shape}. Got {what}. Fix: pass a float array."
        ) from exc


def _row_list(rows: np.ndarray, n: int) -> str:
    """Row indices for a message: all of them, or the first ten and a count."""
    if rows.size == n:
        return f"all {n} rows"
    shown = ", ".join(str(int(i)) for i in rows[:10])
    return f"rows [{shown}{', ...' if rows.size > 10 else ''}] ({rows.size} of {n})"


def _check_arrays(x, y, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x`` (n, *feature_shape), ``y`` (n,) and ``w`` (n,) as finite float64 arrays, ``w >= 0``."""
    x = _as_float("x", x, "(n, *feature_shape)")
    y = _as_float("y", y, "(n,)")
    if x.ndim < 2 or x.shape[0] == 0 or x[0].size == 0:
        raise InvalidInput(
            f"compare: 'x' must have shape (n, *feature_shape) with n >= 1 rows of at least one feature. Got shape "
            f"{x.shape}. "
            "Fix: pass one row of features per observation (x[:, None] for a single feature)."
        )
    n = x.shape[0]
    if y.shape != (n,):
        raise InvalidInput(
            f"compare: 'y' must have shape ({n},), one reward per row of x. Got shape {y.shape}. "
            "Fix: pass y as a flat array of the rows' rewards."
        )
    w = np.ones_like(y) if w is None else _as_float("w", w, "(n,)")
    if w.shape != (n,):
        raise InvalidInput(
            f"compare: 'w' must have shape ({n},), one weight per row of x. Got shape {w.shape}. "
            "Fix: pass one count per row, or omit w for ones."
        )
    for name, arr in (("x", x), ("y", y), ("w", w)):
        bad = ~np.isfinite(arr.reshape(n, -1)).all(axis=1)
        if bad.any():
            raise InvalidInput(
                f"compare: '{name}' must be finite. Got NaN or inf in {_row_list(np.flatnonzero(bad), n)}. "
                "Fix: drop or impute those rows."
            )
    if np.any(w < 0):
        raise InvalidInput(
            f"compare: 'w' must be non-negative (counts). Got {w.min():g} in "
            f"{_row_list(np.flatnonzero(w < 0), n)}. Fix: pass pull counts, 0 to mask a row."
        )
    return x, y, w


def _uninformative(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows of zero weight, rows of positive weight with all-zero features, feature columns zero in every other row)."""
    n = x.shape[0]
    flat = x.reshape(n, -1)
    unweighted = np.flatnonzero(w == 0)
    zero_rows = np.flatnonzero((w > 0) & ~np.any(flat != 0, axis=1))
    used = (w > 0) & np.any(flat != 0, axis=1)
    zero_columns = np.flatnonzero(~np.any(flat[used] != 0, axis=0)) if used.any() else np.arange(flat.shape[1])
    return unweighted, zero_rows, zero_columns


def _data_note(x: np.ndarray, w: np.ndarray) -> str:
    """Which rows (and feature columns) of the data inform nothing, for a message; empty if none."""
    n = x.shape[0]
    unweighted, zero_rows, zero_columns = _uninformative(x, w)
    parts = []
    if unweighted.size:
        parts.append(f"{_row_list(unweighted, n)} have zero weight")
    if zero_rows.size:
        parts.append(f"{_row_list(zero_rows, n)} have all-zero features")
    if zero_columns.size:
        parts.append(f"feature columns {zero_columns[:10].tolist()} are zero in every other row")
    return "; ".join(parts)


def _check_informative(x: np.ndarray, w: np.ndarray, methods: Sequence[str]) -> None:
    """Refuse data from which no row informs the perturbed-MAP ensemble."""
    if "fpl" not in methods:
        return
    n = x.shape[0]
    unweighted, zero_rows, _ = _uninformative(x, w)
    if unweighted.size + zero_rows.size < n:
        return
    causes = []
    if unweighted.size:
        causes.append(f"{_row_list(unweighted, n)} have zero weight")
    if zero_rows.size:
        causes.append(f"{_row_list(zero_rows, n)} have all-zero features")
    raise InvalidInput(
        f"compare: no row informs the parameters: {' and '.join(causes)}. The perturbed-MAP ensemble ('fpl') "
        "perturbs the rewards of such rows to no effect, so every member would be the MAP: its covariance "
        "singular, its KL to NUTS infinite and its coverage 0. Fix: pass at least one row with a positive "
        "weight and non-zero features, or leave 'fpl' out of methods."
    )


def _check_support(bound: bb.inference.BoundModel, y: np.ndarray, w: np.ndarray) -> None:
    lo, hi = support_hull(bound.support)
    used = y[w > 0]
    if np.any((used < lo) | (used > hi)):
        bad = used[(used < lo) | (used > hi)][0]
        raise InvalidInput(
            f"y contains {bad:g}, outside [{lo:g}, {hi:g}], the range of observed site '{bound.obs_site}' "
            f"({bound.support_name}); rewards and per-arm mean rewards must lie there. Fix: pass rewards the "
            "model can produce."
        )
    if not bound.is_affine:
        with jax.ensure_compile_time_eval():
            ok = np.asarray(bound.support.check(jnp.asarray(y[w > 0])))
        if not np.all(ok):
            raise InvalidInput(
                f"y has values outside the support of observed site '{bound.obs_site}' ({bound.support_name}) "
                f"and its log-probability is not affine in y, so averaged rewards cannot be used. Fix: pass single "
                "rewards (w = 1) the model can produce."
            )


def _check_settings(
    methods, num_draws, fpl_a, fpl_noise, num_warmup, num_chains, seed, chain_method, thresholds
) -> tuple[tuple[str, ...], int, int, int, int]:
    """The settings of :func:`compare`, checked: ``(methods, num_draws, num_warmup, num_chains, seed)``."""
    if isinstance(methods, str):
        raise InvalidInput(
            f"compare: 'methods' must be a sequence of method names. Got the string {methods!r}. "
            f"Fix: pass a tuple, e.g. methods=({methods!r},)."
        )
    try:
        methods = tuple(methods)
    except TypeError as exc:
        raise InvalidInput(
            f"compare: 'methods' must be a sequence of names among {METHODS}. Got {methods!r}. "
            "Fix: pass e.g. methods=('laplace', 'nuts')."
        ) from exc
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods or len(set(methods)) != len(methods):
        raise InvalidInput(
            f"compare: 'methods' must be distinct names among {METHODS}. Got {methods}. "
            "Fix: pass e.g. methods=('laplace', 'nuts')."
        )
    num_draws = check_int("compare", "num_draws", num_draws, low=2)  # a covariance needs two draws
    num_warmup = check_int("compare", "num_warmup", num_warmup, low=0)
    num_chains = check_int("compare", "num_chains", num_chains, low=1)
    check_scalar("compare", "fpl_a", fpl_a, low=0.0, high_open=True)
    check_choice("compare", "fpl_noise", fpl_noise, NOISES)
    seed = check_int("compare", "seed", seed, low=0, high=2**32 - 1)
    check_choice("compare", "chain_method", chain_method, ("sequential", "vectorized", "parallel"))
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        raise InvalidInput(
            f"compare: 'thresholds' must be a Thresholds or None. Got {type(thresholds).__name__} {thresholds!r}. "
            "Fix: pass Thresholds(kl_max=..., ...)."
        )
    return methods, num_draws, num_warmup, num_chains, seed


def _row(fit: MethodFit, ref: MethodFit | None, thresholds: Thresholds, names: list[str]) -> tuple[dict, str]:
    """The table row of ``fit`` against ``ref``, and why it is degenerate (empty when it is not)."""
    row = {
        "kl": np.nan,
        "w1_max": np.nan,
        "coverage90": np.nan,
        "mean_shift_max": np.nan,
        "sd_ratio_min": np.nan,
        "sd_ratio_max": np.nan,
        "poor": False,
        "degenerate": False,
        "time_s": fit.info["time_s"],
    }
    if ref is None:
        return row, ""
    reason = ""
    if not all(np.all(np.isfinite(a)) for a in (ref.draws, ref.mean, ref.cov)):
        reason = "the NUTS draws are not finite, so no distance to them is defined"
    elif not all(np.all(np.isfinite(a)) for a in (fit.draws, fit.mean, fit.cov)):
        reason = "its draws are not finite (a fit failed), so no distance to NUTS is defined"
    if reason:
        row.update(poor=True, degenerate=True)
        return row, reason
    p = ref.draws.shape[-1]
    ref_draws = ref.draws.reshape(-1, p)
    draws = fit.draws.reshape(-1, p)
    ref_sd = np.sqrt(np.diag(ref.cov))
    sd = np.sqrt(np.diag(fit.cov))
    if np.any(ref_sd == 0):
        flat = [names[j] for j in np.flatnonzero(ref_sd == 0)][:10]
        row.update(poor=True, degenerate=True)
        return row, f"the NUTS draws do not move along {flat} (sd 0), so no distance to them is defined"
    row["kl"] = gaussian_kl(ref.mean, ref.cov, fit.mean, fit.cov)
    row["w1_max"] = float(np.max(marginal_w1(ref_draws, draws)))
    row["coverage90"] = float(np.mean(interval_coverage(ref_draws, draws, prob=0.9)))
    row["mean_shift_max"] = float(np.max(np.abs(fit.mean - ref.mean) / ref_sd))
    row["sd_ratio_min"] = float(np.min(sd / ref_sd))
    row["sd_ratio_max"] = float(np.max(sd / ref_sd))
    row["poor"] = bool(
        not np.isfinite(row["kl"])
        or row["kl"] > thresholds.kl_max
        or abs(row["coverage90"] - 0.9) > thresholds.coverage_tol
    )
    if not np.isfinite(row["kl"]):
        row["degenerate"] = True
        flat = [names[j] for j in np.flatnonzero(sd == 0)][:10]
        where = f"do not spread along {flat} (sd 0)" if flat else "lie in a subspace (their covariance is singular)"
        reason = (
            f"its draws {where}, so KL(N_nuts || N_{fit.name}) = inf and its intervals hold "
            f"{row['coverage90']:.1%} of the NUTS draws"
        )
    return row, reason


def _approximation_flags(
    name: str, row: dict, fit: MethodFit, thresholds: Thresholds, reason: str, data_note: str
) -> list[str]:
    flags = []
    if not fit.info["converged"]:
        flags.append(
            f"{name}: {fit.info['num_fits'] - fit.info['num_converged']} of {fit.info['num_fits']} MAP "
            "fits did not converge (Newton); its draws may be off."
        )
    if row["degenerate"]:
        cause = f" In the data, {data_note}." if data_note else ""
        fix = (
            "Fix: compare on rows that inform every parameter (the perturbed-MAP ensemble moves only where "
            "perturbed rewards move the fit), or read the other rows of the table."
            if name == "fpl"
            else "Fix: check the fit's convergence flags and the data."
        )
        flags.append(f"{name}: degenerate comparison: {reason}; its row is marked degenerate.{cause} {fix}")
        return flags
    if np.isnan(row["kl"]) and np.isnan(row["coverage90"]):
        return flags
    if not np.isfinite(row["kl"]) or row["kl"] > thresholds.kl_max:
        flags.append(
            f"{name}: approximation is poor: KL(N_nuts || N_{name}) = {row['kl']:.3g} > {thresholds.kl_max} "
            f"(largest mean shift {row['mean_shift_max']:.2f} NUTS sd; sd ratio {row['sd_ratio_min']:.2f}"
            f"-{row['sd_ratio_max']:.2f})."
        )
    cov = row["coverage90"]
    if abs(cov - 0.9) > thresholds.coverage_tol:
        kind = "too narrow or shifted" if cov < 0.9 else "too wide"
        flags.append(
            f"{name}: approximation is poor: its 90% intervals hold {cov:.1%} of the NUTS draws "
            f"(want 90% +/- {thresholds.coverage_tol:.0%}); its intervals are {kind}."
        )
    return flags


def _nuts_flags(rhat: float, ess_bulk: float, ess_tail: float, div: int, num_chains: int, t: Thresholds) -> list[str]:
    flags = []
    ess_min = t.ess_per_chain * num_chains
    if not rhat <= t.rhat_max:
        flags.append(
            f"nuts: not converged: largest R-hat {rhat:.3f} > {t.rhat_max}; run more warm-up/draws before "
            "trusting the distances."
        )
    if not min(ess_bulk, ess_tail) >= ess_min:
        flags.append(
            f"nuts: too few effective draws: min bulk ESS {ess_bulk:.0f}, min tail ESS {ess_tail:.0f} < {ess_min:.0f} "
            f"({t.ess_per_chain:.0f} per chain x {num_chains}); distances to NUTS are noisy."
        )
    if div > t.max_divergences:
        flags.append(
            f"nuts: {div} divergent transitions: the sampler may miss part of the posterior, so distances "
            "to it are unreliable (reparameterise or raise target_accept_prob)."
        )
    return flags


def compare(
    model,
    x,
    y,
    w=None,
    *,
    methods: Sequence[str] = METHODS,
    num_draws: int = 1000,
    fpl_a: float = 1.0,
    fpl_noise: str = "posterior",
    num_warmup: int = 1000,
    num_chains: int = 4,
    seed: int = 0,
    chain_method: str = "sequential",
    thresholds: Thresholds | None = None,
) -> Comparison:
    """Fit Laplace, an FPL ensemble and NUTS to the same posterior and measure how far apart they are.

    With the weighted potential ``U(theta) = -log p(theta) - sum_i w_i log p(y_i | x_i, theta)``
    in unconstrained space (:meth:`bayesbandit.inference.BoundModel.potential`):

    * ``laplace``: ``N(bar theta, H^{-1})``, ``bar theta = argmin U``, ``H = nabla^2 U(bar theta)``;
      ``num_draws`` draws.
    * ``fpl``: ``num_draws`` GLM-FPL draws (:func:`bayesbandit.perturbed_map` with ``a = fpl_a``
      and ``noise = fpl_noise``: the MAP of a perturbed prior and history), warm-started at
      ``bar theta``, where the reward variance is taken; for a program that is not a
      canonical-link GLM, random bootstrap weights on the rows instead of reward noise
      (:func:`bayesbandit.inference.posteriors.resolve_perturbation`).
    * ``nuts``: ``num_chains`` NUTS chains (dense mass matrix, target acceptance 0.8) of
      ``num_warmup + num_draws`` iterations on ``U``, started at ``bar theta + `` one Laplace draw
      each (dispersed starts let R-hat detect non-mixing), then mapped through
      ``bound.constrain``. The sampler is compiled once per model, data shape and setting:
      comparing new data of the same shape (as :func:`along_run` does) reuses it.

    Distances are computed in the unconstrained parameter space, against NUTS:

    * ``kl = KL(N_nuts || N_method)``, where ``N_nuts`` is the Gaussian moment-matched to the
      NUTS draws and ``N_method`` is the Laplace Gaussian itself or the Gaussian moment-matched
      to the FPL ensemble (see :func:`bayesbandit.diagnostics.gaussian_kl` for the formula). This
      direction penalises an approximation that misses reference mass (too narrow or shifted);
      it is zero only for identical Gaussians, and blind to non-Gaussian shape beyond two moments;
    * ``w1_max = max_j W1(nuts_j, method_j)``, the largest per-marginal Wasserstein-1 distance
      between the draws (in parameter units);
    * ``coverage90``: fraction of NUTS draws inside the method's central 90% per-marginal
      intervals, averaged over parameters (0.9 when calibrated);
    * ``mean_shift_max``: largest ``|mean_method - mean_nuts| / sd_nuts``; ``sd_ratio_min/max``:
      range of ``sd_method / sd_nuts``.

    Parameters
    ----------
    model : NumPyro program or bayesbandit.inference.BoundModel
        Any reward program (zoo or user-written; constrained latent sites allowed).
    x : array, shape (n, *feature_shape)
    y : array, shape (n,)
        Rewards; for affine likelihoods averaged rewards are allowed (see ``w``).
    w : array, shape (n,), optional
        Row weights: a row of weight ``w_i`` and reward ``y_i`` stands for ``w_i`` observations
        with mean ``y_i`` (exact for affine likelihoods); zero masks a row. Default ones.
    methods : sequence of {"laplace", "fpl", "nuts"}
        Methods to fit (the distances need ``"nuts"``).
    num_draws : int, >= 2
        Draws per NUTS chain, Laplace sample size and FPL ensemble size.
    fpl_a : float
        GLM-FPL's perturbation scale ``a`` (:class:`bayesbandit.GLMFPL`): with ``fpl_noise="posterior"``
        relative to the posterior's (``1``, the default as in ``GLMFPL``: draws of the posterior's
        width; the derivation is in ``GLMFPL``'s docstring), with ``fpl_noise="paper"`` the reward
        noise's standard deviation (Kveton et al.'s practical ``0.5`` for logistic rewards).
    fpl_noise : {"posterior", "paper"}
        GLM-FPL's ``noise``: the prior anchored at a prior draw and reward noise of the reward's
        variance, or the paper's constant reward noise under a fixed prior.
    num_warmup, num_chains : int
        NUTS warm-up iterations per chain and number of chains.
    seed : int
        Seeds every method (each method gets its own stream, whatever ``methods`` holds).
    chain_method : {"sequential", "vectorized", "parallel"}
        How NUTS runs its chains, all inside one compiled program: ``"sequential"`` maps over
        them (on a CPU it compiles about twice as fast as ``"vectorized"`` and runs faster, since
        vmapped trees all wait for the deepest one), ``"vectorized"`` vmaps them (may pay off on
        an accelerator), ``"parallel"`` uses one device per chain when there are enough.
    thresholds : Thresholds, optional
        When to flag (defaults documented in :class:`Thresholds`).

    Returns
    -------
    Comparison
        A row of its ``table`` whose distances are not meaningful (an ensemble without spread along
        some parameter, non-finite draws) is marked ``degenerate``, with a flag naming the cause.

    Raises
    ------
    InvalidInput
        Malformed data (shapes, non-finite values, negative weights, rewards outside the model's
        range), settings out of range, or, with ``"fpl"`` in ``methods``, data in which every row
        has zero weight or all-zero features (the ensemble could not spread at all); the message
        names the rows.

    Examples
    --------
    >>> import numpy as np, bayesbandit as bb
    >>> from bayesbandit.models import logistic
    >>> from bayesbandit.diagnostics import compare
    >>> bb.runtime.enable_x64()
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 2)); y = (rng.random(200) < 1 / (1 + np.exp(-x @ [1.0, -1.0]))).astype(float)
    >>> c = compare(logistic(), x, y, num_draws=200, num_warmup=200, num_chains=2)
    >>> list(c.table.index), c.idata["nuts"].posterior["theta"].dims
    (['laplace', 'fpl'], ('chain', 'draw', 'theta_dim_0'))
    """
    methods, num_draws, num_warmup, num_chains, seed = _check_settings(
        methods, num_draws, fpl_a, fpl_noise, num_warmup, num_chains, seed, chain_method, thresholds
    )
    thresholds = thresholds or Thresholds()
    x_np, y_np, w_np = _check_arrays(x, y, w)
    bound = bb.bind(model, x_np)
    _check_support(bound, y_np, w_np)
    _check_informative(x_np, w_np, methods)
    x, y, w = jnp.asarray(x_np), jnp.asarray(y_np), jnp.asarray(w_np)
    keys = jax.random.split(jax.random.PRNGKey(seed), len(_KEY_INDEX))

    fits: dict[str, MethodFit] = {}
    laplace_fit, post = fit_laplace(bound, x, y, w, keys[_KEY_INDEX["laplace"]], num_draws=num_draws)
    if "laplace" in methods:
        fits["laplace"] = laplace_fit
    if "fpl" in methods:
        fits["fpl"] = fit_fpl(
            bound, x, y, w, keys[_KEY_INDEX["fpl"]], num_draws=num_draws, a=fpl_a, noise=fpl_noise, init=post.mean
        )
    if "nuts" in methods:
        init = jnp.asarray(_nuts_starts(laplace_fit, num_chains, keys[_KEY_INDEX["init"]]))
        fits["nuts"] = fit_nuts(
            bound,
            x,
            y,
            w,
            keys[_KEY_INDEX["nuts"]],
            num_draws=num_draws,
            num_warmup=num_warmup,
            num_chains=num_chains,
            init=init,
            chain_method=chain_method,
        )
    fits = {m: fits[m] for m in methods}

    idata = {
        m: to_inference_data(
            bound, f.draws, method=m, sample_stats=f.sample_stats, attrs=_attrs(f), independent=m != "nuts"
        )
        for m, f in fits.items()
    }
    ref = fits.get("nuts")
    names = flat_parameter_names(bound)
    data_note = _data_note(x_np, w_np)
    rows, flags = {}, []
    for m, f in fits.items():
        if m == "nuts":
            continue
        rows[m], reason = _row(f, ref, thresholds, names)
        flags.extend(_approximation_flags(m, rows[m], f, thresholds, reason, data_note))
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "method"
    if table.empty:
        table = pd.DataFrame(columns=["kl", "w1_max", "coverage90", "degenerate"], index=pd.Index([], name="method"))

    params = pd.concat(
        {m: az.summary(d, kind="stats", round_to="none")[["mean", "sd"]] for m, d in idata.items()}, axis=1
    )
    params.index.name = "parameter"

    nuts_diag, rhat, ess_bulk, ess_tail, div = None, np.nan, np.nan, np.nan, -1
    if ref is not None:
        nuts_diag = az.summary(idata["nuts"], kind="diagnostics", round_to="none")
        rhat = float(nuts_diag["r_hat"].max()) if num_chains > 1 else np.nan
        ess_bulk = float(nuts_diag["ess_bulk"].min())
        ess_tail = float(nuts_diag["ess_tail"].min())
        div = int(np.sum(ref.sample_stats["diverging"])) if ref.sample_stats is not None else -1
        nuts_flags = _nuts_flags(rhat if num_chains > 1 else 1.0, ess_bulk, ess_tail, div, num_chains, thresholds)
        if num_chains == 1:
            nuts_flags.insert(0, "nuts: a single chain cannot show non-convergence (R-hat needs >= 2 chains).")
        flags = nuts_flags + flags
    else:
        flags.append("no NUTS reference was run, so no distances were computed (add 'nuts' to methods).")

    return Comparison(
        idata=idata,
        table=table,
        params=params,
        nuts_diagnostics=nuts_diag,
        rhat_max=rhat,
        ess_bulk_min=ess_bulk,
        ess_tail_min=ess_tail,
        divergences=div,
        flags=flags,
        draws={m: f.draws for m, f in fits.items()},
        param_names=names,
        thresholds=thresholds,
    )


def _nuts_starts(laplace: MethodFit, num_chains: int, key: jax.Array) -> np.ndarray:
    """NUTS's starting points: ``bar theta + L z`` with ``L L^T = H^{-1}``, ``z ~ N(0, I)``, one per chain.

    Drawn with NumPy from the Laplace fit's mean and covariance (seeded by ``key``): no program to
    compile for four draws. The MAP itself for every chain when those draws are not finite.
    """
    mean, p = laplace.mean, laplace.mean.shape[0]
    z = np.random.default_rng(np.asarray(key, dtype=np.uint32)).standard_normal((num_chains, p))
    try:
        starts = mean + z @ np.linalg.cholesky(laplace.cov).T
    except np.linalg.LinAlgError:  # a covariance that is not positive definite (a fit that failed)
        starts = np.full((num_chains, p), np.nan)
    return starts if np.all(np.isfinite(starts)) else np.broadcast_to(mean, (num_chains, p))


def _attrs(fit: MethodFit) -> dict:
    return {k: v if not isinstance(v, bool) else int(v) for k, v in fit.info.items()}
