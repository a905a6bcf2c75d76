"""The decision log: an append-only SQLite file of what an :class:`~bayesbandit.Agent` decided and was told.

Three append-only tables, written by a background thread so that ``select`` never waits on disk:

* ``decisions``: one row per decision (``seq``, ``id``, ``time``, ``draw``, ``policy``: a
  fingerprint of the policy and program, ``action`` as JSON, ``arms`` as raw float64 bytes with
  ``arms_shape``, NULL for a fixed arm set, ``propensity``, ``propensity_se``);
* ``rewards``: one row per reward (``seq``, ``decision_id``, ``time``, ``reward`` as JSON);
* ``decays``: one row per :meth:`~bayesbandit.Agent.decay` (``seq``, ``time``, ``gamma``). Opening
  a log written before decays existed adds the (empty) table, so old logs stay readable.

A fourth table, ``retention``, holds the log's own bookkeeping (how far the live file was
archived; in an archive, the ``seq`` range it holds), not rows.

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

Retention. By default the log grows without bound (about 1.2 kB per decision on ten arms of
twelve features). ``DecisionLog(path, archive_bytes=N)`` bounds the live file: after a checkpoint
that includes every row up to ``seq`` (:meth:`DecisionLog.checkpointed`), if the live file holds
more than ``N`` bytes, the writer thread moves every row with a ``seq`` up to the checkpoint's
into a new archive, a sibling SQLite file of the same schema (``decisions.sqlite`` ->
``decisions.sqlite.archive-000001``, ``-000002``, ...), and gives the space back. A restart
replays only rows after its checkpoint, which stay live. ``keep_archives=k`` then deletes all
but the ``k`` newest archives, so the whole log's disk is bounded too. Each step is
crash-safe: the archive is written under a temporary name, committed, synced and renamed into
place; only then are its rows deleted from the live file, in one transaction that also records
how far the live file was archived. A kill before the rename leaves a temporary file that readers
ignore and the next compaction removes; a kill between the rename and the delete leaves the rows
in both files, which readers count once (by ``seq``) and the next compaction deletes from the
live file; a kill after the delete leaves free pages that the next compaction gives back, and
one while old archives are deleted leaves some that the next deletes. No row is ever lost by a
kill nor read twice. What ``keep_archives`` deletes is gone: :func:`read_log` and off-policy
evaluation see only the rows still on disk, and a replay from a checkpoint older than them
(:meth:`DecisionLog.after`) raises :class:`~bayesbandit.errors.CheckpointError`. Without
``archive_bytes`` nothing moves and the log is the one file.

Reading: :func:`read_log` returns the decisions joined with their rewards as a pandas
DataFrame (or an xarray Dataset), the input of off-policy evaluation, from the live file and
every archive left (:func:`log_files`): a decision archived joins its reward still live.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import sqlite3
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayesbandit.checkpoint.atomic import as_path, fsync_folder
from bayesbandit.errors import CheckpointError, InvalidInput

__all__ = ["DecisionLog", "log_files", "read_log"]

_TABLES = ("decisions", "rewards", "decays")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, time REAL NOT NULL, draw INTEGER NOT NULL,
    policy TEXT NOT NULL, action TEXT NOT NULL, arms BLOB, arms_shape TEXT,
    propensity REAL, propensity_se REAL);
CREATE TABLE IF NOT EXISTS rewards (
    seq INTEGER PRIMARY KEY, decision_id TEXT UNIQUE NOT NULL, time REAL NOT NULL, reward TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decays (seq INTEGER PRIMARY KEY, time REAL NOT NULL, gamma REAL NOT NULL);
CREATE TABLE IF NOT EXISTS retention (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
# The ``retention`` table: in the live file ``archived_through`` (every row with seq <= it has left the
# live file) and ``last_archive`` (the number of the newest archive written); in an archive ``after`` and
# ``through`` (it holds the rows with after < seq <= through).
_ARCHIVE_SCHEMA = _SCHEMA.replace("CREATE TABLE IF NOT EXISTS ", "CREATE TABLE IF NOT EXISTS archive.")
_ARCHIVE = ".archive-"
_PARTIAL = ".partial"
_BATCH = 256  # rows per transaction at most
_STOP = object()
_CHECKPOINTED = "checkpointed"  # a queue item: (_CHECKPOINTED, seq)
_WAL_PAGES = 1000  # SQLite's auto-checkpoint threshold, in pages


def _json(value: Any) -> str:
    return json.dumps(np.asarray(value).tolist())


def _fail(name: str, expected: str, got: Any, fix: str) -> InvalidInput:
    return InvalidInput(f"DecisionLog: the '{name}' argument must be {expected}. Got {got!r:.80}. Fix: {fix}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _archive_path(path: str, number: int) -> str:
    return f"{path}{_ARCHIVE}{number:06d}"


def _archives(path: str) -> list[tuple[int, str]]:
    """The archives of the live file ``path`` as ``(number, path)``, oldest (lowest number) first."""
    folder, name = os.path.split(path)
    pattern = re.compile(re.escape(name + _ARCHIVE) + r"(\d+)")
    try:
        with os.scandir(folder or ".") as entries:
            found = [(int(m[1]), os.path.join(folder, e.name)) for e in entries if (m := pattern.fullmatch(e.name))]
    except FileNotFoundError:
        return []
    return sorted(found)


def _partials(path: str) -> list[str]:
    """Archives a compaction began and never renamed into place (and their rollback journals)."""
    folder, name = os.path.split(path)
    pattern = re.compile(re.escape(name + _ARCHIVE) + r"\d+" + re.escape(_PARTIAL) + r"(-journal)?")
    with os.scandir(folder or ".") as entries:
        return [os.path.join(folder, e.name) for e in entries if pattern.fullmatch(e.name)]


def log_files(path: str | os.PathLike[str]) -> list[str]:
    """The files that hold the decision log at ``path``: its archives, oldest first, then the live file.

    The archives are the siblings ``<path>.archive-NNNNNN`` that :class:`DecisionLog`'s retention
    wrote (``archive_bytes=``), in the order of their rows; the live file comes last, whether or
    not it exists yet. Back up, copy or measure these files together: :func:`read_log` reads them
    all. A file named ``<path>.archive-NNNNNN.partial`` is an archive whose compaction never
    finished; it holds no row that the files listed lack, and is not listed.

    Examples
    --------
    >>> import os, tempfile
    >>> from bayesbandit.agent import log_files
    >>> path = os.path.join(tempfile.mkdtemp(), "decisions.sqlite")
    >>> [os.path.basename(f) for f in log_files(path)]
    ['decisions.sqlite']
    """
    live = as_path(path)
    return [file for _, file in _archives(live)] + [live]


def _meta(connection: sqlite3.Connection) -> dict[str, int]:
    """The ``retention`` table of one file (empty for a log written before retention existed)."""
    found = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'retention'").fetchone()
    if found is None:
        return {}
    return {key: int(value) for key, value in connection.execute("SELECT key, value FROM retention")}


def _readonly(path: str) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None)


@dataclass
class _Part:
    """The rows after some seq of one file of the log, read in one transaction, with its retention table."""

    meta: dict[str, int]
    rows: dict[str, list[tuple]] = field(default_factory=dict)


def _read_part(path: str, after: int) -> _Part | None:
    """The rows with ``seq > after`` of one file; None if it is gone (an archive deleted meanwhile)."""
    try:
        reader = _readonly(path)
    except sqlite3.OperationalError:
        if not os.path.exists(path):
            return None
        raise
    try:
        reader.execute("BEGIN")
        try:
            tables = {r[0] for r in reader.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.OperationalError:
            if not os.path.exists(path):
                return None
            raise
        part = _Part(_meta(reader))
        for table in _TABLES:
            part.rows[table] = (
                reader.execute(f"SELECT * FROM {table} WHERE seq > ? ORDER BY seq", (after,)).fetchall()
                if table in tables
                else []
            )
        reader.execute("COMMIT")
    finally:
        reader.close()
    return part


def _collect(path: str, after: int) -> tuple[dict[str, dict[int, tuple]], list[tuple[int, int]], int]:
    """Every row with ``seq > after`` in the live file and its archives, each once (keyed by seq).

    Also returns the ranges ``(after, through]`` the archives read hold, and how far the live file
    was archived. The live file is read first: a compaction running meanwhile has written its
    archive before deleting a row from the live file, so the archives listed after hold it. When
    the live file alone holds every row after ``after`` (it was archived up to ``after`` at most),
    the archives are not read.
    """
    live = _read_part(path, after)
    if live is None:
        raise CheckpointError(f"no decision log at {path!r}. Fix: pass the path given to Agent(log=...).")
    archived = live.meta.get("archived_through", 0)
    rows: dict[str, dict[int, tuple]] = {table: {r[0]: r for r in live.rows[table]} for table in _TABLES}
    ranges = []
    for _, file in _archives(path) if after < archived or after < 0 else []:
        part = _read_part(file, after)
        if part is None:
            continue
        ranges.append((part.meta.get("after", 0), part.meta.get("through", 0)))
        for table in _TABLES:
            for row in part.rows[table]:
                rows[table].setdefault(row[0], row)
    return rows, ranges, archived


class DecisionLog:
    """An append-only SQLite decision log written by a background thread, optionally bounded on disk.

    The tables, the durability and the replay are the module docstring's. With ``archive_bytes``
    the live file stays small: at each :meth:`checkpointed` where it holds more than
    ``archive_bytes`` bytes, the writer thread moves every row the checkpoint covers into a new
    archive file next to it (``<path>.archive-000001``, ...) and gives the space back to the file
    system; ``keep_archives`` deletes the oldest archives beyond that many. :func:`read_log` and
    :meth:`bayesbandit.ope.Logs.from_decision_log` read the live file with its archives, so
    off-policy evaluation sees every row still on disk, and only those: the rows of deleted
    archives are gone for good.

    Bounds: the live file holds at most ``archive_bytes`` plus the rows logged between two
    checkpoints (a save every 10,000 decisions on ten arms of twelve features adds about 12 MB), so
    the bound is as tight as the saves are frequent; its ``-wal`` file is emptied at each
    compaction and in between holds at most ``archive_bytes`` (4 MB at most, SQLite's default) and
    one commit of up to 256 rows. Each archive holds about ``archive_bytes`` plus one save's rows;
    with ``keep_archives=k`` at most ``k`` archives stay on disk.

    Guarantees, a kill at any point included: no row is lost and none is read twice; a restart
    from a checkpoint finds every row after it in the live file (:meth:`after` returns what it
    returned before the compaction); a compaction left half-done (the archive renamed into place,
    its rows not yet deleted from the live file) is finished by the next one, and until then
    readers count each row once (by ``seq``).

    Parameters
    ----------
    path : path-like
        The live SQLite file (created if missing; an existing log is appended to).
    archive_bytes : int, optional
        The live file's size, in bytes, above which a checkpoint moves the rows it covers into a
        new archive. Default: None, no archive, the log grows without bound.
    keep_archives : int, optional
        How many archives to keep, the newest: at each compaction the older ones are deleted (0:
        the rows a checkpoint covers are deleted outright). Needs ``archive_bytes``. Default:
        None, every archive is kept.

    Raises
    ------
    InvalidInput
        A file that is not a SQLite decision log, or a retention setting that is not one
        (naming it, what it must be and the fix).

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

    A bounded log: in a service, ``bb.Agent(policy, log=DecisionLog(path, archive_bytes=64 * 2**20,
    keep_archives=20))`` keeps a live file of about 64 MB and archives of about as much, the newest
    20 (about 1.3 GB in all); pass the same to ``bb.Agent.load(..., log=...)`` after a restart (a
    path there opens the log without retention). The agent calls :meth:`checkpointed` after each
    ``save``; here the log is driven by hand, with a tiny ``archive_bytes`` that the first
    checkpoint already exceeds:

    >>> from bayesbandit.agent import Decision, DecisionLog, log_files
    >>> log = DecisionLog(path, archive_bytes=1)
    >>> log.decision(Decision("request-7", 1, 0.0, propensity=0.5), 0, "LinTS", np.eye(2))
    >>> log.flush(log.last_seq)  # an agent's save: the log, then its checkpoint...
    >>> log.checkpointed(log.last_seq)  # ... then the rows it covers may leave the live file
    >>> log.reward("request-7", 1.0, 0.0)  # the reward of a decision made before the checkpoint
    >>> log.close()
    >>> [os.path.basename(f) for f in log_files(path)]
    ['decisions.sqlite.archive-000001', 'decisions.sqlite']
    >>> frame = bb.agent.read_log(path)  # both files, the decision joined with its reward
    >>> len(frame), frame.id.iloc[-1], frame.reward.tolist()
    (2, 'request-7', [1.0, 0.0])
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        archive_bytes: int | None = None,
        keep_archives: int | None = None,
    ) -> None:
        if archive_bytes is not None and not (_is_int(archive_bytes) and archive_bytes > 0):
            raise _fail(
                "archive_bytes",
                "a positive int (the live file's size in bytes above which rows move to an archive) or None",
                archive_bytes,
                "pass a size such as 64 * 2**20, or None for a log that grows without bound",
            )
        if keep_archives is not None and not (_is_int(keep_archives) and keep_archives >= 0):
            raise _fail(
                "keep_archives",
                "an int >= 0 (how many of the newest archives to keep) or None (keep them all)",
                keep_archives,
                "pass a count such as 20",
            )
        if keep_archives is not None and archive_bytes is None:
            raise _fail(
                "keep_archives",
                "None when archive_bytes is None (without archive_bytes no archive is written)",
                keep_archives,
                "pass archive_bytes too, or leave keep_archives out",
            )
        self.path = as_path(path)
        self.archive_bytes = None if archive_bytes is None else int(archive_bytes)
        self.keep_archives = None if keep_archives is None else int(keep_archives)
        try:
            connection = sqlite3.connect(self.path, check_same_thread=False)
            # auto_vacuum takes effect in a new file only (an older log is converted by its first compaction)
            connection.executescript(
                "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;" + _SCHEMA
            )
            last = connection.execute(
                "SELECT MAX(m) FROM (SELECT MAX(seq) AS m FROM decisions UNION ALL SELECT MAX(seq) FROM rewards "
                "UNION ALL SELECT MAX(seq) FROM decays)"
            ).fetchone()[0]
            archived = _meta(connection).get("archived_through", 0)
            if archive_bytes is not None:  # the -wal holds at most about archive_bytes (SQLite's default: 4 MB)
                page_size = connection.execute("PRAGMA page_size").fetchone()[0]
                pages = min(_WAL_PAGES, max(16, archive_bytes // page_size))
                connection.execute(f"PRAGMA wal_autocheckpoint={pages}")
            archives = _archives(self.path)
            newest = _read_part(archives[-1][1], 2**62) if archives else None
        except sqlite3.Error as exc:
            raise InvalidInput(
                f"DecisionLog: cannot open {self.path!r} as a SQLite decision log ({exc}). Fix: pass the path of a "
                "log written by bayesbandit, or of a new file in a folder you can write."
            ) from exc
        self._connection = connection
        # the last seq handed over (under the agent's lock); never one an archive already holds
        self.last_seq = max(
            0 if last is None else int(last), archived, 0 if newest is None else newest.meta.get("through", 0)
        )
        self._committed = self.last_seq
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._done = threading.Condition()
        self._error: BaseException | None = None
        self._retention_error: BaseException | None = None
        self._asked = 0  # retention steps asked for by checkpointed(), and done by the writer
        self._answered = 0
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

    def checkpointed(self, seq: int | None) -> None:
        """Tell the log that a checkpoint including every row up to ``seq`` is safely written.

        :meth:`bayesbandit.Agent.save` calls it after ``flush(seq)`` and the atomic write of the
        checkpoint. Without ``archive_bytes`` it does nothing. With it, the writer thread (never
        the caller, nor ``decide``/``update``) then checks the live file's size and, above
        ``archive_bytes``, moves every row with a ``seq`` up to ``seq`` into a new archive (a
        restart from this checkpoint needs none of them: a decision still pending is inside the
        checkpoint, and its reward comes later, with a larger ``seq``), and deletes the archives
        beyond ``keep_archives``. It returns at once; :meth:`flush` without ``seq`` waits for it.

        Parameters
        ----------
        seq : int or None
            The last ``seq`` the checkpoint's state includes (its ``log_seq``), at most
            ``last_seq``; None (a checkpoint with no log position) moves nothing.

        Raises
        ------
        InvalidInput
            ``seq`` not an int in ``[0, last_seq]``.
        OSError
            The previous compaction failed (a full disk, say). Nothing was lost: its rows are still
            in the live file, or in both files, and this call's compaction tries again.
        """
        if seq is None:
            return
        if not (_is_int(seq) and 0 <= seq <= self.last_seq):
            raise _fail(
                "seq",
                f"an int in [0, {self.last_seq}] (the log_seq of a checkpoint written, at most the last seq handed "
                "over) or None",
                seq,
                "pass the seq given to flush(seq) before writing the checkpoint",
            )
        if self.archive_bytes is None:
            return
        with self._done:
            failed, self._retention_error = self._retention_error, None
            self._asked += 1
        self._queue.put((_CHECKPOINTED, int(seq)))
        if failed is not None:
            raise OSError(
                f"the decision log {self.path!r} could not move rows to an archive: {failed}. No row was lost; the "
                "compaction is tried again now."
            ) from failed

    def _write(self) -> None:
        statements = {
            "decisions": "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "rewards": "INSERT INTO rewards VALUES (?, ?, ?, ?)",
            "decays": "INSERT INTO decays VALUES (?, ?, ?)",
        }

        def ends_batch(item: Any) -> bool:
            return item is _STOP or item[0] == _CHECKPOINTED

        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < _BATCH and not ends_batch(batch[-1]):
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            last = batch[-1]
            stop = last is _STOP
            rows = batch[:-1] if ends_batch(last) else batch
            try:
                with self._connection:
                    for table, row in rows:
                        self._connection.execute(statements[table], row)
            except BaseException as exc:  # reported by the next flush
                self._error = exc
            with self._done:  # before a compaction: a flush waiting for these rows need not wait for it
                if rows:
                    self._committed = max(self._committed, max(row[0] for _, row in rows))
                self._done.notify_all()
            if not stop and last[0] == _CHECKPOINTED:
                if self._error is None:
                    try:
                        self._retain(last[1])
                    except BaseException as exc:  # reported by the next checkpointed
                        self._retention_error = exc
                with self._done:
                    self._answered += 1
                    self._done.notify_all()
        self._connection.close()

    # ------------------------------------------------------------------------------ retention (writer thread)
    def _retain(self, seq: int) -> None:
        """Finish a compaction left half-done, move the rows up to ``seq`` to an archive if the live file is
        over ``archive_bytes``, and delete the archives beyond ``keep_archives``."""
        assert self.archive_bytes is not None
        connection = self._connection
        for partial in _partials(self.path):  # a compaction killed before its rename
            with contextlib.suppress(FileNotFoundError):
                os.remove(partial)
        meta = _meta(connection)
        archived = meta.get("archived_through", 0)
        archives = _archives(self.path)
        newest = _read_part(archives[-1][1], 2**62) if archives else None
        if newest is not None and newest.meta.get("through", 0) > archived:  # renamed, rows still live: finish it
            archived = newest.meta["through"]
            self._drop_live(archived, archives[-1][0])
        pages, page_size = (connection.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
        if seq <= archived or pages * page_size <= self.archive_bytes:
            self._prune()
            return
        held = connection.execute(
            " UNION ALL ".join(f"SELECT 1 FROM {t} WHERE seq > ? AND seq <= ?" for t in _TABLES) + " LIMIT 1",
            (archived, seq) * len(_TABLES),
        ).fetchone()
        if held is not None:
            number = max([meta.get("last_archive", 0)] + [n for n, _ in archives]) + 1
            self._write_archive(number, archived, seq)
            self._drop_live(seq, number)
        self._prune()

    def _write_archive(self, number: int, after: int, through: int) -> None:
        """Copy the live rows with ``after < seq <= through`` into archive ``number``: written under a temporary
        name in one transaction, synced, then renamed into place (and the rename synced)."""
        connection = self._connection
        final = _archive_path(self.path, number)
        partial = final + _PARTIAL
        if any(row[1] == "archive" for row in connection.execute("PRAGMA database_list")):
            connection.execute("DETACH DATABASE archive")  # left attached by a compaction that failed
        connection.execute("ATTACH DATABASE ? AS archive", (partial,))
        try:
            connection.executescript("PRAGMA archive.synchronous=FULL;" + _ARCHIVE_SCHEMA)
            with connection:
                for table in _TABLES:
                    connection.execute(
                        f"INSERT INTO archive.{table} SELECT * FROM main.{table} WHERE seq > ? AND seq <= ?",
                        (after, through),
                    )
                connection.execute(
                    "INSERT INTO archive.retention VALUES ('after', ?), ('through', ?)", (after, through)
                )
        finally:
            connection.execute("DETACH DATABASE archive")
        os.replace(partial, final)
        fsync_folder(os.path.dirname(os.path.abspath(final)))

    def _drop_live(self, through: int, number: int) -> None:
        """Delete the rows with ``seq <= through`` from the live file (archive ``number`` holds them, or
        ``keep_archives=0`` lets them go), recording how far it was archived, in one transaction; give the
        space back."""
        connection = self._connection
        with connection:
            for table in _TABLES:
                connection.execute(f"DELETE FROM {table} WHERE seq <= ?", (through,))
            connection.execute(
                "INSERT OR REPLACE INTO retention VALUES ('archived_through', ?), ('last_archive', ?)",
                (through, number),
            )
        if connection.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:  # a log created before retention
            connection.executescript("PRAGMA auto_vacuum=INCREMENTAL; VACUUM;")
        else:
            connection.executescript("PRAGMA incremental_vacuum;")  # executescript runs it to the end
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def _prune(self) -> None:
        """Delete the oldest archives beyond ``keep_archives`` (their rows have left the live file: deleting one
        never touches a row a restart needs)."""
        if self.keep_archives is None:
            return
        archives = _archives(self.path)
        for _, file in archives[: max(0, len(archives) - self.keep_archives)]:
            with contextlib.suppress(FileNotFoundError):
                os.remove(file)

    def flush(self, seq: int | None = None, timeout: float = 60.0) -> None:
        """Wait until every row up to ``seq`` is committed; without ``seq``, every row handed over so far, and
        every compaction :meth:`checkpointed` asked for so far is done.

        Raises
        ------
        OSError
            The writer failed (a full disk, say), or did not commit within ``timeout`` seconds.
        """
        with self._done:
            target = self.last_seq if seq is None else seq
            asked = self._asked if seq is None else 0
            if not self._done.wait_for(
                lambda: (self._committed >= target and self._answered >= asked) or self._error is not None, timeout
            ):
                raise OSError(f"the decision log {self.path!r} did not commit within {timeout:g} s")
        if self._error is not None:
            raise OSError(f"the decision log {self.path!r} could not be written: {self._error}") from self._error

    def close(self) -> None:
        """Commit what was handed over, finish the compactions asked for, and stop the writer."""
        if self._writer.is_alive():
            self._queue.put(_STOP)
            self._writer.join(timeout=60)

    def files(self) -> list[str]:
        """The files of this log: its archives, oldest first, then the live file (:func:`log_files`)."""
        return log_files(self.path)

    # ------------------------------------------------------------------------------ replaying
    def after(self, seq: int) -> list[tuple[str, tuple]]:
        """The committed rows after ``seq`` in order, as ``("decision", row)`` / ``("reward", row)`` /
        ``("decay", row)``, for :meth:`bayesbandit.Agent.load`.

        Rows a compaction moved out of the live file are read from the archives (a checkpoint
        older than the last one the log was told of).

        Raises
        ------
        CheckpointError
            Some rows after ``seq`` are no longer on disk: ``keep_archives`` deleted their archive
            (or it was removed by hand), so a replay from ``seq`` would miss them.
        """
        self.flush()
        rows, ranges, archived = _collect(self.path, seq)
        reach = seq
        for start, through in sorted(ranges):
            if start <= reach:
                reach = max(reach, through)
        if reach < archived:
            raise CheckpointError(
                f"the decision log {self.path!r} no longer holds the rows after seq {seq} up to seq {archived}: their "
                "archives were deleted (keep_archives, or by hand), so a replay from this checkpoint would miss "
                f"them. Fix: load a checkpoint saved at seq {archived} or later (the agent's latest), or restore the "
                "archive files from a backup."
            )
        kinds = {"decisions": "decision", "rewards": "reward", "decays": "decay"}
        found = [(kinds[table], row) for table in _TABLES for row in rows[table].values()]
        return sorted(found, key=lambda x: x[1][0])


def decision_arms(row: tuple) -> np.ndarray | None:
    """The arms of a ``decisions`` row, or None (a fixed arm set)."""
    blob, shape = row[6], row[7]
    return None if blob is None else np.frombuffer(blob, np.float64).reshape(json.loads(shape)).copy()


def read_log(path: str | os.PathLike[str], *, as_xarray: bool = False) -> Any:
    """The decisions of a log with their rewards (NaN until one arrives), in the order they were made.

    Reads the live file at ``path`` and its archives (:func:`log_files`), each row once (by
    ``seq``, should a compaction have been interrupted), and joins each decision with its reward
    across files (a decision archived, its reward still live). The rows of archives deleted by
    ``keep_archives`` are not there: the frame starts with the oldest decision still on disk.

    Returns a pandas DataFrame with columns ``seq``, ``id``, ``time``, ``draw``, ``policy``,
    ``action``, ``arms`` (a float array per row, or None), ``propensity``, ``propensity_se``,
    ``reward`` and ``reward_time``; with ``as_xarray``, an xarray Dataset over ``decision``.

    Raises
    ------
    CheckpointError
        No decision log at ``path``.
    """
    import pandas as pd

    source = as_path(path)
    if not os.path.isfile(source):
        raise CheckpointError(f"no decision log at {source!r}. Fix: pass the path given to Agent(log=...).")
    rows = _collect(source, -1)[0]
    decisions = sorted(rows["decisions"].values())
    reward_of: dict[int, tuple] = {}  # a decision's index -> its reward row
    latest: dict[str, int] = {}  # an id -> the index of the latest decision with it so far
    by_seq = sorted([(r[0], 0, i) for i, r in enumerate(decisions)] + [(s, 1, s) for s in rows["rewards"]])
    for _, kind, key in by_seq:
        if kind == 0:
            latest[decisions[key][1]] = key
        else:
            reward = rows["rewards"][key]
            index = latest.get(reward[1])
            if index is not None and index not in reward_of:
                reward_of[index] = reward
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
            "reward": [json.loads(reward_of[i][3]) if i in reward_of else np.nan for i in range(len(decisions))],
            "reward_time": [reward_of[i][2] if i in reward_of else np.nan for i in range(len(decisions))],
        }
    )
    if not as_xarray:
        return frame
    flat = frame.drop(columns=["arms"]).rename_axis("decision")
    return flat.to_xarray()
