"""Every check of the contract suite on every policy (``tests/policy_checks.py``)."""

import pytest
from policy_checks import CASES, CHECKS, COMB_CASES, COMB_CHECKS, HOST_CASES, HOST_CHECKS, run_check


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__.removeprefix("check_") for c in CHECKS])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_policy_contract(case, check, tmp_path):
    run_check(check, case, tmp_path)


@pytest.mark.parametrize("check", HOST_CHECKS, ids=[c.__name__.removeprefix("check_") for c in HOST_CHECKS])
@pytest.mark.parametrize("case", HOST_CASES, ids=[c.name for c in HOST_CASES])
def test_host_policy_contract(case, check, tmp_path):
    run_check(check, case, tmp_path)


@pytest.mark.parametrize("check", COMB_CHECKS, ids=[c.__name__.removeprefix("check_comb_") for c in COMB_CHECKS])
@pytest.mark.parametrize("case", COMB_CASES, ids=[c.name for c in COMB_CASES])
def test_comb_policy_contract(case, check, tmp_path):
    run_check(check, case, tmp_path)
