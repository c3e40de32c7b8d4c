"""The SDK message stream (``stream-json``) of claude, qwen and codebuddy, read into events.

Written from docs/fake-engines.md ("claude", "qwen", "codebuddy"), not from the fakes. One
JSON object per line on stdout, told apart by ``type`` wherever that key stands (claude
prints it late in its ``result``):

- ``system``: ``init`` (the session), ``api_retry`` (claude) and ``retry`` (qwen), retries
  the engine makes by itself; other subtypes (``thinking_tokens``, ``status``,
  ``permission_denied``) tell nothing about the turn;
- ``assistant``: ``message.content`` blocks: ``text`` (the reply), ``thinking``,
  ``tool_use``; the engine's own text for a failed request is an error, not a reply
  (claude flags it ``is_api_error_message``; qwen and codebuddy word it their way: each
  engine's module says how, ``FailureText``);
- ``user``: ``tool_result`` blocks (``content`` a string or text blocks), or a message the
  engine put in the conversation itself;
- ``result``: the end of the turn, failed when ``is_error`` is true (claude says
  ``subtype: "success"`` even then) or its ``subtype`` is not ``success``. Its ``result``
  repeats the turn's last reply text: it is a reply only when it is not that text
  (codebuddy may print a reply there alone), nor the engine's words for a failure (qwen
  echoes the last assistant message, whatever it was). ``structured_output`` (claude and codebuddy
  with ``--json-schema``) is the turn's reply, last; ``result.result`` is then no reply
  when it is that same object;
- ``error`` (codebuddy, for an unknown session): a failed end;
- ``stream_event``, ``file-history-snapshot``: nothing for the turn.

The session id is the first ``session_id`` announced. stderr carries no events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias

from turngate.engines.readers import _bounded_json
from turngate.engines.readers._stream import (
    STDERR,
    STDOUT,
    JsonObject,
    Line,
    clean_text,
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
    JsonValue,
    RawLine,
    Reasoning,
    SessionId,
    ToolCall,
    ToolResult,
    Transcript,
    TurnEnd,
    UserEcho,
)

# Whether an assistant text is the engine's own report of a failed request: (text, the event, the
# session id announced so far).
FailureText: TypeAlias = Callable[[str, JsonObject, str | None], bool]

# Subtypes of `system` that say nothing about the turn's content or end.
_QUIET_SYSTEM = frozenset(
    {"thinking_tokens", "status", "permission_denied", "compact_boundary", "hook_response"}
)
_QUIET_TYPES = frozenset({"stream_event", "file-history-snapshot"})


def read(engine: str, stdout: bytes, stderr: bytes, failure_text: FailureText) -> Transcript:
    events: list[Event] = []
    session: str | None = None
    turn_texts: list[str] = []  # the reply texts since the last end of turn (a resident process)
    for line in event_lines(stdout, STDOUT, events):
        record = parse_object(line)
        if record is None:
            events.append(RawLine(line.text, STDOUT, line.offset))
            continue
        session_id = str_field(record, "session_id")
        if session_id is not None and session is None:
            events.append(SessionId(session_id, STDOUT, line.offset))
            session = session_id
        found = _record_events(record, line, turn_texts, _failure_check(failure_text, record, session))
        turn_texts.extend(event.text for event in found if isinstance(event, AssistantText))
        if any(isinstance(event, TurnEnd) for event in found):
            turn_texts.clear()
        events.extend(found)
    events.extend(raw_lines(stderr, STDERR))
    return Transcript(engine, tuple(events))


def _failure_check(
    failure_text: FailureText, record: JsonObject, session: str | None
) -> Callable[[str], bool]:
    """``failure_text`` for the texts of one event, in the session announced so far."""
    return lambda text: failure_text(text, record, session)


def _record_events(
    record: JsonObject, line: Line, turn_texts: list[str], is_failure: Callable[[str], bool]
) -> list[Event]:
    match str_field(record, "type"):
        case "system":
            return _system_events(record, line)
        case "assistant":
            return _assistant_events(record, line, is_failure)
        case "user":
            return _user_events(record, line)
        case "result":
            return _result_events(record, line, turn_texts, is_failure)
        case "error":
            message = str_field(record, "error") or str_field(object_field(record, "error"), "message") or ""
            return [
                EngineError(message, None, False, STDOUT, line.offset),
                TurnEnd(False, STDOUT, line.offset),
            ]
        case kind if kind in _QUIET_TYPES:
            return []
    return [unknown(record, line, STDOUT)]


def _system_events(record: JsonObject, line: Line) -> list[Event]:
    at = line.offset
    match str_field(record, "subtype"):
        case "init" if str_field(record, "session_id") is not None:
            return []  # its session id is already an event
        case "api_retry":  # claude retries the request itself
            reason = str_field(record, "error") or "retry"
            return [EngineError(reason, code_field(record, "error_status"), True, STDOUT, at)]
        case "retry":  # qwen retries the request itself
            data = object_field(record, "data")
            attempt, limit = code_field(data, "attempt"), code_field(data, "maxRetries")
            reason = f"retry {attempt}/{limit}" if attempt is not None else "retry"
            return [EngineError(reason, None, True, STDOUT, at)]
        case subtype if subtype in _QUIET_SYSTEM:
            return []
    return [unknown(record, line, STDOUT, f"system:{str_field(record, 'subtype') or ''}")]


def _assistant_events(record: JsonObject, line: Line, is_failure: Callable[[str], bool]) -> list[Event]:
    at = line.offset
    message = object_field(record, "message")
    content = message.get("content") if message is not None else None
    if not isinstance(content, list):
        return [unknown(record, line, STDOUT)]
    events: list[Event] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        match str_field(block, "type"):
            case "text":
                text = str_field(block, "text")
                if text is None:
                    continue
                if is_failure(text):  # the engine's own words for a failed request, never a reply
                    status = code_field(record, "api_error_status")
                    events.append(EngineError(text, status, False, STDOUT, at))
                else:
                    events.append(AssistantText(text, STDOUT, at))
            case "thinking":
                thought = str_field(block, "thinking")
                if thought is not None:
                    events.append(Reasoning(thought, STDOUT, at))
            case "tool_use":
                name, call_id = str_field(block, "name"), str_field(block, "id")
                if name is not None and call_id is not None:
                    events.append(ToolCall(name, block.get("input"), call_id, STDOUT, at))
    return events or [unknown(record, line, STDOUT)]


def _user_events(record: JsonObject, line: Line) -> list[Event]:
    at = line.offset
    message = object_field(record, "message")
    content = message.get("content") if message is not None else None
    if isinstance(content, str):  # a message the engine itself put in the conversation
        return [UserEcho(clean_text(content), STDOUT, at)]
    if not isinstance(content, list):
        return [unknown(record, line, STDOUT)]
    events: list[Event] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if str_field(block, "type") == "tool_result":
            call_id = str_field(block, "tool_use_id") or ""
            raw = object_field(object_field(block, "_meta"), "rawResponse")
            failed = block.get("is_error") is True or (raw is not None and raw.get("is_error") is True)
            events.append(ToolResult(call_id, _text_of(block.get("content")), not failed, STDOUT, at))
        elif str_field(block, "type") == "text":
            events.append(UserEcho(str_field(block, "text") or "", STDOUT, at))
    return events or [unknown(record, line, STDOUT)]


def _result_events(
    record: JsonObject, line: Line, turn_texts: list[str], is_failure: Callable[[str], bool]
) -> list[Event]:
    at = line.offset
    failed = record.get("is_error") is True or str_field(record, "subtype") != "success"
    if failed:
        return [EngineError(_failure_of(record), None, False, STDOUT, at), TurnEnd(False, STDOUT, at)]
    events: list[Event] = []
    structured = record.get("structured_output")
    echo = str_field(record, "result")
    repeated = (turn_texts and echo == turn_texts[-1]) or _same_json(echo or "", structured)
    if echo and not repeated and not is_failure(echo):
        events.append(AssistantText(echo, STDOUT, at))  # a reply printed nowhere else
    if isinstance(structured, dict):
        events.append(AssistantText(clean_text(json.dumps(structured, ensure_ascii=False)), STDOUT, at))
    return [*events, TurnEnd(True, STDOUT, at)]


def _failure_of(record: JsonObject) -> str:
    """What a failed result says went wrong: its text (claude), its error (qwen), its errors
    (codebuddy, claude for an unknown session)."""
    errors = record.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], str):
        return clean_text(errors[0])
    return str_field(object_field(record, "error"), "message") or str_field(record, "result") or ""


def _same_json(text: str, value: JsonValue) -> bool:
    """Whether ``text`` is the JSON of ``value`` (claude's result.result of a structured answer)."""
    if not isinstance(value, dict):
        return False
    try:
        return bool(_bounded_json.loads(text) == value)
    except ValueError:
        return False


def _text_of(content: JsonValue) -> str:
    """A tool result's content: a string, or text blocks joined by newlines."""
    if isinstance(content, str):
        return clean_text(content)
    if not isinstance(content, list):
        return ""
    texts = (str_field(block, "text") for block in content if isinstance(block, dict))
    return "\n".join(text for text in texts if text is not None)
