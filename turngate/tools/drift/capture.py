"""A capture: one engine invocation's bytes and what the orchestrator knew around them.

A capture is what a field report brings (the stdout and stderr of one turn,
the exit code) plus the turn's context (mode, attempt, the skill's output
schema). Captures live as folders: ``stdout``, optional ``stderr``, and
``capture.yaml`` (see ``corpus/README.md``).
"""

from __future__ import annotations

import base64
import itertools
import json
import signal as signal_module
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from turngate.base.optionsfile import check_types, read_mapping
from turngate.implementations.reference.turn import TurnInput
from turngate.judge.skill_writer import GREETING_SCHEMA

# Every engine turngate has a reader for (turngate/engines/readers/): their captures are replayed
# (tests/drift/test_corpus.py).
ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "kilo", "claude", "qwen", "codebuddy")
NOT_RECORDED: Final = "not recorded"
SCHEMAS: Final[Mapping[str, Mapping[str, Any] | None]] = {"greeting": GREETING_SCHEMA, "none": None}


class CaptureProblem(ValueError):
    """A capture turngate cannot use; names the file, field and value."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """How a capture was recorded: the engine's command line, its version, how long it ran and, when
    the recorder had to kill it, why. Captures written before 2026-11-25 carry none of it (None)."""

    argv: tuple[str, ...]
    version: str
    duration_sec: float
    killed: str | None = None  # e.g. "by the recorder after its 120 s timeout"

    def as_yaml(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "argv": list(self.argv),
            "version": self.version,
            "duration_sec": self.duration_sec,
        }
        if self.killed is not None:
            document["killed"] = self.killed
        return document

    def describe(self) -> str:
        killed = f", killed {self.killed}" if self.killed else ""
        return f"{' '.join(self.argv)} (version {self.version}, {self.duration_sec} s{killed})"


@dataclass(frozen=True, slots=True)
class Capture:
    engine: str
    stdout: bytes
    stderr: bytes = b""
    mode: str = "interactive"
    exit_code: int | None = 0
    signal: int | None = None
    attempt_number: int = 1
    max_attempt: int | None = None
    output_schema: str | Mapping[str, Any] = "greeting"  # a name in SCHEMAS, a schema file, or the schema
    reader_options: Mapping[str, Any] = field(default_factory=dict)
    name: str = "capture"
    expect: Mapping[str, Any] = field(default_factory=dict)
    splits: tuple[int, ...] = ()  # stdout offsets where a playing fake engine pauses mid-write
    recorded: Recorded | None = None  # None: a capture written, or recorded before this was kept

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise CaptureProblem(f"{self.name}: engine: {self.engine!r}: known: {', '.join(ENGINES)}")
        if self.mode not in ("auto", "interactive"):
            raise CaptureProblem(f"{self.name}: mode: {self.mode!r}: auto or interactive")

    def with_streams(self, stdout: bytes, stderr: bytes) -> Capture:
        return replace(self, stdout=stdout, stderr=stderr)

    def schema(self) -> Mapping[str, Any] | None:
        if not isinstance(self.output_schema, str):
            return self.output_schema
        if self.output_schema in SCHEMAS:
            return SCHEMAS[self.output_schema]
        path = Path(self.output_schema)
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise CaptureProblem(f"{self.name}: output_schema: {self.output_schema!r}: {error}") from None

    def raw_turn(self) -> dict[str, Any]:
        """A fake-engine turn that writes these bytes back exactly and ends the same way (raw_turn)."""
        return raw_turn(self.stdout, self.stderr, self.exit_code, self.signal, self.splits)

    def turn(self) -> TurnInput:
        return TurnInput(
            engine=self.engine,
            mode=self.mode,  # type: ignore[arg-type]
            attempt_number=self.attempt_number,
            max_attempt=self.max_attempt,
            output_schema=self.schema(),
            needs_session_id=True,
            reader_options=dict(self.reader_options) or None,
        )


def raw_turn(
    stdout: bytes, stderr: bytes, exit_code: int | None, signal: int | None, splits: tuple[int, ...] = ()
) -> dict[str, Any]:
    """A fake-engine turn that writes these bytes back exactly and ends the same way.

    ``start: none`` and ``end: none``: the engine adds no lines of its own; a split
    becomes a pause between two writes of one line.
    """
    steps: list[dict[str, Any]] = []
    cuts = [0, *sorted(cut for cut in splits if 0 < cut < len(stdout)), len(stdout)]
    for start, end in itertools.pairwise(cuts):
        if start > 0:
            steps.append({"sleep": 0.05})  # a write boundary in the middle of a line
        if end > start:
            steps.append({"raw": {"base64": _b64(stdout[start:end]), "stream": "stdout"}})
    if stderr:
        steps.append({"raw": {"base64": _b64(stderr), "stream": "stderr"}})
    turn: dict[str, Any] = {"steps": steps, "start": "none", "end": "none"}
    if signal is not None:
        steps.append({"crash": {"signal": signal_module.Signals(signal).name}})
    else:
        turn["exit_code"] = exit_code or 0
    return turn


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_FIELDS: Final[dict[str, type | tuple[type, ...]]] = {
    "engine": str,
    "description": str,
    "provenance": str,
    "mode": str,
    "exit_code": (int, type(None)),
    "signal": (int, type(None)),
    "attempt_number": int,
    "max_attempt": (int, type(None)),
    "output_schema": str,
    "reader_options": dict,
    "expect": dict,
    "recorded": dict,
}
_RECORDED_FIELDS: Final[dict[str, type | tuple[type, ...]]] = {
    "argv": list,
    "version": str,
    "duration_sec": (int, float),
    "killed": str,
}


def _recorded(where: str, raw: Mapping[str, Any]) -> Recorded:
    check_types(f"{where}: recorded", raw, _RECORDED_FIELDS, CaptureProblem)
    for key in ("argv", "version", "duration_sec"):
        if key not in raw:
            raise CaptureProblem(f"{where}: recorded.{key}: missing")
    argv = raw["argv"]
    if not argv or not all(isinstance(word, str) for word in argv):
        raise CaptureProblem(f"{where}: recorded.argv: {argv!r}: the command line, a list of strings")
    if raw["duration_sec"] < 0:
        raise CaptureProblem(
            f"{where}: recorded.duration_sec: {raw['duration_sec']!r}: seconds, not negative"
        )
    return Recorded(tuple(argv), raw["version"], float(raw["duration_sec"]), raw.get("killed"))


def load_capture(folder: Path) -> Capture:
    """A capture folder: ``capture.yaml``, ``stdout``, optional ``stderr``."""
    meta_path = folder / "capture.yaml"
    meta = read_mapping(meta_path, CaptureProblem)
    check_types(str(meta_path), meta, _FIELDS, CaptureProblem)
    if "engine" not in meta:
        raise CaptureProblem(f"{meta_path}: engine: missing")
    stdout_path = folder / "stdout"
    if not stdout_path.exists():
        raise CaptureProblem(f"{stdout_path}: missing (the engine's standard output, as bytes)")
    stderr_path = folder / "stderr"
    try:
        return Capture(
            engine=meta["engine"],
            stdout=stdout_path.read_bytes(),
            stderr=stderr_path.read_bytes() if stderr_path.exists() else b"",
            mode=meta.get("mode", "interactive"),
            exit_code=meta.get("exit_code", None if meta.get("signal") is not None else 0),
            signal=meta.get("signal"),
            attempt_number=meta.get("attempt_number", 1),
            max_attempt=meta.get("max_attempt"),
            output_schema=meta.get("output_schema", "greeting"),
            reader_options=meta.get("reader_options") or {},
            name=f"{folder.parent.name}/{folder.name}",
            expect=meta.get("expect") or {},
            recorded=_recorded(str(meta_path), meta["recorded"]) if "recorded" in meta else None,
        )
    except CaptureProblem as problem:
        raise CaptureProblem(f"{meta_path}: {problem}") from None
