"""Reference stream readers: an engine's stdout and stderr bytes in, a ``Transcript`` of events out.

Written from the documented formats only (``../shared/ENGINE_FORMATS.md`` and
``docs/fake-engines.md``; claude, qwen and codebuddy, which ENGINE_FORMATS.md does not
describe, from docs/fake-engines.md and the real CLIs' captures in ``corpus/``), never
from the fake engines' code, so that they can
check the fake engines independently. A reader never raises on any input bytes:
what it cannot give a meaning to becomes an ``UnknownEvent`` or a ``RawLine``.
"""

from __future__ import annotations

from typing import Any

from turngate.engines.readers import claude, codebuddy, codex, gemini, iflow, kilo, opencode, qwen
from turngate.engines.readers._stream import clean_text
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    Event,
    JsonValue,
    RawLine,
    Reasoning,
    SessionId,
    ToolCall,
    ToolResult,
    Transcript,
    TurnEnd,
    UnknownEvent,
    UserEcho,
)

ENGINES = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")

__all__ = [
    "ENGINES",
    "AssistantText",
    "EngineError",
    "Event",
    "JsonValue",
    "RawLine",
    "Reasoning",
    "SessionId",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "TurnEnd",
    "UnknownEvent",
    "UserEcho",
    "clean_text",
    "read",
]


def read(engine: str, stdout: bytes, stderr: bytes = b"", **options: Any) -> Transcript:
    """Read one invocation of ``engine``; ``options`` go to that engine's reader (gemini: ``mode``)."""
    match engine:
        case "codex":
            return codex.read(stdout, stderr, **options)
        case "gemini":
            return gemini.read(stdout, stderr, **options)
        case "iflow":
            return iflow.read(stdout, stderr, **options)
        case "opencode":
            return opencode.read(stdout, stderr, **options)
        case "claude":
            return claude.read(stdout, stderr, **options)
        case "qwen":
            return qwen.read(stdout, stderr, **options)
        case "codebuddy":
            return codebuddy.read(stdout, stderr, **options)
        case "kilo":
            return kilo.read(stdout, stderr, **options)
    raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
