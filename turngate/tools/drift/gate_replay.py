"""Replay: a capture through the reference readers, detector and gate, and what each of them saw.

The same functions as the live gate (``turn.assess``), so a replay shows what
the reference would decide on those bytes; the marker hits in echoes (tool
output, reasoning, the echoed prompt, noise) are listed too, because those
are where a drifted format most often fools a gate.

A capture is a misbehaving engine's bytes, and a replay prints them to a
terminal: every control character (C0, DEL, C1: escape sequences start with
one), every bidirectional override and every lone surrogate is shown escaped
(`printable`, `printable_json`), never written raw, so printing can neither
fail to encode nor drive the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from turngate.engines.readers import (
    AssistantText,
    EngineError,
    Event,
    RawLine,
    Reasoning,
    SessionId,
    ToolCall,
    ToolResult,
    TurnEnd,
    UnknownEvent,
    UserEcho,
    clean_text,
)
from turngate.implementations.reference.marker import find_markers
from turngate.implementations.reference.outcome import ProcessEnd
from turngate.implementations.reference.turn import TurnAssessment, assess
from turngate.tools.drift.capture import NOT_RECORDED, Capture


@dataclass(frozen=True, slots=True)
class MarkerSeen:
    """One marker occurrence: in which event (stream, byte offset of its line) and where in its text."""

    where: str  # assistant | tool_call | tool_result | reasoning | user_echo | unknown | raw
    stream: str
    offset: int
    form: str
    start: int
    end: int
    evidence: bool


@dataclass(frozen=True, slots=True)
class Replay:
    capture: Capture
    assessment: TurnAssessment
    markers: tuple[MarkerSeen, ...]

    @property
    def decision(self) -> Mapping[str, Any]:
        """The decision as plain data: what drift compares and snapshots keep."""
        decision = self.assessment.decision
        return {
            "state": decision.state,
            "reason_code": decision.reason_code,
            "rule": decision.rule,
            "error_code": decision.error_code,
            "warnings": list(self.assessment.warnings),
        }


def replay(capture: Capture) -> Replay:
    end = ProcessEnd(capture.exit_code, capture.signal)
    assessment = assess(capture.turn(), capture.stdout, capture.stderr, end)
    markers = tuple(seen for event in assessment.transcript.events for seen in _markers(event))
    return Replay(capture, assessment, markers)


def _text_of(event: Event) -> tuple[str, str] | None:
    match event:
        case AssistantText(text=text):
            return "assistant", text
        case ToolCall(input=value):
            return "tool_call", json.dumps(value, ensure_ascii=False)
        case ToolResult(output=text):
            return "tool_result", text
        case Reasoning(text=text):
            return "reasoning", text
        case UserEcho(text=text):
            return "user_echo", text
        case UnknownEvent(raw=text):
            return "unknown", text
        case RawLine(text=text):
            return "raw", text
        case EngineError(message=text):
            return "error", text
    return None


def _markers(event: Event) -> list[MarkerSeen]:
    found = _text_of(event)
    if found is None:
        return []
    where, text = found
    return [
        MarkerSeen(where, event.stream, event.offset, hit.form, hit.start, hit.end, where == "assistant")
        for hit in find_markers(text)
    ]


def as_json(result: Replay) -> dict[str, Any]:
    """Everything the replay saw, as JSON-ready data."""
    assessment = result.assessment
    events = []
    for event in assessment.transcript.events:
        kind = type(event).__name__
        item: dict[str, Any] = {"event": kind, "stream": event.stream, "offset": event.offset}
        match event:
            case AssistantText(text=text) | Reasoning(text=text) | UserEcho(text=text) | RawLine(text=text):
                item["text"] = text
            case ToolCall(name=name, input=value, call_id=call_id):
                item.update(name=name, input=value, call_id=call_id)
            case ToolResult(call_id=call_id, output=tool_output, ok=ok):
                item.update(call_id=call_id, output=tool_output, ok=ok)
            case SessionId(value=value):
                item["value"] = value
            case TurnEnd(ok=ok):
                item["ok"] = ok
            case EngineError(message=message, code=code, transient=transient):
                item.update(message=message, code=code, transient=transient)
            case UnknownEvent(type=type_, raw=raw):
                item.update(type=type_, raw=raw)
        events.append(item)
    output = assessment.output
    plain: dict[str, Any] = _plain(
        {
            "capture": {
                "name": result.capture.name,
                "engine": result.capture.engine,
                "mode": result.capture.mode,
                "exit_code": result.capture.exit_code,
                "signal": result.capture.signal,
                "stdout_bytes": len(result.capture.stdout),
                "stderr_bytes": len(result.capture.stderr),
                # argv, version, duration (and why it was killed) as recorded; None: not recorded
                "recorded": None if result.capture.recorded is None else result.capture.recorded.as_yaml(),
            },
            "events": events,
            "assistant_messages": list(assessment.transcript.assistant_messages()),
            "session_id": assessment.transcript.session_id(),
            "markers": [
                {
                    "where": seen.where,
                    "stream": seen.stream,
                    "offset": seen.offset,
                    "form": seen.form,
                    "span": [seen.start, seen.end],
                    "evidence": seen.evidence,
                }
                for seen in result.markers
            ],
            "hint": None
            if assessment.hint is None
            else {"form": assessment.hint.form, "problems": list(assessment.hint.problems)},
            "output": {
                "valid": output.valid,
                "problem": output.problem,
                "detail": output.detail,
                "data": output.data,
                "warnings": list(output.warnings),
            },
            "process": {
                "ok": assessment.process.ok,
                "error_code": assessment.process.error_code,
                "message": assessment.process.message,
            },
            "decision": dict(result.decision),
        }
    )
    return plain


def _plain(value: Any) -> Any:
    """Mappings (read-only views included) and tuples as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return clean_text(value)  # a tool's input may hold a lone surrogate from a JSON escape
    return value


# Characters never printed raw: C0 controls but newline and tab, DEL and C1 controls (an
# escape sequence starts with ESC or CSI), the bidirectional embeddings, overrides and
# isolates (they reorder what a terminal shows), and lone surrogates (they cannot be encoded).
_UNPRINTABLE: Final = (
    *(chr(code) for code in range(0x20) if chr(code) not in "\n\t"),
    *(chr(code) for code in range(0x7F, 0xA0)),
    *(chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)),
    *(chr(code) for code in range(0xD800, 0xE000)),
)
_ESCAPED: Final = {
    ord(char): f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}" for char in _UNPRINTABLE
}
_ESCAPED_IN_LINE: Final = {**_ESCAPED, ord("\n"): "\\n", ord("\t"): "\\t"}
_JSON_ESCAPED: Final = {ord(char): f"\\u{ord(char):04x}" for char in _UNPRINTABLE if ord(char) >= 0x7F}


def printable(text: str) -> str:
    """``text`` for one line of a terminal: newlines, tabs and every unprintable character escaped."""
    return text.translate(_ESCAPED_IN_LINE)


def printable_json(value: Any) -> str:
    """``value`` as indented JSON that is safe to print: JSON escapes the C0 controls; DEL, C1,
    bidirectional controls and lone surrogates are escaped here (``\\u…``, still valid JSON)."""
    return json.dumps(value, ensure_ascii=False, indent=2).translate(_JSON_ESCAPED)


def render(result: Replay) -> str:
    """The replay for a person: what was read, which markers counted, the output check, the decision."""
    data = as_json(result)
    capture = data["capture"]
    lines = [
        f"capture {capture['name']}: {capture['engine']}, {capture['mode']} mode,"
        f" stdout {capture['stdout_bytes']} B, stderr {capture['stderr_bytes']} B,"
        f" exit {capture['exit_code'] if capture['signal'] is None else 'signal ' + str(capture['signal'])}",
        f"recorded: {_recorded(result.capture)}",
        "",
        "events:",
    ]
    for event in data["events"]:
        detail = {key: value for key, value in event.items() if key not in ("event", "stream", "offset")}
        shown = ", ".join(f"{key}={_short(value)}" for key, value in detail.items())
        lines.append(f"  {event['stream']}@{event['offset']:<7} {event['event']:<14} {shown}")
    lines += ["", f"assistant messages: {len(data['assistant_messages'])}"]
    lines += [f"  [{index}] {_short(text, 160)}" for index, text in enumerate(data["assistant_messages"])]
    lines += ["", "done marker:"]
    if not data["markers"]:
        lines.append("  none anywhere")
    for seen in data["markers"]:
        role = "EVIDENCE" if seen["evidence"] else "echo, ignored"
        lines.append(
            f"  {role:<13} {seen['form']:<7} in {seen['where']} at {seen['stream']}@{seen['offset']}"
            f" chars {seen['span'][0]}-{seen['span'][1]}"
        )
    hint = data["hint"]
    lines += ["", f"ask_user hint: {'none' if hint is None else hint['form']}"]
    if hint and hint["problems"]:
        lines.append(f"  malformed (enrichment dropped): {'; '.join(hint['problems'])}")
    output = data["output"]
    lines += ["", f"output check: {'valid' if output['valid'] else 'invalid: ' + str(output['problem'])}"]
    if output["detail"]:
        lines.append(f"  {output['detail']}")
    process = data["process"]
    lines += ["", f"process: {'ok' if process['ok'] else process['error_code'] + ': ' + process['message']}"]
    decision = data["decision"]
    lines += [
        "",
        f"decision: {decision['state']} ({decision['reason_code']}, rule {decision['rule']})"
        + (f", error {decision['error_code']}" if decision["error_code"] else "")
        + (f", warnings {', '.join(decision['warnings'])}" if decision["warnings"] else ""),
    ]
    return "\n".join(printable(line) for line in lines)


def _recorded(capture: Capture) -> str:
    if capture.recorded is None:
        return f"{NOT_RECORDED} (argv, version, duration: a capture from before they were kept)"
    return capture.recorded.describe()


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = printable(text[: limit * 8])  # escaped before cutting, so an escape is never cut in two
    return text if len(text) <= limit else text[: limit - 1] + "…"
