"""opencode ``run --format json``: NDJSON on stdout, ``sessionID`` on every event.

``step_start``; ``text`` (``part.text``, or ``text`` at the top level in some
versions); ``reasoning``; ``tool_use`` (a call and its result in one line:
``part.tool``, ``part.state.input``, ``part.state.output`` or ``part.state.error``);
``error`` (``error.name``, ``error.data.message``, ``error.data.statusCode``);
``step_finish`` (``part.reason``: ``stop`` ends the turn, anything else, say a
repeated ``unknown``, does not end it well).
"""

from __future__ import annotations

from turngate.engines.readers._stream import (
    STDERR,
    STDOUT,
    JsonObject,
    Line,
    code_field,
    event_lines,
    object_field,
    parse_object,
    raw_lines,
    str_field,
    unknown,
)
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    Event,
    RawLine,
    Reasoning,
    SessionId,
    ToolCall,
    ToolResult,
    Transcript,
    TurnEnd,
)


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    events: list[Event] = []
    session_seen = False
    for line in event_lines(stdout, STDOUT, events):
        record = parse_object(line)
        if record is None:
            events.append(RawLine(line.text, STDOUT, line.offset))
            continue
        session_id = str_field(record, "sessionID")
        if session_id is not None and not session_seen:
            # every line repeats it; one SessionId is the announcement
            events.append(SessionId(session_id, STDOUT, line.offset))
            session_seen = True
        events.extend(_record_events(record, line))
    events.extend(raw_lines(stderr, STDERR))
    return Transcript("opencode", tuple(events))


def _record_events(record: JsonObject, line: Line) -> list[Event]:
    at = line.offset
    part = object_field(record, "part")
    match str_field(record, "type"):
        case "step_start":
            return []
        case "text" | "reasoning" as kind:
            text = str_field(part, "text")
            if text is None:
                text = str_field(record, "text")
            if text is None:
                return [unknown(record, line, STDOUT)]
            return [AssistantText(text, STDOUT, at) if kind == "text" else Reasoning(text, STDOUT, at)]
        case "tool_use":
            return tool_events(record, part, line)
        case "error":
            return [_error_event(record, line)]
        case "step_finish":
            return [TurnEnd(str_field(part, "reason") == "stop", STDOUT, at)]
    return [unknown(record, line, STDOUT)]


def tool_events(record: JsonObject, part: JsonObject | None, line: Line) -> list[Event]:
    """A call, and its result once the tool has finished (``completed`` or ``error``): opencode's
    tool part, which its fork kilo prints the same way (only once the tool has finished)."""
    at = line.offset
    name = str_field(part, "tool")
    call_id = str_field(part, "callID") or str_field(part, "id")
    state = object_field(part, "state")
    if name is None or call_id is None or state is None:
        return [unknown(record, line, STDOUT)]
    call = ToolCall(name, state.get("input"), call_id, STDOUT, at)
    match str_field(state, "status"):
        case "completed":
            return [call, ToolResult(call_id, str_field(state, "output") or "", True, STDOUT, at)]
        case "error":
            return [call, ToolResult(call_id, str_field(state, "error") or "", False, STDOUT, at)]
    return [call]


def _error_event(record: JsonObject, line: Line) -> Event:
    error = object_field(record, "error")
    if error is None:
        return unknown(record, line, STDOUT)
    data = object_field(error, "data")
    message = str_field(data, "message") or str_field(error, "name") or ""
    # providers mark errors worth retrying; opencode retries those itself
    transient = data is not None and data.get("isRetryable") is True
    return EngineError(message, code_field(data, "statusCode"), transient, STDOUT, line.offset)
