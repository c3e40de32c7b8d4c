"""The steps for the live hazards: failed model requests, patch tools, calls left running, long lines
and characters split across writes, each written as the real CLI was seen to write it
(docs/fake-engines.md, "Model errors" and the steps table).

The real shapes these tests pin were recorded in November 2026 from codex 0.169.0, gemini 0.61.0 and
opencode 1.18.33 against a scripted model that cut its stream after a complete answer, answered
429, or called apply_patch / write_file / write.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable

import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args
from turngate.engines import readers
from turngate.engines.fake.plan import Pause, Write, render_turn

ANSWER = '{"greeting": "Hello", "__SKILL_DONE__": true}'
# Only ends a hung fake (a broken one): never reached by one that works, however loaded the machine.
HANG_GUARD_SEC = 600.0
CUT = "stream disconnected before completion: stream closed before response.completed"


def _types(played_stdout: bytes) -> list[str]:
    labels = []
    for line in played_stdout.decode().splitlines():
        event = json.loads(line)
        item = event.get("item") or event.get("part") or {}
        labels.append(f"{event['type']}:{item['type']}" if "type" in item else event["type"])
    return labels


def _read_until(process: subprocess.Popen[bytes], enough: Callable[[bytes], bool]) -> bytes:
    """What a running engine has written to stdout once ``enough`` of it is there: blocking reads, so
    no wait is guessed and no time is compared (the scripts then keep the engine busy: a loop that
    never ends, or a pause far longer than any read). A fake that writes nothing more is killed by a
    guard, so the test fails with what was written instead of hanging."""
    assert process.stdout is not None
    guard = threading.Timer(HANG_GUARD_SEC, process.kill)
    guard.start()
    try:
        read = b""
        while not enough(read):
            chunk = os.read(process.stdout.fileno(), 1 << 20)
            assert chunk, f"stdout closed before it was there: {read[-300:]!r}"
            read += chunk
        return read
    finally:
        guard.cancel()


def _lines(count: int) -> Callable[[bytes], bool]:
    return lambda read: read.count(b"\n") >= count


def test_codex_stream_cut_after_the_answer_is_the_real_0_169_0_turn(bench: EngineBench) -> None:
    bench.case("cut", turns=[{"steps": [{"say": ANSWER}, {"model_error": {"cut": True}}]}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-cut"))
    assert played.returncode == 1
    lines = played.json_lines()
    assert [line["type"] for line in lines] == [
        "thread.started",
        "turn.started",
        "item.completed",
        "error",
        "turn.failed",
    ]
    assert lines[2]["item"] == {"id": "item_0", "type": "agent_message", "text": ANSWER}
    assert lines[3] == {"type": "error", "message": CUT}
    assert lines[4] == {"type": "turn.failed", "error": {"message": CUT}}
    assert json.loads(bench.call_log.read_text().splitlines()[-1])["outcome"] == "exited"


def test_codex_retries_print_the_answer_again_between_reconnect_lines(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "retries": 2}}]
    bench.case("retried", turns=[{"steps": steps}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-retried"))
    lines = played.json_lines()[2:]
    # as real codex 0.169.0 with stream_max_retries = 2: the answer three times, then the failure
    assert [line.get("item", {}).get("text") or line.get("message") for line in lines[:-1]] == [
        ANSWER,
        f"Reconnecting... 1/2 ({CUT})",
        ANSWER,
        f"Reconnecting... 2/2 ({CUT})",
        ANSWER,
        CUT,
    ]
    assert [line["item"]["id"] for line in lines if "item" in line] == ["item_0", "item_1", "item_2"]
    assert lines[-1] == {"type": "turn.failed", "error": {"message": CUT}}
    transcript = readers.read("codex", played.stdout, played.stderr)
    assert transcript.assistant_messages() == (ANSWER, ANSWER, ANSWER)
    turn_end = transcript.turn_end()
    assert turn_end is not None and not turn_end.ok


def test_a_recovered_cut_goes_on_to_the_turns_own_end(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "retries": 1, "recovers": True}}]
    bench.case("recovered", turns=[{"steps": steps}])
    codex = bench.run("codex", first_turn_args("codex", "tg-case-recovered"))
    assert codex.returncode == 0
    assert _types(codex.stdout)[2:] == [
        "item.completed:agent_message",
        "error",
        "item.completed:agent_message",
        "turn.completed",
    ]
    assert f"Reconnecting... 1/5 ({CUT})" in codex.out  # codex's default stream_max_retries
    opencode = bench.run("opencode", first_turn_args("opencode", "tg-case-recovered"))
    assert opencode.returncode == 0
    assert _types(opencode.stdout) == [
        "step_start:step-start",
        "text:text",
        "step_finish:step-finish",
        "step_start:step-start",
        "text:text",
        "step_finish:step-finish",
    ]
    assert [
        line["part"].get("reason") for line in opencode.json_lines() if line["type"] == "step_finish"
    ] == [
        "unknown",
        "stop",
    ]
    gemini = bench.run("gemini", first_turn_args("gemini", "tg-case-recovered"))
    assert readers.read("gemini", gemini.stdout, gemini.stderr, mode="stream-json").assistant_messages() == (
        ANSWER + ANSWER,
    )


def test_gemini_stream_cut_ends_with_an_error_result_and_exit_0(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "retries": 3}}]
    bench.case("gcut", turns=[{"steps": steps}])
    played = bench.run("gemini", first_turn_args("gemini", "tg-case-gcut"))
    assert played.returncode == 0  # as 0.61.0: the turn failed, the process did not
    lines = played.json_lines()
    assert [line["type"] for line in lines] == ["init", "message", *["message"] * 4, "error", "result"]
    assert [line["content"] for line in lines[2:6]] == [ANSWER] * 4
    assert lines[6]["severity"] == "error"
    assert lines[6]["message"] == "Model stream ended without a finish reason."
    assert lines[7]["status"] == "error"
    assert "error" not in lines[7]  # 0.61.0's result names no error for a broken stream
    document = bench.run("gemini", first_turn_args("gemini", "tg-case-gcut", gemini_format="json"))
    assert document.returncode == 0
    parsed = json.loads(document.stdout)
    assert list(parsed) == ["session_id", "response", "stats", "error"]
    assert parsed["response"] == ANSWER * 4
    assert parsed["error"] == {
        "type": "INVALID_STREAM",
        "message": "Model stream ended without a finish reason.",
    }


def test_a_429_as_each_cli_reports_it(bench: EngineBench) -> None:
    steps = [{"say": "Let me check."}, {"model_error": {"status": 429}}]
    bench.case("quota", turns=[{"steps": steps}])
    codex = bench.run("codex", first_turn_args("codex", "tg-case-quota"))
    message = "exceeded retry limit, last status: 429 Too Many Requests"
    assert codex.returncode == 1
    assert codex.json_lines()[-2:] == [
        {"type": "error", "message": message},
        {"type": "turn.failed", "error": {"message": message}},
    ]
    gemini = bench.run("gemini", first_turn_args("gemini", "tg-case-quota"))
    assert gemini.returncode == 429 % 256
    result = gemini.json_lines()[-1]
    assert result["type"] == "result" and result["status"] == "error"
    assert result["error"]["type"] == "unknown"
    assert result["error"]["message"].startswith(
        "[API Error: Too Many Requests]\nPlease wait and try again later."
    )
    document = bench.run("gemini", first_turn_args("gemini", "tg-case-quota", gemini_format="json"))
    assert document.returncode == 173 and document.stdout == b""
    assert json.loads(document.stderr)["error"] == {
        "type": "Error",
        "message": "Too Many Requests",
        "code": 429,
    }
    opencode = bench.run("opencode", first_turn_args("opencode", "tg-case-quota"))
    assert opencode.returncode == 1
    error = opencode.json_lines()[-1]
    assert error["type"] == "error"
    assert error["error"] == {
        "name": "APIError",
        "data": {"message": "Too Many Requests", "statusCode": 429, "isRetryable": True},
    }
    iflow = bench.run("iflow", first_turn_args("iflow", "tg-case-quota"))
    assert iflow.returncode == 1
    assert "Error: Too Many Requests" in iflow.err and "<Execution Info>" not in iflow.err


def test_opencode_stream_cut_loops_and_never_exits(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "retries": 2}}]
    bench.case("loop", turns=[{"steps": steps}])
    process = bench.start("opencode", first_turn_args("opencode", "tg-case-loop"))
    try:
        stdout = _read_until(process, _lines(9))  # every line the script has, then the loop goes on
        assert process.poll() is None  # it asks the model again and again: it never exits
    finally:
        process.kill()
        rest, _ = process.communicate()
    stdout += rest
    labels = _types(stdout)
    assert labels == [
        "step_start:step-start",
        *["text:text", "step_finish:step-finish", "step_start:step-start"] * 2,
        "text:text",
        "step_finish:step-finish",
    ]
    reasons = [
        json.loads(line)["part"]["reason"] for line in stdout.decode().splitlines() if '"step_finish"' in line
    ]
    assert reasons == ["unknown"] * 3


def test_a_file_change_writes_its_file_and_shows_as_each_cli_shows_its_patch_tool(bench: EngineBench) -> None:
    change = {"file_change": {"path": "drafts/greeting.json", "content": ANSWER + "\n"}}
    bench.case("patch", turns=[{"steps": [change, {"say": "Which style?"}]}])
    for engine in ENGINES:
        target = bench.workdir / "drafts" / "greeting.json"
        target.unlink(missing_ok=True)
        played = bench.run(engine, first_turn_args(engine, "tg-case-patch"))
        assert played.returncode == 0, played.err
        assert target.read_text() == ANSWER + "\n"
        transcript = readers.read(
            engine, played.stdout, played.stderr, **({"mode": "stream-json"} if engine == "gemini" else {})
        )
        assert transcript.assistant_messages()[-1].strip() == "Which style?"
    codex = bench.run("codex", first_turn_args("codex", "tg-case-patch")).json_lines()
    path = os.path.join(str(bench.workdir), "drafts", "greeting.json")
    assert codex[2] == {
        "type": "item.started",
        "item": {
            "id": "item_0",
            "type": "file_change",
            "changes": [{"path": path, "kind": "add"}],
            "status": "in_progress",
        },
    }
    assert codex[3]["item"]["status"] == "completed"
    assert b"__SKILL_DONE__" not in b"".join(
        json.dumps(line).encode() for line in codex[2:4]
    )  # never the content
    gemini = bench.run("gemini", first_turn_args("gemini", "tg-case-patch")).json_lines()
    assert gemini[2]["tool_name"] == "write_file"
    assert gemini[2]["parameters"] == {"file_path": "drafts/greeting.json", "content": ANSWER + "\n"}
    assert gemini[3] == {
        "type": "tool_result",
        "timestamp": gemini[3]["timestamp"],
        "tool_id": gemini[2]["tool_id"],
        "status": "success",
    }
    opencode = bench.run("opencode", first_turn_args("opencode", "tg-case-patch")).json_lines()
    state = opencode[1]["part"]["state"]
    assert opencode[1]["part"]["tool"] == "write"
    assert state["input"] == {"filePath": "drafts/greeting.json", "content": ANSWER + "\n"}
    assert state["output"] == "Wrote file successfully."
    assert state["metadata"]["filepath"] == path
    assert [line["type"] for line in opencode] == [
        "step_start",
        "tool_use",
        "step_finish",
        "step_start",
        "text",
        "step_finish",
    ]


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.json", "a/../../b"])
def test_a_file_change_stays_inside_the_working_directory(bench: EngineBench, path: str) -> None:
    bench.case("escape", turns=[{"steps": [{"file_change": {"path": path, "content": "x"}}]}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-escape"))
    assert played.returncode == 97
    assert "SCRIPT_INVALID" in played.err and "file_change.path" in played.err


def test_a_running_tool_is_started_and_never_finished(bench: EngineBench) -> None:
    steps = [
        {"say": "I need to ask you something."},
        {
            "tool": {
                "name": "question",
                "input": {"questions": [{"question": "Which style?"}]},
                "status": "running",
            }
        },
        {"hang": True},
    ]
    bench.case("asking", turns=[{"steps": steps}])
    expected = {
        "codex": [
            "thread.started",
            "turn.started",
            "item.completed:agent_message",
            "item.started:mcp_tool_call",
        ],
        "gemini": ["init", "message", "message", "tool_use"],
        "opencode": ["step_start:step-start", "text:text"],  # a tool part is printed once it finishes
    }
    for engine, labels in expected.items():
        process = bench.start(engine, first_turn_args(engine, "tg-case-asking"))
        try:
            stdout = _read_until(process, _lines(len(labels)))
            assert process.poll() is None  # the call never finishes: the engine hangs on it
        finally:
            process.kill()
            rest, _ = process.communicate()
        assert _types(stdout + rest) == labels, engine


def test_pad_makes_the_next_line_long_and_keeps_its_json(bench: EngineBench) -> None:
    bench.case("long", turns=[{"steps": [{"pad": 1_100_000}, {"say": ANSWER}]}])
    for engine in ("codex", "gemini", "opencode"):
        played = bench.run(engine, first_turn_args(engine, "tg-case-long"))
        long_lines = [line for line in played.stdout.split(b"\n") if len(line) >= 1_100_000]
        assert len(long_lines) == 1, engine
        assert b"__SKILL_DONE__" in long_lines[0][-200:]  # the marker at the end of the long line
        json.loads(long_lines[0])
        options = {"mode": "stream-json"} if engine == "gemini" else {}
        assert readers.read(engine, played.stdout, played.stderr, **options).assistant_messages() == (ANSWER,)


def test_split_inside_cuts_a_multibyte_character_mid_sequence() -> None:
    class Lines:
        def begin(self) -> list[tuple[int, bytes]]:
            return []

        def step(self, step: dict[str, object]) -> list[tuple[int, bytes]]:
            return [(1, "".join(step["say"]).encode() + b"\n")]  # type: ignore[arg-type]

        def end(self, end: str) -> list[tuple[int, bytes]]:
            return []

    turn = {
        "steps": [{"split": {"parts": 2, "pause": 0.1, "inside": "ü"}}, {"say": ["Grüße 👋"]}],
        "end": "completed",
    }
    operations = render_turn(turn, Lines())
    assert operations == [Write(1, b"Gr\xc3"), Pause(0.1), Write(1, b"\xbc\xc3\x9fe \xf0\x9f\x91\x8b\n")]
    with pytest.raises(UnicodeDecodeError):
        operations[0].data.decode("utf-8")  # type: ignore[union-attr]


def test_split_inside_reaches_the_reader_as_two_writes(bench: EngineBench) -> None:
    # in the longest pause a script may ask (5 s), a reader blocked on the pipe has the emoji's first
    # byte and nothing after it
    bench.case("halves", turns=[{"steps": [{"split": {"inside": "👋", "pause": 5}}, {"say": "Grüße 👋?"}]}])
    process = bench.start("codex", first_turn_args("codex", "tg-case-halves"))
    try:
        read = _read_until(process, lambda read: read.endswith(b"\xf0"))
    finally:
        process.kill()
        process.communicate()
    with pytest.raises(UnicodeDecodeError):
        read.decode("utf-8")
    # the same turn with a short pause: the two writes make the text once, whole
    bench.case("joined", turns=[{"steps": [{"split": {"inside": "👋", "pause": 0.1}}, {"say": "Grüße 👋?"}]}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-joined"))
    assert played.stdout.decode("utf-8").count("Grüße 👋?") == 1


def test_opencode_ends_a_tool_step_before_a_pause_and_writes_the_same_lines(bench: EngineBench) -> None:
    """1.18.33 writes step_finish "tool-calls" once the tool has run; the next step starts when the
    model answers. A pause after a tool comes between the two, and the lines are those without it."""
    tool = {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md\n"}}
    # a pause far longer than the wait for the tool's lines: what is there before it is what the
    # engine writes before the pause, however slowly it starts
    bench.case("paused", turns=[{"steps": [tool, {"sleep": 120}, {"say": ANSWER}]}])
    bench.case("slow", turns=[{"steps": [tool, {"sleep": 0.2}, {"say": ANSWER}]}])
    bench.case("fast", turns=[{"steps": [tool, {"say": ANSWER}]}])
    process = bench.start("opencode", first_turn_args("opencode", "tg-case-paused"))
    try:
        early = _read_until(process, _lines(3))
        assert process.poll() is None  # in the pause
    finally:
        process.kill()
        process.communicate()
    assert _types(early) == ["step_start:step-start", "tool_use:tool", "step_finish:step-finish"]
    again = bench.run(
        "opencode", first_turn_args("opencode", "tg-case-slow"), TURNGATE_STATE=str(bench.root / "s2")
    )
    assert _types(again.stdout)[:3] == _types(early)  # a short pause: the same lines before it
    fast = bench.run(
        "opencode", first_turn_args("opencode", "tg-case-fast"), TURNGATE_STATE=str(bench.root / "s3")
    )

    def shape(stdout: bytes) -> list[tuple[str, object, object]]:
        lines = [json.loads(line) for line in stdout.decode().splitlines()]
        return [(line["type"], line["part"].get("reason"), line["part"].get("text")) for line in lines]

    assert shape(again.stdout) == shape(fast.stdout)


def _codex_yolo(prompt: str) -> list[str]:
    """codex exec with --yolo, which every build takes (0.169.0 refuses --full-auto)."""
    return ["exec", "--skip-git-repo-check", "--json", "--yolo", prompt]


def _corpus_json(engine: str, name: str, stream: str = "stdout") -> list[dict[str, object]]:
    folder = os.path.join(os.path.dirname(__file__), "..", "..", "corpus", engine, name)
    with open(os.path.join(folder, stream), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.mark.parametrize("version", ["0.146.1", "0.169.0"])
@pytest.mark.parametrize("status", [429, 500])
def test_codex_announces_retries_of_a_status_as_each_build_does(
    bench: EngineBench, version: str, status: int
) -> None:
    # corpus/codex/real-<version>-hazard-<status>: 0.169.0 announces a 429's two retries, 0.146.1 not;
    # both announce a 500's, with codex's own "high demand" message (0.169.0's apostrophe typographic).
    bench.case("refused", turns=[{"steps": [{"model_error": {"status": status, "retries": 2}}]}])
    played = bench.run("codex", _codex_yolo("tg-case-refused"), TURNGATE_EMULATE=f"codex@{version}")
    real = _corpus_json("codex", f"real-{version}-hazard-{status}")
    assert played.returncode == 1
    assert [line for line in played.json_lines()[2:]] == real[2:]


def test_codex_reports_a_dropped_connection_with_the_transport_error(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "dropped": True, "retries": 2}}]
    bench.case("dropped", turns=[{"steps": steps}])
    played = bench.run("codex", _codex_yolo("tg-case-dropped"), TURNGATE_EMULATE="codex@0.169.0")
    real = _corpus_json("codex", "real-0.169.0-hazard-drop-retried")
    assert [line.get("message") or line.get("error") for line in played.json_lines()[2:]] == [
        line.get("message") or line.get("error") for line in real[2:]
    ]


def test_codex_refuses_request_user_input_in_exec_and_goes_on(bench: EngineBench) -> None:
    # corpus/codex/real-0.169.0-request-user-input: nothing of the call on stdout, one ERROR line.
    question = {"questions": [{"id": "style", "question": "Which style?"}]}
    steps = [
        {"tool": {"name": "request_user_input", "input": question, "output": ""}},
        {"say": "Which style?"},
    ]
    bench.case("ask", turns=[{"steps": steps}])
    played = bench.run("codex", first_turn_args("codex", "tg-case-ask"))
    assert played.returncode == 0
    assert _types(played.stdout) == [
        line["type"] + (f":{line['item']['type']}" if "item" in line else "")
        for line in _corpus_json("codex", "real-0.169.0-request-user-input")
    ]
    (refusal,) = played.err.splitlines()
    assert refusal.endswith(
        "Z ERROR codex_core::tools::router: error=request_user_input is unavailable in Default mode"
    )


def test_gemini_reports_a_dropped_connection_without_retrying_it(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "dropped": True, "retries": 2}}]
    bench.case("gdrop", turns=[{"steps": steps}])
    played = bench.run("gemini", first_turn_args("gemini", "tg-case-gdrop"))
    real = _corpus_json("gemini", "real-0.61.0-stream-json-hazard-drop-retried")
    assert played.returncode == 1
    assert [line["type"] for line in played.json_lines()] == [line["type"] for line in real]
    assert (
        played.json_lines()[-1]["error"]
        == real[-1]["error"]
        == {
            "type": "unknown",
            "message": "[API Error: terminated]",
        }
    )
    document = bench.run("gemini", first_turn_args("gemini", "tg-case-gdrop", gemini_format="json"))
    assert (document.returncode, document.stdout) == (1, b"")
    assert json.loads(document.stderr)["error"] == {"type": "Error", "message": "terminated", "code": 1}


def test_opencode_reports_a_dropped_connection_in_the_step_without_the_answer(bench: EngineBench) -> None:
    steps = [{"say": ANSWER}, {"model_error": {"cut": True, "dropped": True}}]
    bench.case("odrop", turns=[{"steps": steps}])
    played = bench.run("opencode", first_turn_args("opencode", "tg-case-odrop"))
    real = _corpus_json("opencode", "real-1.18.33-hazard-drop")
    assert played.returncode == 1
    assert (
        _types(played.stdout)
        == ["step_start:step-start", "error"]
        == [str(line["type"]) + (":step-start" if line["type"] == "step_start" else "") for line in real]
    )
    assert played.json_lines()[-1]["error"] == real[-1]["error"]
