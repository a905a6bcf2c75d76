"""Checks for maximum-inner-product indexes (the contract in :mod:`bayesbandit.index.protocol`).

An index is checked through a factory ``make(dim) -> empty index`` (every check builds its own): answers
against brute force (recall against :class:`~bayesbandit.index.ExactIndex` after a build, adds and
removes; ``min_recall=1.0`` asks for the exact answer), bad input rejected with the index unchanged,
and a save / load round trip answering as the saved index did.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bayesbandit.errors import InvalidInput, UnknownArm

__all__ = ["INDEX_CHECKS", "check_index", "check_index_answers", "check_index_bad_inputs", "check_index_save_load"]

N, D = 5000, 16

Make = Callable[[int], Any]


def _data() -> tuple[np.ndarray, np.ndarray]:
    """``N + 1000`` vectors and 60 queries in ``R^D``, standard normal (seed 0)."""
    rng = np.random.default_rng(0)
    return rng.standard_normal((N + 1000, D)), rng.standard_normal((60, D))


def _raises(error: type[Exception], match: str, call: Callable[[], Any], what: str) -> None:
    try:
        call()
    except error as exc:
        assert match in str(exc), f"{what}: the message {str(exc)!r} does not say {match!r}"
    else:
        raise AssertionError(f"{what} was accepted")


def check_index_answers(make: Make, *, min_recall: float = 0.9) -> None:
    """Recall@10 against brute force of at least ``min_recall`` after a build, 500 adds and 500 removes;
    ``ids`` and ``vectors`` the ids and vectors held, bit for bit; a removed id never returned; a new
    vector far better than any returned first."""
    from bayesbandit.index import ExactIndex, recall_at_k

    vectors, queries = _data()
    index, exact = make(D), ExactIndex(D, dtype=np.float64)
    for engine in (index, exact):
        engine.add(np.arange(N), vectors[:N])
    name = type(index).__name__
    assert recall_at_k(index, exact, queries, 10) >= min_recall, f"{name}: recall after the build"
    new = np.arange(N, N + 500)
    for engine in (index, exact):
        engine.add(new, vectors[N : N + 500])
    assert recall_at_k(index, exact, queries, 10) >= min_recall, f"{name}: recall after adds"
    gone = np.arange(0, 1000, 2)
    for engine in (index, exact):
        engine.remove(gone)
    assert recall_at_k(index, exact, queries, 10) >= min_recall, f"{name}: recall after removes"
    assert len(index) == len(exact), f"{name}: holds {len(index)} ids, not {len(exact)}"
    held = np.setdiff1d(np.arange(N + 500), gone)
    assert np.array_equal(np.sort(index.ids), held), f"{name}: ids are not the ids added and not removed"
    assert np.array_equal(index.vectors(held), vectors[held]), f"{name}: vectors() differ from the vectors added"
    for q in queries:
        assert not np.isin(index.query(q, 30), gone).any(), f"{name}: a removed id was returned"
    star = np.array([10**6])
    index.add(star, 10 * queries[:1])
    assert index.query(queries[0], 5)[0] == star[0], f"{name}: the best vector by far was not returned first"


def check_index_bad_inputs(make: Make) -> None:
    """A query on an empty index, unknown, held or repeated ids, NaN or mis-shaped vectors and queries raise
    named errors and leave the index as it was."""
    index = make(3)
    name = type(index).__name__
    _raises(InvalidInput, "empty", lambda: index.query(np.ones(3), 1), f"{name}: a query on an empty index")
    index.add(np.arange(20), np.random.default_rng(1).standard_normal((20, 3)))
    before = index.query(np.ones(3), 5).tolist()
    for error, match, call, what in (
        (UnknownArm, "99", lambda: index.remove(np.array([1, 99])), "removing an unknown id"),
        (InvalidInput, "already", lambda: index.add(np.array([5]), np.ones((1, 3))), "adding a held id"),
        (InvalidInput, "repeats", lambda: index.add(np.array([30, 30]), np.ones((2, 3))), "a repeated id"),
        (InvalidInput, "NaN", lambda: index.add(np.array([30]), np.array([[1.0, np.nan, 0.0]])), "a NaN vector"),
        (InvalidInput, "shape", lambda: index.add(np.array([30]), np.ones((1, 4))), "a vector of the wrong size"),
        (InvalidInput, "shape", lambda: index.query(np.ones(4), 5), "a query of the wrong size"),
        (InvalidInput, "NaN", lambda: index.query(np.array([np.nan, 0, 0]), 5), "a NaN query"),
    ):
        _raises(error, match, call, f"{name}: {what}")
        assert len(index) == 20 and index.query(np.ones(3), 5).tolist() == before, f"{name}: {what} changed it"


def check_index_save_load(make: Make) -> None:
    """Saved after adds and removes and loaded by its class, an index gives the same answers."""
    vectors, queries = _data()
    index = make(D)
    index.add(np.arange(2000), vectors[:2000])
    index.add(np.arange(2000, 2100), vectors[2000:2100])
    index.remove(np.arange(0, 50))
    with tempfile.TemporaryDirectory(prefix="bayesbandit-check-") as tmp:
        path = Path(tmp) / "catalogue"
        index.save(path)
        loaded = type(index).load(path)
    name = type(index).__name__
    for q in queries[:10]:
        assert np.array_equal(loaded.query(q, 10), index.query(q, 10)), f"{name}: the loaded index answers otherwise"
    assert len(loaded) == len(index), f"{name}: the loaded index holds {len(loaded)} ids, not {len(index)}"


INDEX_CHECKS = [check_index_answers, check_index_bad_inputs, check_index_save_load]
"""The checks :func:`~bayesbandit.testing.index.check_index` runs, in order."""


def check_index(make: Make, *, min_recall: float = 0.9) -> None:
    """Run every index check on ``make`` (``dim -> empty index``); raise on the first failure."""
    check_index_answers(make, min_recall=min_recall)
    check_index_bad_inputs(make)
    check_index_save_load(make)
