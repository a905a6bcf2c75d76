"""``bayesbandit.diagnostics`` in a notebook: ArviZ summaries of every method, readable plots,
true parameters written as site values, and the guide's snippet run as pasted."""

import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import numpyro
import numpyro.distributions as dist
import pandas as pd
import pytest
from bayesbandit.diagnostics import (
    _convert,
    compare,
    flat_parameters,
    plot_along_run,
    plot_marginals,
    plot_pairs,
    run_snapshots,
    to_inference_data,
)
from bayesbandit.diagnostics._arviz import az

import bayesbandit as bb
from bayesbandit.errors import InvalidInput

ROOT = pathlib.Path(__file__).resolve().parents[1]
D = 8  # elements of the vector site


def regression(x, y=None):
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ beta, tau), obs=y)


def bounded(x, y=None):
    """A site whose support depends on another site's value."""
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([x.shape[-1]]).to_event(1))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    shift = numpyro.sample("shift", dist.Uniform(0.0, tau))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ beta + shift, tau), obs=y)


@pytest.fixture(scope="module")
def vector_comparison():
    bb.runtime.enable_x64()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, D))
    y = x @ rng.normal(size=D) * 0.5 + 0.7 * rng.normal(size=60)
    return compare(regression, x, y, num_draws=400, num_warmup=300, num_chains=2, seed=3)


# ----------------------------------------------------------------------------- 1. az.summary
@pytest.mark.parametrize("method", ["laplace", "fpl"])
def test_approximate_posteriors_summarise_with_finite_rhat_and_no_warning(vector_comparison, method):
    idata = vector_comparison.idata[method]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ArviZ's one-chain shape warning would fail here
        summary = az.summary(idata)
    assert idata.posterior.sizes["chain"] == 4
    assert np.all(np.isfinite(summary["r_hat"]))
    assert summary["r_hat"].max() < 1.05  # independent draws: R-hat is 1 up to Monte Carlo error
    assert summary["ess_bulk"].min() > 0.5 * 400


def test_independent_draws_keep_their_values_and_order():
    bound = bb.bind(regression, np.zeros((1, 2)))
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(1, 1100, bound.num_params))  # more than one constrain chunk, not a multiple
    idata = to_inference_data(bound, draws, method="laplace", independent=True)
    assert dict(idata.posterior.sizes)["chain"] == 4
    beta = idata.unconstrained_posterior["beta"].values.reshape(-1, 2)
    np.testing.assert_array_equal(beta, draws[0][:, bound.site_slices()["beta"]])
    tau = idata.posterior["tau"].values.reshape(-1)
    np.testing.assert_allclose(tau, np.exp(draws[0][:, bound.site_slices()["tau"]][:, 0]))
    # 1 chain kept when no split gives >= 4 draws per chain; a Markov chain is never split
    assert to_inference_data(bound, draws[:, :7], method="fpl", independent=True).posterior.sizes["chain"] == 1
    assert to_inference_data(bound, draws[:, :10], method="fpl", independent=True).posterior.sizes["chain"] == 2
    assert to_inference_data(bound, draws, method="nuts").posterior.sizes["chain"] == 1


def test_inference_data_compiles_one_constrain_program_per_model(vector_comparison):
    bound = bb.bind(regression, np.zeros((1, D)))
    # Laplace/FPL (400 draws) and NUTS (2 x 400) went through the same chunked program
    assert _convert._constrain_chunk(bound)._cache_size() == 1


def test_to_inference_data_refuses_misshaped_draws():
    bound = bb.bind(regression, np.zeros((1, 2)))
    with pytest.raises(InvalidInput, match=r"'draws' must have shape \(chain, draw, 3\).*Got shape \(5, 3\)"):
        to_inference_data(bound, np.zeros((5, 3)), method="laplace")


# ----------------------------------------------------------------------------- 2. infinite values
def _along(kl_fpl, w1_fpl):
    return pd.DataFrame(
        {
            "round": [10, 10, 100, 100, 300, 300],
            "method": ["laplace", "fpl"] * 3,
            "kl": [0.02, kl_fpl[0], 0.01, kl_fpl[1], 0.005, kl_fpl[2]],
            "w1_max": [0.1, w1_fpl[0], 0.05, w1_fpl[1], 0.02, w1_fpl[2]],
            "coverage90": [0.9, 0.5, 0.89, 0.7, 0.9, 0.85],
        }
    )


def test_plot_along_run_marks_infinite_and_nan_values(tmp_path):
    fig = plot_along_run(_along([np.inf, 0.5, 0.1], [0.3, np.nan, 0.05]), tmp_path / "along.png")
    assert (tmp_path / "along.png").stat().st_size > 0
    ax_kl, ax_w1, _ = fig.axes[:3]
    for ax, kind, at in ((ax_kl, "inf", 10), (ax_w1, "nan", 100)):
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[0] == "laplace"
        assert labels[1].startswith("fpl") and f"{kind} at round {at}" in labels[1]
        markers = [line for line in ax.get_lines() if line.get_marker() == "^"]
        assert len(markers) == 1 and list(markers[0].get_xdata()) == [at]
        assert [t.get_text() for t in ax.texts] == [kind]
        fpl_line = ax.get_lines()[1]
        ydata = np.asarray(fpl_line.get_ydata(), dtype=float)
        assert np.isnan(ydata[list(fpl_line.get_xdata()).index(at)])  # a gap, not a value
    # finite everywhere: nothing marked, legends plain
    fig = plot_along_run(_along([0.3, 0.2, 0.1], [0.3, 0.2, 0.1]))
    assert not fig.axes[0].texts
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["laplace", "fpl"]


def test_plot_along_run_refuses_a_table_without_the_metric():
    with pytest.raises(InvalidInput, match=r"missing \['kl'\]"):
        plot_along_run(_along([0.3, 0.2, 0.1], [0.3, 0.2, 0.1]).drop(columns="kl"))


# ----------------------------------------------------------------------------- 3. marginals layout
def test_plot_marginals_one_short_titled_panel_per_element_and_one_legend(vector_comparison, tmp_path):
    fig = plot_marginals(vector_comparison, tmp_path / "marginals.png")
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == [f"beta[{i}]" for i in range(D)] + ["tau"]
    assert fig.get_layout_engine() is not None  # constrained layout: no blank band, no overlaps
    assert len(fig.legends) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["NUTS (exact)", "Laplace", "FPL ensemble"]
    assert all(ax.get_legend() is None for ax in fig.axes)
    width, height = fig.get_size_inches()
    assert width <= 12 and height <= 8.5  # 9 panels in 3 rows of 4
    only_tau = plot_marginals(vector_comparison, var_names=["tau"])
    assert [ax.get_title() for ax in only_tau.axes if ax.get_visible()] == ["tau"]


def test_plot_marginals_refuses_an_unknown_site(vector_comparison):
    with pytest.raises(InvalidInput, match=r"'var_names' must name latent sites among \['beta', 'tau'\]"):
        plot_marginals(vector_comparison, var_names=["sigma"])


# ----------------------------------------------------------------------------- 5. flat_parameters
def test_flat_parameters_round_trips_through_constrain():
    bb.runtime.enable_x64()
    bound = bb.bind(bounded, np.zeros((1, 3)))
    values = {"beta": [0.5, -1.0, 2.0], "tau": 0.5, "shift": 0.2}
    theta = flat_parameters(bound, values)
    assert theta.shape == (bound.num_params,)
    back = bound.constrain(theta)
    for site, value in values.items():
        np.testing.assert_allclose(np.asarray(back[site]), value, rtol=1e-12)
    np.testing.assert_allclose(theta[bound.site_slices()["tau"]], [np.log(0.5)])
    np.testing.assert_array_equal(flat_parameters(bounded, values, d=3), theta)  # unbound program + d


@pytest.mark.parametrize(
    "values, match",
    [
        ({"beta": [1.0, 2.0, 3.0], "tau": 0.5}, r"missing \['shift'\]"),
        ({"beta": [1.0, 2.0, 3.0], "tau": 0.5, "shift": 0.1, "sigma": 1.0}, r"unknown \['sigma'\]"),
        ({"beta": [1.0, 2.0], "tau": 0.5, "shift": 0.1}, r"site 'beta' must have shape \(3,\). Got shape \(2,\)"),
        ({"beta": [1.0, 2.0, 3.0], "tau": -0.5, "shift": 0.1}, r"site 'tau' must lie in its support"),
        ({"beta": [1.0, 2.0, 3.0], "tau": 0.5, "shift": 0.7}, r"site 'shift' must lie in its support"),
        ({"beta": "abc", "tau": 0.5, "shift": 0.1}, r"site 'beta' must be numeric"),
        ([0.1, 0.2], r"'values' must be a dict"),
    ],
)
def test_flat_parameters_refuses_bad_values_by_name(values, match):
    bound = bb.bind(bounded, np.zeros((1, 3)))
    with pytest.raises(InvalidInput, match=match):
        flat_parameters(bound, values)


def test_flat_parameters_needs_d_for_an_unbound_program():
    with pytest.raises(InvalidInput, match=r"'d', the number of features"):
        flat_parameters(bounded, {"beta": [0.0], "tau": 1.0, "shift": 0.5})


def test_run_snapshots_draws_rewards_at_the_flat_parameters():
    bb.runtime.enable_x64()
    arms = np.random.default_rng(0).uniform(-1, 1, (4, 2))
    theta = flat_parameters(regression, {"beta": [3.0, -3.0], "tau": 0.01}, d=2)
    _, snaps = run_snapshots(bb.GLMTSL(regression), arms, theta_true=theta, rounds=[40])
    x, y, w = snaps[40]
    seen = w > 0
    # tau = 0.01: every reward is its arm's mean x @ beta up to the noise
    np.testing.assert_allclose(y[seen], x[seen] @ np.array([3.0, -3.0]), atol=0.01 * 5)


# ----------------------------------------------------------------------------- 6. the guide's snippet
def test_guide_snippet_runs_as_pasted(tmp_path):
    guide = (ROOT / "docs" / "guide" / "diagnostics.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, flags=re.S)
    assert blocks, "the guide has no python snippet"
    script = "\n".join(blocks) + "\nassert c.table.loc['laplace', 'kl'] < 0.1 and not c.table['degenerate'].any()\n"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "marginals.png").stat().st_size > 0


def test_plot_pairs_lower_triangle_with_short_labels_and_one_legend(vector_comparison):
    fig = plot_pairs(vector_comparison, var_names=["beta"])
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == D * (D - 1) // 2  # every pair once
    assert {ax.get_xlabel() for ax in visible} - {""} == {f"beta[{i}]" for i in range(D - 1)}
    assert {ax.get_ylabel() for ax in visible} - {""} == {f"beta[{i}]" for i in range(1, D)}
    assert len(fig.legends) == 1 and fig.get_layout_engine() is not None
    with pytest.raises(InvalidInput, match="at least two scalar elements"):
        plot_pairs(vector_comparison, var_names=["tau"])
