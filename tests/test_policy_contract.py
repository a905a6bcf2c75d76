"""Every check of the contract suite on every policy (``tests/policy_checks.py``)."""

import pytest
from policy_checks import CASES, CHECKS, run_check


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__.removeprefix("check_") for c in CHECKS])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_policy_contract(case, check, tmp_path):
    run_check(check, case, tmp_path)
