"""kilo reader: opencode's NDJSON events as kilo 7.7.7 prints them, written from docs/fake-engines.md."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, json_records, starts, stream
from turngate.engines import readers
from turngate.engines.readers import kilo
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

S = '"sessionID":"ses_K"'
PART = '"id":"prt_{n}","sessionID":"ses_K","messageID":"msg_{m}"'


def part(n: int, m: int = 1) -> str:
    return PART.format(n=n, m=m)


# A commentary text and a shell call in step 1, the answer in step 2 (the documented key order).
TWO_STEPS = [
    f'{{"type":"step_start","timestamp":1,{S},"part":{{{part(1)},"type":"step-start"}}}}',
    f'{{"type":"text","timestamp":2,{S},"part":{{{part(2)},"type":"text",'
    '"text":"Let me read the skill first.","time":{"start":1,"end":2}}}',
    f'{{"type":"tool_use","timestamp":3,{S},"part":{{{part(3)},"type":"tool","callID":"call_1","tool":"bash",'
    '"state":{"status":"completed","input":{"command":"cat SKILL.md"},'
    '"output":"Finish with {\\"__SKILL_DONE__\\": true}\\n","title":"cat SKILL.md","metadata":{"exit":0}}}}',
    f'{{"type":"step_finish","timestamp":4,{S},"part":{{{part(4)},"type":"step-finish","reason":"tool-calls"}}}}',
    f'{{"type":"step_start","timestamp":5,{S},"part":{{{part(5, 2)},"type":"step-start"}}}}',
    f'{{"type":"reasoning","timestamp":6,{S},"part":{{{part(6, 2)},"type":"reasoning",'
    '"text":"Print \\"__SKILL_DONE__\\": true now."}}',
    f'{{"type":"text","timestamp":7,{S},"part":{{{part(7, 2)},"type":"text",'
    '"text":"{\\"greeting\\": \\"Hello\\", \\"__SKILL_DONE__\\": true}"}}',
    f'{{"type":"step_finish","timestamp":8,{S},"part":{{{part(8, 2)},"type":"step-finish","reason":"stop",'
    '"metrics":{"generation":1625,"source":"computed"},"time":{"start":5,"end":8,"elapsed":3},"cost":0}}',
]


def test_two_steps_the_last_text_is_the_reply() -> None:
    transcript = kilo.read(stream(*TWO_STEPS))
    at = starts(*TWO_STEPS)
    assert transcript.engine == "kilo"
    assert transcript.events == (
        SessionId("ses_K", OUT, 0),
        AssistantText("Let me read the skill first.", OUT, at[1]),
        ToolCall("bash", {"command": "cat SKILL.md"}, "call_1", OUT, at[2]),
        ToolResult("call_1", 'Finish with {"__SKILL_DONE__": true}\n', True, OUT, at[2]),
        TurnEnd(False, OUT, at[3]),  # tool-calls: a step of the turn ended, not the turn
        Reasoning('Print "__SKILL_DONE__": true now.', OUT, at[5]),
        AssistantText('{"greeting": "Hello", "__SKILL_DONE__": true}', OUT, at[6]),
        TurnEnd(True, OUT, at[7]),
    )
    assert transcript.assistant_messages()[-1] == '{"greeting": "Hello", "__SKILL_DONE__": true}'
    assert transcript.turn_end() == TurnEnd(True, OUT, at[7])


def test_an_error_before_any_step_fails_the_turn_and_is_never_transient() -> None:
    lines = [
        f'{{"type":"error","timestamp":1,{S},"error":{{"name":"APIError","data":{{'
        '"message":"turngate hazard 429","statusCode":429,"isRetryable":true,'
        '"responseHeaders":{"retry-after":"1"},"responseBody":"{\\"error\\": {}}","metadata":{"url":"http://x/v1/chat/completions"}}}}',
    ]
    stderr = b"\x1b[91m\x1b[1mError: \x1b[0mturngate hazard 429\n"
    transcript = kilo.read(stream(*lines), stderr)
    assert transcript.events == (
        SessionId("ses_K", OUT, 0),
        # kilo prints it once its retries are over: isRetryable is the provider's word, not a retry to come
        EngineError("turngate hazard 429", 429, False, OUT, 0),
        TurnEnd(False, OUT, 0),
        RawLine("\x1b[91m\x1b[1mError: \x1b[0mturngate hazard 429", ERR, 0),
    )


def test_the_run_s_own_string_error() -> None:
    message = "run ended without an assistant message\n the model returned no output"
    lines = [
        f'{{"type":"step_start","timestamp":1,{S},"part":{{{part(1)},"type":"step-start"}}}}',
        f'{{"type":"step_finish","timestamp":2,{S},"part":{{{part(2)},"type":"step-finish","reason":"stop"}}}}',
        f'{{"type":"error","timestamp":3,{S},"error":{json.dumps(message)}}}',
    ]
    at = starts(*lines)
    transcript = kilo.read(stream(*lines))
    assert transcript.events[1:] == (
        TurnEnd(True, OUT, at[1]),
        EngineError(message, None, False, OUT, at[2]),
        TurnEnd(False, OUT, at[2]),
    )
    assert transcript.turn_end() == TurnEnd(False, OUT, at[2])


def test_a_text_after_an_error_is_not_a_reply() -> None:
    """The cut hazard: the answer's text part is printed after the error that ended the run."""
    lines = [
        f'{{"type":"step_start","timestamp":1,{S},"part":{{{part(1)},"type":"step-start"}}}}',
        f'{{"type":"error","timestamp":2,{S},"error":{{"name":"APIError","data":{{"message":'
        '"Connection reset by server","isRetryable":true,"metadata":{"code":"ECONNRESET"}}}}',
        f'{{"type":"text","timestamp":3,{S},"part":{{{part(2)},"type":"text",'
        '"text":"{\\"greeting\\": \\"Hello\\", \\"__SKILL_DONE__\\": true}"}}',
    ]
    at = starts(*lines)
    transcript = kilo.read(stream(*lines))
    assert transcript.events[1:] == (
        EngineError("Connection reset by server", None, False, OUT, at[1]),
        TurnEnd(False, OUT, at[1]),
        UnknownEvent(kilo.TEXT_AFTER_ERROR, lines[2], OUT, at[2]),
    )
    assert transcript.assistant_messages() == ()


def test_a_failed_tool_and_odd_lines() -> None:
    lines = [
        "kilo: noise",
        f'{{"type":"tool_use","timestamp":1,{S},"part":{{{part(1)},"type":"tool","callID":"call_2","tool":"bash",'
        '"state":{"status":"error","input":{"command":"cat /etc/x"},"error":"The user has specified a rule",'
        '"metadata":{"approval":{"source":"project"}}}}}',
        f'{{"type":"text","timestamp":2,{S},"text":"top-level text is not kilo\'s"}}',
        f'{{"type":"error","timestamp":3,{S},"error":7}}',
        f'{{"type":"step_finish",{S},"part":{{"reason":["stop"]}}}}',
    ]
    at = starts(*lines)
    data = stream(*lines)
    assert kilo.read(data).events == (
        RawLine("kilo: noise", OUT, 0),
        SessionId("ses_K", OUT, at[1]),
        ToolCall("bash", {"command": "cat /etc/x"}, "call_2", OUT, at[1]),
        ToolResult("call_2", "The user has specified a rule", False, OUT, at[1]),
        UnknownEvent("text", lines[2], OUT, at[2]),
        UnknownEvent("error", lines[3], OUT, at[3]),
        TurnEnd(False, OUT, at[4]),
    )


def test_the_package_dispatches_to_kilo() -> None:
    assert readers.read("kilo", stream(*TWO_STEPS)) == kilo.read(stream(*TWO_STEPS))


# --- properties ---------------------------------------------------------------------------------

KEYS = ["type", "sessionID", "part", "text", "tool", "state", "status", "input", "output", "error", "data"]
TYPES = ["step_start", "text", "reasoning", "tool_use", "error", "step_finish", "completed", "stop"]
json_lines = json_records(KEYS, TYPES).map(lambda r: json.dumps(r).encode())


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(kilo.read(stdout, stderr), stdout, stderr)


@given(st.lists(json_lines | st.binary(max_size=20), max_size=8))
def test_arbitrary_json_lines_never_raise(lines: list[bytes]) -> None:
    stdout = b"\n".join(lines)
    assert_well_formed(kilo.read(stdout), stdout, b"")


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"])), max_size=4))
def test_every_text_before_an_error_round_trips(texts: list[str]) -> None:
    lines = [
        json.dumps(
            {"type": "text", "timestamp": 1, "sessionID": "ses_f", "part": {"type": "text", "text": text}}
        )
        for text in texts
    ]
    lines.append(json.dumps({"type": "error", "sessionID": "ses_f", "error": "run ended"}))
    lines.append(lines[0] if texts else lines[-1])
    assert kilo.read(stream(*lines)).assistant_messages() == tuple(texts)
