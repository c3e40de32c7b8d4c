"""claude reader: the SDK message stream, from docs/fake-engines.md ("claude") and the real captures."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, json_records, starts, stream
from turngate.engines import readers
from turngate.engines.readers import claude
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
    UserEcho,
)

S = "ec4a0b3e-a173-4663-899a-694b79cb2963"
INIT = f'{{"type":"system","subtype":"init","cwd":"/run","session_id":"{S}","tools":["Bash"],"model":"m"}}'


def assistant(block: dict[str, object], **extra: object) -> str:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [block]}
    return json.dumps({"type": "assistant", "message": message, "session_id": S, **extra})


def result(text: str, **fields: object) -> str:
    """claude's result: `type` after `result`, as 2.1.331 prints it."""
    document = {"duration_api_ms": 48, "session_id": S, "is_error": False, "subtype": "success"}
    return json.dumps({**document, **fields, "result": text, "type": "result", "uuid": "u"})


MARKER = '{"greeting": "Hello", "__SKILL_DONE__": true}'


def test_a_tool_echo_then_a_question_then_the_result_echo() -> None:
    lines = [
        INIT,
        '{"type":"system","subtype":"thinking_tokens","estimated_tokens":9,"session_id":"' + S + '"}',
        assistant({"type": "thinking", "thinking": f"maybe {MARKER}", "signature": "x"}),
        assistant(
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat SKILL.md"}}
        ),
        json.dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": "toolu_1",
                            "type": "tool_result",
                            "content": MARKER,
                            "is_error": False,
                        }
                    ],
                },
                "session_id": S,
                "tool_use_result": {"stdout": MARKER, "stderr": ""},
            }
        ),
        assistant({"type": "text", "text": "Which greeting style do you want?"}),
        result("Which greeting style do you want?"),
    ]
    at = starts(*lines)
    transcript = claude.read(stream(*lines))
    assert transcript.events == (
        SessionId(S, OUT, 0),
        Reasoning(f"maybe {MARKER}", OUT, at[2]),
        ToolCall("Bash", {"command": "cat SKILL.md"}, "toolu_1", OUT, at[3]),
        ToolResult("toolu_1", MARKER, True, OUT, at[4]),
        AssistantText("Which greeting style do you want?", OUT, at[5]),
        TurnEnd(True, OUT, at[6]),
    )
    # the result repeats the question: one reply
    assert transcript.assistant_messages() == ("Which greeting style do you want?",)


def test_a_long_result_line_with_type_late_still_ends_the_turn() -> None:
    padded = json.dumps(
        {"duration_api_ms": 1, "usage": {"x": "y" * 5000}, "is_error": False, "subtype": "success"}
    )
    last = padded[:-1] + f',"result":{json.dumps(MARKER)},"type":"result"}}'
    lines = [INIT, assistant({"type": "text", "text": MARKER}), last]
    transcript = claude.read(stream(*lines))
    assert transcript.turn_end() == TurnEnd(True, OUT, starts(*lines)[2])
    assert transcript.assistant_messages() == (MARKER,)


def test_an_api_error_is_an_error_even_with_subtype_success() -> None:
    text = "API Error: 400 scripted failure: quota exhausted"
    lines = [
        INIT,
        assistant(
            {"type": "text", "text": text}, error="unknown", is_api_error_message=True, api_error_status=400
        ),
        result(text, is_error=True, api_error_status=400, terminal_reason="api_error"),
    ]
    at = starts(*lines)
    transcript = claude.read(stream(*lines))
    assert transcript.events == (
        SessionId(S, OUT, 0),
        EngineError(text, 400, False, OUT, at[1]),
        EngineError(text, None, False, OUT, at[2]),
        TurnEnd(False, OUT, at[2]),
    )
    assert transcript.assistant_messages() == ()


def test_retries_are_transient_errors() -> None:
    retry = (
        '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,'
        f'"error_status":429,"error":"rate_limit","session_id":"{S}","uuid":"u"}}'
    )
    assert claude.read(stream(INIT, retry)).events[1:] == (
        EngineError("rate_limit", 429, True, OUT, len(INIT) + 1),
    )


def test_structured_output_is_the_reply_and_its_json_echo_is_not_a_second_one() -> None:
    branch = {"__SKILL_DONE__": False, "message": "Which style?", "ui_hints": {"kind": "choose_one"}}
    lines = [
        INIT,
        assistant({"type": "tool_use", "id": "toolu_2", "name": "StructuredOutput", "input": branch}),
        json.dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": "toolu_2",
                            "type": "tool_result",
                            "content": "Structured output provided successfully",
                        }
                    ],
                },
                "session_id": S,
            }
        ),
        result(json.dumps(branch, separators=(",", ":")), structured_output=branch, stop_reason="tool_use"),
    ]
    transcript = claude.read(stream(*lines))
    assert transcript.assistant_messages() == (json.dumps(branch, ensure_ascii=False),)
    assert transcript.turn_end() == TurnEnd(True, OUT, starts(*lines)[3])


def test_an_unknown_session_is_a_failed_result_alone() -> None:
    line = (
        '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,'
        '"session_id":"00000000-0000-4000-8000-000000000000",'
        '"errors":["No conversation found with session ID: 00000000-0000-4000-8000-000000000000"]}'
    )
    transcript = claude.read(stream(line), b"No conversation found with session ID: 0000\n")
    assert transcript.turn_end() == TurnEnd(False, OUT, 0)
    assert transcript.events[1] == EngineError(
        "No conversation found with session ID: 00000000-0000-4000-8000-000000000000", None, False, OUT, 0
    )
    assert transcript.events[-1] == RawLine("No conversation found with session ID: 0000", ERR, 0)


def test_odd_lines_are_kept() -> None:
    lines = [
        "not json at all",
        '{"type":"system","subtype":"brand_new","session_id":"' + S + '"}',
        '{"type":"assistant","message":{"content":"a string"}}',
        '{"type":"user","message":{"role":"user","content":"[structured-output-enforce] call the tool"}}',
        '{"type":"mystery"}',
        '{"type":"result","subtype":"success","is_error":false,"result":"cut',
    ]
    at = starts(*lines)
    assert claude.read(stream(*lines)).events == (
        RawLine(lines[0], OUT, 0),
        SessionId(S, OUT, at[1]),
        UnknownEvent("system:brand_new", lines[1], OUT, at[1]),
        UnknownEvent("assistant", lines[2], OUT, at[2]),
        UserEcho("[structured-output-enforce] call the tool", OUT, at[3]),
        UnknownEvent("mystery", lines[4], OUT, at[4]),
        RawLine(lines[5], OUT, at[5]),
    )


def test_the_package_dispatches_to_claude() -> None:
    data = stream(INIT, assistant({"type": "text", "text": "hi"}), result("hi"))
    assert readers.read("claude", data) == claude.read(data)


# --- properties ---------------------------------------------------------------------------------

KEYS = [
    "type",
    "subtype",
    "session_id",
    "message",
    "content",
    "text",
    "is_error",
    "result",
    "structured_output",
]
TYPES = ["system", "init", "assistant", "user", "result", "text", "tool_use", "tool_result", "success"]
json_lines = json_records(KEYS, TYPES).map(lambda r: json.dumps(r).encode())


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(claude.read(stdout, stderr), stdout, stderr)


@given(st.lists(json_lines | st.binary(max_size=20), max_size=8))
def test_arbitrary_json_lines_never_raise(lines: list[bytes]) -> None:
    stdout = b"\n".join(lines)
    assert_well_formed(claude.read(stdout), stdout, b"")


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"])), max_size=4))
def test_every_text_round_trips_and_the_echo_is_counted_once(texts: list[str]) -> None:
    lines = [
        INIT,
        *(assistant({"type": "text", "text": text}) for text in texts),
        result(texts[-1] if texts else ""),
    ]
    assert claude.read(stream(*lines)).assistant_messages() == tuple(texts)
