"""One JSON line per engine invocation: what the orchestrator asked and what was played."""

from __future__ import annotations

import os
import time

from turngate.engines.fake.jsonline import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# The companion file of a call log: one line per call that has begun playing a case.
STARTED_SUFFIX = ".started"
_KEPT_PREFIXES = ("TURNGATE_", "GEMINI_", "GOOGLE_", "IFLOW_", "OPENCODE_", "KILO_")
_KEPT_NAMES = ("HOME", "CODEX_HOME")
# What else matters to one engine: its own configuration (claude's IS_SANDBOX lets root skip
# permissions; qwen reads OPENAI_* for its OpenAI-compatible provider).
_ENGINE_PREFIXES = {
    "claude": ("ANTHROPIC_", "CLAUDE_", "IS_SANDBOX"),
    "qwen": ("OPENAI_", "QWEN_"),
    "codebuddy": ("CODEBUDDY_",),
}
_SECRET_MARKS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
# Bounds on what the skill scan reads: a working directory is the orchestrator's, not ours.
_SKILL_SCAN_DEPTH = 5
_SKILL_SCAN_DIRS = 2000
_SKILLS_KEPT = 20
_SKILL_TEXT_BYTES = 64 * 1024
_SKILL_FILES_KEPT = 50
_SKILL_SCAN_SKIP = frozenset({".git", "node_modules", "__pycache__", ".venv"})


def relevant_environment(
    environ: Mapping[str, str], prefixes: tuple[str, ...] = _KEPT_PREFIXES
) -> dict[str, str]:
    """The variables that matter to an engine (``HOME``, ``CODEX_HOME`` and those starting with one
    of ``prefixes``), with secret values redacted."""
    kept = {}
    for name in sorted(environ):
        if name in _KEPT_NAMES or name.startswith(prefixes):
            secret = any(mark in name.upper() for mark in _SECRET_MARKS)
            kept[name] = "<redacted>" if secret else environ[name]
    return kept


def skill_files(root: str) -> dict[str, dict[str, Any]]:
    """Every SKILL.md under ``root`` (bounded): its text and the files of its folder.

    This is what the orchestrator gave the engine to read, the runtime patch included, so a
    black-box server's patch can be judged from the call log.
    """
    found: dict[str, dict[str, Any]] = {}
    visited = 0
    for folder, subfolders, files in os.walk(root):
        visited += 1
        depth = os.path.relpath(folder, root).count(os.sep) + (folder != root)
        subfolders[:] = sorted(
            name for name in subfolders if name not in _SKILL_SCAN_SKIP and depth < _SKILL_SCAN_DEPTH
        )
        if "SKILL.md" in files and len(found) < _SKILLS_KEPT:
            try:
                with open(os.path.join(folder, "SKILL.md"), "rb") as handle:
                    text = handle.read(_SKILL_TEXT_BYTES).decode("utf-8", "replace")
            except OSError:
                continue
            listing = []
            for inner, _dirs, names in os.walk(folder):
                listing += [os.path.relpath(os.path.join(inner, name), folder) for name in names]
                if len(listing) >= _SKILL_FILES_KEPT:
                    break
            found[os.path.relpath(folder, root)] = {
                "text": text,
                "files": sorted(listing)[:_SKILL_FILES_KEPT],
            }
        if visited >= _SKILL_SCAN_DIRS:
            break
    return found


class CallLog:
    """The record of this invocation, written once, however the process ends."""

    def __init__(self, path: str | None, engine: str, argv: list[str], environ: Mapping[str, str]):
        self.path = path
        self.written = False
        self.record: dict[str, Any] = {
            "engine": engine,
            "argv": argv,
            "cwd": os.getcwd(),
            "env": relevant_environment(environ, _KEPT_PREFIXES + _ENGINE_PREFIXES.get(engine, ())),
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

    def note_skills(self, root: str) -> None:
        """The skills under ``root``, the directory the turn runs in (see :func:`skill_files`), for
        runs, not probes: ``cwd``, or where the command line moved the engine (``workdir``)."""
        self.record["skills"] = skill_files(root)

    def add_stdin(self, text: str) -> None:
        if self.record["stdin"] is None:
            self.record["stdin"] = []
        self.record["stdin"].append(text)

    def started(self) -> None:
        """A line in the log's companion ``<log>.started`` once the call knows its case: a server may
        show its decision on a turn while the process still lives (a resident process ends only when
        the server closes its input), so a judge reading the log then learns which calls are still
        to come (``turngate.judge.connectors.call_log.unfinished``)."""
        if self.path is None:
            return
        started = {key: self.record[key] for key in ("engine", "case", "pid", "start")}
        _append(self.path + STARTED_SUFFIX, (dumps(started) + "\n").encode("utf-8"))

    def write(self, outcome: str, exit_code: int | None, *, ended: bool = True) -> None:
        """Append the line (once); `ended=False` for a process that is about to hang."""
        if self.written or self.path is None:
            return
        self.written = True
        self.record["outcome"] = outcome
        self.record["exit_code"] = exit_code
        self.record["end"] = time.time() if ended else None
        _append(self.path, (dumps(self.record) + "\n").encode("utf-8"))


def _append(path: str, line: bytes) -> None:
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        # O_APPEND and a single write keep concurrent engines' lines whole.
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
    except OSError:
        pass  # losing the log must not change what the engine does
