"""Every best-arm-identification check of :mod:`bayesbandit.testing` on every algorithm."""

import pytest

import bayesbandit as bb
from bayesbandit.bai import GSE, BayesGap, LinGapE, MostPulled, ODLinBAI, Peace, SequentialHalving
from bayesbandit.testing._common import policy_id
from bayesbandit.testing.bai import BAI_CHECKS

ALGORITHMS = [
    GSE(),
    SequentialHalving(),
    ODLinBAI(),
    Peace(num_samples=128),
    LinGapE(),
    LinGapE(greedy=True),
    BayesGap(),
    MostPulled(bb.LinUCB()),
]


@pytest.mark.parametrize("check", BAI_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=policy_id)
def test_bai_contract(algorithm, check):
    check(algorithm)
