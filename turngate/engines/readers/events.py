"""What a reader makes of an engine's output streams: typed events in stream order.

Every event says where it came from: ``stream`` ("stdout" or "stderr") and
``offset``, the byte offset in that stream where the line or region the event
was read from begins. Events of one stream are in offset order; a transcript
lists the stdout events first, then the stderr events (the order in which two
pipes were written is not in the bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"


@dataclass(frozen=True, slots=True)
class AssistantText:
    """Assistant reply content: the only place a done marker counts as evidence."""

    text: str
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class Reasoning:
    """The engine's visible thinking; a marker here is an echo, not evidence."""

    text: str
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool invocation; ``input`` is the decoded JSON value the engine wrote."""

    name: str
    input: JsonValue
    call_id: str
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's output as the engine reported it back; a marker here is an echo."""

    call_id: str
    output: str
    ok: bool
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class UserEcho:
    """The prompt echoed back by the engine (gemini stream-json ``role: user``)."""

    text: str
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class SessionId:
    """The handle an orchestrator resumes the conversation with."""

    value: str
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The engine's own end-of-turn signal: ``ok`` False for a failed turn."""

    ok: bool
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class EngineError:
    """An error the engine reported; ``transient`` when the engine retries by itself."""

    message: str
    code: str | int | None
    transient: bool
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class UnknownEvent:
    """A JSON event the reader has no meaning for (new type, missing or odd fields): kept, not an error."""

    type: str
    raw: str
    stream: str
    offset: int


@dataclass(frozen=True, slots=True)
class RawLine:
    """A line that is not an event: noise, stack traces, a truncated JSON line (codex stdout: a run
    of such lines, verbatim from its first non-blank line to its last)."""

    text: str
    stream: str
    offset: int


Event: TypeAlias = (
    AssistantText
    | Reasoning
    | ToolCall
    | ToolResult
    | UserEcho
    | SessionId
    | TurnEnd
    | EngineError
    | UnknownEvent
    | RawLine
)


@dataclass(frozen=True, slots=True)
class Transcript:
    """Everything one engine invocation wrote, as events."""

    engine: str
    events: tuple[Event, ...]

    def assistant_messages(self) -> tuple[str, ...]:
        """The reply texts, in order."""
        return tuple(event.text for event in self.events if isinstance(event, AssistantText))

    def session_id(self) -> str | None:
        """The first session id the engine announced."""
        return next((event.value for event in self.events if isinstance(event, SessionId)), None)

    def turn_end(self) -> TurnEnd | None:
        """The last end-of-turn signal, or None when the turn never ended (crash, hang, cut stream)."""
        return next((event for event in reversed(self.events) if isinstance(event, TurnEnd)), None)
