"""Off-policy evaluation: the value of a policy estimated from the logged decisions of another.

=====================  =============================================================
module                 job
=====================  =============================================================
``_logs``              :class:`Logs`, the log contract (arrays, OBP, decision log)
``_target``            the target policy's action distribution on each logged round
``_estimators``        IPS, SNIPS, DM, DR, SNDR, Switch-DR, DR-os (OBP's formulas)
``_reward_model``      :class:`RewardModel`: a NumPyro program, Laplace or NUTS, cross-fitted
``_intervals``         :class:`Bootstrap` (vmapped, optional refit), :class:`Betting` (adaptive-valid)
``_evaluate``          :func:`evaluate`: estimators x targets as an xarray Dataset
``_synthetic``         OBP's synthetic logistic logs, ported to JAX
``_plot``              :func:`plot_estimates`
=====================  =============================================================

See ``docs/ope.md``.
"""

from bayesbandit.ope._estimators import (
    DEFAULT_ESTIMATORS,
    DM,
    DR,
    IPS,
    SNDR,
    SNIPS,
    DRos,
    Estimator,
    Parts,
    SwitchDR,
    parts,
)
from bayesbandit.ope._evaluate import bootstrap_values, evaluate, ground_truth, overlap, point_estimates
from bayesbandit.ope._intervals import Betting, Bootstrap, betting_interval, bootstrap_counts, percentile_interval
from bayesbandit.ope._logs import Logs, obp_arms
from bayesbandit.ope._plot import plot_estimates
from bayesbandit.ope._reward_model import RewardModel
from bayesbandit.ope._synthetic import synthetic_logs
from bayesbandit.ope._target import TargetDistribution, target_distribution

__all__ = [
    "Logs",
    "obp_arms",
    "TargetDistribution",
    "target_distribution",
    "Estimator",
    "Parts",
    "parts",
    "IPS",
    "SNIPS",
    "DM",
    "DR",
    "SNDR",
    "SwitchDR",
    "DRos",
    "DEFAULT_ESTIMATORS",
    "RewardModel",
    "Bootstrap",
    "Betting",
    "bootstrap_counts",
    "percentile_interval",
    "betting_interval",
    "evaluate",
    "point_estimates",
    "bootstrap_values",
    "ground_truth",
    "overlap",
    "synthetic_logs",
    "plot_estimates",
]
