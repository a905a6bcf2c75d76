"""A grid that records where and when each of its parts was computed, for the Dask tests of ``test_scale.py``.

A module of its own, not of the test file: the Dask workers unpickle the grid by importing the module
that defines it, and a helper of ``tests/`` (on the path of every process, by pytest's ``pythonpath``)
has the same name in every import mode, where a test module's name depends on the mode.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import xarray as xr

from bayesbandit import scale


@dataclass(frozen=True)
class Counted:
    """A grid that records each computation of a part in ``log`` (a folder): ``{part}@{pid}@{time}`` files."""

    grid: scale.SimulateGrid
    log: str
    pause: float = 0.0

    def parts(self) -> list[scale.Part]:
        return self.grid.parts()

    def settings(self, part: scale.Part) -> scale.Settings:
        return self.grid.settings(part)

    def __call__(self, part: scale.Part) -> xr.Dataset:
        (Path(self.log) / f"{part.path.replace('/', '.')}@{os.getpid()}@{time.monotonic_ns()}").touch()
        time.sleep(self.pause)
        return self.grid(part)

    def computed(self) -> list[str]:
        return sorted(path.name for path in Path(self.log).iterdir())
