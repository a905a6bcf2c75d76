"""Retention of the decision log: a live file bounded on disk, archives read as one log, crash-safe compaction."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import bayesbandit as bb
from bayesbandit.agent import DecisionLog, _log, log_files, read_log
from bayesbandit.agent._decisions import Decision
from bayesbandit.errors import CheckpointError, InvalidInput

K, D = 10, 12  # a contextual decision: ten arms of twelve features, about 1.2 kB a row
DELAY = 3  # each reward arrives three decisions after its decision


def _arms(i: int) -> np.ndarray:
    return np.arange(K * D, dtype=np.float64).reshape(K, D) + i


def _reward(i: int) -> float:
    return float(i % 7)


def _disk(path) -> int:
    """The bytes of one SQLite file on disk with its ``-wal``."""
    return sum(os.path.getsize(f"{path}{suffix}") for suffix in ("", "-wal") if os.path.exists(f"{path}{suffix}"))


def _serve(log: DecisionLog, start: int, stop: int, *, every: int | None = None, on_checkpoint=None) -> list[str]:
    """Decisions ``d<start>`` .. ``d<stop - 1>``, each rewarded ``DELAY`` decisions later; with ``every``, an
    agent's save every ``every`` rows: ``flush(seq)``, the checkpoint, ``checkpointed(seq)``. Returns the ids
    still pending (never rewarded)."""
    pending: list[int] = []
    last = log.last_seq
    for i in range(start, stop):
        log.decision(Decision(f"d{i}", i % K, float(i), propensity=1.0 / K), i, "policy", _arms(i))
        pending.append(i)
        if len(pending) > DELAY:
            j = pending.pop(0)
            log.reward(f"d{j}", float(i), _reward(j))
        if every is not None and log.last_seq - last >= every:
            last = seq = log.last_seq
            log.flush(seq)
            if on_checkpoint is not None:
                on_checkpoint("saved")
            log.checkpointed(seq)
            log.flush()  # waits for the compaction too
            if on_checkpoint is not None:
                on_checkpoint("compacted")
    return [f"d{j}" for j in pending]


def _query(file, sql: str) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(file)) as reader:
        return reader.execute(sql).fetchall()


def _seqs_on_disk(path) -> list[int]:
    """Every seq of every row in every file of the log, with repeats."""
    union = "SELECT seq FROM decisions UNION ALL SELECT seq FROM rewards UNION ALL SELECT seq FROM decays"
    return [r[0] for file in log_files(path) for r in _query(file, union)]


def _check_frame(frame, first: int, stop: int, pending: list[str]) -> None:
    """``read_log``'s frame holds the decisions ``first`` .. ``stop - 1`` once each, joined with their rewards."""
    assert frame.id.tolist() == [f"d{i}" for i in range(first, stop)]
    assert frame.seq.is_unique and frame.seq.is_monotonic_increasing
    rewarded = frame[~frame.id.isin(pending)]
    assert rewarded.reward.tolist() == [_reward(int(i[1:])) for i in rewarded.id]
    assert frame[frame.id.isin(pending)].reward.isna().all()
    np.testing.assert_array_equal(np.stack(frame.arms), np.stack([_arms(i) for i in range(first, stop)]))


ARCHIVE_BYTES = 256 * 1024
EVERY = 300  # rows between two saves (150 decisions, about 180 kB)
# archive_bytes + one save's rows (190 kB) in the file; archive_bytes + one batch of 256 rows (350 kB) in its -wal
LIVE_BOUND = 1280 * 1024
N = 5000


def test_the_live_file_stays_bounded_and_the_log_reads_every_row_once(tmp_path):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=ARCHIVE_BYTES)
    sizes, emptied, archived = [], [], [0]

    def measure(moment: str) -> None:
        sizes.append(_disk(path))
        if moment == "compacted" and len(log.files()) > archived[-1] + 1:  # this checkpoint made an archive:
            archived.append(len(log.files()) - 1)  # the live file is back to its empty tables, no -wal
            emptied.append((os.path.getsize(path), os.path.getsize(f"{path}-wal")))

    pending = _serve(log, 0, N, every=EVERY, on_checkpoint=measure)
    log.close()
    files = log_files(path)
    archives = [os.path.getsize(f) for f in files[:-1]]
    print(
        f"live + wal max {max(sizes)} B, after a compaction {max(emptied)} B; {len(archives)} archives of "
        f"{min(archives)}-{max(archives)} B, {sum(archives)} B in all"
    )
    assert max(sizes) <= LIVE_BOUND  # without retention: 9.6 MB at the end
    assert len(emptied) == len(archives)
    assert max(live for live, _ in emptied) <= 64 * 1024 and max(wal for _, wal in emptied) == 0
    assert len(archives) >= 10 and max(archives) <= 2 * ARCHIVE_BYTES  # archive_bytes + one save's rows
    seqs = _seqs_on_disk(path)
    assert sorted(seqs) == list(range(1, 2 * N - DELAY + 1))  # each row in one file only
    assert files[-1] == os.fspath(path) and [os.path.basename(f) for f in files[:2]] == [
        "decisions.sqlite.archive-000001",
        "decisions.sqlite.archive-000002",
    ]
    _check_frame(read_log(path), 0, N, pending)
    logs = bb.ope.Logs.from_decision_log(path)
    assert logs.num_rounds == N - DELAY
    np.testing.assert_array_equal(np.asarray(logs.reward), [_reward(i) for i in range(N - DELAY)])


def test_the_wal_stays_near_archive_bytes_when_rows_commit_one_by_one(tmp_path):
    """Sparse traffic commits each row alone, a few pages of -wal a row, which SQLite folds into the file only
    every 1000 pages (4 MB) by default; the log does every archive_bytes."""
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=64 * 1024)
    wal = []
    for i in range(600):
        log.decision(Decision(f"d{i}", i % K, float(i), propensity=0.5), i, "policy", _arms(i))
        log.flush()
        wal.append(os.path.getsize(f"{path}-wal"))
        if i % 50 == 49:
            log.checkpointed(log.last_seq)
            log.flush()
    log.close()
    assert max(wal) <= 96 * 1024  # 16 pages and a row's commit, 4 kB and 24 bytes a page (measured: 82 kB)
    assert len(log_files(path)) >= 10 and read_log(path).id.tolist() == [f"d{i}" for i in range(600)]


def test_keep_archives_bounds_the_whole_log_and_reads_only_what_is_kept(tmp_path):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=ARCHIVE_BYTES, keep_archives=2)
    totals = []
    pending = _serve(log, 0, N, every=EVERY, on_checkpoint=lambda _: totals.append(sum(map(_disk, log.files()))))
    log.close()
    files = log_files(path)
    print(f"whole log max {max(totals)} B over {len(files)} files")
    assert len(files) == 3 and max(totals) <= LIVE_BOUND + 2 * (2 * ARCHIVE_BYTES)
    numbers = [int(f.rsplit("-", 1)[1]) for f in files[:-1]]  # the newest two: the oldest went
    assert numbers[1] == numbers[0] + 1 and numbers[0] >= 10
    frame = read_log(path)
    first = int(frame.id.iloc[0][1:])
    assert 0 < first < N - 500
    _check_frame(frame, first, N, pending)
    reader = DecisionLog(path)
    with pytest.raises(CheckpointError, match="keep_archives"):  # a replay from before the kept rows
        reader.after(0)
    reader.close()


def test_a_decision_pending_at_the_checkpoint_joins_its_later_reward_across_files(tmp_path):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=1)
    for i in range(5):
        log.decision(Decision(f"d{i}", i % K, float(i), propensity=0.5), i, "policy", _arms(i))
    log.reward("d4", 5.0, 4.0)
    seq = log.last_seq
    log.flush(seq)
    log.checkpointed(seq)  # d0 .. d3 pending in the checkpoint: their rows go to the archive
    for i in range(4):
        log.reward(f"d{i}", 6.0 + i, float(i))
    log.close()
    assert len(log_files(path)) == 2 and _query(path, "SELECT COUNT(*) FROM decisions") == [(0,)]
    frame = read_log(path)
    assert frame.id.tolist() == [f"d{i}" for i in range(5)] and frame.reward.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert frame.reward_time.tolist() == [6.0, 7.0, 8.0, 9.0, 5.0]
    reader = DecisionLog(path)
    assert [(kind, row[1]) for kind, row in reader.after(seq)] == [("reward", f"d{i}") for i in range(4)]
    reader.close()
    logs = bb.ope.Logs.from_decision_log(path)
    np.testing.assert_array_equal(np.asarray(logs.reward), [0.0, 1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(logs.arms), np.stack([_arms(i) for i in range(5)]))


@pytest.mark.parametrize("keep", [None, 0])
def test_after_returns_what_it_returned_before_the_compaction(tmp_path, keep):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=1, keep_archives=keep)
    _serve(log, 0, 40)
    log.decay(40.0, 0.9)
    _serve(log, 40, 60)
    checkpoint = log.last_seq - 30
    log.flush()
    before = {seq: log.after(seq) for seq in range(0, log.last_seq + 1, 7)}
    log.checkpointed(checkpoint)
    _serve(log, 60, 70)  # rows logged after the checkpoint, while the compaction runs
    log.flush()
    assert _query(path, "SELECT MIN(seq) FROM decisions")[0][0] > checkpoint
    assert len(log.files()) == (1 if keep == 0 else 2)
    for seq, rows in before.items():
        if seq >= checkpoint or keep is None:  # archives kept: older checkpoints replay from them
            assert log.after(seq)[: len(rows)] == rows
        else:
            with pytest.raises(CheckpointError, match=f"seq {checkpoint}"):
                log.after(seq)
    log.close()


def test_a_compaction_stopped_before_the_live_delete_is_read_once_and_finished_next_time(tmp_path, monkeypatch):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=1)
    pending = _serve(log, 0, 50)
    first = log.last_seq
    log.flush(first)

    def crash(self, through, number):
        raise OSError("killed between the archive's commit and the live delete")

    with monkeypatch.context() as patch:
        patch.setattr(DecisionLog, "_drop_live", crash)
        log.checkpointed(first)
        log.flush()
    assert sorted(_seqs_on_disk(path)) == sorted(2 * list(range(1, first + 1)))  # in both files
    _check_frame(read_log(path), 0, 50, pending)
    assert log.after(first - 10) == [r for r in log.after(0) if r[1][0] > first - 10]
    pending += _serve(log, 50, 80)
    log.flush()
    with pytest.raises(OSError, match="No row was lost"):  # the failure is reported by the next checkpoint ...
        log.checkpointed(log.last_seq)
    log.flush()  # ... whose compaction finishes the first and makes its own
    assert sorted(_seqs_on_disk(path)) == list(range(1, log.last_seq + 1))
    assert len(log.files()) == 3
    _check_frame(read_log(path), 0, 80, pending)
    log.close()


_KILLED = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from bayesbandit.agent import DecisionLog
    from bayesbandit.agent._decisions import Decision

    DecisionLog._drop_live = lambda self, through, number: os._exit(3)  # a kill after the archive's rename
    log = DecisionLog(sys.argv[1], archive_bytes=1)
    for i in range(20):
        log.decision(Decision(f"d{i}", i % 10, float(i), propensity=0.1), i, "policy", np.full((10, 12), float(i)))
        log.reward(f"d{i}", float(i), 1.0)
    log.flush(log.last_seq)
    log.checkpointed(log.last_seq)
    log.flush()
    """
)


def test_a_process_killed_mid_compaction_loses_no_row_and_duplicates_none(tmp_path):
    path = tmp_path / "decisions.sqlite"
    child = subprocess.run(
        [sys.executable, "-c", _KILLED, os.fspath(path)],
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=120,
        capture_output=True,
    )
    assert child.returncode == 3, child.stderr.decode()[-2000:]
    assert len(log_files(path)) == 2 and sorted(_seqs_on_disk(path)) == sorted(2 * list(range(1, 41)))
    assert read_log(path).id.tolist() == [f"d{i}" for i in range(20)]
    assert read_log(path).reward.tolist() == [1.0] * 20
    log = DecisionLog(path, archive_bytes=1)
    assert log.last_seq == 40
    log.decision(Decision("d20", 0, 41.0, propensity=0.1), 20, "policy", _arms(20))
    log.reward("d20", 42.0, 2.0)
    log.flush(log.last_seq)
    log.checkpointed(40)  # finishes the dead process's compaction; nothing after seq 40 moves
    log.close()
    assert sorted(_seqs_on_disk(path)) == list(range(1, 43))  # no seq handed out twice
    assert _query(path, "SELECT seq FROM decisions UNION SELECT seq FROM rewards ORDER BY seq") == [(41,), (42,)]
    frame = read_log(path)
    assert frame.id.tolist() == [f"d{i}" for i in range(21)] and frame.reward.tolist() == [1.0] * 20 + [2.0]


def test_an_archive_never_renamed_into_place_is_ignored_then_removed(tmp_path):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=1)
    pending = _serve(log, 0, 10)
    partial = tmp_path / "decisions.sqlite.archive-000001.partial"
    partial.write_bytes(b"a compaction killed while writing its archive")  # not even a database
    log.flush()
    assert log_files(path) == [os.fspath(path)]
    _check_frame(read_log(path), 0, 10, pending)
    log.checkpointed(log.last_seq)
    log.flush()
    assert not partial.exists() and [os.path.basename(f) for f in log.files()] == [
        "decisions.sqlite.archive-000001",
        "decisions.sqlite",
    ]
    _check_frame(read_log(path), 0, 10, pending)
    last = log.last_seq
    log.close()
    assert sorted(_seqs_on_disk(path)) == list(range(1, last + 1))
    assert _query(path, "SELECT COUNT(*) FROM decisions") == [(0,)]
    reopened = DecisionLog(path)  # the live file is empty: the seqs go on after the archived ones
    assert reopened.last_seq == last
    reopened.close()


def test_a_log_created_before_retention_shrinks_at_its_first_compaction(tmp_path):
    path = tmp_path / "decisions.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as old:  # a log written before retention: no auto_vacuum
        old.executescript(
            "PRAGMA journal_mode=WAL; CREATE TABLE decisions (seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, "
            "time REAL NOT NULL, draw INTEGER NOT NULL, policy TEXT NOT NULL, action TEXT NOT NULL, arms BLOB, "
            "arms_shape TEXT, propensity REAL, propensity_se REAL); CREATE TABLE rewards (seq INTEGER PRIMARY KEY, "
            "decision_id TEXT UNIQUE NOT NULL, time REAL NOT NULL, reward TEXT NOT NULL);"
        )
    log = DecisionLog(path)
    pending = _serve(log, 0, 1000, every=EVERY)  # no retention: checkpointed does nothing
    log.close()
    assert log_files(path) == [os.fspath(path)] and _disk(path) > 1_000_000
    log = DecisionLog(path, archive_bytes=ARCHIVE_BYTES)
    log.checkpointed(log.last_seq)
    log.close()
    assert _disk(path) < 50_000
    assert _query(path, "PRAGMA auto_vacuum") == [(2,)]  # incremental from now on
    _check_frame(read_log(path), 0, 1000, pending)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"archive_bytes": 0}, "archive_bytes"),
        ({"archive_bytes": "64MB"}, "archive_bytes"),
        ({"archive_bytes": True}, "archive_bytes"),
        ({"archive_bytes": 1024, "keep_archives": -1}, "keep_archives"),
        ({"archive_bytes": 1024, "keep_archives": 2.0}, "keep_archives"),
        ({"keep_archives": 3}, "keep_archives"),
    ],
)
def test_a_wrong_retention_setting_is_refused_naming_it(tmp_path, kwargs, name):
    with pytest.raises(InvalidInput, match=rf"'{name}' argument must be .* Got .* Fix: "):
        DecisionLog(tmp_path / "decisions.sqlite", **kwargs)
    assert not (tmp_path / "decisions.sqlite").exists()


@pytest.mark.parametrize("seq", [-1, 2, 1.0, "1"])
def test_checkpointed_refuses_a_seq_the_log_never_handed_over(tmp_path, seq):
    log = DecisionLog(tmp_path / "decisions.sqlite", archive_bytes=1)
    _serve(log, 0, 1)
    with pytest.raises(InvalidInput, match=r"'seq' argument must be an int in \[0, 1\]"):
        log.checkpointed(seq)
    log.checkpointed(None)  # a checkpoint with no log position: nothing moves
    log.flush()
    log.close()
    assert len(log_files(tmp_path / "decisions.sqlite")) == 1


def test_an_agent_loaded_from_a_checkpoint_replays_the_live_rows_of_an_archived_log(tmp_path):
    path, checkpoint = tmp_path / "decisions.sqlite", tmp_path / "agent.bbckpt"
    rng = np.random.default_rng(0)
    log = DecisionLog(path, archive_bytes=20_000)
    agent = bb.Agent(bb.LinTS(), d=4, seed=0, log=log)
    pending = []
    for t in range(300):
        pending.append(agent.decide(rng.uniform(-1, 1, (6, 4)), propensity=50))
        if len(pending) > DELAY:
            agent.update(pending.pop(int(rng.integers(len(pending)))), float(rng.normal()))
        if t % 50 == 45:  # the last rows, after this save, stay to be replayed
            agent.save(checkpoint)
            log.checkpointed(bb.checkpoint.read_checkpoint(checkpoint)[0]["log_seq"])
    agent.close()
    assert len(log_files(path)) >= 4
    loaded = bb.Agent.load(checkpoint, bb.LinTS(), log=DecisionLog(path, archive_bytes=20_000))
    assert (loaded.num_updates, loaded.pending_decisions) == (agent.num_updates, agent.pending_decisions)
    for a, b in zip(jax.tree.leaves(loaded.state), jax.tree.leaves(agent.state), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    loaded.close()
    frame = read_log(path)
    assert len(frame) == 300 and frame.reward.notna().sum() == agent.num_updates


def test_a_compaction_while_read_log_reads_neither_hides_nor_repeats_a_row(tmp_path, monkeypatch):
    path = tmp_path / "decisions.sqlite"
    log = DecisionLog(path, archive_bytes=1)
    pending = _serve(log, 0, 30, every=20)
    read_part = _log._read_part

    def compact(start: int) -> None:
        pending.extend(_serve(log, start, start + 10))
        log.checkpointed(log.last_seq)
        log.flush()

    def compacting(file, after):  # a compaction just before the reader opens the live file, one just after
        if os.fspath(file) != os.fspath(path):
            return read_part(file, after)
        compact(30)
        part = read_part(file, after)
        compact(40)
        return part

    monkeypatch.setattr(_log, "_read_part", compacting)
    frame = read_log(path)
    monkeypatch.undo()
    log.close()
    assert len(log.files()) >= 4
    _check_frame(frame, 0, 50, pending)
