"""The fake qwen against the real Qwen Code 0.24.4 (tests/data/real-captures/qwen/).

Each test plays, on the installed fake, the conversation a real capture recorded, with the
capture's own command line, and compares the sequence of events, each event's keys in order,
the exit code and the stderr lines. The real stderr's first line (`Ripgrep not available: …
EACCES`) is of that installation (npm 11 did not run the install scripts), not of qwen: it is
left out of the comparison and the fake does not print it.
"""

from __future__ import annotations

import json
from pathlib import Path

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
        # the research server dropped the connection mid-body: qwen's dropped form (two provider
        # retries whatever the limit, `terminated`)
        ("hazard-cut", {"cut": True, "dropped": True, "retries": 2}),
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


CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "qwen"
HAZARD_ARGV = ["--output-format", "stream-json", "--approval-mode", "yolo", "-p", "tg-case-hazard"]
LAUNCHER_SETTINGS = {"maxRetries": 2, "retryInitialDelayMs": 1000, "retryMaxDelayMs": 2000}


def _settings(folder: Path, generation: object) -> None:
    (folder / ".qwen").mkdir(parents=True, exist_ok=True)
    document = {"model": {"name": "scripted", "generationConfig": generation}}
    (folder / ".qwen" / "settings.json").write_text(json.dumps(document), encoding="utf-8")


def _corpus(name: str) -> tuple[list[dict[str, object]], list[str]]:
    folder = CORPUS / f"real-0.24.4-{name}"
    lines = [json.loads(line) for line in (folder / "stdout").read_text(encoding="utf-8").splitlines()]
    stderr = (folder / "stderr").read_text(encoding="utf-8").splitlines()
    return lines, [line for line in stderr if not line.startswith("Ripgrep not available")]


def _data(lines: list[dict[str, object]]) -> list[object]:
    return [line["data"] for line in lines if line["type"] == "system" and line.get("subtype") == "retry"]


def test_a_rate_limit_is_retried_on_the_schedule_the_settings_give(bench: EngineBench) -> None:
    """corpus/qwen/real-0.24.4-hazard-429: the launcher's ~/.qwen/settings.json (retry limit 2, 1 s
    first, 2 s at most); each announced retry is followed by a provider retry, the last one too."""
    _settings(bench.root / "home", LAUNCHER_SETTINGS)
    bench.case("hazard", turns=[{"steps": [{"model_error": {"status": 429, "retries": 2}}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    real, real_err = _corpus("hazard-429")
    fake = played.json_lines()
    assert played.returncode == 1
    assert kinds(fake) == kinds(real)
    assert _data(fake) == _data(real)
    assert played.err.splitlines() == real_err
    assert fake[-2]["message"]["content"] == real[-2]["message"]["content"]  # qwen's advice under it
    assert fake[-1]["error"] == real[-1]["error"]


def test_the_workspace_settings_win_and_a_bad_value_leaves_the_default(bench: EngineBench) -> None:
    _settings(bench.root / "home", {"maxRetries": 3, "retryInitialDelayMs": "fast", "retryMaxDelayMs": 2000})
    _settings(bench.workdir, {"maxRetries": True, "retryInitialDelayMs": 500})
    bench.case("hazard", turns=[{"steps": [{"model_error": {"status": 429, "retries": 3}}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    notices = [line for line in played.err.splitlines() if line.startswith("Retrying in")]
    assert notices == [
        "Retrying in 1s (attempt 1/3): [API Error: 429 Too Many Requests]",  # 500 ms, rounded
        "Retrying in 1s (attempt 2/3): [API Error: 429 Too Many Requests]",
        "Retrying in 2s (attempt 3/3): [API Error: 429 Too Many Requests]",
    ]
    assert [data["delayMs"] for data in _data(played.json_lines()) if "delayMs" in data] == [500, 1000, 2000]


@pytest.mark.parametrize("settings", ["{not json", "[]", '{"model": {"generationConfig": null}}'])
def test_unreadable_settings_leave_qwens_defaults(bench: EngineBench, settings: str) -> None:
    (bench.root / "home" / ".qwen").mkdir(parents=True)
    (bench.root / "home" / ".qwen" / "settings.json").write_text(settings, encoding="utf-8")
    bench.case("hazard", turns=[{"steps": [{"model_error": {"status": 429, "retries": 4}}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    assert played.returncode == 1
    assert [line.split(":")[0] for line in played.err.splitlines() if line.startswith("Retrying in")] == [
        "Retrying in 60s (attempt 1/10)",
        "Retrying in 120s (attempt 2/10)",
        "Retrying in 240s (attempt 3/10)",
        "Retrying in 300s (attempt 4/10)",
    ]


def test_a_rate_limit_outlasting_the_retry_limit_fails_even_if_the_script_recovers(
    bench: EngineBench,
) -> None:
    _settings(bench.root / "home", LAUNCHER_SETTINGS)
    spec = {"status": 429, "retries": 3, "recovers": True}
    bench.case("hazard", turns=[{"steps": [{"model_error": spec}, {"say": MARKER}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    assert played.returncode == 1
    assert len([line for line in played.err.splitlines() if line.startswith("Retrying in")]) == 2
    assert MARKER not in played.stdout.decode()


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("hazard-cut", {"cut": True}),
        ("hazard-cut-retried", {"cut": True, "retries": 2}),
        ("hazard-drop", {"cut": True, "dropped": True}),
        ("hazard-drop-retried", {"cut": True, "dropped": True, "retries": 2}),
    ],
)
def test_a_cut_answer_is_never_printed_and_asked_again_as_qwen_does(
    bench: EngineBench, name: str, spec: dict[str, object]
) -> None:
    """corpus/qwen/real-0.24.4-hazard-cut*, -drop*: 8 provider retries for a body that ends without its
    end-of-answer event, 2 for a dropped connection, whatever the retry limit; then the failure."""
    _settings(bench.root / "home", {**LAUNCHER_SETTINGS, "maxRetries": spec.get("retries", 0)})
    bench.case("hazard", turns=[{"steps": [{"say": MARKER}, {"model_error": spec}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    real, real_err = _corpus(name)
    fake = played.json_lines()
    assert played.returncode == 1
    assert kinds(fake) == kinds(real)
    assert [list(line) for line in fake] == [list(line) for line in real]
    assert (
        fake[-1]["usage"]
        == real[-1]["usage"]
        == {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_read_input_tokens": 0,
        }
    )
    assert fake[-2]["message"]["content"] == real[-2]["message"]["content"]
    assert played.err.splitlines() == real_err


@pytest.mark.parametrize("dropped", [False, True])
def test_a_cut_that_a_retry_recovers_prints_the_answer_once_after_the_retries(
    bench: EngineBench, dropped: bool
) -> None:
    spec = {"cut": True, "retries": 1, "recovers": True, **({"dropped": True} if dropped else {})}
    bench.case("hazard", turns=[{"steps": [{"think": "Greet."}, {"say": MARKER}, {"model_error": spec}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    assert played.returncode == 0
    assert kinds(played.json_lines())[2:] == [
        "system/retry",
        "assistant:thinking",
        "assistant:text",
        "result",
    ]
    assert played.json_lines()[-1]["result"] == MARKER


def test_a_cut_that_outlasts_qwens_retries_fails_even_if_the_script_recovers(bench: EngineBench) -> None:
    spec = {"cut": True, "dropped": True, "retries": 3, "recovers": True}
    bench.case("hazard", turns=[{"steps": [{"say": MARKER}, {"model_error": spec}]}])
    played = bench.run("qwen", HAZARD_ARGV)
    assert played.returncode == 1
    assert kinds(played.json_lines())[2:] == ["system/retry"] * 2 + ["assistant:text", "result"]
    assert MARKER not in played.stdout.decode()
