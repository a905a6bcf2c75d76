"""Every committed result says what made it: ``run.json`` holds its provenance and each table prints it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bayesbandit.experiments._provenance import MANIFEST, footer

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
FOLDERS = sorted(p for p in RESULTS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
MARK = "<!-- provenance -->"


def test_every_result_is_a_folder():
    """A result is a folder (its tables, plot and ``run.json``); the pages beside them only include them."""
    for path in RESULTS.glob("*.md"):
        if path.name == "index.md":
            continue
        text = path.read_text()
        assert "{include}" in text, f"{path.name} is a result outside a folder: move it into docs/results/<name>/"


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_every_result_folder_records_its_provenance(folder):
    manifest_path = folder / MANIFEST
    assert manifest_path.is_file(), (
        f"docs/results/{folder.name} has no {MANIFEST}: results are committed from `bayesbandit run ... --out` "
        f"folders, which record the command, commit, date, machine and wall time"
    )
    manifest = json.loads(manifest_path.read_text())
    records = {"": manifest.get("provenance"), **manifest.get("provenance_of", {})}
    for name, record in records.items():
        assert record is not None, f"{folder.name}/{MANIFEST} has no provenance"
        assert re.fullmatch(r"[0-9a-f]{40}", record["commit"]), (folder.name, name, record["commit"])
        assert record["command"].strip() and record["date"].strip(), (folder.name, name)
        if not record.get("reconstructed"):
            assert record["wall_s"] > 0 and record["machine"]["cpus"] >= 1, (folder.name, name)
    tables = sorted(folder.glob("*.md"))
    assert tables, f"docs/results/{folder.name} holds no table"
    for table in tables:
        last = table.read_text().rstrip("\n").splitlines()[-1]
        record = records.get(table.name, records[""])
        assert last == f"{MARK} {footer(record)}", (
            f"{folder.name}/{table.name} does not end with its provenance line (from {MANIFEST})"
        )
