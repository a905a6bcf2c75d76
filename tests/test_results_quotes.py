"""Every number the results guide and the README quote about a committed BAI result is rendered from its table.

Each quote names its doc, a sentence template and, for each number in it, the cells it comes from (experiment, table
caption, sections, rows, columns) and how (one cell, the range over cells, a count of cells beyond 2 se, ...). The
test asserts that the rendered sentence occurs in the doc, so a re-run that changes a table fails here until the doc
says what the new table shows. ``python tests/test_results_quotes.py`` prints every rendered sentence, to update the
doc from.

Number format, one rule for every quote: three decimals as in the tables; a paired difference is signed, with
``+`` for zero and the Unicode minus ``−``; an accuracy is unsigned; a range is "low to high"; "beyond 2 se" means
``|difference| > 2 * standard error`` in the tables' rounded thousandths.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import pytest
from _results_tables import RESULTS, ROOT, SUPERSEDING, Cell, Page, experiment, superseded

GUIDE = "docs/guide/results.md"
README = "README.md"
BAI_SECTION = "## Azizi et al. (2022), fixed-budget BAI"

ADAPTIVE, STATIC, RANDOM = "bai_adaptive", "bai_static", "bai_random"
LOGISTIC, AUTOMOBILE = "bai_logistic", "bai_automobile"
BENCH = "benchmarks/results/bench_bai.md"
BK = ("B/K = 10", "B/K = 20", "B/K = 50")
FIG3 = ("Fig. 3: B/K = 20", "Fig. 3: B/K = 50")
AUTO_K = ("K = 8", "K = 16")
STATIC_GRID = ("K = d = 16, B = 320",)
ACCURACY, PAIRED, PULLS = "", "Paired difference", "Pulls spent"
G_OPTIMAL = ("GSE-Lin-FW", "GSE-Lin-Wynn", "GSE-Lin-Greedy")
GSE_ADAPTIVE = (*G_OPTIMAL, "GSE-Lin", "GSE-Lin-FWG-literal", "SH")
AUTO_OTHERS = (
    *G_OPTIMAL[1:],
    "GSE-Lin",
    "SH",
    "LinUCB",
    "BayesGap-exp",
    "LinGapE",
    "LinGapE-Greedy",
    "Peace",
    "OD-LinBAI",
)
BENCH_A = 'GSE(allocation="g-optimal")'


class Absent(Exception):
    """A quote about a page that does not exist (now)."""


# ---------------------------------------------------------------------------------------------------- formats


def _thousandths(x: float) -> int:
    return round(x * 1000)


def signed(x: float, digits: int = 3) -> str:
    """``+0.009``, ``−0.002``, ``+0.000``."""
    text = f"{abs(x):.{digits}f}"
    return ("−" if x < 0 and float(text) != 0 else "+") + text


def plain(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


# ---------------------------------------------------------------------------------------------------- selections


@dataclass(frozen=True)
class At:
    """One cell with its address."""

    section: str
    row: str
    column: str
    cell: Cell
    signed: bool

    @property
    def value(self) -> float:
        assert self.cell.value is not None
        return self.cell.value

    @property
    def se(self) -> float:
        assert self.cell.se is not None, f"{self} has no standard error"
        return self.cell.se

    def show(self, x: float, digits: int = 3) -> str:
        return signed(x, digits) if self.signed else plain(x, digits)

    def pm(self) -> str:
        """``+0.089 ± 0.015``."""
        return f"{self.show(self.value)} ± {plain(self.se)}"

    def beyond(self, k: int = 2) -> bool:
        return abs(_thousandths(self.value)) > k * _thousandths(self.se)


@cache
def _page(source: str) -> Page:
    return Page(ROOT / source) if source.endswith(".md") else experiment(source)


@dataclass(frozen=True)
class Sel:
    """Cells of one page: those of the tables with ``caption`` in ``sections`` (None: in every section), in ``rows``
    and ``columns`` (None: all); dashes are left out. ``negate`` reads a difference ``a - b`` as ``b - a``."""

    source: str
    caption: str
    sections: tuple[str, ...] | None
    columns: tuple[str, ...] | None
    rows: tuple[str, ...] | None = None
    negate: bool = False

    def cells(self) -> list[At]:
        page = _page(self.source)
        tables = [page.table(self.caption, s) for s in self.sections] if self.sections else page.find(self.caption)
        assert tables, f"{self.source}: no table with caption {self.caption!r}"
        out = []
        for table in tables:
            for row in self.rows or tuple(table.rows):
                for column in self.columns or table.columns:
                    cell = table.cell(row, column)
                    if cell.value is None:
                        continue
                    if self.negate:
                        cell = Cell(cell.text, -cell.value, cell.se)
                    out.append(At(table.section, row, column, cell, self.caption == PAIRED))
        return out


Selection = Sel | tuple[Sel, ...]


def _cells(selection: Selection) -> list[At]:
    sels = selection if isinstance(selection, tuple) else (selection,)
    return [at for sel in sels for at in sel.cells()]


def _nonempty(selection: Selection) -> list[At]:
    cells = _cells(selection)
    assert cells, f"{selection} selects no cell"
    return cells


def _label(at: At, label: str) -> str:
    """``label`` with the cell's ``{section}``, ``{setting}`` (the section less a ``Fig. N:`` prefix), ``{row}`` and
    ``{column}``."""
    setting = re.sub(r"^Fig\. \w+: ", "", at.section)
    return label.format(section=at.section, setting=setting, row=at.row, column=at.column)


def _by_row(selection: Selection) -> dict[tuple[str, str], dict[str, At]]:
    rows: dict[tuple[str, str], dict[str, At]] = {}
    for at in _cells(selection):
        rows.setdefault((at.section, at.row), {})[at.column] = at
    return rows


# ---------------------------------------------------------------------------------------------------- numbers


class Number:
    """How one number of a quote comes from its table."""

    def render(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class One(Number):
    """The one selected cell: ``+0.089 ± 0.015`` (``pm``) or its value alone, to ``digits`` decimals."""

    sel: Sel
    pm: bool = True
    digits: int = 3

    def render(self) -> str:
        (at,) = _nonempty(self.sel)
        return at.pm() if self.pm else at.show(at.value, self.digits)


@dataclass(frozen=True)
class Range(Number):
    """``low to high`` over the cells; with ``label``, each end as ``value ± se (label)``."""

    sel: Selection
    label: str | None = None

    def render(self) -> str:
        cells = _nonempty(self.sel)
        lo, hi = min(cells, key=lambda a: a.value), max(cells, key=lambda a: a.value)
        if self.label is None:
            return f"{lo.show(lo.value)} to {hi.show(hi.value)}"
        return f"{lo.pm()} ({_label(lo, self.label)}) to {hi.pm()} ({_label(hi, self.label)})"


@dataclass(frozen=True)
class Extreme(Number):
    """The largest (``end="max"``) or smallest cell as ``label: value ± se``."""

    sel: Selection
    label: str
    end: str = "max"

    def render(self) -> str:
        pick = max if self.end == "max" else min
        at = pick(_nonempty(self.sel), key=lambda a: a.value)
        return f"{_label(at, self.label)}: {at.pm()}"


TESTS: dict[str, Callable[[At], bool]] = {
    "beyond 2 se": lambda a: a.beyond(),
    "above 2 se": lambda a: a.beyond() and a.value > 0,
    "below 2 se": lambda a: a.beyond() and a.value < 0,
    "positive": lambda a: _thousandths(a.value) > 0,
    "negative": lambda a: _thousandths(a.value) < 0,
    "not negative": lambda a: _thousandths(a.value) >= 0,
    "zero": lambda a: _thousandths(a.value) == 0 and _thousandths(a.se) == 0,
    "spent B": lambda a: a.value == _budget(a.row),
    "within B": lambda a: a.value <= _budget(a.row),
}


def _budget(row: str) -> int:
    found = re.search(r"\(B=(\d+)\)", row)
    assert found, f"pulls row {row!r} names no budget"
    return int(found.group(1))


@dataclass(frozen=True)
class Count(Number):
    """``n of m``: how many of the ``m`` cells pass ``test`` (a key of ``TESTS``)."""

    sel: Selection
    test: str

    def counts(self) -> tuple[int, int]:
        cells = _nonempty(self.sel)
        return sum(TESTS[self.test](a) for a in cells), len(cells)

    def render(self) -> str:
        return "{} of {}".format(*self.counts())


@dataclass(frozen=True)
class Significance(Number):
    """``within 2 se`` or ``beyond 2 se`` for the one selected cell."""

    sel: Sel

    def render(self) -> str:
        (at,) = _nonempty(self.sel)
        return "beyond 2 se" if at.beyond() else "within 2 se"


@dataclass(frozen=True)
class Highest(Number):
    """``n of m``: in how many rows (section, row) one of ``columns`` is above every other column of the selection
    (``lowest``: below every other)."""

    sel: Selection
    columns: tuple[str, ...]
    lowest: bool = False

    def counts(self) -> tuple[int, int]:
        n = m = 0
        for cells in _by_row(self.sel).values():
            mine = [cells[c].value for c in self.columns if c in cells]
            rest = [a.value for c, a in cells.items() if c not in self.columns]
            if not mine or not rest:
                continue
            m += 1
            n += min(mine) < min(rest) if self.lowest else max(mine) > max(rest)
        assert m, f"{self.sel}: no row to compare"
        return n, m

    def render(self) -> str:
        return "{} of {}".format(*self.counts())


@dataclass(frozen=True)
class Spread(Number):
    """The largest difference between the highest and lowest cell of a row (section, row)."""

    sel: Selection

    def render(self) -> str:
        rows = _by_row(self.sel).values()
        return plain(max(max(a.value for a in r.values()) - min(a.value for a in r.values()) for r in rows))


@dataclass(frozen=True)
class Apart(Number):
    """The largest ``|a - b|`` between the selection's two columns, over its rows."""

    sel: Sel

    def render(self) -> str:
        assert self.sel.columns is not None
        a, b = self.sel.columns
        rows = [r for r in _by_row(self.sel).values() if a in r and b in r]
        return plain(max(abs(r[a].value - r[b].value) for r in rows))


@dataclass(frozen=True)
class Common(Number):
    """The value every selected cell shares (``value ± se``, or the standard error alone)."""

    sel: Selection
    part: str = "pm"

    def render(self) -> str:
        shown = {a.pm() if self.part == "pm" else plain(a.se) for a in _nonempty(self.sel)}
        assert len(shown) == 1, f"{self.sel}: the cells differ: {sorted(shown)}"
        return shown.pop()


@dataclass(frozen=True)
class MaxZ(Number):
    """The largest ``|difference| / se``, rounded up to one decimal."""

    sel: Selection

    def render(self) -> str:
        z = max(abs(_thousandths(a.value)) / _thousandths(a.se) for a in _nonempty(self.sel))
        return f"{math.ceil(z * 10 - 1e-9) / 10:.1f}"


@dataclass(frozen=True)
class Largest(Number):
    """The largest value of the selected cells, unsigned (``behind by up to 0.014``)."""

    sel: Selection

    def render(self) -> str:
        return plain(max(a.value for a in _nonempty(self.sel)))


@dataclass(frozen=True)
class MaxSe(Number):
    """The largest standard error of the selected cells."""

    sel: Selection

    def render(self) -> str:
        return plain(max(a.se for a in _nonempty(self.sel)))


@dataclass(frozen=True)
class Beyond(Number):
    """The columns with a cell farther than ``bound`` from zero, in the selection's order: ``A, B and C``."""

    sel: Sel
    bound: float

    def render(self) -> str:
        far = {a.column for a in _nonempty(self.sel) if abs(_thousandths(a.value)) > _thousandths(self.bound)}
        assert self.sel.columns is not None
        names = [c for c in self.sel.columns if c in far]
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


@dataclass(frozen=True)
class Rising(Number):
    """``n of m``: in how many rows the value rises from each of the selection's sections to the next."""

    sel: Sel

    def render(self) -> str:
        series: dict[str, list[float]] = {}
        for at in _nonempty(self.sel):
            series.setdefault(at.row, []).append(at.value)
        n = sum(all(x < y for x, y in zip(s, s[1:])) for s in series.values())
        return f"{n} of {len(series)}"


@dataclass(frozen=True)
class Replications(Number):
    """The replications per cell every experiment's page states (``1,000``)."""

    experiments: tuple[str, ...]

    def render(self) -> str:
        counts = set()
        for name in self.experiments:
            found = re.search(r"(\d+) paired replications per cell", (RESULTS / name / "summary.md").read_text())
            assert found, f"{name}/summary.md states no replication count"
            counts.add(int(found.group(1)))
        assert len(counts) == 1, counts
        return f"{counts.pop():,}"


@dataclass(frozen=True)
class Moved(Number):
    """How far ``od_linbai.md``'s paired differences moved from the summary's OD-LinBAI column: the largest move
    (``part="value"``) or the largest move in units of the summary's standard error (``part="se"``)."""

    experiments: tuple[str, ...]
    part: str = "value"

    def render(self) -> str:
        moves = [
            (abs(_thousandths(new.value) - _thousandths(old.value)), _thousandths(old.se))
            for e in self.experiments
            for _, _, old, new in superseded(e)
            if old.value is not None and new.value is not None and old.se
        ]
        if not moves:
            raise Absent(f"no {SUPERSEDING} beside {self.experiments}")
        if self.part == "value":
            return plain(max(m for m, _ in moves) / 1000)
        return f"{max(m / se for m, se in moves):.1f}"


# ---------------------------------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class All:
    """A claim without a number: every cell of the count passes its test."""

    count: Count | Highest

    def holds(self) -> bool:
        n, m = self.count.counts()
        return n == m


@dataclass(frozen=True)
class No:
    """A claim without a number: no cell of the count passes its test."""

    count: Count | Highest

    def holds(self) -> bool:
        return self.count.counts()[0] == 0


@dataclass(frozen=True)
class Quote:
    """A sentence of ``doc`` whose numbers come from tables; ``claims`` are the words in it the tables must bear."""

    doc: str
    template: str
    numbers: dict[str, Number] = field(default_factory=dict)
    claims: tuple[All | No, ...] = ()

    def render(self) -> str:
        return self.template.format(**{name: n.render() for name, n in self.numbers.items()})


# ---------------------------------------------------------------------------------------------------- the quotes


def paired(source: str, sections: tuple[str, ...] | None, *columns: str, rows=None, negate: bool = False) -> Sel:
    return Sel(source, PAIRED, sections, columns, rows, negate)


def accuracy(source: str, sections: tuple[str, ...] | None, *columns: str, rows=None) -> Sel:
    return Sel(source, ACCURACY, sections, columns or None, rows)


def pulls(source: str, *columns: str) -> Sel:
    return Sel(source, PULLS, None, columns)


def cell(source: str, section: str, row: str, column: str, caption: str = PAIRED) -> Sel:
    return Sel(source, caption, (section,), (column,), (row,))


EXPERIMENTS = (ADAPTIVE, STATIC, RANDOM, LOGISTIC, AUTOMOBILE)
K16, K32, K_FROM_16 = ("8", "16"), ("8", "16", "32"), ("16", "32", "64", "128")
D_BELOW_K, D_FROM_K = ("5", "7"), ("10", "12")
SMALL_GAPS = ("0.01", "0.03", "0.05")
FIG6 = "Fig. 6: sigma^2 = 1, B = {}".format
BENCH_A_SECTION = "(a) AdaptiveInstance(K=16), B = 320, noise variance 10"
GSE_PULLS = (
    pulls(ADAPTIVE, *GSE_ADAPTIVE),
    pulls(STATIC, *GSE_ADAPTIVE),
    pulls(RANDOM, *G_OPTIMAL, "GSE-Lin"),
    pulls(LOGISTIC, "GSE-Log-FW", "GSE-Log", "GSE-Lin-FW", "GSE-Lin"),
    pulls(AUTOMOBILE, *G_OPTIMAL, "GSE-Lin", "SH"),
)
UNIFORM_MINUS_FW = (paired(ADAPTIVE, BK, "GSE-Lin"), paired(RANDOM, FIG3, "GSE-Lin"))

QUOTES: list[Quote] = [
    # ------------------------------------------------------------ the opening paragraph
    Quote(GUIDE, "Every cell is {n} paired replications", {"n": Replications(EXPERIMENTS)}),
    Quote(
        GUIDE,
        "accuracy standard errors are at most {se}",
        {"se": MaxSe(tuple(accuracy(e, None) for e in EXPERIMENTS))},
    ),
    Quote(
        GUIDE,
        "Every GSE and SH run spent exactly `B` pulls",
        claims=(All(Count(GSE_PULLS, "spent B")),),
    ),
    Quote(
        GUIDE,
        "OD-LinBAI spends at most `B` by construction",
        claims=(All(Count(tuple(pulls(e, "OD-LinBAI") for e in (ADAPTIVE, STATIC, RANDOM, AUTOMOBILE)), "within B")),),
    ),
    Quote(
        GUIDE,
        "({spent} of `B` = 160 pulls at K = 8, d = 10;",
        {"spent": One(Sel(RANDOM, PULLS, None, ("OD-LinBAI",), ("Fig. 3: B/K = 20, 8 (B=160)",)), pm=False, digits=0)},
    ),
    Quote(
        GUIDE,
        "every paired difference moved by at most {move}, at most {se} times its standard error in the summary",
        {"move": Moved((ADAPTIVE, STATIC, AUTOMOBILE)), "se": Moved((ADAPTIVE, STATIC, AUTOMOBILE), "se")},
    ),
    # ------------------------------------------------------------ Alg. 2 as printed
    Quote(
        GUIDE,
        "GSE-Lin-FWG-literal and uniform GSE-Lin differ in accuracy by at most {apart} in every adaptive cell",
        {"apart": Apart(accuracy(ADAPTIVE, BK, "GSE-Lin-FWG-literal", "GSE-Lin"))},
    ),
    # ------------------------------------------------------------ adaptive, Fig. 2
    Quote(
        GUIDE,
        "a real G-optimal design is not better than uniform here: GSE-Lin minus GSE-Lin-FW is {lo_hi}, positive in "
        "{positive} cells, beyond 2 se in {beyond} ({max})",
        {
            "lo_hi": Range(paired(ADAPTIVE, BK, "GSE-Lin")),
            "positive": Count(paired(ADAPTIVE, BK, "GSE-Lin"), "positive"),
            "beyond": Count(paired(ADAPTIVE, BK, "GSE-Lin"), "beyond 2 se"),
            "max": Extreme(paired(ADAPTIVE, BK, "GSE-Lin"), "K = {row}, {section}"),
        },
    ),
    Quote(
        GUIDE,
        "Sequential Halving, which ignores the features, has the highest accuracy of the GSE variants in {best} cells "
        "(SH minus GSE-Lin-FW {lo_hi}, beyond 2 se in {beyond})",
        {
            "best": Highest(accuracy(ADAPTIVE, BK, *GSE_ADAPTIVE), ("SH",)),
            "lo_hi": Range(paired(ADAPTIVE, BK, "SH")),
            "beyond": Count(paired(ADAPTIVE, BK, "SH"), "beyond 2 se"),
        },
    ),
    Quote(
        GUIDE,
        "at B/K = 10, LinUCB ({linucb}) is above every GSE variant in {linucb_best} cells it runs, BayesGap-exp "
        "(K ≤ 16: {bayesgap}) in {bayesgap_best}",
        {
            "linucb": Range(paired(ADAPTIVE, BK[:1], "LinUCB")),
            "linucb_best": Highest(accuracy(ADAPTIVE, BK[:1], *GSE_ADAPTIVE, "LinUCB"), ("LinUCB",)),
            "bayesgap": Range(paired(ADAPTIVE, BK[:1], "BayesGap-exp", rows=K16)),
            "bayesgap_best": Highest(
                accuracy(ADAPTIVE, BK[:1], *GSE_ADAPTIVE, "BayesGap-exp", rows=K16), ("BayesGap-exp",)
            ),
        },
    ),
    Quote(
        GUIDE,
        "Peace minus GSE-Lin-FW is {lo_hi} (K ≤ 16), beyond 2 se in {beyond}",
        {
            "lo_hi": Range(paired(ADAPTIVE, BK, "Peace", rows=K16)),
            "beyond": Count(paired(ADAPTIVE, BK, "Peace", rows=K16), "beyond 2 se"),
        },
    ),
    Quote(
        GUIDE,
        "the weakest method in {weakest} cells it runs (K ≤ 32): {lo_hi} against GSE-Lin-FW ({min})",
        {
            "weakest": Highest(accuracy(ADAPTIVE, BK, rows=K32), ("LinGapE",), lowest=True),
            "lo_hi": Range(paired(ADAPTIVE, BK, "LinGapE")),
            "min": Extreme(paired(ADAPTIVE, BK, "LinGapE"), "K = {row}, {section}", end="min"),
        },
    ),
    # ------------------------------------------------------------ static, Fig. 1
    Quote(
        GUIDE,
        "every GSE variant makes SH's choice in every paired replication (difference {common} at every gap;",
        {"common": Common(paired(STATIC, STATIC_GRID, *GSE_ADAPTIVE[1:]))},
    ),
    Quote(
        GUIDE,
        "at gaps 0.01-0.05 every algorithm is within {spread} of the others (accuracy {lo_hi}, chance 0.0625)",
        {
            "spread": Spread(accuracy(STATIC, STATIC_GRID, rows=SMALL_GAPS)),
            "lo_hi": Range(accuracy(STATIC, STATIC_GRID, rows=SMALL_GAPS)),
        },
    ),
    Quote(
        GUIDE,
        "LinUCB minus GSE-Lin-FW is {small} at gaps 0.01-0.1; at gap 0.3 LinUCB {linucb} vs GSE {gse} ({diff}, "
        "{significance}), LinGapE {lingape}, BayesGap {bayesgap}, Peace {peace}",
        {
            "small": Range(paired(STATIC, STATIC_GRID, "LinUCB", rows=(*SMALL_GAPS, "0.1"))),
            "linucb": One(cell(STATIC, STATIC_GRID[0], "0.3", "LinUCB", ACCURACY), pm=False),
            "gse": One(cell(STATIC, STATIC_GRID[0], "0.3", "GSE-Lin-FW", ACCURACY), pm=False),
            "diff": One(cell(STATIC, STATIC_GRID[0], "0.3", "LinUCB")),
            "significance": Significance(cell(STATIC, STATIC_GRID[0], "0.3", "LinUCB")),
            "lingape": One(cell(STATIC, STATIC_GRID[0], "0.3", "LinGapE")),
            "bayesgap": One(cell(STATIC, STATIC_GRID[0], "0.3", "BayesGap-exp")),
            "peace": One(cell(STATIC, STATIC_GRID[0], "0.3", "Peace")),
        },
    ),
    Quote(
        GUIDE,
        "LinGapE and BayesGap-exp are below GSE-Lin-FW in {below} cells, beyond 2 se in {beyond}",
        {
            "below": Count(paired(STATIC, STATIC_GRID, "LinGapE", "BayesGap-exp"), "negative"),
            "beyond": Count(paired(STATIC, STATIC_GRID, "LinGapE", "BayesGap-exp"), "beyond 2 se"),
        },
    ),
    # ------------------------------------------------------------ random sphere, Fig. 3
    Quote(
        GUIDE,
        "GSE-Lin-Wynn and GSE-Lin-Greedy minus GSE-Lin-FW are {lo_hi}",
        {"lo_hi": Range(paired(RANDOM, FIG3, "GSE-Lin-Wynn", "GSE-Lin-Greedy"))},
    ),
    Quote(
        GUIDE,
        "uniform GSE-Lin minus GSE-Lin-FW is {b20} at B/K = 20 and {b50} at B/K = 50 over K = 16-128, positive in "
        "{positive}, beyond 2 se in {beyond} ({max}); at K = 8 < d the two designs are the same ({same})",
        {
            "b20": Range(paired(RANDOM, FIG3[:1], "GSE-Lin", rows=K_FROM_16)),
            "b50": Range(paired(RANDOM, FIG3[1:], "GSE-Lin", rows=K_FROM_16)),
            "positive": Count(paired(RANDOM, FIG3, "GSE-Lin", rows=K_FROM_16), "positive"),
            "beyond": Count(paired(RANDOM, FIG3, "GSE-Lin", rows=K_FROM_16), "beyond 2 se"),
            "max": Extreme(paired(RANDOM, FIG3, "GSE-Lin", rows=K_FROM_16), "K = {row}, {setting}"),
            "same": Common(paired(RANDOM, FIG3, "GSE-Lin", rows=("8",))),
        },
    ),
    Quote(
        GUIDE,
        "OD-LinBAI minus GSE-Lin-FW is {k8} (K = 8), {k16} (K = 16), {k32} (K = 32), {k64} (K = 64), {k128} (K = 128)",
        {f"k{k}": One(cell(RANDOM, FIG3[1], str(k), "OD-LinBAI")) for k in (8, 16, 32, 64, 128)},
    ),
    Quote(
        GUIDE,
        "Peace minus GSE-Lin-FW is {peace} (K ≤ 16); LinUCB and BayesGap-matern degrade with K (B/K = 20: LinUCB "
        "{linucb_8} at K = 8 to {linucb_128} at K = 128, BayesGap-matern {bayesgap_8} to {bayesgap_128}); LinGapE does "
        "the opposite: {lingape_8} at K = 8, then the most accurate method at K = 32 ({lingape_20} at B/K = 20; "
        "{lingape_acc} against GSE-Lin-FW's {gse_acc}, {lingape_50}, at B/K = 50)",
        {
            "peace": Range(paired(RANDOM, FIG3, "Peace", rows=K16)),
            "linucb_8": One(cell(RANDOM, FIG3[0], "8", "LinUCB"), pm=False),
            "linucb_128": One(cell(RANDOM, FIG3[0], "128", "LinUCB"), pm=False),
            "bayesgap_8": One(cell(RANDOM, FIG3[0], "8", "BayesGap-matern"), pm=False),
            "bayesgap_128": One(cell(RANDOM, FIG3[0], "128", "BayesGap-matern"), pm=False),
            "lingape_8": Range(paired(RANDOM, FIG3, "LinGapE", rows=("8",))),
            "lingape_20": One(cell(RANDOM, FIG3[0], "32", "LinGapE")),
            "lingape_acc": One(cell(RANDOM, FIG3[1], "32", "LinGapE", ACCURACY), pm=False),
            "gse_acc": One(cell(RANDOM, FIG3[1], "32", "GSE-Lin-FW", ACCURACY), pm=False),
            "lingape_50": One(cell(RANDOM, FIG3[1], "32", "LinGapE")),
        },
        claims=(
            No(Count(paired(RANDOM, FIG3, "Peace", rows=K16), "beyond 2 se")),
            All(Highest(accuracy(RANDOM, FIG3, rows=("32",)), ("LinGapE",))),
        ),
    ),
    # ------------------------------------------------------------ random, Fig. 6 and Fig. 7
    Quote(
        GUIDE,
        "B = 100: {b100}, every difference within {z100} se; B = 200: {b200} ({k64}); B = 500: OD-LinBAI ahead beyond "
        "2 se in {ahead} (K = 32, 64: {k32_500}, {k64_500})",
        {
            "b100": Range(paired(RANDOM, (FIG6(100),), "OD-LinBAI"), "K = {row}"),
            "z100": MaxZ(paired(RANDOM, (FIG6(100),), "OD-LinBAI")),
            "b200": Range(paired(RANDOM, (FIG6(200),), "OD-LinBAI")),
            "k64": Extreme(paired(RANDOM, (FIG6(200),), "OD-LinBAI", rows=("64",)), "K = {row}"),
            "ahead": Count(paired(RANDOM, (FIG6(500),), "OD-LinBAI"), "above 2 se"),
            "k32_500": One(cell(RANDOM, FIG6(500), "32", "OD-LinBAI")),
            "k64_500": One(cell(RANDOM, FIG6(500), "64", "OD-LinBAI")),
        },
    ),
    Quote(
        GUIDE,
        "OD-LinBAI {lo_hi}, beyond 2 se at {ahead} K",
        {
            "lo_hi": Range(paired(RANDOM, ("Fig. 7: corner, B = 25",), "OD-LinBAI"), "K = {row}"),
            "ahead": Count(paired(RANDOM, ("Fig. 7: corner, B = 25",), "OD-LinBAI"), "above 2 se"),
        },
    ),
    # ------------------------------------------------------------ logistic, Fig. 4
    Quote(
        GUIDE,
        "GSE-Log-FW minus GSE-Lin-FW at d < K (5, 7): {below} ({max}), beyond 2 se in {below_beyond}; at d ≥ K (10, 12): "
        "{from_k}, beyond 2 se in {from_k_beyond}",
        {
            "below": Range(paired(LOGISTIC, BK, "GSE-Lin-FW", rows=D_BELOW_K, negate=True)),
            "max": Extreme(paired(LOGISTIC, BK, "GSE-Lin-FW", rows=D_BELOW_K, negate=True), "d = {row}, {section}"),
            "below_beyond": Count(paired(LOGISTIC, BK, "GSE-Lin-FW", rows=D_BELOW_K), "beyond 2 se"),
            "from_k": Range(paired(LOGISTIC, BK, "GSE-Lin-FW", rows=D_FROM_K, negate=True)),
            "from_k_beyond": Count(paired(LOGISTIC, BK, "GSE-Lin-FW", rows=D_FROM_K), "beyond 2 se"),
        },
    ),
    Quote(
        GUIDE,
        "d ≥ K = 8 (10, 12): the same design (G-optimal = uniform), identical choices (GSE-Log minus GSE-Log-FW {same} "
        "in every cell); d = 5, 7: {lo_hi}, beyond 2 se in {beyond}",
        {
            "same": Common(paired(LOGISTIC, BK, "GSE-Log", rows=D_FROM_K)),
            "lo_hi": Range(paired(LOGISTIC, BK, "GSE-Log", rows=D_BELOW_K), "d = {row}, {section}"),
            "beyond": Count(paired(LOGISTIC, BK, "GSE-Log", rows=D_BELOW_K), "beyond 2 se"),
        },
    ),
    Quote(
        GUIDE,
        "UCB-GLM minus GSE-Log-FW is {lo_hi} at B/K ≥ 20, beyond 2 se in {beyond}; at B/K = 10 {lo_hi_10}, beyond 2 se "
        "in {beyond_10}",
        {
            "lo_hi": Range(paired(LOGISTIC, BK[1:], "UCB-GLM")),
            "beyond": Count(paired(LOGISTIC, BK[1:], "UCB-GLM"), "beyond 2 se"),
            "lo_hi_10": Range(paired(LOGISTIC, BK[:1], "UCB-GLM")),
            "beyond_10": Count(paired(LOGISTIC, BK[:1], "UCB-GLM"), "beyond 2 se"),
        },
    ),
    Quote(
        GUIDE,
        "BayesGap-matern minus GSE-Log-FW at B/K = 50: {lo_hi} (standard errors {se})",
        {
            "lo_hi": Range(paired(LOGISTIC, BK[2:], "BayesGap-matern")),
            "se": Common(paired(LOGISTIC, BK[2:], "BayesGap-matern"), "se"),
        },
    ),
    Quote(
        GUIDE,
        "every difference within {z} standard errors",
        {"z": MaxZ(paired(LOGISTIC, BK[2:], "BayesGap-matern"))},
    ),
    Quote(
        GUIDE,
        "GSE-Log-FW's accuracy is {a10} (B/K = 10), {a20} (20), {a50} (50), rising with B at {rising} d",
        {
            "a10": Range(accuracy(LOGISTIC, BK[:1], "GSE-Log-FW")),
            "a20": Range(accuracy(LOGISTIC, BK[1:2], "GSE-Log-FW")),
            "a50": Range(accuracy(LOGISTIC, BK[2:], "GSE-Log-FW")),
            "rising": Rising(accuracy(LOGISTIC, BK, "GSE-Log-FW")),
        },
    ),
    # ------------------------------------------------------------ Automobile, Fig. 5a
    Quote(
        GUIDE,
        "BayesGap-exp is at or above GSE-Lin-FW in {at_or_above} cells ({lo_hi}) and the most accurate method in "
        "{best} (a GSE variant in {gse_best})",
        {
            "lo_hi": Range(paired(AUTOMOBILE, AUTO_K, "BayesGap-exp")),
            "at_or_above": Count(paired(AUTOMOBILE, AUTO_K, "BayesGap-exp"), "not negative"),
            "best": Highest(accuracy(AUTOMOBILE, AUTO_K), ("BayesGap-exp",)),
            "gse_best": Highest(accuracy(AUTOMOBILE, AUTO_K), (*G_OPTIMAL, "GSE-Lin", "SH")),
        },
    ),
    Quote(
        GUIDE,
        "GSE-Lin-FW ahead of LinGapE(-Greedy) at K = 16 ({ahead}), behind it by up to {behind} at K = 8",
        {
            "ahead": Range(paired(AUTOMOBILE, AUTO_K[1:], "LinGapE", "LinGapE-Greedy", negate=True)),
            "behind": Largest(paired(AUTOMOBILE, AUTO_K[:1], "LinGapE", "LinGapE-Greedy")),
        },
    ),
    Quote(
        GUIDE,
        "every other method is within 0.03 of GSE-Lin-FW except {far8} at K = 8 and {far16} at K = 16",
        {
            "far8": Beyond(paired(AUTOMOBILE, AUTO_K[:1], *AUTO_OTHERS), 0.03),
            "far16": Beyond(paired(AUTOMOBILE, AUTO_K[1:], *AUTO_OTHERS), 0.03),
        },
    ),
    # ------------------------------------------------------------ cost
    Quote(
        GUIDE,
        "Peace {peace} s per 100 vmapped replications, {ratio}x GSE's {gse} s",
        {
            "peace": One(cell(BENCH, BENCH_A_SECTION, "Peace", "s / 100 reps", ACCURACY), pm=False, digits=1),
            "ratio": One(
                cell(BENCH, BENCH_A_SECTION, "Peace", 'cost / GSE(allocation="g-optimal")', ACCURACY),
                pm=False,
                digits=0,
            ),
            "gse": One(cell(BENCH, BENCH_A_SECTION, BENCH_A, "s / 100 reps", ACCURACY), pm=False),
        },
    ),
    Quote(
        GUIDE,
        "**reproduced** in kind ({ratio}x against 29-76x)",
        {
            "ratio": One(
                cell(BENCH, BENCH_A_SECTION, "Peace", 'cost / GSE(allocation="g-optimal")', ACCURACY),
                pm=False,
                digits=0,
            )
        },
    ),
    # ------------------------------------------------------------ README
    Quote(
        README,
        "static instance: GSE = Sequential Halving exactly; Fig. 7 corner case reproduced; a real G-optimal design is "
        "not better than uniform here",
        claims=(
            All(Count(paired(STATIC, STATIC_GRID, *GSE_ADAPTIVE[1:]), "zero")),
            All(Count(paired(RANDOM, ("Fig. 7: corner, B = 25",), "OD-LinBAI"), "above 2 se")),
            No(Count(UNIFORM_MINUS_FW, "below 2 se")),
        ),
    ),
]


def _normalised(text: str) -> str:
    return " ".join(text.split())


@cache
def _doc(path: str) -> str:
    return _normalised((ROOT / path).read_text())


def _rendered(quote: Quote) -> str:
    try:
        return quote.render()
    except Absent as why:
        pytest.skip(str(why))


@pytest.mark.parametrize("quote", QUOTES, ids=[f"{q.doc}:{q.template[:40]}" for q in QUOTES])
def test_the_docs_quote_the_committed_tables(quote: Quote) -> None:
    """The sentence, with its numbers rendered from the tables, is in the doc, and its claims hold in the tables."""
    sentence = _rendered(quote)
    assert _normalised(sentence) in _doc(quote.doc), (
        f"{quote.doc} does not say what its table shows; it should read:\n{sentence}\n"
        f"(`python tests/test_results_quotes.py` prints every quote)"
    )
    for claim in quote.claims:
        assert claim.holds(), f"{quote.doc}: {sentence!r} is not borne out by the table: {claim}"


def test_the_bai_section_cites_only_pages_that_exist() -> None:
    """Every results page the BAI section names exists (``od_linbai.md`` goes when the summaries are re-run, and the
    sentences about it with it)."""
    text = (ROOT / GUIDE).read_text()
    section = text[text.index(BAI_SECTION) :]
    section = section[: section.index("\n## ", 1)]
    cited = set(re.findall(r"docs/results/[^`\s)]+", section))
    cited |= {"docs/" + p[3:] for p in re.findall(r"\.\./results/[^`\s)]+", section)}
    assert cited
    for path in cited:
        braces = re.search(r"\{([^}]*)\}", path)
        expanded = [path.replace(braces.group(), part) for part in braces.group(1).split(",")] if braces else [path]
        for one in expanded:
            assert list(ROOT.glob(one)), f"{GUIDE} cites {one}, which does not exist"


def main() -> None:
    """Print every quote as its tables render it now, marking those the doc does not contain yet."""
    for quote in QUOTES:
        try:
            sentence = quote.render()
        except Absent as why:
            print(f"[absent] {quote.doc}: {why}\n")
            continue
        except (AssertionError, KeyError) as why:
            print(f"[TABLE ERROR] {quote.doc}: {quote.template}\n{why}\n")
            continue
        found = _normalised(sentence) in _doc(quote.doc)
        failed = [str(c) for c in quote.claims if not c.holds()]
        mark = "ok" if found and not failed else ("CLAIM FAILS: " + "; ".join(failed) if failed else "NOT IN DOC")
        print(f"[{mark}] {quote.doc}:\n{sentence}\n")


if __name__ == "__main__":
    main()
