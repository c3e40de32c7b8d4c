"""kilo ``run --format json`` (Kilo CLI, an opencode fork): opencode's NDJSON events, ``sessionID`` on each.

The events are opencode's (``turngate.engines.readers.opencode``): ``step_start``;
``text`` and ``reasoning`` (``part.text``); ``tool_use`` (a finished call and its
result: ``part.tool``, ``part.state.input``, ``part.state.output`` or
``part.state.error``); ``step_finish`` (``part.reason``: ``tool-calls`` ends a
step the turn goes on after, ``unknown`` one the model is asked again after,
any other reason ends the turn); ``error``. What kilo does otherwise
(docs/fake-engines.md, "kilo"):

- a model stream cut after a complete answer ends its step with reason
  ``other``, and kilo exits 0 (real 7.7.2 and 7.7.7,
  ``corpus/kilo/real-*-hazard-cut*``): kilo itself ended the turn and reports
  no failure, so ``other`` ends the turn as ``stop`` does. Spec 000 Decision 1
  and 001 weigh the marker unless the process was interrupted; it was not
  (Skill-Runner v0.7.9 reads any ``step_finish`` reason as the turn's end,
  too). opencode keeps ENGINE_FORMATS.md's ``stop`` (a cut opencode says
  ``unknown`` and asks again, forever);

- ``error`` is printed once kilo has given up on the run (its retries print
  nothing), so it ends the turn as a failure, whatever its ``isRetryable``
  says; its ``error`` is an object (``error.data.message``, ``statusCode``) or a
  plain string (``"run ended without an assistant message\\n the model returned
  no output"``);
- a ``text`` after an ``error`` is the part the failed request left unfinished
  (a stream cut mid-answer prints the error, then the text): the turn failed,
  and that text is not a reply, so it is kept as an unknown event.

Only the last step's text is the reply (as opencode): the reader gives every
``text`` in order, and the reply is the last of them.
"""

from __future__ import annotations

from typing import Final

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
    Transcript,
    TurnEnd,
)
from turngate.engines.readers.opencode import tool_events

# The type an unknown event gets for a text printed after the run failed.
TEXT_AFTER_ERROR = "text after error"


def read(stdout: bytes, stderr: bytes = b"") -> Transcript:
    events: list[Event] = []
    session_seen = False
    failed = False  # an error was printed: later text is what the failed request left behind
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
        read_events = _record_events(record, line, failed)
        failed = failed or any(isinstance(event, EngineError) for event in read_events)
        events.extend(read_events)
    events.extend(raw_lines(stderr, STDERR))
    return Transcript("kilo", tuple(events))


# The reasons after which kilo's turn goes on (a tool call's step, a model asked again); a missing
# reason is no end either. Any other reason ends the turn (the module's docstring).
_STEP_GOES_ON: Final = frozenset({"tool-calls", "unknown", None})


def _record_events(record: JsonObject, line: Line, failed: bool) -> list[Event]:
    at = line.offset
    part = object_field(record, "part")
    match str_field(record, "type"):
        case "step_start":
            return []
        case "text" | "reasoning" as kind:
            text = str_field(part, "text")
            if text is None:
                return [unknown(record, line, STDOUT)]
            if kind == "reasoning":
                return [Reasoning(text, STDOUT, at)]
            if failed:
                return [unknown(record, line, STDOUT, TEXT_AFTER_ERROR)]
            return [AssistantText(text, STDOUT, at)]
        case "tool_use":
            return tool_events(record, part, line)
        case "error":
            error = _error_event(record, line)
            return [error] if not isinstance(error, EngineError) else [error, TurnEnd(False, STDOUT, at)]
        case "step_finish":
            return [TurnEnd(str_field(part, "reason") not in _STEP_GOES_ON, STDOUT, at)]
    return [unknown(record, line, STDOUT)]


def _error_event(record: JsonObject, line: Line) -> Event:
    """The run's failure: never transient (kilo has stopped retrying when it prints one)."""
    message = str_field(record, "error")
    if message is not None:  # run's own endings: no assistant message, an auto-rejected permission
        return EngineError(message, None, False, STDOUT, line.offset)
    error = object_field(record, "error")
    if error is None:
        return unknown(record, line, STDOUT)
    data = object_field(error, "data")
    message = str_field(data, "message") or str_field(error, "name") or ""
    return EngineError(message, code_field(data, "statusCode"), False, STDOUT, line.offset)
