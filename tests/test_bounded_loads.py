"""Loading never waits and never reads without bound: FIFOs, devices, folders and huge sparse files.

Each load runs in a child process under a time limit, so a regression fails here as a timeout
instead of hanging the suite, and the child reports its peak memory (Linux's ``VmHWM``).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest

from bayesbandit.checkpoint import write_checkpoint

_CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import bayesbandit as bb
    from bayesbandit.errors import CheckpointError
    from bayesbandit.index import AnnoyIndex
    from bayesbandit.models import logistic

    how, path = sys.argv[1], sys.argv[2]
    load = {
        "read_checkpoint": lambda: bb.checkpoint.read_checkpoint(path),
        "Agent.load": lambda: bb.Agent.load(path, bb.GLMTSL(logistic())),
        "AnnoyIndex.load": lambda: AnnoyIndex.load(path),
    }[how]
    try:
        load()
        outcome = "loaded"
    except CheckpointError as exc:
        outcome = str(exc)
    # VmHWM: this process's own peak (ru_maxrss would carry the parent's over fork and exec)
    peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(json.dumps({"outcome": outcome, "peak_mb": peak_kb / 1024}))
    """
)

_BASELINE_MB = 900  # the child's imports (JAX, NumPyro, bayesbandit) stay well under this


def _load_in_child(how: str, path: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, how, path],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _sparse(path, size: int, head: bytes = b"") -> str:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)  # a hole: no disk used, reads as zeros
    return str(path)


@pytest.fixture(params=["read_checkpoint", "Agent.load", "AnnoyIndex.load"])
def how(request):
    return request.param


def test_a_fifo_is_refused_at_once(tmp_path, how):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = _load_in_child(how, str(fifo))
    assert "it is a FIFO (named pipe), not a regular file" in result["outcome"]


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a character device"), ("/", "a folder")])
def test_devices_and_folders_are_refused_at_once(path, kind):
    result = _load_in_child("read_checkpoint", path)
    assert f"it is {kind}, not a regular file" in result["outcome"]
    assert result["peak_mb"] < _BASELINE_MB


@pytest.mark.parametrize(
    "head",
    [
        b"",  # zeros: another signature
        b"BBCKPT\x00\x00" + struct.pack("<Q", 2**62),  # a header length past the end
        None,  # a valid header declaring a small payload, then a hole of gigabytes
    ],
    ids=["zeros", "huge-header-length", "valid-header"],
)
def test_a_huge_sparse_file_is_refused_without_being_read(tmp_path, how, head):
    if head is None:
        write_checkpoint(tmp_path / "small", {"t": 1}, [])
        head = (tmp_path / "small").read_bytes()
    path = _sparse(tmp_path / "huge.bbckpt", 4 * 2**30, head)
    result = _load_in_child(how, path)
    assert result["outcome"] != "loaded"
    assert result["peak_mb"] < _BASELINE_MB, result  # far below the file's 4 GiB
    if head.startswith(b"BBCKPT"):
        assert "it is not read past that" in result["outcome"]
