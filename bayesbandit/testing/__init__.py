"""Contract checks for policies, environments, indexes and best-arm-identification algorithms.

Check your own policy as scikit-learn checks an estimator::

    from bayesbandit.testing import check_policy
    check_policy(MyPolicy(...))              # raises AssertionError on the first broken property

or, in a pytest module, one test per policy and check::

    from bayesbandit.testing import parametrize_with_checks

    @parametrize_with_checks([MyPolicy(...), bb.LinTS()])
    def test_contract(policy, check):
        check(policy)

==============  ==================================================================================
module          checks
==============  ==================================================================================
``policy``      JAX policies, one arm a round (``docs/contract.md``)
``comb``        combinatorial policies (super arms, semi-bandit feedback)
``forgetting``  policies that discount or forget (``Discounts``, ``Forgets``), on top of their family's
``host``        host policies over catalogues with ids
``envs``        environments (the ``Env`` protocol)
``index``       maximum-inner-product indexes (``bayesbandit.index.protocol``)
``bai``         fixed-budget best-arm-identification algorithms
==============  ==================================================================================

pytest is imported only by :func:`parametrize_with_checks`; nothing in the core imports this package.
"""

from bayesbandit.testing._common import clear_caches
from bayesbandit.testing._runner import check_policy, parametrize_with_checks, policy_checks

__all__ = ["check_policy", "parametrize_with_checks", "policy_checks", "clear_caches"]
