"""qwen reader: the SDK message stream, from docs/fake-engines.md ("qwen") and the real captures."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, json_records, starts, stream
from turngate.engines import readers
from turngate.engines.readers import qwen
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    RawLine,
    SessionId,
    ToolCall,
    ToolResult,
    TurnEnd,
)

S = "a94d10a5-f66e-4d72-b3e1-17bcda04143c"
INIT = f'{{"type":"system","subtype":"init","uuid":"{S}","session_id":"{S}","cwd":"/run","model":"m"}}'
GOAL = (
    f'{{"type":"stream_event","uuid":"u","session_id":"{S}","parent_tool_use_id":null,'
    '"event":{"type":"goal_state","goal_state":{"v":2,"goal":null,"activity":"idle"}}}'
)
MARKER = '{"greeting": "Hello", "__SKILL_DONE__": true}'


def assistant(block: dict[str, object]) -> str:
    message = {"id": "u", "type": "message", "role": "assistant", "model": "m", "content": [block]}
    return json.dumps(
        {"type": "assistant", "uuid": "u", "session_id": S, "parent_tool_use_id": None, "message": message}
    )


def result(text: str) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "uuid": "r",
            "session_id": S,
            "is_error": False,
            "result": text,
        }
    )


def failed(message: str) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": "error_during_execution",
            "uuid": "r",
            "session_id": S,
            "is_error": True,
            "error": {"message": message},
        }
    )


def test_commentary_a_tool_echo_and_the_final_text_echoed_once() -> None:
    lines = [
        INIT,
        GOAL,
        assistant({"type": "text", "text": "Let me read the skill first."}),
        assistant(
            {"type": "tool_use", "id": "call_1", "name": "run_shell_command", "input": {"command": "cat x"}}
        ),
        json.dumps(
            {
                "type": "user",
                "uuid": "u",
                "session_id": S,
                "parent_tool_use_id": None,
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": MARKER}
                    ],
                },
            }
        ),
        assistant({"type": "text", "text": MARKER}),
        result(MARKER),
    ]
    at = starts(*lines)
    transcript = qwen.read(stream(*lines))
    assert transcript.events == (
        SessionId(S, OUT, 0),
        AssistantText("Let me read the skill first.", OUT, at[2]),
        ToolCall("run_shell_command", {"command": "cat x"}, "call_1", OUT, at[3]),
        ToolResult("call_1", MARKER, True, OUT, at[4]),
        AssistantText(MARKER, OUT, at[5]),
        TurnEnd(True, OUT, at[6]),
    )


def test_an_api_error_text_is_an_error_not_a_reply() -> None:
    text = "[API Error: 400 scripted failure: quota exhausted]"
    lines = [INIT, GOAL, assistant({"type": "text", "text": text}), failed(text)]
    at = starts(*lines)
    transcript = qwen.read(stream(*lines), b"Warning: running headless with --yolo\n")
    assert transcript.events == (
        SessionId(S, OUT, 0),
        EngineError(text, None, False, OUT, at[2]),
        EngineError(text, None, False, OUT, at[3]),
        TurnEnd(False, OUT, at[3]),
        RawLine("Warning: running headless with --yolo", ERR, 0),
    )
    assert transcript.assistant_messages() == ()


def test_a_rate_limits_api_error_text_with_qwens_advice_is_an_error_not_a_reply() -> None:
    # corpus/qwen/real-0.24.4-hazard-429: the advice under the error, in the text and the result
    text = (
        "[API Error: 429 Too Many Requests]\nPossible quota limitations in place or slow response times"
        " detected. Please wait and try again later."
    )
    lines = [INIT, GOAL, assistant({"type": "text", "text": text}), failed(text)]
    transcript = qwen.read(stream(*lines))
    assert transcript.assistant_messages() == ()
    assert [event.message for event in transcript.events if isinstance(event, EngineError)] == [text, text]


def test_a_text_with_more_after_an_api_error_line_is_a_reply() -> None:
    text = "[API Error: 429 Too Many Requests]\nSomething the model wrote."
    lines = [INIT, assistant({"type": "text", "text": text}), result(text)]
    assert qwen.read(stream(*lines)).assistant_messages() == (text,)


def test_retries_are_transient_errors() -> None:
    scheduled = (
        f'{{"type":"system","subtype":"retry","uuid":"u","session_id":"{S}","parent_tool_use_id":null,'
        '"data":{"reason":"retry","attempt":1,"maxRetries":10,"delayMs":60000,"discardedToolCalls":0,"preserveText":false}}'
    )
    again = (
        f'{{"type":"system","subtype":"retry","uuid":"u","session_id":"{S}","parent_tool_use_id":null,'
        '"data":{"reason":"retry","discardedToolCalls":0,"preserveText":false}}'
    )
    at = starts(INIT, scheduled, again)
    assert qwen.read(stream(INIT, scheduled, again)).events[1:] == (
        EngineError("retry 1/10", None, True, OUT, at[1]),
        EngineError("retry", None, True, OUT, at[2]),
    )


def test_a_result_after_a_tool_call_echoes_nothing() -> None:
    lines = [INIT, assistant({"type": "text", "text": "Working."}), result("")]
    assert qwen.read(stream(*lines)).assistant_messages() == ("Working.",)


def test_the_package_dispatches_to_qwen() -> None:
    data = stream(INIT, GOAL, assistant({"type": "text", "text": "hi"}), result("hi"))
    assert readers.read("qwen", data) == qwen.read(data)


KEYS = [
    "type",
    "subtype",
    "uuid",
    "session_id",
    "message",
    "content",
    "text",
    "is_error",
    "result",
    "error",
    "data",
]
TYPES = ["system", "init", "retry", "stream_event", "assistant", "user", "result", "text", "tool_result"]
json_lines = json_records(KEYS, TYPES).map(lambda r: json.dumps(r).encode())


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(qwen.read(stdout, stderr), stdout, stderr)


@given(st.lists(json_lines | st.binary(max_size=20), max_size=8))
def test_arbitrary_json_lines_never_raise(lines: list[bytes]) -> None:
    stdout = b"\n".join(lines)
    assert_well_formed(qwen.read(stdout), stdout, b"")
