"""Named, reproducible experiments run by the ``bayesbandit run`` command (``bayesbandit.experiments``).

This package sits on top of the core, the models and the diagnostics; the core never imports it.

Each experiment is a module exposing ``DESCRIPTION`` (one line) and
``run(out_dir, *, quick, runs, horizon, seed, progress) -> dict[str, pathlib.Path]`` that writes
its plot (PNG), results (netCDF) and a markdown summary into ``out_dir`` and returns the paths
it wrote. Modules are imported only when their experiment runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from bayesbandit.errors import InvalidInput

__all__ = ["EXPERIMENTS", "load_experiment"]

EXPERIMENTS: dict[str, str] = {
    "glm-logistic": "bayesbandit.experiments.glm_logistic",
    "diagnostics-logistic": "bayesbandit.experiments.diagnostics_logistic",
    "bai-adaptive": "bayesbandit.experiments.bai_adaptive",
    "bai-static": "bayesbandit.experiments.bai_static",
    "bai-random": "bayesbandit.experiments.bai_random",
    "bai-logistic": "bayesbandit.experiments.bai_logistic",
    "bai-automobile": "bayesbandit.experiments.bai_automobile",
    "sublinear-synthetic": "bayesbandit.experiments.sublinear_synthetic",
    "sublinear-movielens": "bayesbandit.experiments.sublinear_movielens",
    "mips-scaling": "bayesbandit.experiments.mips_scaling",
    "comb-clustered": "bayesbandit.experiments.comb_clustered",
    "comb-movielens": "bayesbandit.experiments.comb_movielens",
    "deep-mnist": "bayesbandit.experiments.deep_mnist",
    "likelihoods": "bayesbandit.experiments.likelihoods",
    "programs": "bayesbandit.experiments.programs",
    "ope-logistic": "bayesbandit.experiments.ope_logistic",
    "drift-bernoulli": "bayesbandit.experiments.drift_bernoulli",
    "drift-logistic": "bayesbandit.experiments.drift_logistic",
}


def load_experiment(name: str) -> ModuleType:
    """Import the module of experiment ``name`` (see :data:`EXPERIMENTS`)."""
    if name not in EXPERIMENTS:
        raise InvalidInput(f"unknown experiment {name!r}. Fix: use one of {sorted(EXPERIMENTS)} (bayesbandit list).")
    return importlib.import_module(EXPERIMENTS[name])
