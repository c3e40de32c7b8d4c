"""codex reader: streams written by hand from ENGINE_FORMATS.md and docs/fake-engines.md."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, json_records, starts, stream
from turngate.engines import readers
from turngate.engines.readers import codex
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

THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53"

# ENGINE_FORMATS.md, verbatim.
DOCUMENTED = [
    '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
    '{"type":"turn.started"}',
    '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls",'
    '"aggregated_output":"","exit_code":null,"status":"in_progress"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls",'
    '"aggregated_output":"SKILL.md\\n","exit_code":0,"status":"completed"}}',
    '{"type":"item.completed","item":{"id":"item_2","type":"agent_message",'
    '"text":"{\\"value\\": 7, \\"__SKILL_DONE__\\": true}"}}',
    '{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":0,"output_tokens":80}}',
]


def test_the_documented_turn() -> None:
    transcript = codex.read(stream(*DOCUMENTED))
    at = starts(*DOCUMENTED)
    assert at == [0, 77, 101, 262, 430, 552]
    assert transcript.engine == "codex"
    assert transcript.events == (
        SessionId(THREAD, OUT, 0),
        ToolCall("command_execution", "bash -lc ls", "item_1", OUT, 101),
        ToolResult("item_1", "SKILL.md\n", True, OUT, 262),
        AssistantText('{"value": 7, "__SKILL_DONE__": true}', OUT, 430),
        TurnEnd(True, OUT, 552),
    )
    assert transcript.session_id() == THREAD
    assert transcript.turn_end() == TurnEnd(True, OUT, 552)


def test_the_escaped_marker_in_an_agent_message_is_plain_text() -> None:
    line = (
        r'{"type":"item.completed","item":{"id":"item_0","type":"agent_message",'
        r'"text":"Done.\n{\"value\": 7, \"__SKILL_DONE__\": true}"}}'
    )
    assert codex.read(stream(line)).assistant_messages() == ('Done.\n{"value": 7, "__SKILL_DONE__": true}',)


def test_a_marker_in_command_output_stays_in_the_tool_result() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t-1"}',
        '{"type":"turn.started"}',
        '{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"cat SKILL.md",'
        '"aggregated_output":"","exit_code":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"cat SKILL.md",'
        '"aggregated_output":"end with {\\"__SKILL_DONE__\\": true}\\n","exit_code":0,"status":"completed"}}',
        '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Which style?"}}',
        '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":3}}',
    ]
    transcript = codex.read(stream(*lines))
    at = starts(*lines)
    assert transcript.events == (
        SessionId("t-1", OUT, 0),
        ToolCall("command_execution", "cat SKILL.md", "item_0", OUT, at[2]),
        ToolResult("item_0", 'end with {"__SKILL_DONE__": true}\n', True, OUT, at[3]),
        AssistantText("Which style?", OUT, at[4]),
        TurnEnd(True, OUT, at[5]),
    )
    assert transcript.assistant_messages() == ("Which style?",)


def test_failed_command_and_mcp_tool_calls() -> None:
    lines = [
        '{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"{\\"argv\\":[\\"ls\\"]}",'
        '"aggregated_output":"","exit_code":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"{\\"argv\\":[\\"ls\\"]}",'
        '"aggregated_output":"ls: cannot access","exit_code":1,"status":"failed"}}',
        '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"turngate","tool":"read_file",'
        '"arguments":{"path":"SKILL.md"},"result":null,"error":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"turngate","tool":"read_file",'
        '"arguments":{"path":"SKILL.md"},'
        '"result":{"content":[{"type":"text","text":"\\"__SKILL_DONE__\\": true"}]},'
        '"error":null,"status":"completed"}}',
        '{"type":"item.started","item":{"id":"item_2","type":"mcp_tool_call","server":"turngate","tool":"fetch",'
        '"arguments":{},"result":null,"error":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"turngate","tool":"fetch",'
        '"arguments":{},"result":null,"error":{"message":"no network"},"status":"failed"}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        ToolCall("command_execution", '{"argv":["ls"]}', "item_0", OUT, at[0]),
        ToolResult("item_0", "ls: cannot access", False, OUT, at[1]),
        ToolCall("read_file", {"path": "SKILL.md"}, "item_1", OUT, at[2]),
        ToolResult("item_1", '"__SKILL_DONE__": true', True, OUT, at[3]),
        ToolCall("fetch", {}, "item_2", OUT, at[4]),
        ToolResult("item_2", "no network", False, OUT, at[5]),
    )


def test_reasoning_and_a_non_fatal_error_item() -> None:
    lines = [
        '{"type":"item.completed","item":{"id":"item_0","type":"reasoning",'
        '"text":"Let me look at the skill."}}',
        '{"type":"item.completed","item":{"id":"item_1","type":"error","message":"tool quota low"}}',
        '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"ok"}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        Reasoning("Let me look at the skill.", OUT, at[0]),
        EngineError("tool quota low", None, False, OUT, at[1]),
        AssistantText("ok", OUT, at[2]),
    )


def test_reconnect_errors_then_a_failed_turn() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t-2"}',
        '{"type":"turn.started"}',
        '{"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"}',
        '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected)"}',
        '{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}',
    ]
    at = starts(*lines)
    transcript = codex.read(stream(*lines))
    assert transcript.events == (
        SessionId("t-2", OUT, 0),
        EngineError("Reconnecting... 1/5 (stream disconnected)", None, True, OUT, at[2]),
        EngineError("Reconnecting... 2/5 (stream disconnected)", None, True, OUT, at[3]),
        EngineError("stream disconnected before completion", None, False, OUT, at[4]),
        TurnEnd(False, OUT, at[4]),
    )
    assert transcript.turn_end() == TurnEnd(False, OUT, at[4])


def test_a_turn_without_its_end_has_no_turn_end() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t-3"}',
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"half"}}',
    ]
    transcript = codex.read(stream(*lines))
    assert transcript.turn_end() is None
    assert transcript.assistant_messages() == ("half",)


def test_the_legacy_msg_envelope() -> None:
    lines = [
        '{"id":"0","msg":{"type":"session_configured","session_id":"sess-9","model":"gpt-5"}}',
        '{"id":"0","msg":{"type":"task_started"}}',
        '{"id":"0","msg":{"type":"agent_reasoning","text":"Reading the skill."}}',
        '{"id":"0","msg":{"type":"exec_command_begin","call_id":"call_0",'
        '"command":["bash","-lc","cat SKILL.md"],"cwd":"/run"}}',
        '{"id":"0","msg":{"type":"exec_command_end","call_id":"call_0",'
        '"stdout":"x \\"__SKILL_DONE__\\": true","stderr":"",'
        '"aggregated_output":"x \\"__SKILL_DONE__\\": true","exit_code":0}}',
        '{"id":"0","msg":{"type":"mcp_tool_call_begin","call_id":"call_1","invocation":{"server":"turngate",'
        '"tool":"read_file","arguments":{"path":"a"}}}}',
        '{"id":"0","msg":{"type":"mcp_tool_call_end","call_id":"call_1","invocation":{"server":"turngate",'
        '"tool":"read_file","arguments":{"path":"a"}},"result":{"content":[{"type":"text","text":"A"}]}}}',
        '{"id":"0","msg":{"type":"stream_error","message":"Reconnecting... 1/5"}}',
        '{"id":"0","msg":{"type":"agent_message","message":"{\\"value\\": 7, \\"__SKILL_DONE__\\": true}"}}',
        '{"id":"0","msg":{"type":"task_complete",'
        '"last_agent_message":"{\\"value\\": 7, \\"__SKILL_DONE__\\": true}"}}',
    ]
    at = starts(*lines)
    transcript = codex.read(stream(*lines))
    assert transcript.events == (
        SessionId("sess-9", OUT, 0),
        Reasoning("Reading the skill.", OUT, at[2]),
        ToolCall("command_execution", ["bash", "-lc", "cat SKILL.md"], "call_0", OUT, at[3]),
        ToolResult("call_0", 'x "__SKILL_DONE__": true', True, OUT, at[4]),
        ToolCall("read_file", {"path": "a"}, "call_1", OUT, at[5]),
        ToolResult("call_1", "A", True, OUT, at[6]),
        EngineError("Reconnecting... 1/5", None, True, OUT, at[7]),
        AssistantText('{"value": 7, "__SKILL_DONE__": true}', OUT, at[8]),
        TurnEnd(True, OUT, at[9]),
    )
    # task_complete repeats the last message: not a second reply
    assert transcript.assistant_messages() == ('{"value": 7, "__SKILL_DONE__": true}',)


def test_a_legacy_failed_turn_ends_with_error() -> None:
    lines = [
        '{"id":"0","msg":{"type":"session_configured","session_id":"sess-1","model":"gpt-5"}}',
        '{"id":"0","msg":{"type":"task_started"}}',
        '{"id":"0","msg":{"type":"error","message":"model overloaded"}}',
        '{"id":"0","msg":{"type":"token_count","info":null}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        SessionId("sess-1", OUT, 0),
        EngineError("model overloaded", None, False, OUT, at[2]),
        TurnEnd(False, OUT, at[2]),
        UnknownEvent("token_count", lines[3], OUT, at[3]),
    )


def test_a_legacy_error_the_turn_survives_does_not_end_it() -> None:
    lines = [
        '{"id":"0","msg":{"type":"error","message":"tool quota low"}}',
        '{"id":"0","msg":{"type":"agent_message","message":"still here"}}',
        '{"id":"0","msg":{"type":"task_complete","last_agent_message":"still here"}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        EngineError("tool quota low", None, False, OUT, 0),
        AssistantText("still here", OUT, at[1]),
        TurnEnd(True, OUT, at[2]),
    )


def test_a_legacy_failure_is_closed_by_the_next_turn() -> None:
    lines = [
        '{"id":"0","msg":{"type":"error","message":"boom"}}',
        '{"id":"1","msg":{"type":"task_started"}}',
        '{"id":"1","msg":{"type":"agent_message","message":"again"}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        EngineError("boom", None, False, OUT, 0),
        TurnEnd(False, OUT, 0),
        AssistantText("again", OUT, at[2]),
    )


def test_legacy_mcp_results_in_rust_result_shapes() -> None:
    lines = [
        '{"id":"0","msg":{"type":"mcp_tool_call_end","call_id":"c1","result":{"Ok":{"content":[{"type":"text","text":"fine"}]}}}}',
        '{"id":"0","msg":{"type":"mcp_tool_call_end","call_id":"c2","result":{"Err":"tool crashed"}}}',
        '{"id":"0","msg":{"type":"mcp_tool_call_end","call_id":"c3","result":{"content":[],"isError":true}}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        ToolResult("c1", "fine", True, OUT, at[0]),
        ToolResult("c2", "tool crashed", False, OUT, at[1]),
        ToolResult("c3", "", False, OUT, at[2]),
    )


def test_two_turns_of_a_resident_process() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t-r"}',
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Which style?"}}',
        '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}',
        '{"type":"thread.started","thread_id":"t-r"}',
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Formal it is."}}',
        '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}',
    ]
    transcript = codex.read(stream(*lines))
    assert transcript.assistant_messages() == ("Which style?", "Formal it is.")
    assert transcript.session_id() == "t-r"
    assert transcript.turn_end() == TurnEnd(True, OUT, starts(*lines)[7])


def test_unknown_types_are_kept() -> None:
    lines = [
        '{"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[]}}',
        '{"type":"item.updated","item":{"id":"item_1","type":"todo_list","items":[]}}',
        '{"type":"session.renamed","name":"x"}',
        '{"type":"item.started","item":{"id":"item_2","type":"agent_message","text":"partial"}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        UnknownEvent("item.completed:file_change", lines[0], OUT, at[0]),
        UnknownEvent("item.updated:todo_list", lines[1], OUT, at[1]),
        UnknownEvent("session.renamed", lines[2], OUT, at[2]),
        UnknownEvent("item.started:agent_message", lines[3], OUT, at[3]),
    )


def test_fields_of_the_wrong_type_are_unknown_events() -> None:
    lines = [
        '{"type":"thread.started","thread_id":42}',
        '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":["not","text"]}}',
        '{"type":"item.completed","item":"agent_message"}',
        '{"type":"error"}',
        '{"type":7}',
        '{"no_type":true}',
        '{"id":"0","msg":{"type":"agent_message","message":null}}',
    ]
    at = starts(*lines)
    assert codex.read(stream(*lines)).events == (
        UnknownEvent("thread.started", lines[0], OUT, at[0]),
        UnknownEvent("item.completed:agent_message", lines[1], OUT, at[1]),
        UnknownEvent("item.completed", lines[2], OUT, at[2]),
        UnknownEvent("error", lines[3], OUT, at[3]),
        UnknownEvent("", lines[4], OUT, at[4]),
        UnknownEvent("", lines[5], OUT, at[5]),
        UnknownEvent("agent_message", lines[6], OUT, at[6]),
    )


def test_noise_non_objects_crlf_bad_utf8_and_a_cut_last_line() -> None:
    data = (
        b"Reading prompt from stdin...\n"
        b'{"type":"thread.started","thread_id":"t-4"}\r\n'
        b"[1, 2]\n"
        b"\n"
        b'{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"caf\xc3\xa9 \xff"}}\n'
        b'{"type":"item.completed","item":{"id":"item_1","type":"agent_mess'
    )
    second = data.index(b'{"type":"thread')
    third = data.index(b"[1, 2]")
    fourth = data.index(b'{"type":"item.completed"')
    cut = data.rindex(b'{"type":"item.completed"')
    assert codex.read(data, b"warning: sandbox unavailable\n").events == (
        RawLine("Reading prompt from stdin...", OUT, 0),
        SessionId("t-4", OUT, second),
        RawLine("[1, 2]", OUT, third),
        AssistantText("café \ufffd", OUT, fourth),
        RawLine('{"type":"item.completed","item":{"id":"item_1","type":"agent_mess', OUT, cut),
        RawLine("warning: sandbox unavailable", ERR, 0),
    )


def test_a_lone_surrogate_escape_is_kept_as_its_six_characters() -> None:
    """Not U+FFFD: the code unit the engine sent stays readable, and the text can be encoded."""
    line = r'{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"a\ud83db"}}'
    assert codex.read(stream(line)).assistant_messages() == ("a\\ud83db",)


def test_the_package_dispatches_to_codex() -> None:
    assert readers.read("codex", stream(*DOCUMENTED)) == codex.read(stream(*DOCUMENTED))


# --- properties ---------------------------------------------------------------------------------

KNOWN_TYPES = [
    "thread.started", "turn.started", "turn.completed", "turn.failed", "error", "item.started",
    "item.updated", "item.completed", "agent_message", "reasoning", "command_execution", "mcp_tool_call",
    "session_configured", "agent_reasoning", "exec_command_begin", "exec_command_end",
    "mcp_tool_call_begin", "mcp_tool_call_end", "stream_error", "task_complete", "task_started",
]  # fmt: skip
KNOWN_KEYS = [
    "type", "item", "msg", "id", "thread_id", "text", "message", "error", "command", "aggregated_output",
    "status", "tool", "arguments", "result", "content", "call_id", "invocation", "exit_code", "session_id",
    "stdout", "Ok", "Err", "isError",
]  # fmt: skip
json_lines = json_records(KNOWN_KEYS, KNOWN_TYPES).map(lambda record: json.dumps(record).encode("utf-8"))


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(codex.read(stdout, stderr), stdout, stderr)


@given(st.lists(json_lines | st.binary(max_size=20), max_size=8), st.booleans())
def test_arbitrary_json_lines_never_raise(lines: list[bytes], cut: bool) -> None:
    stdout = b"\n".join(lines) + (b"" if cut else b"\n")
    assert_well_formed(codex.read(stdout), stdout, b"")


@given(st.text(st.characters(exclude_categories=["Cs"])), st.booleans())
def test_any_agent_message_text_round_trips(text: str, ascii_only: bool) -> None:
    item = {"id": "item_0", "type": "agent_message", "text": text}
    line = json.dumps({"type": "item.completed", "item": item}, ensure_ascii=ascii_only)
    assert codex.read(stream(line)).assistant_messages() == (text,)


def test_a_run_of_noise_lines_is_one_raw_line_verbatim() -> None:
    """Noise between events is kept whole, as one event per run: a flood of noise lines costs one
    event, not a Python object per line (50 MB of "a\\n" took 53 times its size in memory)."""
    data = (
        b"\n  warn: one  \r\nwarn: two\n\n"
        b'{"type":"thread.started","thread_id":"t-5"}\n'
        + b"a\n" * 10_000
        + b'{"type":"turn.completed"}\n\n \n'
    )
    events = codex.read(data).events
    assert events == (
        RawLine("  warn: one  \r\nwarn: two", OUT, 1),
        SessionId("t-5", OUT, data.index(b'{"type":"thread')),
        RawLine(("a\n" * 10_000).removesuffix("\n"), OUT, data.index(b"a\n")),
        TurnEnd(True, OUT, data.index(b'{"type":"turn.completed"')),
    )
