"""The programs on which a GLM policy is known to lock in are warned about when a simulation starts, naming why."""

import warnings

import pytest
from bayesbandit.models import (
    arm_random_effect_logistic,
    correlated_gaussian,
    hierarchical_logistic,
    horseshoe_logistic,
    negative_binomial_exposure,
    poisson_exposure,
)

import bayesbandit as bb
from bayesbandit.errors import PosteriorQualityWarning


def _warnings(policy, d):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        policy.check_program(d)
    return [str(w.message) for w in caught if issubclass(w.category, PosteriorQualityWarning)]


@pytest.mark.parametrize(
    "make, d, names",
    [
        (lambda: bb.GLMTSL(horseshoe_logistic()), 4, ["'lambda'", "'tau'", "slab"]),
        (lambda: bb.GLMFPL(horseshoe_logistic()), 4, ["(half-)Cauchy"]),
        (lambda: bb.GLMTSL(arm_random_effect_logistic(num_arms=6), history="online"), 3, ["'sigma'", "history='full'"]),
        (lambda: bb.GLMUCB(negative_binomial_exposure()), 3, ["overdispersed count", "GLMTSL or GLMFPL"]),
    ],
)
def test_known_lock_in_is_warned_naming_why(make, d, names):
    bb.runtime.enable_x64()
    messages = _warnings(make(), d)
    assert len(messages) == 1, messages
    assert all(name in messages[0] for name in names), messages[0]
    assert "of 40 runs" in messages[0] and "Fix:" in messages[0]


@pytest.mark.parametrize(
    "make, d",
    [
        (lambda: bb.GLMTSL(hierarchical_logistic(num_groups=3)), 3),
        (lambda: bb.GLMTSL(arm_random_effect_logistic(num_arms=6)), 3),
        (lambda: bb.GLMUCB(poisson_exposure()), 3),
        (lambda: bb.GLMTSL(negative_binomial_exposure(), history="online"), 3),
        (lambda: bb.GLMUCB(correlated_gaussian(cov=[[1.0, 0.5], [0.5, 1.0]])), 2),
    ],
)
def test_programs_that_meet_the_target_are_not_warned(make, d):
    bb.runtime.enable_x64()
    assert _warnings(make(), d) == []


def _locked_in_table():
    """``{(program, policy): locked-in runs}`` of the committed prior-and-design matrix."""
    import pathlib

    table = pathlib.Path(__file__).resolve().parents[2] / "docs" / "results" / "programs" / "programs.md"
    counts = {}
    for line in table.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 9 and " / " in cells[5]:
            counts[cells[0], cells[1]] = int(cells[5].split(" / ")[0])
    return counts


def test_the_warnings_quote_the_committed_matrix():
    """The counts the warnings quote are the committed table's (they change together)."""
    n = _locked_in_table()
    horseshoe = [
        n["horseshoe_logistic", p] for p in ("GLM-TSL", "GLM-TSL (online)", "GLM-TSL (resampled)", "GLM-FPL", "GLM-UCB")
    ]
    assert (min(horseshoe), max(horseshoe)) == (4, 21)
    slab = [n["regularised_horseshoe_logistic", p] for p in ("GLM-TSL", "GLM-TSL (resampled)", "GLM-FPL", "GLM-UCB")]
    assert (min(slab), max(slab)) == (0, 2)
    online = {
        p: (n[p, "GLM-TSL (online)"], n[p, "GLM-TSL"])
        for p in ("arm_random_effect_logistic", "regularised_horseshoe_logistic", "horseshoe_logistic")
    }
    assert online == {
        "arm_random_effect_logistic": (4, 0),
        "regularised_horseshoe_logistic": (8, 2),
        "horseshoe_logistic": (16, 21),
    }
    assert n["hierarchical_logistic", "GLM-TSL (online)"] == 1
    assert [n["negative_binomial_exposure", p] for p in ("GLM-UCB", "GLM-TSL", "GLM-FPL")] == [4, 0, 0]
