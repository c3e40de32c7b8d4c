"""gemini: one JSON document (``json``), NDJSON events (``stream-json``), or plain text (``text``).

json: ``{"session_id":…,"response":…,"stats":{…}}`` or, for a failed turn,
``{"session_id":…,"error":{"type":…,"message":…,"code":…}}``. The document may
be pretty-printed, preceded by noise lines (the last one possibly glued to it
without a newline), and on stdout or stderr.

stream-json: ``init``, ``message`` (``role`` user or assistant, assistant
content in deltas), ``tool_use``, ``tool_result``, ``error``, ``result``.

text: stdout is the reply.

The reply of a turn is one ``AssistantText`` in every mode: in stream-json, the
deltas of a turn are joined (a marker may be split across two deltas, and tool
events may come between them) and the message sits where the first delta was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from turngate.engines.readers._object_search import find_object
from turngate.engines.readers._stream import (
    STDERR,
    STDOUT,
    JsonObject,
    Line,
    clean_text,
    code_field,
    event_lines,
    parse_object,
    raw_lines,
    str_field,
    unknown,
)
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    Event,
    JsonValue,
    RawLine,
    SessionId,
    ToolCall,
    ToolResult,
    Transcript,
    TurnEnd,
    UnknownEvent,
    UserEcho,
)

MODES = ("json", "stream-json", "text")

STREAM_JSON_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})

# A JSON object is the json-mode document when it has one of these.
DOCUMENT_KEYS = ("session_id", "response", "error")


def read(stdout: bytes, stderr: bytes = b"", mode: str | None = None) -> Transcript:
    """Read one invocation; ``mode`` None detects it (stream-json, else a json document, else text)."""
    match mode:
        case None:
            events = _read_detected(stdout, stderr)
        case "stream-json":
            events = _read_stream_json(stdout, stderr)
        case "json":
            events = _read_json(stdout, stderr, _find_document(stdout, stderr))
        case "text":
            events = _read_text(stdout, stderr)
        case _:
            raise ValueError(f"gemini output mode must be one of {', '.join(MODES)} or None, not {mode!r}")
    return Transcript("gemini", tuple(events))


def _read_detected(stdout: bytes, stderr: bytes) -> list[Event]:
    if _looks_like_stream_json(stdout):
        return _read_stream_json(stdout, stderr)
    document = _find_document(stdout, stderr)
    if document is not None:
        return _read_json(stdout, stderr, document)
    return _read_text(stdout, stderr)


# A line that can hold an object with a "type" key: it starts with "{" and spells the key out, or
# writes something with an escape (a key may be escaped); the others are passed over in C.
_TYPED_LINE = re.compile(rb'^[ \t\f\v]*\{[^\n]*(?:"type"|\\u)[^\n]*', re.MULTILINE)


def _looks_like_stream_json(stdout: bytes) -> bool:
    """Whether the first JSON line that has a ``type`` is a stream-json event (noise lines may come first)."""
    for match in _TYPED_LINE.finditer(stdout):
        line = Line(match.start(), match.group().removesuffix(b"\r"))
        event_type = str_field(parse_object(line), "type")
        if event_type is not None:
            return event_type in STREAM_JSON_TYPES
    return False


# --- text ---------------------------------------------------------------------------------------


def _read_text(stdout: bytes, stderr: bytes) -> list[Event]:
    events: list[Event] = []
    if stdout:
        events.append(AssistantText(stdout.decode("utf-8", errors="replace"), STDOUT, 0))
    events.extend(raw_lines(stderr, STDERR))
    return events


# --- json ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Document:
    """The json-mode document: where it is (byte offsets, end exclusive) and what it says."""

    stream: str
    start: int
    end: int
    value: JsonObject
    source: str


def _find_document(stdout: bytes, stderr: bytes) -> _Document | None:
    return _find_document_in(stdout, STDOUT) or _find_document_in(stderr, STDERR)


def _find_document_in(data: bytes, stream: str) -> _Document | None:
    """The first decodable JSON object with a document key, wherever it starts (even mid-line)."""
    # surrogateescape keeps one character per undecodable byte, so byte offsets can be recovered exactly.
    text = data.decode("utf-8", errors="surrogateescape")
    found = find_object(text, lambda value: any(key in value for key in DOCUMENT_KEYS))
    if found is None:
        return None
    start = _byte_length(text[: found.start])
    source = text[found.start : found.end]
    return _Document(stream, start, start + _byte_length(source), found.value, source)


def _byte_length(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogateescape"))


def _read_json(stdout: bytes, stderr: bytes, document: _Document | None) -> list[Event]:
    return [*_json_stream_events(stdout, STDOUT, document), *_json_stream_events(stderr, STDERR, document)]


def _json_stream_events(data: bytes, stream: str, document: _Document | None) -> list[Event]:
    """Noise lines around the document (the part of a line before a glued document is a line of its own)."""
    if document is None or document.stream != stream:
        return raw_lines(data, stream)
    return [
        *raw_lines(data[: document.start], stream),
        *_document_events(document),
        *raw_lines(data[document.end :], stream, document.end),
    ]


def _document_events(document: _Document) -> list[Event]:
    value, stream, at = document.value, document.stream, document.start
    events: list[Event] = []
    session_id = str_field(value, "session_id")
    if session_id is not None:
        events.append(SessionId(session_id, stream, at))
    error = value.get("error")
    response = str_field(value, "response")
    if error is not None:
        message, code = _error_details(error)
        events += [EngineError(message, code, False, stream, at), TurnEnd(False, stream, at)]
    elif response is not None:
        events += [AssistantText(response, stream, at), TurnEnd(True, stream, at)]
    else:
        # Neither a reply nor an error: the document is incomplete or of a shape we do not know.
        events.append(UnknownEvent("document", clean_text(document.source), stream, at))
    return events


def _error_details(error: JsonValue) -> tuple[str, str | int | None]:
    """Message and code of ``{"type":…,"message":…,"code":…}``, or of a bare message string."""
    if isinstance(error, dict):
        return str_field(error, "message") or str_field(error, "type") or "", code_field(error, "code")
    return (clean_text(error) if isinstance(error, str) else ""), None


# --- stream-json --------------------------------------------------------------------------------


@dataclass
class _StreamJsonReader:
    """Reads stream-json lines, joining a turn's assistant deltas into one message."""

    events: list[Event] = field(default_factory=list)
    reply_slot: int | None = None  # index of the turn's AssistantText in ``events``
    reply_parts: list[str] = field(default_factory=list)

    def feed(self, line: Line) -> None:
        record = parse_object(line)
        if record is None:
            self.events.append(RawLine(line.text, STDOUT, line.offset))
            return
        match str_field(record, "type"):
            case "init" | "result" as boundary:
                self.close_reply()
                self.events.extend(_boundary_events(boundary, record, line))
            case "message":
                self.message(record, line)
            case _:
                self.events.append(_tool_or_error_event(record, line))

    def message(self, record: JsonObject, line: Line) -> None:
        content = str_field(record, "content")
        match str_field(record, "role"):
            case "assistant" if content is not None:
                self.add_delta(content, line.offset)
            case "user" if content is not None:
                self.close_reply()
                self.events.append(UserEcho(content, STDOUT, line.offset))
            case _:
                self.events.append(unknown(record, line, STDOUT))

    def add_delta(self, content: str, offset: int) -> None:
        if self.reply_slot is None:
            self.reply_slot = len(self.events)
            self.events.append(AssistantText("", STDOUT, offset))
        self.reply_parts.append(content)

    def close_reply(self) -> None:
        """Put the joined deltas in the turn's AssistantText, which sits where the first delta was."""
        if self.reply_slot is None:
            return
        first = self.events[self.reply_slot]
        self.events[self.reply_slot] = AssistantText("".join(self.reply_parts), STDOUT, first.offset)
        self.reply_slot, self.reply_parts = None, []


def _read_stream_json(stdout: bytes, stderr: bytes) -> list[Event]:
    reader = _StreamJsonReader()
    for line in event_lines(stdout, STDOUT, reader.events):
        reader.feed(line)
    reader.close_reply()
    return [*reader.events, *raw_lines(stderr, STDERR)]


def _boundary_events(boundary: str, record: JsonObject, line: Line) -> list[Event]:
    """``init`` opens a turn (with the session id), ``result`` closes it."""
    at = line.offset
    if boundary == "init":
        session_id = str_field(record, "session_id")
        if session_id is None:
            return [unknown(record, line, STDOUT)]
        return [SessionId(session_id, STDOUT, at)]
    ok = str_field(record, "status") == "success"
    error = record.get("error")
    if ok or error is None:
        return [TurnEnd(ok, STDOUT, at)]
    message, code = _error_details(error)
    return [EngineError(message, code, False, STDOUT, at), TurnEnd(False, STDOUT, at)]


def _tool_or_error_event(record: JsonObject, line: Line) -> Event:
    at = line.offset
    match str_field(record, "type"):
        case "tool_use":
            name, call_id = str_field(record, "tool_name"), str_field(record, "tool_id")
            if name is not None and call_id is not None:
                return ToolCall(name, record.get("parameters"), call_id, STDOUT, at)
        case "tool_result":
            call_id = str_field(record, "tool_id")
            if call_id is not None:
                ok = str_field(record, "status") == "success"
                output = str_field(record, "output")
                if output is None:  # a failed tool may carry ``error`` instead of ``output``
                    output = _error_details(record.get("error"))[0]
                return ToolResult(call_id, output, ok, STDOUT, at)
        case "error":
            message = str_field(record, "message")
            if message is not None:
                # a warning is something the CLI carries on after (a retry); an error is not
                transient = str_field(record, "severity") == "warning"
                return EngineError(message, code_field(record, "code"), transient, STDOUT, at)
    return unknown(record, line, STDOUT)
