"""opencode reader: NDJSON events, written by hand from the two documents."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, json_records, starts, stream
from turngate.engines import readers
from turngate.engines.readers import opencode
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    RawLine,
    Reasoning,
    SessionId,
    ToolCall,
    ToolResult,
    TurnEnd,
    UnknownEvent,
)

# ENGINE_FORMATS.md, with its "…" placeholders filled in (they are not JSON).
DOCUMENTED = [
    '{"type":"step_start","timestamp":1761234567000,"sessionID":"ses_X","part":{"type":"step-start"}}',
    '{"type":"tool_use","timestamp":1761234567001,"sessionID":"ses_X","part":{"id":"prt_1","type":"tool",'
    '"tool":"bash","state":{"status":"completed","input":{"command":"cat SKILL.md"},'
    '"output":"end with \\"__SKILL_DONE__\\": true\\n"}}}',
    '{"type":"text","timestamp":1761234567002,"sessionID":"ses_X","part":{"type":"text",'
    '"text":"{\\"value\\":7,\\"__SKILL_DONE__\\":true}"}}',
    '{"type":"step_finish","timestamp":1761234567003,"sessionID":"ses_X","part":{"type":"step-finish",'
    '"reason":"stop","tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}}',
]


def test_the_documented_turn() -> None:
    transcript = opencode.read(stream(*DOCUMENTED))
    at = starts(*DOCUMENTED)
    assert transcript.engine == "opencode"
    assert transcript.events == (
        SessionId("ses_X", OUT, 0),
        ToolCall("bash", {"command": "cat SKILL.md"}, "prt_1", OUT, at[1]),
        # the marker in the tool output is an echo: it stays in the result
        ToolResult("prt_1", 'end with "__SKILL_DONE__": true\n', True, OUT, at[1]),
        # the escaped marker in the reply decodes to plain text
        AssistantText('{"value":7,"__SKILL_DONE__":true}', OUT, at[2]),
        TurnEnd(True, OUT, at[3]),
    )
    assert transcript.assistant_messages() == ('{"value":7,"__SKILL_DONE__":true}',)


def test_text_at_the_top_level_and_reasoning() -> None:
    lines = [
        '{"type":"step_start","timestamp":1,"sessionID":"ses_a","part":{"id":"prt_0","type":"step-start"}}',
        '{"type":"reasoning","timestamp":2,"sessionID":"ses_a","part":{"id":"prt_1","type":"reasoning",'
        '"text":"Maybe \\"__SKILL_DONE__\\": true?"}}',
        '{"type":"text","timestamp":3,"sessionID":"ses_a","text":"Which style?"}',
    ]
    at = starts(*lines)
    assert opencode.read(stream(*lines)).events == (
        SessionId("ses_a", OUT, 0),
        Reasoning('Maybe "__SKILL_DONE__": true?', OUT, at[1]),
        AssistantText("Which style?", OUT, at[2]),
    )


def test_a_failed_tool_and_a_tool_still_running() -> None:
    lines = [
        '{"type":"tool_use","timestamp":1,"sessionID":"ses_b","part":{"id":"prt_1","type":"tool","tool":"read",'
        '"state":{"status":"error","input":{"path":"x"},"error":"ENOENT: no such file"}}}',
        '{"type":"tool_use","timestamp":2,"sessionID":"ses_b","part":{"id":"prt_2","callID":"call_9",'
        '"type":"tool","tool":"bash","state":{"status":"running","input":{"command":"sleep 9"}}}}',
    ]
    at = starts(*lines)
    assert opencode.read(stream(*lines)).events == (
        SessionId("ses_b", OUT, 0),
        ToolCall("read", {"path": "x"}, "prt_1", OUT, 0),
        ToolResult("prt_1", "ENOENT: no such file", False, OUT, 0),
        ToolCall("bash", {"command": "sleep 9"}, "call_9", OUT, at[1]),
    )


def test_a_failed_turn_is_an_error_without_step_finish() -> None:
    lines = [
        '{"type":"step_start","timestamp":1,"sessionID":"ses_c","part":{"id":"prt_0","type":"step-start"}}',
        '{"type":"error","timestamp":2,"sessionID":"ses_c","error":{"name":"APIError",'
        '"data":{"message":"Rate limit exceeded","statusCode":429,"providerID":"turngate",'
        '"isRetryable":true}}}',
        '{"type":"error","timestamp":3,"sessionID":"ses_c","error":{"name":"APIError",'
        '"data":{"message":"Quota exhausted","providerID":"turngate"}}}',
        '{"type":"error","timestamp":4,"sessionID":"ses_c","error":{"name":"ProviderAuthError"}}',
    ]
    at = starts(*lines)
    transcript = opencode.read(stream(*lines))
    assert transcript.events == (
        SessionId("ses_c", OUT, 0),
        EngineError("Rate limit exceeded", 429, True, OUT, at[1]),
        EngineError("Quota exhausted", None, False, OUT, at[2]),
        EngineError("ProviderAuthError", None, False, OUT, at[3]),
    )
    assert transcript.turn_end() is None


def test_a_stuck_loop_of_unknown_step_finishes() -> None:
    finish = (
        '{{"type":"step_finish","timestamp":{},"sessionID":"ses_d","part":{{"id":"prt_{}","type":"step-finish",'
        '"reason":"unknown","tokens":{{"input":0,"output":0}},"cost":0}}}}'
    )
    lines = [finish.format(n, n) for n in range(3)]
    at = starts(*lines)
    transcript = opencode.read(stream(*lines))
    assert transcript.events == (
        SessionId("ses_d", OUT, 0),
        TurnEnd(False, OUT, 0),
        TurnEnd(False, OUT, at[1]),
        TurnEnd(False, OUT, at[2]),
    )


def test_odd_lines_are_kept() -> None:
    lines = [
        "opencode: using model turngate/fake",
        '{"type":"text","timestamp":1,"sessionID":7,"part":{"type":"text","text":42}}',
        '{"type":"tool_use","sessionID":"ses_e","part":{"tool":"bash"}}',
        '{"type":"error","sessionID":"ses_e","error":"plain string"}',
        '{"type":"file","sessionID":"ses_e","part":{"type":"file"}}',
        '["not", "an", "object"]',
        '{"type":"text","timestamp":2,"sessionID":"ses_e","part":{"type":"text","text":"cut',
    ]
    at = starts(*lines)
    data = stream(*lines)[:-1]  # the last line lost its newline
    assert opencode.read(data, b"INFO  2025-11-22 server listening\r\n").events == (
        RawLine(lines[0], OUT, 0),
        UnknownEvent("text", lines[1], OUT, at[1]),
        SessionId("ses_e", OUT, at[2]),
        UnknownEvent("tool_use", lines[2], OUT, at[2]),
        UnknownEvent("error", lines[3], OUT, at[3]),
        UnknownEvent("file", lines[4], OUT, at[4]),
        RawLine(lines[5], OUT, at[5]),
        RawLine(lines[6], OUT, at[6]),
        RawLine("INFO  2025-11-22 server listening", ERR, 0),
    )


def test_the_package_dispatches_to_opencode() -> None:
    assert readers.read("opencode", stream(*DOCUMENTED)) == opencode.read(stream(*DOCUMENTED))


# --- properties ---------------------------------------------------------------------------------

KEYS = ["type", "sessionID", "part", "text", "tool", "state", "status", "input", "output", "error", "data"]
TYPES = ["step_start", "text", "reasoning", "tool_use", "error", "step_finish", "completed", "stop"]
json_lines = json_records(KEYS, TYPES).map(lambda r: json.dumps(r).encode())


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(opencode.read(stdout, stderr), stdout, stderr)


@given(st.lists(json_lines | st.binary(max_size=20), max_size=8))
def test_arbitrary_json_lines_never_raise(lines: list[bytes]) -> None:
    stdout = b"\n".join(lines)
    assert_well_formed(opencode.read(stdout), stdout, b"")


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"])), max_size=4), st.booleans())
def test_every_text_round_trips(texts: list[str], top_level: bool) -> None:
    lines = []
    for text in texts:
        body = {"text": text} if top_level else {"part": {"id": "prt_0", "type": "text", "text": text}}
        lines.append(json.dumps({"type": "text", "timestamp": 1, "sessionID": "ses_f", **body}))
    assert opencode.read(stream(*lines)).assistant_messages() == tuple(texts)
