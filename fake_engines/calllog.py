"""One JSON line per engine invocation: what the orchestrator asked and what was played."""

from __future__ import annotations

import os
import time

from fake_engines.jsonline import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

_KEPT_PREFIXES = ("TURNGATE_", "GEMINI_", "GOOGLE_", "IFLOW_", "OPENCODE_")
_KEPT_NAMES = ("HOME", "CODEX_HOME")
_SECRET_MARKS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def relevant_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that matter to an engine, with secret values redacted."""
    kept = {}
    for name in sorted(environ):
        if name in _KEPT_NAMES or name.startswith(_KEPT_PREFIXES):
            secret = any(mark in name.upper() for mark in _SECRET_MARKS)
            kept[name] = "<redacted>" if secret else environ[name]
    return kept


class CallLog:
    """The record of this invocation, written once, however the process ends."""

    def __init__(self, path: str | None, engine: str, argv: list[str], environ: Mapping[str, str]):
        self.path = path
        self.written = False
        self.record: dict[str, Any] = {
            "engine": engine,
            "argv": argv,
            "cwd": os.getcwd(),
            "env": relevant_environment(environ),
            "stdin": None,
            "action": None,
            "case": None,
            "case_source": None,
            "session_id": None,
            "resumed": False,
            "turns": [],
            "exit_code": None,
            "outcome": None,
            "error": None,
            "pid": os.getpid(),
            "start": time.time(),
            "end": None,
        }

    def note(self, **fields: Any) -> None:
        self.record.update(fields)

    def add_stdin(self, text: str) -> None:
        if self.record["stdin"] is None:
            self.record["stdin"] = []
        self.record["stdin"].append(text)

    def write(self, outcome: str, exit_code: int | None, *, ended: bool = True) -> None:
        """Append the line (once); `ended=False` for a process that is about to hang."""
        if self.written or self.path is None:
            return
        self.written = True
        self.record["outcome"] = outcome
        self.record["exit_code"] = exit_code
        self.record["end"] = time.time() if ended else None
        line = (dumps(self.record) + "\n").encode("utf-8")
        try:
            folder = os.path.dirname(self.path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            # O_APPEND and a single write keep concurrent engines' lines whole.
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, line)
            finally:
                os.close(descriptor)
        except OSError:
            pass  # losing the log must not change what the engine does
