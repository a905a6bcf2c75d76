"""Which code, command and machine made a result: the ``provenance`` of an output folder's ``run.json``.

``bayesbandit run`` and ``bayesbandit merge`` stamp every finished output folder
(:func:`stamp`): ``run.json`` gets a ``provenance`` entry (the command, the commit and the files it
differs from, the date, the machine, the wall time) and each markdown summary the folder holds
ends with the same facts in one line, so a table read on its own says what made it.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bayesbandit.checkpoint.atomic import write_atomically

__all__ = [
    "MANIFEST",
    "RESULT_ENVIRONMENT",
    "code_version",
    "command_line",
    "footer",
    "git",
    "provenance",
    "stamp",
    "update_manifest",
]

MANIFEST = "run.json"
"""The file in an output folder that records the experiment, its options and its provenance."""

_FOOTER = "<!-- provenance -->"

RESULT_ENVIRONMENT = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "XLA_FLAGS",
    "JAX_ENABLE_X64",
    "JAX_PLATFORMS",
)
"""Environment variables that change a run's numbers or times (BLAS and XLA threads, precision, backend): those set
when a run starts are part of its recorded command."""


def command_line(argv: list[str], environ: Mapping[str, str] = os.environ) -> str:
    """``argv`` as a shell command that runs again as written: shell-quoted, after the :data:`RESULT_ENVIRONMENT`
    variables set in ``environ`` (``OPENBLAS_NUM_THREADS=1 bayesbandit run ...``)."""
    settings = [f"{name}={shlex.quote(environ[name])}" for name in RESULT_ENVIRONMENT if name in environ]
    return " ".join([*settings, shlex.join(argv)])


def git(*args: str) -> str:
    """The output of ``git ARGS`` in this package's checkout, or ``"unknown"`` outside one."""
    try:
        out = subprocess.run(
            ["git", *args], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip()


def code_version() -> dict[str, Any]:
    """The code a run starts from: ``commit`` (``HEAD``) and ``uncommitted_changes`` (``git status`` lines).

    Read when the run starts, so that edits made to the checkout while it runs are not credited to it.
    """
    status = git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": git("rev-parse", "HEAD"),
        "uncommitted_changes": [] if status == "unknown" else status.splitlines(),
    }


def provenance(command: str, wall_s: float, code: dict[str, Any]) -> dict[str, Any]:
    """The facts of a finished run: ``command``, ``commit``, ``uncommitted_changes``, ``date``, ``machine``, ``wall_s``.

    ``code`` is :func:`code_version`, read when the run started.
    """
    import jax

    return {
        "command": command,
        **code,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "devices": f"{jax.device_count()} x {jax.devices()[0].device_kind}",
            "python": platform.python_version(),
            "jax": jax.__version__,
        },
        "wall_s": round(float(wall_s), 1),
    }


def update_manifest(out: Path, **fields: Any) -> dict[str, Any]:
    """``out/run.json`` with ``fields`` set (the other entries kept), written atomically; returns it."""
    path = Path(out) / MANIFEST
    manifest = json.loads(path.read_text()) if path.exists() else {}
    manifest.update(fields)
    write_atomically(str(path), [(json.dumps(manifest, indent=1) + "\n").encode()])
    return manifest


def footer(record: dict[str, Any]) -> str:
    """The one line a summary prints of ``record``: what made it, from which code, where and how long.

    A record with ``reconstructed`` (a result committed before runs recorded their provenance) says where
    its facts come from; without a wall time it names the commit that committed the result and says
    that the run itself was not recorded.
    """
    why = record.get("reconstructed")
    if why and record.get("wall_s") is None:
        return (
            f"Committed at commit {record['commit'][:10]}, {record['date']}, from `{record['command']}`; "
            f"the run's own code, machine and wall time were not recorded ({why})."
        )
    changed = len(record.get("uncommitted_changes", []))
    dirty = f", with uncommitted changes to {changed} file{'s' if changed > 1 else ''}" if changed else ""
    return (
        f"Made by `{record['command']}` at commit {record['commit'][:10]}{dirty}, {record['date']}, on "
        f"{record['machine']['cpus']} CPUs ({record['machine']['devices']}), in {record['wall_s']:,.0f} s"
        + (f" ({why})." if why else ".")
    )


def stamp(out: Path, record: dict[str, Any], summaries: list[Path]) -> None:
    """Record ``record`` (:func:`provenance`) in ``out/run.json`` and as the last line of each markdown ``summaries``.

    A summary stamped before (by an earlier run into the same folder) has its line replaced.
    """
    update_manifest(out, provenance=record)
    line = f"{_FOOTER} {footer(record)}"
    for path in summaries:
        text = path.read_text()
        kept = text.split(f"\n{_FOOTER}")[0].rstrip("\n")
        write_atomically(str(path), [(kept + "\n\n" + line + "\n").encode()])
