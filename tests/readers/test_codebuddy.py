"""codebuddy reader: the SDK message stream, from docs/fake-engines.md ("codebuddy") and the real captures."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import OUT, assert_well_formed, json_records, starts, stream
from turngate.engines import readers
from turngate.engines.readers import codebuddy
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    Reasoning,
    SessionId,
    ToolResult,
    TurnEnd,
)

S = "125ea780-95e0-47c4-8c56-dfb2d47c7a28"
R = "6c3b151c99414e23be15a4688f35d799"
OPENING = [
    f'{{"type":"system","subtype":"init","uuid":"{S}","session_id":"{S}","apiKeySource":"x","cwd":"/run"}}',
    f'{{"type":"system","subtype":"status","status":null,"uuid":"u","session_id":"{S}","_requestId":"{R}"}}',
    '{"type":"file-history-snapshot","id":"i","timestamp":1,"isSnapshotUpdate":false,'
    '"snapshot":{"messageId":"m","trackedFileBackups":{}},"_requestId":"' + R + '"}',
]
MARKER = '{"greeting": "Hello", "__SKILL_DONE__": true}'


def assistant(block: dict[str, object]) -> str:
    message = {"id": "chatcmpl_1", "content": [block], "model": "m", "role": "assistant", "type": "message"}
    return json.dumps({"type": "assistant", "uuid": "chatcmpl_1", "session_id": S, "message": message})


def result(text: str, **fields: object) -> str:
    return json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": S, **fields}
    )


def test_a_reply_printed_only_in_the_result_is_the_reply() -> None:
    lines = [
        *OPENING,
        assistant({"type": "thinking", "thinking": "The skill wants a greeting.", "signature": ""}),
        result(MARKER),
    ]
    at = starts(*lines)
    transcript = codebuddy.read(stream(*lines))
    assert transcript.events == (
        SessionId(S, OUT, 0),
        Reasoning("The skill wants a greeting.", OUT, at[3]),
        AssistantText(MARKER, OUT, at[4]),
        TurnEnd(True, OUT, at[4]),
    )


def test_the_final_text_after_commentary_only_in_the_result() -> None:
    lines = [*OPENING, assistant({"type": "text", "text": "Let me read the skill first."}), result(MARKER)]
    assert codebuddy.read(stream(*lines)).assistant_messages() == ("Let me read the skill first.", MARKER)


def test_a_failed_request_exits_0_but_fails_the_turn() -> None:
    text = f"400 scripted failure: quota exhausted ({'5' * 32}/{S})"
    failed = json.dumps(
        {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "session_id": S,
            "errors": [text],
        }
    )
    lines = [*OPENING, assistant({"type": "text", "text": text}), failed]
    at = starts(*lines)
    transcript = codebuddy.read(stream(*lines))
    assert transcript.events[1:] == (
        EngineError(text, None, False, OUT, at[3]),
        EngineError(text, None, False, OUT, at[4]),
        TurnEnd(False, OUT, at[4]),
    )


def test_a_text_naming_another_session_is_a_reply() -> None:
    text = f"done ({'5' * 32}/someone-else)"
    assert codebuddy.read(
        stream(*OPENING, assistant({"type": "text", "text": text}))
    ).assistant_messages() == (text,)


def test_structured_output_is_the_last_reply_after_the_follow_up() -> None:
    branch = {"__SKILL_DONE__": True, "greeting": "Good day"}
    lines = [*OPENING, result("Done.", structured_output=branch)]
    assert codebuddy.read(stream(*lines)).assistant_messages() == ("Done.", json.dumps(branch))


def test_a_failed_command_is_known_by_its_raw_response() -> None:
    block = {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [
            {
                "type": "text",
                "text": "Command: x\nStdout: boom\n\nStderr: (empty)\nExit Code: 1\nSignal: (none)",
            }
        ],
        "is_error": False,
        "_meta": {"rawResponse": {"exitCode": 1, "is_error": True}},
    }
    line = json.dumps(
        {"type": "user", "uuid": "u", "session_id": S, "message": {"content": [block], "role": "user"}}
    )
    (found,) = [
        event for event in codebuddy.read(stream(*OPENING, line)).events if isinstance(event, ToolResult)
    ]
    assert (found.call_id, found.ok) == ("call_1", False)
    assert found.output.startswith("Command: x\nStdout: boom")


def test_an_unknown_session_is_an_error_line_without_a_session() -> None:
    transcript = codebuddy.read(b'{"type":"error","error":"No conversation found with session ID: 0000"}\n')
    assert transcript.session_id() is None
    assert transcript.events == (
        EngineError("No conversation found with session ID: 0000", None, False, OUT, 0),
        TurnEnd(False, OUT, 0),
    )


def test_the_package_dispatches_to_codebuddy() -> None:
    data = stream(*OPENING, assistant({"type": "text", "text": "hi"}), result("hi"))
    assert readers.read("codebuddy", data) == codebuddy.read(data)


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
    "errors",
    "_meta",
]
TYPES = [
    "system",
    "init",
    "file-history-snapshot",
    "assistant",
    "user",
    "result",
    "error",
    "text",
    "tool_result",
]
json_lines = json_records(KEYS, TYPES).map(lambda r: json.dumps(r).encode())


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(codebuddy.read(stdout, stderr), stdout, stderr)


@given(st.lists(json_lines | st.binary(max_size=20), max_size=8))
def test_arbitrary_json_lines_never_raise(lines: list[bytes]) -> None:
    stdout = b"\n".join(lines)
    assert_well_formed(codebuddy.read(stdout), stdout, b"")
