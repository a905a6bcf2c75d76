"""Where the loaders look when no path is given: a subfolder of ``$BAYESBANDIT_DATA``."""

from __future__ import annotations

import os
from pathlib import Path

from bayesbandit.errors import InvalidInput

__all__ = ["data_path"]


def data_path(path: str | os.PathLike[str] | None, owner: str, subfolder: str, what: str) -> Path:
    """``path`` if given, else ``$BAYESBANDIT_DATA/subfolder``; ``what`` names the files, for the message."""
    if path is not None:
        return Path(path)
    root = os.environ.get("BAYESBANDIT_DATA")
    if not root:
        raise InvalidInput(
            f"{owner}: no path given and BAYESBANDIT_DATA is not set. Fix: pass {what}, or set BAYESBANDIT_DATA "
            f"to a folder with a {subfolder}/ subfolder."
        )
    return Path(root) / subfolder
