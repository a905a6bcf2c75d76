"""The unit of distributed work: a grid point and a block of its runs; plans and shards of them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bayesbandit.errors import InvalidInput
from bayesbandit.validation import check_int

__all__ = ["Part", "plan", "shard", "parse_shard"]


@dataclass(frozen=True, order=True)
class Part:
    """Runs ``start, ..., stop - 1`` of one grid point.

    ``point`` names the grid point (for example ``(d, policy name)``); the runs are global run
    indices, whose keys do not depend on which other runs are played with them
    (:func:`bayesbandit.sim.key_streams`), so a part computes the same numbers wherever it runs.
    """

    point: tuple[str | int, ...]
    start: int
    stop: int

    @property
    def runs(self) -> int:
        """The number of runs in the part."""
        return self.stop - self.start

    @property
    def path(self) -> str:
        """The part's relative file path, one folder per point label and then the run block."""
        labels = [re.sub(r"[^A-Za-z0-9.=-]+", "_", str(label)).strip("_") or "_" for label in self.point]
        return "/".join([*labels, f"runs-{self.start}-{self.stop}"])

    def __str__(self) -> str:
        return f"{', '.join(map(str, self.point))} [runs {self.start}-{self.stop - 1}]"


def plan(points: Sequence[tuple[str | int, ...]], runs: int, block: int) -> list[Part]:
    """Every point's runs ``0, ..., runs - 1`` in blocks of ``block`` (the last one shorter), point by point.

    Examples
    --------
    >>> [str(p) for p in plan([("a",), ("b",)], runs=5, block=3)]
    ['a [runs 0-2]', 'a [runs 3-4]', 'b [runs 0-2]', 'b [runs 3-4]']
    """
    runs = check_int("plan", "runs", runs, low=1)
    block = check_int("plan", "block", block, low=1)
    points = [tuple(point) for point in points]
    if len(set(points)) != len(points):
        raise InvalidInput(
            f"The 'points' parameter of plan must name each grid point once. Got {len(points)} points, "
            f"{len(points) - len(set(points))} of them repeated. Fix: remove the duplicates."
        )
    return [Part(point, start, min(start + block, runs)) for point in points for start in range(0, runs, block)]


def shard(parts: Sequence[Part], index: int, count: int) -> list[Part]:
    """Shard ``index`` of ``count``: every ``count``-th part of the plan from the ``index``-th.

    Taking every ``count``-th part spreads each point's blocks over the shards, so shards of a plan
    with slow and fast points take about the same time. Shards ``0, ..., count - 1`` partition the plan.

    Examples
    --------
    >>> parts = plan([("a",), ("b",)], runs=4, block=2)
    >>> [str(p) for p in shard(parts, 1, 2)]
    ['a [runs 2-3]', 'b [runs 2-3]']
    """
    count = check_int("shard", "count", count, low=1)
    index = check_int("shard", "index", index, low=0, high=count - 1)
    return list(parts[index::count])


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)``: shard ``K`` (0-based) of ``N``.

    Examples
    --------
    >>> parse_shard("1/4")
    (1, 4)
    """
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if match is None or int(match[2]) < 1 or int(match[1]) >= int(match[2]):
        raise InvalidInput(
            f"A shard must be written K/N with 0 <= K < N (shard K of N, counted from 0). Got {text!r} instead. "
            f"Fix: pass e.g. 0/4, 1/4, 2/4 and 3/4 to four jobs."
        )
    return int(match[1]), int(match[2])
