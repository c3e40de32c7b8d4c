"""The run's durable store: one SQLite file in the case's workdir, holding the run document.

Every transition writes the whole run (state, pending, history, events, clock) in one
transaction, so ``run.restart`` reloads exactly what was persisted and events are always
derived from persisted state.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)")

    def save(self, doc: dict[str, Any]) -> None:
        text = json.dumps(doc)
        self.db.execute("BEGIN")
        self.db.execute("INSERT OR REPLACE INTO runs (id, doc) VALUES (1, ?)", (text,))
        self.db.execute("COMMIT")

    def load(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT doc FROM runs WHERE id = 1").fetchone()
        if row is None:
            return None
        doc = json.loads(row[0])
        return doc if isinstance(doc, dict) else None

    def close(self) -> None:
        self.db.close()
