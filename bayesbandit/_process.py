"""The process an agent belongs to: refused in a forked child and when pickled, at once.

JAX runs its computations on threads of its own. ``os.fork()`` copies only the calling thread,
so in a child made by fork (``multiprocessing``'s default start method on Linux before Python
3.14) the first computation of an agent inherited from the parent waits on threads that do not
exist and never returns. An agent records the process that made it and checks it at each call,
in Python, before touching JAX; the check costs one ``os.getpid()``.
"""

from __future__ import annotations

import os
from typing import NoReturn

from bayesbandit.errors import ProcessError

__all__ = ["OwningProcess"]

_FIX = (
    "Fix: start worker processes with the 'spawn' or 'forkserver' method "
    "(multiprocessing.get_context('spawn')) and make the agent in the worker: save it in the parent "
    "with agent.save(path) and read it there with {owner}.load(path, policy), which continues it exactly."
)


class OwningProcess:
    """The id of the process that made an object; :meth:`check` raises in any other process."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.pid = os.getpid()

    def check(self, method: str) -> None:
        """Raise :class:`~bayesbandit.errors.ProcessError` unless called in the owning process."""
        if os.getpid() != self.pid:
            raise ProcessError(
                f"{self.owner}.{method}: this {self.owner} was made in process {self.pid} and is used in process "
                f"{os.getpid()}, a child made by os.fork(); JAX's threads do not survive fork, so the call would "
                "never return. " + _FIX.format(owner=self.owner)
            )

    def refuse_pickle(self) -> NoReturn:
        """Raise :class:`~bayesbandit.errors.ProcessError`: an agent holds compiled functions."""
        raise ProcessError(
            f"A {self.owner} cannot be pickled or sent to another process: it holds compiled functions. "
            + _FIX.format(owner=self.owner)
        )
