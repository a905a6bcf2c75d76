"""A process killed (SIGKILL) while it saves an index leaves nothing behind once the next save ends.

A child saves the same index to one path over and over; the parent kills it at a random moment,
or as soon as a file appears in the child's temporary folder (the moment a native library is
writing one), three times. Afterwards the path holds a whole, loadable index, the next save leaves only that
file in its folder, and the child's temporary folder is empty (native libraries write and read
through anonymous in-memory files).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from bayesbandit.index import AnnoyIndex, ExactIndex, HNSWIndex

KINDS = {"ExactIndex": ExactIndex, "AnnoyIndex": AnnoyIndex, "HNSWIndex": HNSWIndex}

_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from bayesbandit.index import AnnoyIndex, ExactIndex, HNSWIndex

    kind, path = sys.argv[1], sys.argv[2]
    index = {"ExactIndex": ExactIndex, "AnnoyIndex": AnnoyIndex, "HNSWIndex": HNSWIndex}[kind](16, **({"n_trees": 100} if kind == "AnnoyIndex" else {}))
    index.add(np.arange(20_000), np.random.default_rng(0).normal(size=(20_000, 16)))
    if kind == "AnnoyIndex":
        index.rebuild()
    index.save(path)
    print("saving", flush=True)
    while True:
        index.save(path)
    """
)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_kills_during_saves_leave_nothing_stale(tmp_path, kind):
    folder, scratch = tmp_path / "saves", tmp_path / "tmp"
    folder.mkdir()
    scratch.mkdir()
    target = folder / "index.bbckpt"
    rng = np.random.default_rng(0)
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, kind, str(target)],
            stdout=subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(scratch), "JAX_PLATFORMS": "cpu"},
        )
        try:
            assert child.stdout.readline().strip() == b"saving"
            deadline = time.monotonic() + rng.uniform(0.05, 0.5)
            while time.monotonic() < deadline and not any(scratch.iterdir()):
                time.sleep(0.001)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=60)
    index = KINDS[kind].load(target)  # whole: the last completed save
    assert len(index) == 20_000
    index.save(target)
    assert sorted(p.name for p in folder.iterdir()) == ["index.bbckpt"]
    assert list(scratch.iterdir()) == []
