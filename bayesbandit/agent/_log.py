"""The decision log: an append-only SQLite file of what an :class:`~bayesbandit.Agent` decided and was told.

Two append-only tables, written by a background thread so that ``select`` never waits on disk:

* ``decisions``: one row per decision (``seq``, ``id``, ``time``, ``draw``, ``policy``: a
  fingerprint of the policy and program, ``action`` as JSON, ``arms`` as raw float64 bytes with
  ``arms_shape``, NULL for a fixed arm set, ``propensity``, ``propensity_se``);
* ``rewards``: one row per reward (``seq``, ``decision_id``, ``time``, ``reward`` as JSON);
* ``decays``: one row per :meth:`~bayesbandit.Agent.decay` (``seq``, ``time``, ``gamma``). Opening
  a log written before decays existed adds the (empty) table, so old logs stay readable.

``seq`` orders every row of the tables in the order the agent applied them (it is taken under
the agent's lock), which is the order a replay must follow. A plain ``update(action, reward)``
is logged as a decision (id ``"update:<uuid>"``, its ``draw`` the last one the agent had taken, -1
if none) followed by its reward, so the log holds every reward the agent learnt from.

Durability. The writer commits in small batches (SQLite's WAL journal, ``synchronous=NORMAL``:
a committed row survives the process being killed). :meth:`DecisionLog.flush` waits until
every row handed over so far is committed; :meth:`bayesbandit.Agent.save` calls it before
writing the checkpoint and records the last ``seq`` the checkpoint's state includes. So the
checkpoint never holds a reward the log lacks, and :meth:`bayesbandit.Agent.load` with the log
replays, in ``seq`` order, the rewards committed after that point, and restores the decisions
made after it that still await their reward: after a SIGKILL, what is lost is at most the rows
not yet committed.

Reading: :func:`read_log` returns the decisions joined with their rewards as a pandas
DataFrame (or an xarray Dataset), the input of off-policy evaluation.
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import threading
from typing import Any

import numpy as np

from bayesbandit.checkpoint.atomic import as_path
from bayesbandit.errors import CheckpointError, InvalidInput

__all__ = ["DecisionLog", "read_log"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, time REAL NOT NULL, draw INTEGER NOT NULL,
    policy TEXT NOT NULL, action TEXT NOT NULL, arms BLOB, arms_shape TEXT,
    propensity REAL, propensity_se REAL);
CREATE TABLE IF NOT EXISTS rewards (
    seq INTEGER PRIMARY KEY, decision_id TEXT UNIQUE NOT NULL, time REAL NOT NULL, reward TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decays (seq INTEGER PRIMARY KEY, time REAL NOT NULL, gamma REAL NOT NULL);
"""
_BATCH = 256  # rows per transaction at most
_STOP = object()


def _json(value: Any) -> str:
    return json.dumps(np.asarray(value).tolist())


class DecisionLog:
    """An append-only SQLite decision log written by a background thread (module docstring).

    Parameters
    ----------
    path : path-like
        The SQLite file (created if missing; an existing log is appended to).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import bayesbandit as bb
    >>> path = os.path.join(tempfile.mkdtemp(), "decisions.sqlite")
    >>> agent = bb.Agent(bb.LinTS(), d=2, log=path)
    >>> arms = np.eye(2)
    >>> decision = agent.decide(arms, propensity=True)
    >>> agent.update(decision, 1.0)
    >>> agent.close()
    >>> frame = bb.agent.read_log(path)
    >>> frame[["id", "reward"]].shape, bool(frame.reward.notna().all())
    ((1, 2), True)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = as_path(path)
        try:
            connection = sqlite3.connect(self.path, check_same_thread=False)
            connection.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;" + _SCHEMA)
            last = connection.execute(
                "SELECT MAX(m) FROM (SELECT MAX(seq) AS m FROM decisions UNION ALL SELECT MAX(seq) FROM rewards "
                "UNION ALL SELECT MAX(seq) FROM decays)"
            ).fetchone()[0]
        except sqlite3.Error as exc:
            raise InvalidInput(
                f"DecisionLog: cannot open {self.path!r} as a SQLite decision log ({exc}). Fix: pass the path of a "
                "log written by bayesbandit, or of a new file in a folder you can write."
            ) from exc
        self._connection = connection
        self.last_seq = 0 if last is None else int(last)  # the last seq handed over (under the agent's lock)
        self._committed = self.last_seq
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._done = threading.Condition()
        self._error: BaseException | None = None
        self._writer = threading.Thread(target=self._write, name="bayesbandit-decision-log", daemon=True)
        self._writer.start()

    # ------------------------------------------------------------------------------ writing (agent's lock held)
    def decision(self, decision: Any, draw: int, policy: str, arms: np.ndarray | None) -> None:
        """Hand over a decision row."""
        self.last_seq += 1
        blob, shape = (
            (None, None) if arms is None else (np.ascontiguousarray(arms, np.float64).tobytes(), _json(arms.shape))
        )
        row = (self.last_seq, decision.id, decision.time, draw, policy, _json(decision.action), blob, shape)
        self._queue.put(("decisions", (*row, decision.propensity, decision.propensity_se)))

    def reward(self, decision_id: str, time: float, reward: Any) -> None:
        """Hand over a reward row."""
        self.last_seq += 1
        self._queue.put(("rewards", (self.last_seq, decision_id, time, _json(reward))))

    def decay(self, time: float, gamma: float) -> None:
        """Hand over a decay row (:meth:`bayesbandit.Agent.decay`)."""
        self.last_seq += 1
        self._queue.put(("decays", (self.last_seq, time, gamma)))

    def _write(self) -> None:
        statements = {
            "decisions": "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "rewards": "INSERT INTO rewards VALUES (?, ?, ?, ?)",
            "decays": "INSERT INTO decays VALUES (?, ?, ?)",
        }
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is _STOP for item in batch)
            rows = [item for item in batch if item is not _STOP]
            try:
                with self._connection:
                    for table, row in rows:
                        self._connection.execute(statements[table], row)
            except BaseException as exc:  # reported by the next flush
                self._error = exc
            with self._done:
                if rows:
                    self._committed = max(self._committed, max(row[0] for _, row in rows))
                self._done.notify_all()
        self._connection.close()

    def flush(self, seq: int | None = None, timeout: float = 60.0) -> None:
        """Wait until every row up to ``seq`` (default: all handed over) is committed.

        Raises
        ------
        OSError
            The writer failed (a full disk, say), or did not commit within ``timeout`` seconds.
        """
        target = self.last_seq if seq is None else seq
        with self._done:
            if not self._done.wait_for(lambda: self._committed >= target or self._error is not None, timeout):
                raise OSError(f"the decision log {self.path!r} did not commit within {timeout:g} s")
        if self._error is not None:
            raise OSError(f"the decision log {self.path!r} could not be written: {self._error}") from self._error

    def close(self) -> None:
        """Commit what was handed over and stop the writer."""
        if self._writer.is_alive():
            self._queue.put(_STOP)
            self._writer.join(timeout=60)

    # ------------------------------------------------------------------------------ replaying
    def after(self, seq: int) -> list[tuple[str, tuple]]:
        """The committed rows after ``seq`` in order, as ``("decision", row)`` / ``("reward", row)`` /
        ``("decay", row)``, for :meth:`bayesbandit.Agent.load`."""
        self.flush()
        reader = sqlite3.connect(self.path)
        try:
            decisions = reader.execute("SELECT * FROM decisions WHERE seq > ? ORDER BY seq", (seq,)).fetchall()
            rewards = reader.execute("SELECT * FROM rewards WHERE seq > ? ORDER BY seq", (seq,)).fetchall()
            decays = reader.execute("SELECT * FROM decays WHERE seq > ? ORDER BY seq", (seq,)).fetchall()
        finally:
            reader.close()
        rows = [("decision", r) for r in decisions] + [("reward", r) for r in rewards] + [("decay", r) for r in decays]
        return sorted(rows, key=lambda x: x[1][0])


def decision_arms(row: tuple) -> np.ndarray | None:
    """The arms of a ``decisions`` row, or None (a fixed arm set)."""
    blob, shape = row[6], row[7]
    return None if blob is None else np.frombuffer(blob, np.float64).reshape(json.loads(shape)).copy()


def read_log(path: str | os.PathLike[str], *, as_xarray: bool = False) -> Any:
    """The decisions of a log with their rewards (NaN until one arrives), in the order they were made.

    Returns a pandas DataFrame with columns ``seq``, ``id``, ``time``, ``draw``, ``policy``,
    ``action``, ``arms`` (a float array per row, or None), ``propensity``, ``propensity_se``,
    ``reward`` and ``reward_time``; with ``as_xarray``, an xarray Dataset over ``decision``.
    """
    import pandas as pd

    source = as_path(path)
    if not os.path.isfile(source):
        raise CheckpointError(f"no decision log at {source!r}. Fix: pass the path given to Agent(log=...).")
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        decisions = reader.execute("SELECT * FROM decisions ORDER BY seq").fetchall()
        rewards = {r[1]: r for r in reader.execute("SELECT * FROM rewards").fetchall()}
    finally:
        reader.close()
    frame = pd.DataFrame(
        {
            "seq": [r[0] for r in decisions],
            "id": [r[1] for r in decisions],
            "time": [r[2] for r in decisions],
            "draw": [r[3] for r in decisions],
            "policy": [r[4] for r in decisions],
            "action": [json.loads(r[5]) for r in decisions],
            "arms": [decision_arms(r) for r in decisions],
            "propensity": [np.nan if r[8] is None else r[8] for r in decisions],
            "propensity_se": [np.nan if r[9] is None else r[9] for r in decisions],
            "reward": [json.loads(rewards[r[1]][3]) if r[1] in rewards else np.nan for r in decisions],
            "reward_time": [rewards[r[1]][2] if r[1] in rewards else np.nan for r in decisions],
        }
    )
    if not as_xarray:
        return frame
    flat = frame.drop(columns=["arms"]).rename_axis("decision")
    return flat.to_xarray()
