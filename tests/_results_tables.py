"""The committed results tables, read cell by cell, for the tests that check what the docs quote from them.

A results page (``docs/results/<experiment>/summary.md``, ``benchmarks/results/*.md``) is markdown: ``## `` section
headings, each followed by tables, a table optionally introduced by a one-line caption ("Paired difference vs
GSE-Lin-FW:"). A table is addressed by its section heading and caption, a cell by its row label (the first column;
the first two, ``"program / policy"``, where the first repeats) and column label (the header row; a label that
repeats, as ``"paper"`` after each of several differences, joined to the label before it: ``"PC2UCB − C2UCB /
paper"``). A cell
``"+0.049 ± 0.016"`` (or ``"+0.049 +- 0.016"``) reads as value 0.049 and standard error 0.016, ``"—"`` as no value,
``"80 / 0.01 s"`` as value 80, ``"136x"`` as value 136, ``"×11.5"`` as 11.5, ``"1,856"`` as 1856.

The lines outside the tables (headings, captions, notes) are the page's prose, read by a pattern whose ``{}`` marks a
number (``"Wall time {} min"``); so is a number further into a cell (``"({}%)"``: the percentage in brackets of
``"+6 ± 14 (+2.4%)"``). The closing ``<!-- provenance -->`` line belongs to neither.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"

_NUMBER = r"[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_PM = r"\s*(?:±|\+-)\s*"
_ABSENT = {"—", "–", "-", ""}
PROVENANCE = "<!-- provenance -->"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, the number it starts with (None for a dash) and the standard error after ``±``."""

    text: str
    value: float | None
    se: float | None

    @classmethod
    def parse(cls, text: str) -> Cell:
        if text in _ABSENT:
            return cls(text, None, None)
        number = re.match(r"×?(" + _NUMBER + ")(?:" + _PM + "(" + _NUMBER + "))?", text)
        if number is None:
            return cls(text, None, None)
        se = number.group(2)
        return cls(text, _float(number.group(1)), _float(se) if se else None)

    def within(self, pattern: str) -> Cell:
        """The number ``pattern``'s one ``{}`` marks in the cell's text, as a cell of its own: ``"({}%)"`` reads
        ``"+6 ± 14 (+2.4%)"`` as 2.4, ``"(×{})"`` reads ``"×0.94 (×0.89)"`` as 0.89; a dash stays a dash."""
        if self.value is None:
            return self
        found = _pattern(pattern).search(self.text)
        if found is None:
            raise KeyError(f"cell {self.text!r} has no {pattern!r}")
        return Cell.parse(found.group(1))


def _float(text: str) -> float:
    return float(text.replace("−", "-").replace(",", ""))


@dataclass
class Table:
    """A markdown table: the section heading and caption above it, its column labels, its rows by label."""

    section: str
    caption: str
    row_label: str
    columns: list[str]
    rows: dict[str, dict[str, Cell]] = field(default_factory=dict)

    def cell(self, row: str, column: str) -> Cell:
        if row not in self.rows:
            raise KeyError(f"no row {row!r} in table {self.section!r} / {self.caption!r}; rows: {list(self.rows)}")
        if column not in self.columns:
            raise KeyError(f"no column {column!r} in table {self.section!r} / {self.caption!r}: {self.columns}")
        return self.rows[row][column]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(path: Path, section: str, caption: str, header: list[str], body: list[tuple[int, list[str]]]) -> Table:
    """The table of ``header`` and ``body`` (line number, cells), its rows labelled by the first column, or by the
    first two joined by ``" / "`` where the first repeats."""
    for number, cells in body:
        if len(cells) != len(header):
            raise ValueError(f"{path}:{number}: {len(cells)} cells under a header of {len(header)}")
    firsts = [cells[0] for _, cells in body]
    keys = 2 if len(set(firsts)) < len(firsts) else 1
    header = [
        f"{header[i - 1]} / {label}" if i >= keys and header.count(label) > 1 else label
        for i, label in enumerate(header)
    ]
    table = Table(section, caption, " / ".join(header[:keys]), header[keys:])
    for number, cells in body:
        label = " / ".join(cells[:keys])
        if label in table.rows:
            raise ValueError(f"{path}:{number}: row {label!r} twice in one table")
        table.rows[label] = {c: Cell.parse(t) for c, t in zip(header[keys:], cells[keys:])}
    return table


def read_page(path: Path) -> tuple[list[Table], list[tuple[str, str]]]:
    """Every table of a markdown page, in order, and its prose: ``(section, line)`` for every other non-empty line,
    headings included (in their own section), the provenance line left out."""
    tables: list[Table] = []
    prose: list[tuple[str, str]] = []
    section, above = "", ""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith(PROVENANCE):
            above = ""
        elif line.startswith("#"):
            section, above = line.lstrip("#").strip(), ""
            prose.append((section, section))
        elif line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|[\s|:\-]+\|", lines[i + 1].strip()):
            header = _cells(line)
            body = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                body.append((i + 1, _cells(lines[i])))
                i += 1
            tables.append(_table(path, section, above, header, body))
            above = ""
            continue
        elif line:
            above = line
            prose.append((section, line))
        i += 1
    return tables, prose


def read_tables(path: Path) -> list[Table]:
    """Every table of a markdown page, in order."""
    return read_page(path)[0]


def _pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` as a regular expression: ``{}`` a number with an optional ``± se``, ``{*}`` a list of numbers
    separated by ``", "``, the rest literal."""
    one, many = "(" + _NUMBER + "(?:" + _PM + _NUMBER + ")?)", "(" + _NUMBER + "(?:, " + _NUMBER + ")*)"
    parts = re.split(r"(\{\*?\})", pattern)
    return re.compile("".join(one if p == "{}" else many if p == "{*}" else re.escape(p) for p in parts))


class Page:
    """The tables of one results page, found by section and caption."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tables, self.prose = read_page(path)

    def find(self, caption: str | None, section: str | None = None, columns: tuple[str, ...] = ()) -> list[Table]:
        """The tables whose caption starts with ``caption`` (``""``: those right under their heading; None: any of
        those that have every one of ``columns``), in ``section`` (None: in every section)."""
        return [
            t
            for t in self.tables
            if (section is None or t.section == section)
            and (
                set(columns) <= set(t.columns)
                if caption is None
                else t.caption.startswith(caption)
                if caption
                else not t.caption
            )
        ]

    def numbers(self, pattern: str, section: str | None = None) -> list[Cell]:
        """The numbers ``pattern``'s ``{}`` and ``{*}`` mark in the one prose line of ``section`` (None: of the page)
        it matches, in order."""
        regex = _pattern(pattern)
        found = [m for s, line in self.prose if section is None or s == section for m in [regex.search(line)] if m]
        if len(found) != 1:
            raise KeyError(f"{self.path}: {len(found)} prose lines in {section!r} match {pattern!r}")
        return [Cell.parse(item) for group in found[0].groups() for item in group.split(", ")]

    def table(self, caption: str | None, section: str | None = None, columns: tuple[str, ...] = ()) -> Table:
        """The one table :meth:`find` finds."""
        found = self.find(caption, section, columns)
        if len(found) != 1:
            sections = sorted({t.section for t in self.tables})
            raise KeyError(
                f"{self.path}: {len(found)} tables with caption {caption!r} in {section!r}; sections: {sections}"
            )
        return found[0]


def experiment(name: str) -> Page:
    """``docs/results/<name>/summary.md``."""
    return Page(RESULTS / name / "summary.md")
