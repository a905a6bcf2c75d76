"""The committed results tables, read cell by cell, for the tests that check what the docs quote from them.

A results page (``docs/results/<experiment>/summary.md``, ``benchmarks/results/*.md``) is markdown: ``## `` section
headings, each followed by tables, a table optionally introduced by a one-line caption ("Paired difference vs
GSE-Lin-FW:"). A table is addressed by its section heading and caption, a cell by its row label (the first column)
and column label (the header row). A cell ``"+0.049 ± 0.016"`` reads as value 0.049 and standard error 0.016,
``"—"`` as no value, ``"80 / 0.01 s"`` as value 80, ``"136x"`` as value 136.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SUPERSEDING = "od_linbai.md"
"""A page beside ``summary.md`` whose ``OD-LinBAI`` column replaces the summary's, while it exists."""
SUPERSEDED_COLUMN = "OD-LinBAI"

_NUMBER = r"[+\-−]?\d+(?:\.\d+)?"
_ABSENT = {"—", "-", ""}


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
        number = re.match(_NUMBER, text)
        if number is None:
            return cls(text, None, None)
        se = re.search(r"±\s*(" + _NUMBER + ")", text)
        return cls(text, _float(number.group()), _float(se.group(1)) if se else None)


def _float(text: str) -> float:
    return float(text.replace("−", "-"))


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


def read_tables(path: Path) -> list[Table]:
    """Every table of a markdown page, in order."""
    tables: list[Table] = []
    section, above = "", ""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("#"):
            section, above = line.lstrip("#").strip(), ""
        elif line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|[\s|:\-]+\|", lines[i + 1].strip()):
            header = _cells(line)
            table = Table(section, above, header[0], header[1:])
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = _cells(lines[i])
                if len(cells) != len(header):
                    raise ValueError(f"{path}:{i + 1}: {len(cells)} cells under a header of {len(header)}")
                table.rows[cells[0]] = {c: Cell.parse(t) for c, t in zip(header[1:], cells[1:])}
                i += 1
            tables.append(table)
            above = ""
            continue
        elif line:
            above = line
        i += 1
    return tables


class Page:
    """The tables of one results page, found by section and caption."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tables = read_tables(path)

    def find(self, caption: str, section: str | None = None) -> list[Table]:
        """The tables whose caption starts with ``caption`` (``""``: those right under their heading), in ``section``
        (None: in every section)."""
        return [
            t
            for t in self.tables
            if (section is None or t.section == section)
            and (t.caption.startswith(caption) if caption else not t.caption)
        ]

    def table(self, caption: str, section: str | None = None) -> Table:
        """The one table :meth:`find` finds."""
        found = self.find(caption, section)
        if len(found) != 1:
            sections = sorted({t.section for t in self.tables})
            raise KeyError(
                f"{self.path}: {len(found)} tables with caption {caption!r} in {section!r}; sections: {sections}"
            )
        return found[0]


def experiment(name: str) -> Page:
    """``docs/results/<name>/summary.md``, with the ``OD-LinBAI`` column of ``od_linbai.md`` in place of its own
    wherever that page exists (it supersedes the summary's column until the summary is re-run)."""
    folder = RESULTS / name
    page = Page(folder / "summary.md")
    if (folder / SUPERSEDING).is_file():
        for newer in read_tables(folder / SUPERSEDING):
            older = page.table(newer.caption, newer.section)
            for row, cells in newer.rows.items():
                older.cell(row, SUPERSEDED_COLUMN)
                older.rows[row][SUPERSEDED_COLUMN] = cells[SUPERSEDED_COLUMN]
    return page


def superseded(name: str) -> Iterator[tuple[str, str, Cell, Cell]]:
    """``(section, row, summary's cell, od_linbai.md's cell)`` of every paired difference ``od_linbai.md`` replaces;
    nothing when the experiment has no such page."""
    folder = RESULTS / name
    if not (folder / SUPERSEDING).is_file():
        return
    old = Page(folder / "summary.md")
    for newer in read_tables(folder / SUPERSEDING):
        if newer.caption.startswith("Paired difference"):
            older = old.table(newer.caption, newer.section)
            for row, cells in newer.rows.items():
                yield newer.section, row, older.cell(row, SUPERSEDED_COLUMN), cells[SUPERSEDED_COLUMN]
