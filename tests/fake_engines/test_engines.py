"""The fake engines as real subprocesses: exact streams for the shapes that break gates.

Every test runs the installed launchers (the same files an orchestrator would
run) with a fresh state folder and a fixed clock, so the bytes are
reproducible; the full streams are pinned as syrupy snapshots beside this file.
"""

from __future__ import annotations

import json
import signal
import time

import pytest
import yaml

from tests.conftest import ENGINES, EngineBench, first_turn_args, resume_args
from turngate.engines import readers

MARKER_REPLY = '{"greeting": "Hello", "__SKILL_DONE__": true}'
ESCAPED_MARKER = b'\\"__SKILL_DONE__\\": true'
PLAIN_MARKER = b'"__SKILL_DONE__": true'
# gemini in stream-json mode
NDJSON_ENGINES = ("codex", "gemini", "opencode", "claude", "qwen", "kilo", "codebuddy")
# The SDK message stream of claude, qwen and codebuddy: the reply is an assistant `text` block.
SDK_ENGINES = ("claude", "qwen", "codebuddy")


def pinned(bench: EngineBench, played_text: str) -> str:
    """Output as the snapshots pin it: the test's own folder (claude and codebuddy print their
    working directory; claude also its project folder, named after it with dashes) as `<root>`."""
    root = str(bench.root)
    return played_text.replace(root, "<root>").replace(root.replace("/", "-").replace(".", "-"), "<root>")


def sdk_texts(event: dict[str, object]) -> list[str]:
    """The reply texts of one SDK message event (claude, qwen, codebuddy)."""
    message = event.get("message")
    if event.get("type") != "assistant" or not isinstance(message, dict):
        return []
    return [block["text"] for block in message.get("content", []) if block.get("type") == "text"]


def session_id_from(engine: str, stdout: bytes, stderr: bytes) -> str:
    """The resume handle, read the way an orchestrator reads it."""
    if engine == "iflow":
        block = stderr.split(b"<Execution Info>\n", 1)[1].split(b"\n</Execution Info>", 1)[0]
        return str(json.loads(block)["session-id"])
    first = json.loads(stdout.splitlines()[0])
    key = {"codex": "thread_id", "opencode": "sessionID", "kilo": "sessionID"}.get(engine, "session_id")
    return str(first[key])


@pytest.mark.parametrize("engine", ENGINES)
def test_final_answer_with_marker(bench: EngineBench, engine: str, snapshot: object) -> None:
    bench.case("final-answer", turns=[{"steps": [{"say": MARKER_REPLY}]}])
    played = bench.run(engine, first_turn_args(engine, "Run skill greet. tg-case-final-answer"))
    assert played.returncode == 0, played.err
    if engine == "iflow":
        assert played.out == MARKER_REPLY + "\n"
        assert played.err.startswith("<Execution Info>\n")
        assert played.err.endswith("</Execution Info>\n")
    else:
        assert ESCAPED_MARKER in played.stdout  # JSON-escaped inside an NDJSON string
    assert (pinned(bench, played.out), pinned(bench, played.err)) == snapshot


@pytest.mark.parametrize("engine", NDJSON_ENGINES)
def test_escaped_marker_inside_ndjson_string(bench: EngineBench, engine: str) -> None:
    bench.case("escaped", turns=[{"steps": [{"say": MARKER_REPLY}]}])
    played = bench.run(engine, first_turn_args(engine, "tg-case-escaped"))
    # On the wire the marker exists only JSON-escaped inside a string ...
    assert ESCAPED_MARKER in played.stdout
    assert played.stdout.replace(ESCAPED_MARKER, b"").find(PLAIN_MARKER) == -1
    # ... and every line is one JSON object, whose decoded reply holds it plainly.
    events = played.json_lines()
    if engine in SDK_ENGINES:
        assert [text for event in events for text in sdk_texts(event)] == [MARKER_REPLY]
        assert events[-1]["result"] == MARKER_REPLY  # the result echoes it (one reply, printed twice)
        return
    replies = [
        event["item"]["text"]
        if engine == "codex"
        else event["content"]
        if engine == "gemini"
        else event["part"]["text"]
        for event in events
        if (event.get("item", {}).get("type") == "agent_message")
        or (event.get("type") == "message" and event.get("role") == "assistant")
        or event.get("type") == "text"
    ]
    assert replies == [MARKER_REPLY]


@pytest.mark.parametrize("engine", ENGINES)
def test_marker_echoed_in_tool_output_only(bench: EngineBench, engine: str, snapshot: object) -> None:
    echo = 'Patched SKILL.md: finish with {"__SKILL_DONE__": true} only when done.'
    bench.case(
        "tool-echo",
        turns=[
            {
                "steps": [
                    {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": echo}},
                    {"say": "Which greeting style do you want?"},
                ]
            }
        ],
    )
    played = bench.run(engine, first_turn_args(engine, "tg-case-tool-echo"))
    assert played.returncode == 0
    marker_lines = [line for line in played.stdout.splitlines() if b"__SKILL_DONE__" in line]
    match engine:
        case "codex":
            assert [json.loads(line)["item"]["type"] for line in marker_lines] == ["command_execution"]
            assert json.loads(marker_lines[0])["item"]["aggregated_output"] == echo
        case "gemini":
            assert [json.loads(line)["type"] for line in marker_lines] == ["tool_result"]
        case "opencode" | "kilo":
            assert [json.loads(line)["part"]["state"]["output"] for line in marker_lines] == [echo]
        case "iflow":
            assert marker_lines == []  # iflow -p shows only the reply
            assert b"__SKILL_DONE__" not in played.stderr
        case "claude" | "qwen" | "codebuddy":
            kinds = [
                (json.loads(line)["type"], json.loads(line)["message"]["content"][0]["type"])
                for line in marker_lines
            ]
            assert kinds == [("user", "tool_result")]
            assert echo in marker_lines[0].decode("utf-8").replace('\\"', '"')
    assert (pinned(bench, played.out), pinned(bench, played.err)) == snapshot


HINT = {
    "form": "yaml_block",
    "prompt": "Which greeting style do you want?",
    "kind": "choose_one",
    "options": [{"label": "Formal", "value": "formal"}, {"label": "Casual", "value": "casual"}],
}
HINT_TEXT = (
    "<ASK_USER_YAML>\n"
    "ask_user:\n"
    "  prompt: Which greeting style do you want?\n"
    "  kind: choose_one\n"
    "  options:\n"
    "  - label: Formal\n"
    "    value: formal\n"
    "  - label: Casual\n"
    "    value: casual\n"
    "</ASK_USER_YAML>"
)


def reply_text(engine: str, played_stdout: bytes) -> str:
    """The turn's reply, joined, read from the stream as documented."""
    text = ""
    for line in played_stdout.decode("utf-8").splitlines(keepends=True):
        if engine == "iflow":
            text += line
            continue
        event = json.loads(line)
        if engine == "codex" and event.get("item", {}).get("type") == "agent_message":
            text += event["item"]["text"]
        elif engine == "gemini" and event.get("type") == "message" and event["role"] == "assistant":
            text += event["content"]
        elif engine in ("opencode", "kilo") and event.get("type") == "text":
            text += event["part"]["text"]
        elif engine in SDK_ENGINES:
            text += "".join(sdk_texts(event))
    return text


@pytest.mark.parametrize("engine", ENGINES)
def test_yaml_ask_user_hint(bench: EngineBench, engine: str) -> None:
    bench.case("hint", turns=[{"steps": [{"ask_user": {**HINT, "text": "I need one choice."}}]}])
    played = bench.run(engine, first_turn_args(engine, "tg-case-hint"))
    expected = f"I need one choice.\n\n{HINT_TEXT}" + ("\n" if engine == "iflow" else "")
    assert reply_text(engine, played.stdout) == expected
    body = HINT_TEXT.split("\n", 1)[1].rsplit("\n", 1)[0]
    assert yaml.safe_load(body)["ask_user"]["options"][1] == {"label": "Casual", "value": "casual"}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("defect", ["broken_syntax", "truncated"])
def test_malformed_ask_user_hint_is_carried_verbatim(bench: EngineBench, engine: str, defect: str) -> None:
    bench.case("bad-hint", turns=[{"steps": [{"ask_user": {**HINT, "defect": defect}}]}])
    played = bench.run(engine, first_turn_args(engine, "tg-case-bad-hint"))
    assert played.returncode == 0
    text = reply_text(engine, played.stdout)
    assert text.startswith("<ASK_USER_YAML>\nask_user:\n")
    body = text.split("\n", 1)[1].split("</ASK_USER_YAML>")[0]
    if defect == "truncated":
        assert "</ASK_USER_YAML>" not in text
    parsed: object
    try:
        parsed = yaml.safe_load(body)
    except yaml.YAMLError:
        parsed = "unparseable"
    # whatever a lenient parser makes of it, it is not the well-formed hint
    assert parsed != yaml.safe_load(HINT_TEXT.split("\n", 1)[1].rsplit("\n", 1)[0])


END_OF_TURN = {
    "codex": b"turn.completed",
    "gemini": b'"type":"result"',
    "opencode": b"step_finish",
    "kilo": b"step_finish",
    "claude": b'"type":"result"',
    "qwen": b'"type":"result"',
    "codebuddy": b'"type":"result"',
}


@pytest.mark.parametrize("engine", ENGINES)
def test_crash_mid_stream(bench: EngineBench, engine: str) -> None:
    bench.case(
        "crash",
        turns=[{"steps": [{"say": "Working on it"}, {"crash": {"exit_code": 3}}, {"say": "never said"}]}],
    )
    played = bench.run(engine, first_turn_args(engine, "tg-case-crash"))
    assert played.returncode == 3
    assert b"never said" not in played.stdout + played.stderr
    assert b"Working on it" in played.stdout
    assert END_OF_TURN.get(engine, b"Execution Info") not in played.stdout + played.stderr
    (call,) = bench.calls()
    assert (call["outcome"], call["exit_code"], call["turns"]) == ("crashed", 3, [1])


@pytest.mark.parametrize("name", ["SIGSEGV", "SIGKILL"])
def test_crash_by_signal(bench: EngineBench, name: str) -> None:
    """Dies by the signal itself, as a real crash does (SIGKILL's handler cannot even be reset)."""
    bench.case("crash", turns=[{"steps": [{"say": "half"}, {"crash": {"signal": name}}]}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-crash"))
    assert played.returncode == -getattr(signal, name)
    assert b"Traceback" not in played.stderr
    assert [call["outcome"] for call in bench.calls()] == ["signal"]


@pytest.mark.parametrize("engine", ENGINES)
def test_hang_is_killed_by_the_caller(bench: EngineBench, engine: str) -> None:
    bench.case("hang", turns=[{"steps": [{"say": "thinking hard"}, {"hang": True}]}])
    process = bench.start(engine, first_turn_args(engine, "tg-case-hang"))
    try:
        # The call-log line is written just before the engine starts hanging.
        deadline = time.monotonic() + 15
        while not bench.calls() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process.poll() is None, "the engine should still be hanging"
    finally:
        process.terminate()
        stdout, _ = process.communicate(timeout=10)
    assert process.returncode == -signal.SIGTERM
    assert b"thinking hard" in stdout
    (call,) = bench.calls()
    assert (call["outcome"], call["exit_code"], call["end"]) == ("hang", None, None)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_engine_that_lingers_forever_closes_its_pipes_and_lives_on(
    bench: EngineBench, engine: str
) -> None:
    """``linger: {seconds: forever, close_pipes: true}``: the whole turn, end of file on both pipes,
    and a process that is still alive then (it never exits by itself: no timing in this test)."""
    turn = {"steps": [{"say": MARKER_REPLY}], "linger": {"seconds": "forever", "close_pipes": True}}
    bench.case("lingers", turns=[turn])
    process = bench.start(engine, first_turn_args(engine, "tg-case-lingers"))
    try:
        assert process.stdout is not None and process.stderr is not None
        stdout, stderr = process.stdout.read(), process.stderr.read()  # to end of file: both closed
        assert process.poll() is None, "the engine should live on after closing its pipes"
    finally:
        process.terminate()
        process.wait(timeout=10)
    transcript = readers.read(engine, stdout, stderr)
    assert transcript.turn_end() is not None  # the turn itself is whole
    (call,) = bench.calls()
    assert (call["outcome"], call["end"]) == ("hang", None)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_engine_that_lingers_a_while_then_exits_as_its_turn_says(bench: EngineBench, engine: str) -> None:
    turn = {"steps": [{"say": MARKER_REPLY}], "linger": {"seconds": 0.1}}
    bench.case("lingers-a-while", turns=[turn])
    played = bench.run(engine, first_turn_args(engine, "tg-case-lingers-a-while"))
    assert played.returncode == 0, played.err
    assert readers.read(engine, played.stdout, played.stderr).turn_end() is not None
    assert [call["outcome"] for call in bench.calls()] == ["exited"]


@pytest.mark.parametrize("engine", ENGINES)
def test_resume_with_the_issued_id_plays_the_next_turn(bench: EngineBench, engine: str) -> None:
    bench.case(
        "two-turns",
        turns=[
            {"steps": [{"say": "Which greeting style do you want?"}]},
            {"steps": [{"say": MARKER_REPLY}]},
        ],
    )
    first = bench.run(engine, first_turn_args(engine, "tg-case-two-turns"))
    session_id = session_id_from(engine, first.stdout, first.stderr)
    shapes = {
        "codex": 36,
        "gemini": 36,
        "iflow": 44,
        "opencode": 30,
        "claude": 36,
        "qwen": 36,
        "kilo": 30,
        "codebuddy": 36,
    }
    assert len(session_id) == shapes[engine]
    assert session_id.startswith({"iflow": "session-", "opencode": "ses_", "kilo": "ses_"}.get(engine, ""))

    second = bench.run(engine, resume_args(engine, session_id, "Formal, please"))
    assert second.returncode == 0, second.err
    assert reply_text(engine, second.stdout).rstrip("\n") == MARKER_REPLY
    assert session_id_from(engine, second.stdout, second.stderr) == session_id

    calls = bench.calls()
    assert [(c["turns"], c["resumed"], c["case_source"]) for c in calls] == [
        ([1], False, "prompt"),
        ([2], True, "session"),
    ]
    assert calls[1]["session_id"] == session_id


@pytest.mark.parametrize("engine", ENGINES)
def test_resuming_an_unknown_id_fails_like_the_real_engine(bench: EngineBench, engine: str) -> None:
    bench.case("lonely", turns=[{"steps": [{"say": "hi"}]}])
    unknown = {
        "codex": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "gemini": "c0ffee00-0000-4000-8000-000000000000",
        "iflow": "session-nope",
        "opencode": "ses_nope",
        "kilo": "ses_00000000000000000000000000",
        "claude": "c0ffee00-0000-4000-8000-000000000000",
        "qwen": "c0ffee00-0000-4000-8000-000000000000",
        "codebuddy": "c0ffee00-0000-4000-8000-000000000000",
    }[engine]
    played = bench.run(engine, resume_args(engine, unknown, "hello"))
    (call,) = bench.calls()
    assert call["outcome"] == "engine_error"
    if engine == "codebuddy":  # 2.118.2: one error line on stdout, and exit 0
        assert played.json_lines() == [
            {"type": "error", "error": f"No conversation found with session ID: {unknown}"}
        ]
        assert (played.returncode, played.stderr) == (0, b"")
        return
    assert played.returncode == 1
    # kilo 7.7.7 does not name the id (corpus/kilo/real-7.7.7-resume-unknown-id)
    assert (unknown if engine != "kilo" else "Session not found") in played.err
    if engine == "claude":  # 2.1.331: only an error result on stdout, naming the id
        (result,) = played.json_lines()
        assert (result["type"], result["subtype"], result["session_id"]) == (
            "result",
            "error_during_execution",
            unknown,
        )
        return
    assert played.stdout == b""


def test_a_third_turn_that_the_script_lacks_is_a_script_error(bench: EngineBench) -> None:
    bench.case("short", turns=[{"steps": [{"say": "one"}]}])
    first = bench.run("codex", first_turn_args("codex", "tg-case-short"))
    thread = session_id_from("codex", first.stdout, first.stderr)
    played = bench.run("codex", resume_args("codex", thread, "more"))
    assert played.returncode == 97
    assert played.err.count("\n") == 1
    assert "TURN_OUT_OF_RANGE" in played.err
    assert "short.yaml: turns[1]: 2:" in played.err
