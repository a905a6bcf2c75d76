"""Simulation: the one round, the compiled and host runners, ``simulate``, and its results.

=====================  =============================================================
module                 job
=====================  =============================================================
``round``              :func:`play_round`, common random numbers (:func:`key_streams`)
``scan``               the compiled runner (``lax.scan`` inside ``vmap``)
``host``               the host runner (a Python loop, for host policies)
``runner``             :func:`simulate`: policies x environment -> ``xarray.Dataset``
``grid``               :func:`sweep`: a hyper-parameter grid, ``vmap`` over configurations and runs
``catalogue``          :func:`simulate_catalogue`: index-backed policies on changing catalogues, timed
``results``            cumulative regret, plots, summary tables, thinning for storage
=====================  =============================================================
"""

from bayesbandit.sim.catalogue import simulate_catalogue
from bayesbandit.sim.grid import stack_policies, sweep
from bayesbandit.sim.results import cumulative_regret, plot_regret, summarize, summary_markdown, thin
from bayesbandit.sim.round import Round, RunKeys, init_run, key_streams, play_round
from bayesbandit.sim.runner import simulate

__all__ = [
    "simulate",
    "simulate_catalogue",
    "sweep",
    "stack_policies",
    "Round",
    "RunKeys",
    "play_round",
    "init_run",
    "key_streams",
    "cumulative_regret",
    "plot_regret",
    "summarize",
    "summary_markdown",
    "thin",
]
