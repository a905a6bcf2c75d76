"""The walkthrough notebook executes in its small configuration and its plots render."""

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "examples" / "diagnostics_walkthrough.ipynb"


def test_notebook_executes_and_plots(monkeypatch):
    monkeypatch.setenv("BAYESBANDIT_QUICK", "1")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    images = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {})
    ]
    assert len(images) >= 4  # marginals x2, pairs, along-run
    assert os.environ["BAYESBANDIT_QUICK"] == "1"
