"""Finished pieces of an experiment on disk, so that a stopped or failed run resumes where it was.

A piece (one policy's curve, one cell of a grid) is a netCDF file written atomically (to a
temporary name, then renamed) with the settings it was computed under as attributes (numbers,
and text such as the policy's description). It is reused only when those settings equal the
current ones, so changing the number of runs, the horizon, the seed or a policy's parameters
recomputes it.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping

import xarray as xr

__all__ = ["load_stored", "store"]


Settings = Mapping[str, int | str]


def _same(stored: object, current: int | str) -> bool:
    """Attributes read back from netCDF are NumPy scalars or strings: compare as text or as integers."""
    return str(stored) == current if isinstance(current, str) else str(stored) == str(int(current))


def load_stored(path: pathlib.Path, settings: Settings) -> xr.Dataset | None:
    """The piece stored at ``path`` if it was computed with ``settings``, else None."""
    if not path.exists():
        return None
    with xr.open_dataset(path) as old:
        if all(k in old.attrs and _same(old.attrs[k], v) for k, v in settings.items()):
            return old.load()
    return None


def store(ds: xr.Dataset, path: pathlib.Path, settings: Settings) -> None:
    """Write ``ds`` with ``settings`` as attributes to ``path``; a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ds = ds.assign_attrs({k: v if isinstance(v, str) else int(v) for k, v in settings.items()})
    tmp = path.with_name(path.name + ".tmp")
    ds.to_netcdf(tmp)
    tmp.replace(path)
