"""gemini reader: json documents, stream-json events and text, written by hand from the two documents."""

from __future__ import annotations

import json
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, json_records, starts, stream
from tests.readers.test_object_search import naive_objects
from tests.work import calls_made
from turngate.engines import readers
from turngate.engines.readers import _object_search, gemini
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    RawLine,
    SessionId,
    ToolCall,
    ToolResult,
    TurnEnd,
    UnknownEvent,
    UserEcho,
)

YOLO = "YOLO mode is enabled. All tool calls will be automatically approved."
CREDENTIALS = "Loaded cached credentials."
MARKER_REPLY = '{"value": 7, "__SKILL_DONE__": true}'
STATS = {"models": {"gemini-2.5-pro": {"tokens": {"prompt": 12, "candidates": 9, "total": 21}}}}


def pretty(document: object) -> str:
    """As ``JSON.stringify(doc, null, 2)`` writes it."""
    return json.dumps(document, indent=2, ensure_ascii=False)


# --- stream-json --------------------------------------------------------------------------------

TURN = [
    '{"type":"init","timestamp":"2025-11-22T12:00:00.000Z","session_id":"g-1","model":"gemini-2.5-pro"}',
    '{"type":"message","timestamp":"2025-11-22T12:00:00.001Z","role":"user","content":"Run it. tg-case-x"}',
    '{"type":"message","timestamp":"2025-11-22T12:00:00.002Z","role":"assistant","content":"Checking.\\n",'
    '"delta":true}',
    '{"type":"tool_use","timestamp":"2025-11-22T12:00:00.003Z","tool_name":"run_shell_command","tool_id":"t-1",'
    '"parameters":{"command":"cat SKILL.md"}}',
    '{"type":"tool_result","timestamp":"2025-11-22T12:00:00.004Z","tool_id":"t-1","status":"success",'
    '"output":"end with {\\"__SKILL_DONE__\\": true}"}',
    '{"type":"message","timestamp":"2025-11-22T12:00:00.005Z","role":"assistant",'
    '"content":"{\\"value\\": 7, \\"__SKI","delta":true}',
    '{"type":"message","timestamp":"2025-11-22T12:00:00.006Z","role":"assistant",'
    '"content":"LL_DONE__\\": true}","delta":true}',
    '{"type":"result","timestamp":"2025-11-22T12:00:00.007Z","status":"success","stats":{"total_tokens":21}}',
]


def test_a_stream_json_turn_joins_the_deltas_into_one_reply() -> None:
    transcript = gemini.read(stream(*TURN), mode="stream-json")
    at = starts(*TURN)
    assert transcript.engine == "gemini"
    assert transcript.events == (
        SessionId("g-1", OUT, 0),
        UserEcho("Run it. tg-case-x", OUT, at[1]),
        # the marker split across the last two deltas comes out whole, at the first delta's offset
        AssistantText("Checking.\n" + MARKER_REPLY, OUT, at[2]),
        ToolCall("run_shell_command", {"command": "cat SKILL.md"}, "t-1", OUT, at[3]),
        ToolResult("t-1", 'end with {"__SKILL_DONE__": true}', True, OUT, at[4]),
        TurnEnd(True, OUT, at[7]),
    )
    assert transcript.assistant_messages() == ("Checking.\n" + MARKER_REPLY,)


def test_stream_json_is_detected_even_after_noise() -> None:
    lines = [YOLO, *TURN]
    transcript = gemini.read(stream(*lines), stream(CREDENTIALS))
    assert transcript.events[0] == RawLine(YOLO, OUT, 0)
    assert transcript.events[1] == SessionId("g-1", OUT, starts(*lines)[1])
    assert transcript.events[-1] == RawLine(CREDENTIALS, ERR, 0)
    assert transcript.assistant_messages() == ("Checking.\n" + MARKER_REPLY,)


def test_a_failed_stream_json_turn() -> None:
    lines = [
        '{"type":"init","timestamp":"2025-11-22T12:00:00.000Z","session_id":"g-2","model":"gemini-2.5-pro"}',
        '{"type":"error","timestamp":"2025-11-22T12:00:00.001Z","severity":"warning",'
        '"message":"429, retrying"}',
        '{"type":"tool_result","timestamp":"2025-11-22T12:00:00.002Z","tool_id":"t-9","status":"error",'
        '"output":"permission denied"}',
        '{"type":"error","timestamp":"2025-11-22T12:00:00.003Z","severity":"error",'
        '"message":"quota exhausted"}',
        '{"type":"result","timestamp":"2025-11-22T12:00:00.004Z","status":"error",'
        '"error":{"type":"Error","message":"quota exhausted"},"stats":{}}',
    ]
    at = starts(*lines)
    transcript = gemini.read(stream(*lines))
    assert transcript.events == (
        SessionId("g-2", OUT, 0),
        EngineError("429, retrying", None, True, OUT, at[1]),
        ToolResult("t-9", "permission denied", False, OUT, at[2]),
        EngineError("quota exhausted", None, False, OUT, at[3]),
        EngineError("quota exhausted", None, False, OUT, at[4]),
        TurnEnd(False, OUT, at[4]),
    )
    assert transcript.assistant_messages() == ()


def test_each_turn_of_a_resident_process_has_its_own_reply() -> None:
    lines = [
        '{"type":"init","session_id":"g-3","model":"m"}',
        '{"type":"message","role":"assistant","content":"Which style?","delta":true}',
        '{"type":"result","status":"success","stats":{}}',
        '{"type":"init","session_id":"g-3","model":"m"}',
        '{"type":"message","role":"user","content":"formal"}',
        '{"type":"message","role":"assistant","content":"Good day.","delta":true}',
    ]
    at = starts(*lines)
    transcript = gemini.read(stream(*lines), mode="stream-json")
    assert transcript.assistant_messages() == ("Which style?", "Good day.")
    assert transcript.events[-1] == AssistantText("Good day.", OUT, at[5])
    assert transcript.turn_end() == TurnEnd(True, OUT, at[2])


def test_odd_stream_json_lines_are_kept() -> None:
    lines = [
        '{"type":"init","model":"m"}',
        '{"type":"message","role":"system","content":"x"}',
        '{"type":"message","role":"assistant","content":null}',
        '{"type":"tool_use","tool_name":"x"}',
        '{"type":"thought","subject":"planning"}',
        '{"type":"message","role":"assistant","content":"cut',
    ]
    at = starts(*lines)
    data = stream(*lines)[:-1]  # the last line lost its newline too
    assert gemini.read(data, mode="stream-json").events == (
        UnknownEvent("init", lines[0], OUT, at[0]),
        UnknownEvent("message", lines[1], OUT, at[1]),
        UnknownEvent("message", lines[2], OUT, at[2]),
        UnknownEvent("tool_use", lines[3], OUT, at[3]),
        UnknownEvent("thought", lines[4], OUT, at[4]),
        RawLine(lines[5], OUT, at[5]),
    )


# --- json ---------------------------------------------------------------------------------------


def test_a_compact_document_on_stdout() -> None:
    document = json.dumps({"session_id": "g-4", "response": MARKER_REPLY, "stats": STATS})
    transcript = gemini.read(stream(document))
    assert transcript.events == (
        SessionId("g-4", OUT, 0),
        AssistantText(MARKER_REPLY, OUT, 0),
        TurnEnd(True, OUT, 0),
    )


def test_a_pretty_document_after_noise_lines() -> None:
    document = pretty({"session_id": "g-5", "response": "Line one.\n" + MARKER_REPLY, "stats": STATS})
    data = stream(YOLO, CREDENTIALS, document)
    start = len(YOLO) + len(CREDENTIALS) + 2
    transcript = gemini.read(data, mode="json")
    assert transcript.events == (
        RawLine(YOLO + "\n" + CREDENTIALS, OUT, 0),  # a run of noise lines is one RawLine
        SessionId("g-5", OUT, start),
        AssistantText("Line one.\n" + MARKER_REPLY, OUT, start),
        TurnEnd(True, OUT, start),
    )
    assert gemini.read(data) == transcript  # detected as json


def test_a_document_glued_to_the_last_noise_line() -> None:
    document = pretty({"session_id": "g-6", "response": "ok", "stats": {}})
    data = (YOLO + "\n" + CREDENTIALS + document + "\n").encode()
    start = len(YOLO) + 1 + len(CREDENTIALS)
    assert gemini.read(data).events == (
        RawLine(YOLO + "\n" + CREDENTIALS, OUT, 0),
        SessionId("g-6", OUT, start),
        AssistantText("ok", OUT, start),
        TurnEnd(True, OUT, start),
    )


def test_a_document_on_stderr_with_noise_on_stdout() -> None:
    deprecation = "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated."
    document = pretty({"session_id": "g-7", "response": MARKER_REPLY, "stats": STATS})
    stderr = stream(CREDENTIALS, document)
    transcript = gemini.read(stream(YOLO, deprecation), stderr)
    start = len(CREDENTIALS) + 1
    assert transcript.events == (
        RawLine(YOLO + "\n" + deprecation, OUT, 0),
        RawLine(CREDENTIALS, ERR, 0),
        SessionId("g-7", ERR, start),
        AssistantText(MARKER_REPLY, ERR, start),
        TurnEnd(True, ERR, start),
    )
    assert transcript.assistant_messages() == (MARKER_REPLY,)


def test_an_error_document() -> None:
    error = {"type": "Error", "message": "quota exhausted", "code": 1}
    document = pretty({"session_id": "g-8", "error": error})
    transcript = gemini.read(stream(document), mode="json")
    assert transcript.events == (
        SessionId("g-8", OUT, 0),
        EngineError("quota exhausted", 1, False, OUT, 0),
        TurnEnd(False, OUT, 0),
    )


def test_the_documented_error_code() -> None:
    document = '{"session_id":"g-9","error":{"type":"Error","message":"Login required","code":41}}'
    assert gemini.read(stream(document)).events[1] == EngineError("Login required", 41, False, OUT, 0)


def test_a_json_turn_without_a_document_has_only_noise() -> None:
    transcript = gemini.read(stream(YOLO), stream("Error: something broke"), mode="json")
    assert transcript.events == (RawLine(YOLO, OUT, 0), RawLine("Error: something broke", ERR, 0))
    assert transcript.turn_end() is None


def test_objects_without_document_keys_are_not_the_document() -> None:
    noise = ['{"level":"warn","detail":{"response":"nested, not top level"}}', "config {broken", "{"]
    document = pretty({"session_id": "g-10", "response": "real", "stats": {}})
    lines = [*noise, document, "trailing noise"]
    at = starts(*lines)
    assert gemini.read(stream(*lines)).events == (
        RawLine("\n".join(noise), OUT, 0),
        SessionId("g-10", OUT, at[3]),
        AssistantText("real", OUT, at[3]),
        TurnEnd(True, OUT, at[3]),
        RawLine("trailing noise", OUT, at[4]),
    )


def test_offsets_stay_exact_after_invalid_utf8_noise() -> None:
    data = b"bad \xff\xfe bytes \xe2\x9c\x93\n" + b'{"session_id":"g-11","response":"caf\xc3\xa9"}\n'
    assert gemini.read(data).events == (
        RawLine("bad \ufffd\ufffd bytes ✓", OUT, 0),
        SessionId("g-11", OUT, 17),
        AssistantText("café", OUT, 17),
        TurnEnd(True, OUT, 17),
    )


def test_a_document_with_neither_reply_nor_error_is_kept() -> None:
    document = '{"session_id":"g-12","response":null}'
    assert gemini.read(stream(document)).events == (
        SessionId("g-12", OUT, 0),
        UnknownEvent("document", document, OUT, 0),
    )


def test_a_document_inside_broken_json_noise_is_still_found() -> None:
    document = '{"session_id":"g-14","response":"found"}'
    for noise in ('{"a": ', '{"a": [', '{"level":"info","msg":"Loaded cached credentials.', "[{"):
        transcript = gemini.read((noise + document + "\n").encode())
        assert transcript.assistant_messages() == ("found",), noise
        assert transcript.events[0] == RawLine(noise, OUT, 0)


def test_the_document_search_copes_with_pathological_noise() -> None:
    # Many candidate braces, deep nesting, nothing that is a document: each must stay cheap.
    for noise in (
        '{"a' * 20_000,
        '{"a":[' * 20_000,
        "{" * 60_000,
        '{"k":"' + "{ " * 30_000,
        ('{"a":[' * 800 + "x") * 30,
        "[" * 20_000 + '{"a":' * 20_000,
    ):
        transcript = gemini.read(noise.encode(), mode="json")
        assert transcript.turn_end() is None
    # inside a structure too deep to decode, and never closed
    deep = '{"a":[' * 5_000 + '{"session_id":"g-15","response":"deep"}'
    assert gemini.read(deep.encode()).assistant_messages() == ("deep",)


@pytest.mark.parametrize("unit", ['{"a":x', "{", '{ "a" : x'])
def test_braces_that_open_no_object_cost_no_python_step_each(unit: str) -> None:
    """Text dense in braces that open no object is passed over by the pattern engine (C speed): the
    Python calls made do not grow with the text (it took one Python step per brace: 4 MB/s)."""

    def search(text: str) -> object:
        return list(_object_search.iter_objects(text))

    assert calls_made(search, unit * 40_000) <= calls_made(search, unit * 1_000) + 5


# Levels of a deep structure, each with what closes it: objects, arrays, closed arrays between levels.
DEEP_LEVELS = {'{"a":': "}", '{"a":[],"b":': "}", '[{"a":': "}]", '{"a":[[1],"x]"],"b":': "}"}


@pytest.mark.parametrize("level", list(DEEP_LEVELS))
def test_a_deep_structure_costs_no_python_step_per_level(level: str) -> None:
    """A structure that opens level after level is measured by one pattern match and dropped whole
    (it took a Python walk of 201 levels for every 137 it dropped: 4.5 MB/s through the gate)."""

    def search(depth: int) -> object:
        return list(_object_search.iter_objects(level * depth + "1" + DEEP_LEVELS[level] * depth))

    assert calls_made(search, 40_000) <= calls_made(search, 1_000) + 5


# --- text ---------------------------------------------------------------------------------------


def test_text_mode_stdout_is_the_reply_as_written() -> None:
    reply = "Here it is.\n" + MARKER_REPLY + "\n"
    transcript = gemini.read(reply.encode(), stream(YOLO), mode="text")
    assert transcript.events == (AssistantText(reply, OUT, 0), RawLine(YOLO, ERR, 0))


def test_plain_text_is_detected_as_text() -> None:
    reply = b"Just words {not json}\n"
    assert gemini.read(reply).events == (AssistantText(reply.decode(), OUT, 0),)


def test_an_empty_text_turn_has_no_reply() -> None:
    assert gemini.read(b"", mode="text").events == ()


def test_an_explicit_mode_wins_over_detection() -> None:
    document = json.dumps({"session_id": "g-13", "response": "r"}) + "\n"
    assert gemini.read(document.encode(), mode="text").assistant_messages() == (document,)


def test_an_unknown_mode_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="ndjson"):
        gemini.read(b"", mode="ndjson")


def test_the_package_passes_the_mode_on() -> None:
    data = stream(*TURN)
    assert readers.read("gemini", data, b"", mode="text") == gemini.read(data, mode="text")


# --- properties ---------------------------------------------------------------------------------

MODES = st.sampled_from([None, "json", "stream-json", "text"])
KEYS = ["type", "role", "content", "session_id", "response", "error", "message", "code", "status", "tool_id"]
TYPES = ["init", "message", "tool_use", "tool_result", "error", "result", "assistant", "user", "success"]
json_chunks = json_records(KEYS, TYPES).flatmap(
    lambda record: st.sampled_from([json.dumps(record), pretty(record)]).map(str.encode)
)
plain_text = st.text(st.characters(exclude_categories=["Cs"]))


@given(st.binary(), st.binary(), MODES)
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes, mode: str | None) -> None:
    assert_well_formed(gemini.read(stdout, stderr, mode=mode), stdout, stderr)


@given(st.lists(json_chunks | st.binary(max_size=20), max_size=6), st.binary(max_size=10), MODES)
def test_arbitrary_json_never_raises(chunks: list[bytes], glue: bytes, mode: str | None) -> None:
    stdout = glue.join(chunks)
    assert_well_formed(gemini.read(stdout, stdout, mode=mode), stdout, stdout)


@given(st.lists(plain_text, min_size=1, max_size=5))
def test_stream_json_deltas_round_trip(chunks: list[str]) -> None:
    lines = [json.dumps({"type": "init", "session_id": "s", "model": "m"})]
    for chunk in chunks:
        lines.append(json.dumps({"type": "message", "role": "assistant", "content": chunk, "delta": True}))
    assert gemini.read(stream(*lines)).assistant_messages() == ("".join(chunks),)


@given(plain_text, st.lists(st.sampled_from([YOLO, CREDENTIALS, "warn: {x}"]), max_size=3), st.booleans())
def test_a_json_reply_round_trips_behind_any_noise(reply: str, noise: list[str], glue: bool) -> None:
    document = pretty({"session_id": "s", "response": reply, "stats": {}})
    data = ("\n".join(noise) + ("" if glue else "\n") + document).encode()
    transcript = gemini.read(data)
    assert transcript.assistant_messages() == (reply,)
    assert transcript.turn_end() is not None


FRAGMENTS = [
    *["{", "}", "[", "]", '"', ":", ",", " ", "\n", "x", "\\", "1", "null", "{}"],
    *['"a"', '"session_id"', '{"session_id":1}'],
]


def naive_search(text: str) -> tuple[int, int] | None:
    """The document search as the rule states it, quadratic: the first object the naive object search
    (raw_decode at every brace) finds that is the document."""
    return next(
        ((start, end) for start, end in naive_objects(text) if "session_id" in json.loads(text[start:end])),
        None,
    )


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_the_linear_search_finds_what_the_naive_search_finds(fragments: list[str]) -> None:
    text = "".join(fragments)
    # small windows, so that windows are cut and doubled even in short texts
    with patch.object(_object_search, "_FIRST_WINDOW", 32):
        found = _object_search.find_object(text, lambda value: "session_id" in value)
    assert (None if found is None else (found.start, found.end)) == naive_search(text)


@given(
    st.sampled_from(list(DEEP_LEVELS)),
    st.integers(min_value=0, max_value=450),
    st.lists(st.sampled_from(FRAGMENTS), max_size=12),
)
def test_what_follows_a_deep_structure_is_found_as_the_naive_search_finds_it(
    level: str, depth: int, tail: list[str]
) -> None:
    text = level * depth + "1" + DEEP_LEVELS[level] * depth + "".join(tail)
    with patch.object(_object_search, "_FIRST_WINDOW", 32):
        found = _object_search.find_object(text, lambda value: "session_id" in value)
    assert (None if found is None else (found.start, found.end)) == naive_search(text)
