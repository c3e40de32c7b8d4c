"""The reference orchestrator's history: runs, attempts, pending interactions, replies, protocol events.

Real SQLite, one file, committed at every state change, so a process killed
with SIGKILL loses nothing that was decided: reopening the file gives the same
status, pending interaction and history. Protocol events are written in the
same transaction as the state they describe, so they cannot disagree with it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from turngate.base.hostile_text import json_text_escaped, surrogates_escaped

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    skill_id TEXT NOT NULL,
    engine TEXT NOT NULL,
    mode TEXT NOT NULL,
    profile TEXT NOT NULL,
    require_user_reply INTEGER NOT NULL,
    session_timeout_sec INTEGER NOT NULL,
    max_attempt INTEGER,
    state TEXT NOT NULL,
    attempt_count INTEGER NOT NULL,
    session_id TEXT,
    pending_json TEXT,
    wait_deadline_at REAL,
    warnings_json TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    result_json TEXT,
    run_dir TEXT NOT NULL,
    request_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    run_id TEXT NOT NULL,
    attempt_number INTEGER NOT NULL,
    argv_json TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    exit_code INTEGER,
    decision_json TEXT,
    PRIMARY KEY (run_id, attempt_number)
);
CREATE TABLE IF NOT EXISTS interactions (
    run_id TEXT NOT NULL,
    interaction_id INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    pending_json TEXT NOT NULL,
    asked_at REAL NOT NULL,
    response TEXT,
    replied_at REAL,
    automatic INTEGER,
    PRIMARY KEY (run_id, interaction_id)
);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    ts REAL NOT NULL,
    data_json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
-- Engine processes alive for a run, so an orchestrator restarted after a crash can end them.
CREATE TABLE IF NOT EXISTS engine_processes (
    run_id TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TEXT NOT NULL,
    PRIMARY KEY (run_id, pid)
);
-- A reply's idempotency key and the answer it got, so a resend after a restart gets the same answer.
CREATE TABLE IF NOT EXISTS reply_keys (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
"""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One row of ``runs``; JSON columns decoded."""

    run_id: str
    skill_id: str
    engine: str
    mode: str
    profile: str
    require_user_reply: bool
    session_timeout_sec: int
    max_attempt: int | None
    state: str
    attempt_count: int
    session_id: str | None
    pending: Mapping[str, Any] | None
    wait_deadline_at: float | None
    warnings: tuple[str, ...]
    error_code: str | None
    error_message: str | None
    result: Mapping[str, Any] | None
    run_dir: str
    request: Mapping[str, Any]
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class InteractionRecord:
    """One question and its answer: the history the spec asks for (001, "记录交互历史")."""

    interaction_id: int
    prompt: str
    pending: Mapping[str, Any]
    asked_at: float
    response: str | None
    replied_at: float | None
    automatic: bool | None


@dataclass(frozen=True, slots=True)
class EventRecord:
    seq: int
    type: str
    attempt: int
    ts: float
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    attempt_number: int
    argv: tuple[str, ...]
    started_at: float
    ended_at: float | None
    exit_code: int | None
    decision: Mapping[str, Any] | None


_JSON_COLUMNS = {
    "pending": "pending_json",
    "warnings": "warnings_json",
    "result": "result_json",
    "request": "request_json",
}


class Store:
    """A thread-safe handle on one SQLite file."""

    def __init__(self, path: Path, *, power_safe: bool = True) -> None:
        """``power_safe=False``: no fsync at all (``synchronous=OFF``).

        A process killed with SIGKILL still loses nothing committed (every commit
        is written to the file before COMMIT returns); only an operating-system
        crash or a power loss could lose commits. For throwaway stores (one per
        catalog case), where fsyncs are most of a case's cost on a busy disk.
        """
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        # synchronous first: switching to WAL and creating the tables already commit.
        self._db.execute(f"PRAGMA synchronous={'FULL' if power_safe else 'OFF'}")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(f"BEGIN;{_SCHEMA}COMMIT;")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """All writes of one state change, committed together or not at all."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield Transaction(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # Reads -------------------------------------------------------------------------------

    def run(self, run_id: str) -> RunRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return _run(row) if row is not None else None

    def runs(self, *, states: Sequence[str] | None = None) -> tuple[RunRecord, ...]:
        with self._lock:
            if states is None:
                rows = self._db.execute("SELECT * FROM runs ORDER BY created_at, run_id").fetchall()
            else:
                marks = ",".join("?" * len(states))
                rows = self._db.execute(
                    f"SELECT * FROM runs WHERE state IN ({marks}) ORDER BY created_at, run_id", tuple(states)
                ).fetchall()
        return tuple(_run(row) for row in rows)

    def interactions(self, run_id: str) -> tuple[InteractionRecord, ...]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM interactions WHERE run_id = ? ORDER BY interaction_id", (run_id,)
            ).fetchall()
        return tuple(
            InteractionRecord(
                row["interaction_id"],
                row["prompt"],
                json.loads(row["pending_json"]),
                row["asked_at"],
                row["response"],
                row["replied_at"],
                None if row["automatic"] is None else bool(row["automatic"]),
            )
            for row in rows
        )

    def events(self, run_id: str, *, after: int = 0) -> tuple[EventRecord, ...]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM events WHERE run_id = ? AND seq > ? ORDER BY seq", (run_id, after)
            ).fetchall()
        return tuple(
            EventRecord(row["seq"], row["type"], row["attempt"], row["ts"], json.loads(row["data_json"]))
            for row in rows
        )

    def attempts(self, run_id: str) -> tuple[AttemptRecord, ...]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM attempts WHERE run_id = ? ORDER BY attempt_number", (run_id,)
            ).fetchall()
        return tuple(
            AttemptRecord(
                row["attempt_number"],
                tuple(json.loads(row["argv_json"])),
                row["started_at"],
                row["ended_at"],
                row["exit_code"],
                None if row["decision_json"] is None else json.loads(row["decision_json"]),
            )
            for row in rows
        )

    # Engine processes -----------------------------------------------------------------------

    def remember_process(self, run_id: str, pid: int, started: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO engine_processes (run_id, pid, started) VALUES (?, ?, ?)",
                (run_id, pid, started),
            )

    def forget_process(self, run_id: str, pid: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM engine_processes WHERE run_id = ? AND pid = ?", (run_id, pid))

    def processes(self) -> tuple[tuple[str, int, str], ...]:
        """(run_id, pid, start time) of every engine process recorded as alive."""
        with self._lock:
            rows = self._db.execute("SELECT run_id, pid, started FROM engine_processes").fetchall()
        return tuple((row["run_id"], row["pid"], row["started"]) for row in rows)

    # Reply idempotency keys -------------------------------------------------------------------

    def reply_answer(self, run_id: str, key: str) -> Mapping[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT answer_json FROM reply_keys WHERE run_id = ? AND key = ?", (run_id, _text(key))
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def set_reply_answer(self, run_id: str, key: str, answer: Mapping[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO reply_keys (run_id, key, answer_json) VALUES (?, ?, ?)",
                (run_id, _text(key), _json_text(answer)),
            )


class Transaction:
    """Writes inside one ``Store.transaction()``."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def insert_run(self, record: RunRecord) -> None:
        columns = _run_columns(record)
        marks = ",".join("?" * len(columns))
        self._db.execute(f"INSERT INTO runs ({','.join(columns)}) VALUES ({marks})", tuple(columns.values()))

    def update_run(self, record: RunRecord, **changes: Any) -> RunRecord:
        """Write ``changes`` to the run's row and return the record as it now is."""
        updated = replace(record, **changes)
        columns = _run_columns(updated)
        assignments = ",".join(f"{name} = ?" for name in columns)
        self._db.execute(
            f"UPDATE runs SET {assignments} WHERE run_id = ?", (*columns.values(), record.run_id)
        )
        return updated

    def insert_attempt(
        self, run_id: str, attempt_number: int, argv: Sequence[str], started_at: float
    ) -> None:
        self._db.execute(
            "INSERT INTO attempts (run_id, attempt_number, argv_json, started_at) VALUES (?, ?, ?, ?)",
            (run_id, attempt_number, _json_text(list(argv)), started_at),
        )

    def end_attempt(
        self,
        run_id: str,
        attempt_number: int,
        *,
        ended_at: float,
        exit_code: int | None,
        decision: Mapping[str, Any],
    ) -> None:
        self._db.execute(
            "UPDATE attempts SET ended_at = ?, exit_code = ?, decision_json = ?"
            " WHERE run_id = ? AND attempt_number = ?",
            (ended_at, exit_code, _json_text(decision), run_id, attempt_number),
        )

    def ask(
        self, run_id: str, interaction_id: int, prompt: str, pending: Mapping[str, Any], at: float
    ) -> None:
        self._db.execute(
            "INSERT INTO interactions (run_id, interaction_id, prompt, pending_json, asked_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (run_id, interaction_id, _text(prompt), _json_text(pending), at),
        )

    def answer(self, run_id: str, interaction_id: int, response: str, at: float, *, automatic: bool) -> None:
        self._db.execute(
            "UPDATE interactions SET response = ?, replied_at = ?, automatic = ?"
            " WHERE run_id = ? AND interaction_id = ?",
            (_text(response), at, int(automatic), run_id, interaction_id),
        )

    def keep_reply_answer(self, run_id: str, key: str, answer: Mapping[str, Any]) -> None:
        """Record an idempotency key with the reply it came with, in the reply's own transaction."""
        self._db.execute(
            "INSERT OR REPLACE INTO reply_keys (run_id, key, answer_json) VALUES (?, ?, ?)",
            (run_id, _text(key), _json_text(answer)),
        )

    def append_event(self, run_id: str, type_: str, attempt: int, at: float, data: Mapping[str, Any]) -> int:
        """Append one protocol event; its seq is one more than the run's last (strictly increasing)."""
        row = self._db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?", (run_id,)
        ).fetchone()
        seq = int(row[0]) + 1
        self._db.execute(
            "INSERT INTO events (run_id, seq, type, attempt, ts, data_json) VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, seq, _text(type_), attempt, at, _json_text(data)),
        )
        return seq

    def pending_of(self, run_id: str) -> Mapping[str, Any] | None:
        """The pending interaction as persisted in this transaction (events are built from it)."""
        row = self._db.execute("SELECT pending_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None or row[0] is None else dict(json.loads(row[0]))


def _text(value: Any) -> Any:
    """A string as SQLite can store it: each lone surrogate (from a ``\\ud800`` escape in an engine's
    JSON, a hint, a reply) as the six characters ``\\ud800``, since UTF-8 cannot encode it. The one
    place text is encoded for the store; other values pass through."""
    return surrogates_escaped(value) if isinstance(value, str) else value


def _json_text(value: Any) -> str:
    """A JSON column's text, keys sorted; a lone surrogate in any string kept as by `_text` (as the
    JSON escape ``\\ud800`` it would decode back into a string that cannot be encoded)."""
    return json_text_escaped(json.dumps(value, sort_keys=True, ensure_ascii=False))


def _run_columns(record: RunRecord) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for field in fields(RunRecord):
        value = getattr(record, field.name)
        if field.name in _JSON_COLUMNS:
            columns[_JSON_COLUMNS[field.name]] = (
                None
                if value is None
                else _json_text(list(value) if isinstance(value, tuple) else dict(value))
            )
        elif isinstance(value, bool):
            columns[field.name] = int(value)
        else:
            columns[field.name] = _text(value)
    return columns


def _run(row: sqlite3.Row) -> RunRecord:
    values: dict[str, Any] = {}
    for field in fields(RunRecord):
        if field.name in _JSON_COLUMNS:
            raw = row[_JSON_COLUMNS[field.name]]
            decoded = None if raw is None else json.loads(raw)
            values[field.name] = tuple(decoded or ()) if field.name == "warnings" else decoded
        elif field.name == "require_user_reply":
            values[field.name] = bool(row[field.name])
        else:
            values[field.name] = row[field.name]
    return RunRecord(**values)
