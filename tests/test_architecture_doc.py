"""``docs/architecture.md`` against the code: its layer table and the core's rows of its layer diagram.

The table whose header is ``| layer | folder | may import |`` must be ``test_layering.LAYERS``, row for
row, lowest first. The core's rows of the diagram (the lines after the one starting ``core`` in the
page's first code block) must name only subpackages (``name/``) and modules (``name``) that
``bayesbandit/`` has, and every one of them whose name does not start with an underscore; a row is
its names, three spaces apart, then its description after four spaces or more.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_layering import LAYERS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "bayesbandit"


def layer_table(text: str) -> dict[str, frozenset[str]]:
    """The layer table's rows in order: layer -> the layers it may import (names in backticks)."""
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if _cells(line) == ["layer", "folder", "may import"]]
    assert len(headers) == 1, f"{DOC.name}: expected one table headed '| layer | folder | may import |'"
    table: dict[str, frozenset[str]] = {}
    for line in lines[headers[0] + 2 :]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        layer = cells[0].strip("`")
        assert layer not in table, f"{DOC.name}: layer {layer!r} has two rows"
        table[layer] = frozenset(re.findall(r"`([^`]+)`", cells[-1]))
    return table


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def core_rows(text: str) -> list[list[str]]:
    """The names in each core row of the page's first code block (the layer diagram)."""
    block = text.split("```")[1].splitlines()
    starts = [i for i, line in enumerate(block) if line.startswith("core")]
    assert len(starts) == 1, f"{DOC.name}: the layer diagram needs one line starting 'core'"
    rows = []
    for line in block[starts[0] + 1 :]:
        if line.strip():
            names = re.split(r"\s{4,}", line.strip())[0].split()
            rows.append(names)
    return rows


def package_entries() -> dict[str, Path]:
    """``bayesbandit/``'s subpackages as ``name/`` and its modules as ``name``, from the folder."""
    entries = {}
    for path in PACKAGE.iterdir():
        if path.is_dir() and (path / "__init__.py").is_file():
            entries[f"{path.name}/"] = path
        elif path.suffix == ".py" and path.name != "__init__.py":
            entries[path.stem] = path
    return entries


TEXT = DOC.read_text()


def test_the_layer_table_is_the_layering_contract():
    table = layer_table(TEXT)
    assert table == LAYERS, (
        f"{DOC.name}'s layer table and tests/test_layering.py's LAYERS differ: "
        f"in the page {sorted((k, sorted(v)) for k, v in table.items() if LAYERS.get(k) != v)}, "
        f"in LAYERS {sorted((k, sorted(v)) for k, v in LAYERS.items() if table.get(k) != v)}"
    )
    assert list(table) == list(LAYERS), f"{DOC.name}: the layers are not in LAYERS' order (lowest first)"


def test_the_core_rows_name_every_public_subpackage_and_module():
    named = [name for row in core_rows(TEXT) for name in row]
    twice = sorted({name for name in named if named.count(name) > 1})
    assert not twice, f"{DOC.name}: named in more than one place in the core's rows: {twice}"
    entries = package_entries()
    layers = {f"{layer}/" for layer in LAYERS}  # a layer inside bayesbandit/ (testing/) is a row of the table
    unknown = sorted(set(named) - set(entries))
    assert not unknown, f"{DOC.name}: the core's rows name what bayesbandit/ does not have: {unknown}"
    misplaced = sorted(set(named) & layers)
    assert not misplaced, f"{DOC.name}: layers of their own named in the core's rows: {misplaced}"
    public = {name for name in entries if not name.startswith("_") and name not in layers}
    missing = sorted(public - set(named))
    assert not missing, f"{DOC.name}: the core's rows leave out {missing} (add each to the row of its imports)"


def test_the_parsers_read_what_they_are_given():
    text = (
        "```\ntop/   above\ncore  (bayesbandit/)      rows\n  a/   b    what they do\n  c   _d\n```\n\n"
        "| layer | folder | may import |\n| --- | --- | --- |\n| `core` | `x/` | `core` |\n"
        "| `up` | `y/` | `core`, `up` |\n\nafter\n"
    )
    assert core_rows(text) == [["a/", "b"], ["c", "_d"]]
    assert layer_table(text) == {"core": frozenset({"core"}), "up": frozenset({"core", "up"})}
