"""The fake qwen against the real Qwen Code 0.24.4 (tests/data/real-captures/qwen/).

Each test plays, on the installed fake, the conversation a real capture recorded, with the
capture's own command line, and compares the sequence of events, each event's keys in order,
the exit code and the stderr lines. The real stderr's first line (`Ripgrep not available: …
EACCES`) is of that installation (npm 11 did not run the install scripts), not of qwen: it is
left out of the comparison and the fake does not print it.
"""

from __future__ import annotations

import pytest

from tests.conftest import EngineBench
from tests.fake_engines.real_captures import (
    SCRIPTS,
    Capture,
    assert_same_shape,
    kinds,
    load,
    session_of,
    stdin_lines,
    with_session,
)
from turngate.engines import readers

ONE_TURN = {
    "message": "fid-message",
    "fid-think-message": "fid-think-message",
    "fid-tool-echo": "fid-tool-echo",
    "fid-tool-failed": "fid-tool-failed",
    "ne-two-messages": "ne-two-messages",
    "fid-error": "fid-error",
}
MARKER = '{"greeting": "Hello", "__SKILL_DONE__": true}'


def stderr_lines(capture: Capture) -> list[str]:
    return [
        line for line in capture.stderr.decode().splitlines() if not line.startswith("Ripgrep not available")
    ]


@pytest.mark.parametrize(("name", "case"), ONE_TURN.items())
def test_one_turn_has_the_real_shape(bench: EngineBench, name: str, case: str) -> None:
    real = load("qwen", name)
    bench.case(case, **SCRIPTS[case])
    played = bench.run("qwen", real.argv)
    assert played.returncode == real.exit_code
    assert played.err.splitlines() == stderr_lines(real)  # the YOLO warning
    assert_same_shape(real, played.stdout)


def test_the_result_echoes_the_last_message_once(bench: EngineBench) -> None:
    bench.case("ne-two-messages", **SCRIPTS["ne-two-messages"])
    played = bench.run("qwen", load("qwen", "ne-two-messages").argv)
    assert played.json_lines()[-1]["result"] == MARKER
    assert readers.read("qwen", played.stdout).assistant_messages() == (
        "Let me read the skill first.",
        MARKER,
    )


def test_a_failed_command_reports_itself_as_the_real_one_does(bench: EngineBench) -> None:
    real = load("qwen", "fid-tool-failed")
    bench.case("fid-tool-failed", **SCRIPTS["fid-tool-failed"])
    played = bench.run("qwen", real.argv)
    (fake_result,) = [line for line in played.json_lines() if line["type"] == "user"]
    (real_result,) = [line for line in real.lines() if line["type"] == "user"]
    fake_block, real_block = fake_result["message"]["content"][0], real_result["message"]["content"][0]
    assert fake_block["is_error"] is real_block["is_error"] is True
    # the command the model ran differs (the real one read a file the model server wrote); the rest is qwen's
    assert fake_block["content"].split("\n", 1)[1] == real_block["content"].split("\n", 1)[1]


def test_an_api_error_is_an_assistant_text_then_a_failed_result(bench: EngineBench) -> None:
    real = load("qwen", "fid-error")
    bench.case("fid-error", **SCRIPTS["fid-error"])
    played = bench.run("qwen", real.argv)
    fake_lines, real_lines = played.json_lines(), real.lines()
    assert fake_lines[-2]["message"]["content"] == real_lines[-2]["message"]["content"]
    assert (
        fake_lines[-1]["error"]
        == real_lines[-1]["error"]
        == {"message": "[API Error: 400 scripted failure: quota exhausted]"}
    )
    transcript = readers.read("qwen", played.stdout)
    assert transcript.turn_end() is not None and not transcript.turn_end().ok


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("hazard-500", {"status": 500, "retries": 3, "message": "turngate hazard 500"}),
        ("hazard-cut", {"cut": True, "retries": 2}),
    ],
)
def test_a_failed_model_request_after_retries(bench: EngineBench, name: str, spec: dict[str, object]) -> None:
    real = load("qwen", name)
    bench.case("fid-message", turns=[{"steps": [{"model_error": spec}]}])
    played = bench.run("qwen", real.argv)
    assert played.returncode == real.exit_code == 1
    assert played.err.splitlines() == stderr_lines(real)
    assert_same_shape(real, played.stdout)
    assert played.json_lines()[-2]["message"]["content"] == real.lines()[-2]["message"]["content"]


def test_a_rate_limit_is_retried_on_a_schedule(bench: EngineBench) -> None:
    """The real capture was killed after 150 s, in its second wait (120 s): its lines are the start
    of what the fake prints for two retries before it gives up."""
    real = load("qwen", "hazard-429")
    bench.case(
        "fid-message",
        turns=[{"steps": [{"model_error": {"status": 429, "retries": 2, "message": "turngate hazard 429"}}]}],
    )
    played = bench.run("qwen", real.argv)
    fake = played.json_lines()
    assert kinds(fake)[: len(real.lines())] == kinds(real.lines())
    assert [line["data"] for line in fake[2:5]] == [line["data"] for line in real.lines()[2:5]]
    assert played.err.splitlines()[: len(stderr_lines(real))] == stderr_lines(real)
    assert (played.returncode, fake[-1]["subtype"]) == (1, "error_during_execution")


def test_a_resume_plays_the_next_turn_in_the_same_session(bench: EngineBench) -> None:
    first, second = load("qwen", "resume-turn1"), load("qwen", "resume-turn2")
    bench.case("fid-resume", **SCRIPTS["fid-resume"])
    played = bench.run("qwen", first.argv)
    assert_same_shape(first, played.stdout)
    resumed = bench.run(
        "qwen", with_session(second.argv, session_of(second.stdout), session_of(played.stdout))
    )
    assert_same_shape(second, resumed.stdout)


@pytest.mark.parametrize("name", ["usage-unknown-flag", "resume-unknown-id", "version"])
def test_refusals_and_the_version_are_the_real_bytes(bench: EngineBench, name: str) -> None:
    real = load("qwen", name)
    played = bench.run("qwen", real.argv)
    assert (played.returncode, played.stdout, played.stderr) == (real.exit_code, real.stdout, real.stderr)


def test_the_stream_json_input_protocol_plays_a_turn_per_line(bench: EngineBench) -> None:
    real = load("qwen", "resident-stream-json-two-turns")
    bench.case("fid-resume", **SCRIPTS["fid-resume"])
    played = bench.run("qwen", real.argv, stdin=stdin_lines(real))
    assert played.returncode == real.exit_code == 0
    assert_same_shape(real, played.stdout)  # the goal_state event in the first turn only
    assert played.err.splitlines() == stderr_lines(real)  # the warning once per process


def test_the_call_log_keeps_the_approval_mode_and_qwens_environment(bench: EngineBench) -> None:
    bench.case("fid-message", **SCRIPTS["fid-message"])
    argv = ["--yolo", "-o", "stream-json", "-p", "tg-case-fid-message"]
    bench.run("qwen", argv, OPENAI_API_KEY="sk-x", OPENAI_BASE_URL="http://m/v1", ANTHROPIC_API_KEY="a")
    (call,) = bench.calls()
    assert (call["approval_mode"], call["output_format"]) == ("yolo", "stream-json")
    assert call["env"]["OPENAI_API_KEY"] == "<redacted>"
    assert call["env"]["OPENAI_BASE_URL"] == "http://m/v1"
    assert "ANTHROPIC_API_KEY" not in call["env"]


def test_the_warning_can_be_silenced_as_qwen_says(bench: EngineBench) -> None:
    bench.case("fid-message", **SCRIPTS["fid-message"])
    played = bench.run("qwen", load("qwen", "message").argv, QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    assert (played.returncode, played.stderr) == (0, b"")


def test_the_goal_state_event_is_a_variant(bench: EngineBench) -> None:
    bench.case("fid-message", **SCRIPTS["fid-message"], variants={"qwen": {"goal_state": False}})
    played = bench.run("qwen", load("qwen", "message").argv)
    assert kinds(played.json_lines()) == ["system/init", "assistant:text", "result"]


def _usages(lines: list[dict[str, object]]) -> list[tuple[str, list[str]]]:
    found = []
    for line in lines:
        if line["type"] == "assistant":
            message = line["message"]
            assert isinstance(message, dict)
            found.append((str(message["content"][0]["type"]), list(message["usage"])))
        elif line["type"] == "result":
            usage = line["usage"]
            assert isinstance(usage, dict)
            found.append(("result", list(usage)))
    return found


def test_a_text_its_answers_tool_call_follows_carries_no_usage_of_its_own(bench: EngineBench) -> None:
    # ne-two-messages: "Let me read the skill first." and a tool call in one answer; the text's event
    # has usage {input_tokens, output_tokens} (both 0), the call's the answer's.
    real = load("qwen", "ne-two-messages")
    bench.case("ne-two-messages", **SCRIPTS["ne-two-messages"])
    played = bench.run("qwen", real.argv)
    assert _usages(played.json_lines()) == _usages(real.lines())
    text = played.json_lines()[2]["message"]
    assert text["usage"] == {"input_tokens": 0, "output_tokens": 0}


def test_a_failed_result_counts_the_answers_before_it(bench: EngineBench) -> None:
    # As 0.24.4 printed engine-fault/failed-after-marker/rate-limited in the live fidelity run of
    # 2026-11-25: an answer, a tool call, then a 429 it gave up on; the failed result's usage is the
    # answers' (total_tokens too); with no answer before the failure it is zeros (real-0.24.4-error).
    steps = [
        {"say": MARKER},
        {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md\n"}},
        {"model_error": {"status": 429}},
    ]
    bench.case("limited", turns=[{"steps": steps}])
    played = bench.run(
        "qwen", ["--output-format", "stream-json", "--approval-mode", "yolo", "-p", "tg-case-limited"]
    )
    assert played.returncode == 1
    usage = played.json_lines()[-1]["usage"]
    assert list(usage) == ["input_tokens", "output_tokens", "cache_read_input_tokens", "total_tokens"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
