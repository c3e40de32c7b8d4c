"""codex ``exec --json``: NDJSON on stdout, in the ``items`` envelope or the older ``msg`` envelope.

items: ``{"type":"thread.started","thread_id":…}``, ``turn.started``,
``item.started`` / ``item.completed`` with an ``item`` (``agent_message``,
``reasoning``, ``command_execution``, ``mcp_tool_call``, ``error``, …),
``turn.completed``, ``turn.failed``, and top-level transient ``error`` lines.

legacy: ``{"id":"<turn index>","msg":{"type":…}}`` with ``session_configured``,
``agent_message``, ``exec_command_begin`` / ``_end``, ``mcp_tool_call_begin`` /
``_end``, ``stream_error``, ``error``, ``task_complete``. A failed turn ends
with ``error`` and no ``task_complete``; since an ``error`` may also be one
the turn survives, it only ends the turn when nothing else of its turn follows.

stderr carries no events: every stderr line is a ``RawLine``. On stdout, each run
of lines that are not JSON objects is one ``RawLine``, verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

from turngate.engines.readers._stream import (
    STDERR,
    STDOUT,
    JsonObject,
    Line,
    clean_text,
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
    JsonValue,
    RawLine,
    Reasoning,
    SessionId,
    ToolCall,
    ToolResult,
    Transcript,
    TurnEnd,
)

# The name given to shell commands: codex items carry the command but no tool name.
SHELL_TOOL = "command_execution"

# Legacy messages that show the turn went on after an ``error`` (so that error did not end it).
_TURN_GOES_ON = frozenset(
    {
        "agent_message",
        "agent_reasoning",
        "exec_command_begin",
        "exec_command_end",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "task_complete",
    }
)


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    events: list[Event] = []
    legacy_failure = _LegacyFailure(events)
    for line in event_lines(stdout, STDOUT, events):
        record = parse_object(line)
        legacy_message = _legacy_message(record)
        if record is None:
            events.append(RawLine(line.text, STDOUT, line.offset))
        elif legacy_message is not None:
            legacy_failure.before(record.get("id"), legacy_message)
            events.extend(_legacy_events(legacy_message, line))
            legacy_failure.after(record.get("id"), legacy_message, line)
        else:
            legacy_failure.close()
            events.extend(_items_events(record, line))
    legacy_failure.close()
    events.extend(raw_lines(stderr, STDERR))
    return Transcript("codex", tuple(events))


# --- items envelope ---------------------------------------------------------------------------


def _items_events(record: JsonObject, line: Line) -> list[Event]:
    at = line.offset
    match str_field(record, "type"):
        case "thread.started":
            thread_id = str_field(record, "thread_id")
            return [SessionId(thread_id, STDOUT, at)] if thread_id is not None else [_unknown(record, line)]
        case "turn.started":
            return []
        case "turn.completed":
            return [TurnEnd(True, STDOUT, at)]
        case "turn.failed":
            reason = str_field(object_field(record, "error"), "message") or ""
            return [EngineError(reason, None, False, STDOUT, at), TurnEnd(False, STDOUT, at)]
        case "error":
            problem = str_field(record, "message")
            if problem is None:
                return [_unknown(record, line)]
            return [EngineError(problem, None, True, STDOUT, at)]
        case "item.started" | "item.updated" | "item.completed" as phase:
            item = object_field(record, "item")
            event = _item_event(phase, item, line) if item is not None else None
            return [event] if event is not None else [_unknown(record, line, phase, item)]
        case _:
            return [_unknown(record, line)]


def _item_event(phase: str, item: JsonObject, line: Line) -> Event | None:
    """The event an item stands for, or None when it stands for none this reader knows."""
    at = line.offset
    item_id = str_field(item, "id")
    match phase, str_field(item, "type"):
        case "item.completed", "agent_message":
            text = str_field(item, "text")
            return AssistantText(text, STDOUT, at) if text is not None else None
        case "item.completed", "reasoning":
            text = str_field(item, "text")
            return Reasoning(text, STDOUT, at) if text is not None else None
        case "item.completed", "error":
            message = str_field(item, "message")
            return EngineError(message, None, False, STDOUT, at) if message is not None else None
        case "item.started", "command_execution" if item_id is not None:
            return ToolCall(SHELL_TOOL, item.get("command"), item_id, STDOUT, at)
        case "item.completed", "command_execution" if item_id is not None:
            output = str_field(item, "aggregated_output") or ""
            return ToolResult(item_id, output, str_field(item, "status") == "completed", STDOUT, at)
        case "item.started", "mcp_tool_call" if item_id is not None:
            name = str_field(item, "tool")
            return ToolCall(name, item.get("arguments"), item_id, STDOUT, at) if name is not None else None
        case "item.completed", "mcp_tool_call" if item_id is not None:
            ok = str_field(item, "status") == "completed"
            output = _mcp_output(item.get("result")) if ok else _error_text(item.get("error"))
            return ToolResult(item_id, output, ok, STDOUT, at)
    return None


def _unknown(
    record: JsonObject, line: Line, phase: str | None = None, item: JsonObject | None = None
) -> Event:
    # An item event is known by its phase and item type together, e.g. "item.completed:file_change".
    item_type = str_field(item, "type")
    if phase is None or item_type is None:
        return unknown(record, line, STDOUT, phase)
    return unknown(record, line, STDOUT, f"{phase}:{item_type}")


# --- legacy msg envelope ------------------------------------------------------------------------


@dataclass
class _LegacyFailure:
    """A legacy ``error`` waiting to learn whether it ended its turn.

    It did when no other message of the same turn (same envelope ``id``) follows
    it; its ``TurnEnd(False)`` then goes right after it in the event list.
    """

    events: list[Event]
    turn_id: JsonValue = None
    slot: int | None = None
    offset: int = 0

    def before(self, turn_id: JsonValue, message: JsonObject) -> None:
        if turn_id != self.turn_id:
            self.close()
        elif str_field(message, "type") in _TURN_GOES_ON:
            self.slot = None

    def after(self, turn_id: JsonValue, message: JsonObject, line: Line) -> None:
        if str_field(message, "type") == "error":
            self.turn_id, self.slot, self.offset = turn_id, len(self.events), line.offset

    def close(self) -> None:
        if self.slot is not None:
            self.events.insert(self.slot, TurnEnd(False, STDOUT, self.offset))
        self.turn_id, self.slot = None, None


def _legacy_message(record: JsonObject | None) -> JsonObject | None:
    """The ``msg`` of a legacy line ``{"id":…,"msg":{…}}`` (an items line has a top-level ``type``)."""
    if record is None or "type" in record:
        return None
    return object_field(record, "msg")


def _legacy_events(message: JsonObject, line: Line) -> list[Event]:
    if str_field(message, "type") == "task_started":
        return []
    event = _legacy_event(message, line)
    return [event if event is not None else unknown(message, line, STDOUT)]


def _legacy_event(message: JsonObject, line: Line) -> Event | None:
    """The event a legacy message stands for, or None when it stands for none this reader knows."""
    at = line.offset
    call_id = str_field(message, "call_id")
    match str_field(message, "type"):
        case "session_configured":
            session_id = str_field(message, "session_id")
            return SessionId(session_id, STDOUT, at) if session_id is not None else None
        case "agent_message":
            text = str_field(message, "message")
            return AssistantText(text, STDOUT, at) if text is not None else None
        case "agent_reasoning":
            text = str_field(message, "text")
            return Reasoning(text, STDOUT, at) if text is not None else None
        case "exec_command_begin" if call_id is not None:
            return ToolCall(SHELL_TOOL, message.get("command"), call_id, STDOUT, at)
        case "exec_command_end" if call_id is not None:
            output = str_field(message, "aggregated_output") or str_field(message, "stdout") or ""
            exit_code = message.get("exit_code")
            succeeded = isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code == 0
            return ToolResult(call_id, output, succeeded, STDOUT, at)
        case "mcp_tool_call_begin" if call_id is not None:
            invocation = object_field(message, "invocation")
            name = str_field(invocation, "tool")
            if invocation is None or name is None:
                return None
            return ToolCall(name, invocation.get("arguments"), call_id, STDOUT, at)
        case "mcp_tool_call_end" if call_id is not None:
            output, ok = _legacy_mcp_result(message.get("result"))
            return ToolResult(call_id, output, ok, STDOUT, at)
        case "stream_error" | "error" as kind:
            text = str_field(message, "message")
            return EngineError(text, None, kind == "stream_error", STDOUT, at) if text is not None else None
        case "task_complete":
            return TurnEnd(True, STDOUT, at)
    return None


def _legacy_mcp_result(result: JsonValue) -> tuple[str, bool]:
    """Output and success of a legacy MCP result.

    ``{"content":…}`` as documented, or Rust's ``{"Ok":…}`` / ``{"Err":…}`` as older builds serialise it.
    """
    if not isinstance(result, dict):
        return "", False
    if "Err" in result:
        return _error_text(result["Err"]), False
    success = result.get("Ok", result)
    failed = isinstance(success, dict) and (success.get("isError") is True or success.get("is_error") is True)
    return _mcp_output(success), not failed


# --- shared -------------------------------------------------------------------------------------


def _mcp_output(result: JsonValue) -> str:
    """The text parts of an MCP ``{"content":[{"type":"text","text":…}]}`` result, one per line."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return ""
    texts = (str_field(part, "text") for part in content if isinstance(part, dict))
    return "\n".join(text for text in texts if text is not None)


def _error_text(error: JsonValue) -> str:
    """An error's message: ``{"message": …}`` or a bare string."""
    if isinstance(error, dict):
        return str_field(error, "message") or ""
    return clean_text(error) if isinstance(error, str) else ""
