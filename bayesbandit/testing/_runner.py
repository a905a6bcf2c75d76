"""Which checks a policy gets, ``check_policy`` to run them, ``parametrize_with_checks`` for pytest."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any
from unittest import SkipTest

from bayesbandit.contract import Combinatorial, policy_kind
from bayesbandit.testing import comb, forgetting, host, policy
from bayesbandit.testing._common import policy_id

__all__ = ["policy_checks", "check_policy", "parametrize_with_checks"]

ExpectedFailures = Callable[[Any], Mapping[str, str]]


def _suite(obj: Any) -> Sequence[Callable[[Any], None]]:
    if policy_kind(obj) == "host":
        return host.HOST_CHECKS
    family = comb.COMB_CHECKS if isinstance(obj, Combinatorial) else policy.POLICY_CHECKS
    return [*family, *forgetting.checks_for(obj)]


def _skipped(check: Callable[[Any], None], reason: str) -> Callable[[Any], None]:
    @functools.wraps(check)
    def wrapper(obj: Any) -> None:
        raise SkipTest(reason)

    return wrapper


def policy_checks(
    obj: Any, *, learns: bool = True, expected_failed_checks: Mapping[str, str] | None = None
) -> Iterator[tuple[Any, Callable[[Any], None]]]:
    """Yield ``(policy, check)`` pairs: every check of the policy's family (JAX, combinatorial or host).

    Parameters
    ----------
    obj : policy
        A policy instance (``kind = "jax"`` or ``"host"``); checks never change it.
    learns : bool
        Include the family's learning check (the one long experiment). Default true.
    expected_failed_checks : mapping of check name -> reason, optional
        Checks replaced by one that raises :class:`unittest.SkipTest` with the reason.
    """
    expected = dict(expected_failed_checks or {})
    for check in _suite(obj):
        if not learns and check.__name__.endswith("learns"):
            continue
        reason = expected.get(check.__name__)
        yield obj, (check if reason is None else _skipped(check, reason))


def check_policy(
    obj: Any, *, learns: bool = True, expected_failed_checks: Mapping[str, str] | None = None
) -> list[str]:
    """Run every check of the contract suite on ``obj``; raise on the first failure.

    The mechanical checks (``jit(vmap(scan))``, one trace per shape, same key same actions, stable
    dtypes, bad input rejected with the state unchanged, save / load through :class:`~bayesbandit.Agent`
    continuing bit for bit) play 64 rounds or fewer; the learning check plays its family's own horizon
    (``learns=False`` leaves it out).

    Parameters
    ----------
    obj : policy
        A policy instance: JAX (``kind = "jax"``, one arm or a super arm per round) or host.
    learns : bool
        Run the learning check too. Default true.
    expected_failed_checks : mapping of check name -> reason, optional
        Checks to skip, with why.

    Returns
    -------
    list of str
        The names of the checks skipped (``expected_failed_checks`` and checks that raised ``SkipTest``).

    Raises
    ------
    AssertionError
        From the first failing check, naming the policy and the broken property.

    Examples
    --------
    >>> import bayesbandit as bb
    >>> from bayesbandit.testing import check_policy
    >>> bb.runtime.enable_x64()
    >>> check_policy(bb.LinTS(lam=1.0, v=0.5), learns=False)
    []
    """
    skipped = []
    for pol, check in policy_checks(obj, learns=learns, expected_failed_checks=expected_failed_checks):
        try:
            check(pol)
        except SkipTest:
            skipped.append(check.__name__)
    return skipped


def parametrize_with_checks(
    policies: Iterable[Any],
    *,
    learns: bool = True,
    expected_failed_checks: ExpectedFailures | None = None,
) -> Any:
    """A ``pytest.mark.parametrize("policy, check", ...)`` over every policy and each of its checks.

    Test ids read ``<Policy(changed=values)>-<check name>``, so ``pytest -k check_save_load`` runs one check
    on every policy. Checks named by ``expected_failed_checks(policy)`` are marked skip with its reason.

    Parameters
    ----------
    policies : iterable of policy instances
    learns : bool
        Include each family's learning check. Default true.
    expected_failed_checks : callable, optional
        ``policy -> {check name: reason}``.

    Examples
    --------
    In a test module (pytest is needed only here)::

        from bayesbandit.testing import parametrize_with_checks

        @parametrize_with_checks([bb.LinTS(lam=1.0, v=0.5), bb.GLMTSL(logistic())])
        def test_contract(policy, check):
            check(policy)
    """
    import pytest

    params = []
    for obj in policies:
        expected = dict(expected_failed_checks(obj)) if expected_failed_checks else {}
        for pol, check in policy_checks(obj, learns=learns):
            name = check.__name__
            marks = [pytest.mark.skip(reason=expected[name])] if name in expected else []
            params.append(pytest.param(pol, check, id=f"{policy_id(pol)}-{name}", marks=marks))
    return pytest.mark.parametrize("policy, check", params)
