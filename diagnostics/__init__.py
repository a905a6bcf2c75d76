"""Checking: how far Laplace and FPL posteriors are from NUTS, with ArviZ.

For a reward program and data (or a bandit policy's history), :func:`compare` fits the Laplace
approximation, an ensemble of perturbed MAPs (GLM-FPL) and NUTS on the same weighted potential,
returns each as an :class:`arviz.InferenceData`, and measures KL, per-marginal Wasserstein-1
distances and interval coverage against NUTS, with NUTS R-hat, ESS and divergences and
plain-language flags. :func:`along_run` does the same at chosen rounds of a bandit run
(:func:`run_snapshots` gives the histories; :func:`flat_parameters` writes true parameters from
site values).

Examples
--------
>>> from bayesbandit.diagnostics import compare, plot_marginals  # doctest: +SKIP
>>> c = compare(logistic(), x, y)                                 # doctest: +SKIP
>>> c.table, c.flags                                              # doctest: +SKIP
>>> plot_marginals(c, "marginals.png")                            # doctest: +SKIP
"""

from ._along_run import along_run, run_snapshots
from ._compare import METHODS, Comparison, Thresholds, compare
from ._convert import flat_parameter_names, flat_parameters, to_inference_data
from ._metrics import fit_gaussian, gaussian_kl, interval_coverage, marginal_w1
from ._plots import plot_along_run, plot_marginals, plot_pairs

__all__ = (
    # comparing posteriors
    "compare",
    "Comparison",
    "Thresholds",
    "METHODS",
    "along_run",
    "run_snapshots",
    # metrics on arrays
    "gaussian_kl",
    "fit_gaussian",
    "marginal_w1",
    "interval_coverage",
    # ArviZ conversion
    "to_inference_data",
    "flat_parameter_names",
    "flat_parameters",
    # plots
    "plot_marginals",
    "plot_pairs",
    "plot_along_run",
)
