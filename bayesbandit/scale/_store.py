"""Finished parts on disk, so that a stopped, failed or sharded run resumes where it was.

A part is a netCDF file written atomically (to a temporary name, then renamed) with the settings
it was computed under as attributes (numbers, and text such as a policy's description). It is
reused only when those settings equal the current ones, so changing the number of runs, the
horizon, the seed or a policy's parameters recomputes it.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping, Sequence

import xarray as xr

from bayesbandit.scale._parts import Part

__all__ = ["Settings", "load_stored", "store", "PartStore"]

Settings = Mapping[str, int | str]
"""What a stored result was computed with: names to integers or text."""


def _same(stored: object, current: int | str) -> bool:
    """Attributes read back from netCDF are NumPy scalars or strings: compare as text or as integers."""
    return str(stored) == current if isinstance(current, str) else str(stored) == str(int(current))


def load_stored(path: str | os.PathLike, settings: Settings) -> xr.Dataset | None:
    """The dataset stored at ``path`` if it was computed with ``settings``, else None."""
    path = pathlib.Path(path)
    if not path.exists():
        return None
    with xr.open_dataset(path) as old:
        if all(k in old.attrs and _same(old.attrs[k], v) for k, v in settings.items()):
            return old.load()
    return None


def store(ds: xr.Dataset, path: str | os.PathLike, settings: Settings) -> None:
    """Write ``ds`` with ``settings`` as attributes to ``path``; a reader never sees half a file."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ds = ds.assign_attrs({k: v if isinstance(v, str) else int(v) for k, v in settings.items()})
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    ds.to_netcdf(tmp)
    tmp.replace(path)


class PartStore:
    """The parts of one grid under ``folder/parts/`` (one file per :class:`Part`), read also from ``sources``.

    Parameters
    ----------
    folder : path
        Where parts are written (and read first).
    sources : sequence of paths
        Other folders whose ``parts/`` are read too: those of other shards, for a merge.
    """

    def __init__(self, folder: str | os.PathLike, *, sources: Sequence[str | os.PathLike] = ()) -> None:
        self.folder = pathlib.Path(folder)
        self.sources = tuple(pathlib.Path(s) for s in sources)

    def path(self, part: Part, folder: pathlib.Path | None = None) -> pathlib.Path:
        """The file of ``part`` under ``folder`` (default: this store's folder)."""
        return (folder or self.folder) / "parts" / f"{part.path}.nc"

    def load(self, part: Part, settings: Settings) -> xr.Dataset | None:
        """The part, if a folder holds it computed with ``settings``; else None."""
        for folder in (self.folder, *self.sources):
            ds = load_stored(self.path(part, folder), settings)
            if ds is not None:
                return ds
        return None

    def save(self, part: Part, ds: xr.Dataset, settings: Settings) -> None:
        """Store the finished part in this store's folder."""
        store(ds, self.path(part), settings)
