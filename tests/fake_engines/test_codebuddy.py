"""The fake codebuddy against the real CodeBuddy Code 2.118.2 (tests/data/real-captures/codebuddy/).

Each test plays, on the installed fake, the conversation a real capture recorded, with the
capture's own command line, and compares the sequence of events (the replies 2.118.2 printed
only in `result.result` included), each event's keys in order, the exit code and stderr. Not
played: `json-schema-empty-answer-loop-*` (the model answered nothing after its
StructuredOutput call and codebuddy asked again 500 times) and `json-schema-plain-text-answer`
(a request that failed while codebuddy re-prompted): what a model does, not a shape.
"""

from __future__ import annotations

import re
import signal
import time

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
from turngate.base.data_yaml import load_data
from turngate.engines import readers
from turngate.tools.drift.sources import CORPUS_DIR

ONE_TURN = {
    "message": "fid-message",
    "fid-think-message": "fid-think-message",
    "ne-think-prose": "ne-think-prose",
    "fid-tool-echo": "fid-tool-echo",
    "fid-tool-failed": "fid-tool-failed",
    "ne-two-messages": "ne-two-messages",
    "ne-tool-then-json": "ne-tool-then-json",
}
MARKER = '{"greeting": "Hello", "__SKILL_DONE__": true}'


@pytest.mark.parametrize(("name", "case"), ONE_TURN.items())
def test_one_turn_has_the_real_shape(bench: EngineBench, name: str, case: str) -> None:
    real = load("codebuddy", name)
    bench.case(case, **SCRIPTS[case])
    played = bench.run("codebuddy", real.argv)
    assert (played.returncode, played.stderr) == (real.exit_code, real.stderr)
    assert_same_shape(real, played.stdout)
    assert played.json_lines()[-1]["result"] == real.lines()[-1]["result"]


@pytest.mark.parametrize(
    ("name", "replies"),
    [
        ("fid-think-message", (MARKER,)),  # thinking, then the reply: printed only as result.result
        ("ne-two-messages", ("Let me read the skill first.", MARKER)),  # the final text only there
        ("ne-tool-then-json", (MARKER,)),  # printed, and echoed once
    ],
)
def test_a_reply_only_in_the_result_is_read_as_the_reply(
    bench: EngineBench, name: str, replies: tuple[str, ...]
) -> None:
    bench.case(name, **SCRIPTS[name])
    played = bench.run("codebuddy", load("codebuddy", name).argv)
    assert readers.read("codebuddy", played.stdout).assistant_messages() == replies


def test_the_variant_prints_every_text_or_none(bench: EngineBench) -> None:
    real = load("codebuddy", "fid-think-message")
    bench.case(
        "fid-think-message",
        **SCRIPTS["fid-think-message"],
        variants={"codebuddy": {"text_in_result_only": "never"}},
    )
    shown = bench.run("codebuddy", real.argv)
    assert kinds(shown.json_lines())[-2:] == ["assistant:text", "result"]
    bench.case(
        "fid-message", **SCRIPTS["fid-message"], variants={"codebuddy": {"text_in_result_only": "always"}}
    )
    hidden = bench.run("codebuddy", load("codebuddy", "message").argv)
    assert "assistant:text" not in kinds(hidden.json_lines())
    assert readers.read("codebuddy", hidden.stdout).assistant_messages() == (MARKER,)


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("fid-error", {"error": {"message": "scripted failure: quota exhausted", "code": 400}}),
        ("hazard-429", {"model_error": {"status": 429, "message": "turngate hazard 429"}}),
        ("hazard-500", {"model_error": {"status": 500, "message": "turngate hazard 500"}}),
    ],
)
def test_a_failed_request_exits_0_after_an_error_result(
    bench: EngineBench, name: str, step: dict[str, object]
) -> None:
    real = load("codebuddy", name)
    # codebuddy exits 0 after its failed result: the script says so for an `error` step
    bench.case("fid-error", turns=[{"steps": [step], "end": "failed", "exit_code": 0}])
    bench.case("fid-message", turns=[{"steps": [step], "end": "failed", "exit_code": 0}])
    played = bench.run("codebuddy", real.argv)
    assert played.returncode == real.exit_code == 0
    assert_same_shape(real, played.stdout)
    lines, real_lines = played.json_lines(), real.lines()
    text = lines[-2]["message"]["content"][0]["text"]
    real_text = real_lines[-2]["message"]["content"][0]["text"]
    # the provider's words, then (request id/session id)
    pattern = r"(.*) \([0-9a-f]{32}/([0-9a-f-]{36})\)"
    fake_words, fake_session = re.fullmatch(pattern, text).groups()  # type: ignore[union-attr]
    real_words, _ = re.fullmatch(pattern, real_text).groups()  # type: ignore[union-attr]
    assert (fake_words, fake_session) == (real_words, lines[0]["session_id"])
    assert lines[-1]["errors"] == [text]
    transcript = readers.read("codebuddy", played.stdout)
    assert transcript.turn_end() is not None and not transcript.turn_end().ok


def corpus_capture(name: str) -> Capture:
    """A capture of `turngate engines real capture` (corpus/codebuddy/real-2.118.2-NAME/)."""
    folder = CORPUS_DIR / "codebuddy" / f"real-2.118.2-{name}"
    meta = load_data((folder / "capture.yaml").read_text(encoding="utf-8"))
    stderr = folder / "stderr"
    return Capture(
        "codebuddy",
        name,
        list(meta["recorded"]["argv"][1:]),
        meta["exit_code"],
        (folder / "stdout").read_bytes(),
        stderr.read_bytes() if stderr.exists() else b"",
        meta,
    )


@pytest.mark.parametrize(("name", "retries"), [("hazard-cut", 0), ("hazard-cut-retried", 2)])
def test_a_body_ended_without_its_end_event_is_a_finished_answer(
    bench: EngineBench, name: str, retries: int
) -> None:
    """The server ends the body cleanly without the end-of-answer event: 2.118.2 takes the answer as
    finished (never asks again), prints it and the `result` success holding it, and exits 0."""
    real = corpus_capture(name)
    cut = {"model_error": {"cut": True, "retries": retries}}
    bench.case(f"tg-{name}", turns=[{"steps": [{"say": MARKER}, cut]}])
    played = bench.run("codebuddy", [*real.argv[:-1], f"Run the skill. tg-case-tg-{name}"])
    assert (played.returncode, played.stderr) == (real.exit_code, real.stderr) == (0, b"")
    assert_same_shape(real, played.stdout)
    assert played.json_lines()[-1]["result"] == real.lines()[-1]["result"] == MARKER
    transcript = readers.read("codebuddy", played.stdout)
    assert transcript.turn_end() is not None and transcript.turn_end().ok


def test_write_backs_the_file_up_between_the_call_and_its_result(bench: EngineBench) -> None:
    real = corpus_capture("file-change")
    change = {"path": "drafts/greeting.json", "kind": "add", "content": MARKER + "\n"}
    steps = [{"file_change": change}, {"say": "Which greeting style do you want?"}]
    only_in_result = {"codebuddy": {"text_in_result_only": "always"}}  # as this capture printed it
    bench.case("tg-write", turns=[{"steps": steps}], variants=only_in_result)
    played = bench.run("codebuddy", [*real.argv[:-1], "Run the skill. tg-case-tg-write"])
    assert played.returncode == real.exit_code == 0
    assert_same_shape(real, played.stdout)
    snapshots = [line for line in played.json_lines() if line["type"] == "file-history-snapshot"][1:]
    assert [s["snapshot"]["trackedFileBackups"].keys() for s in snapshots] == [{"drafts/greeting.json"}] * 2
    assert all(s["isSnapshotUpdate"] for s in snapshots)


def test_a_dropped_connection_prints_its_failures_and_never_ends(bench: EngineBench) -> None:
    real = load("codebuddy", "hazard-cut")  # the research capture: its server dropped the connection
    dropped = {"model_error": {"cut": True, "dropped": True, "retries": 1}}
    bench.case("fid-message", turns=[{"steps": [dropped]}])
    process = bench.start("codebuddy", real.argv)
    try:
        deadline = time.monotonic() + 15  # the call-log line is written just before it starts hanging
        while not bench.calls() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process.poll() is None, "codebuddy never exits after a cut stream"
    finally:
        process.terminate()
        stdout, _ = process.communicate(timeout=10)
    assert process.returncode == -signal.SIGTERM
    assert_same_shape(real, stdout)
    assert [call["outcome"] for call in bench.calls()] == ["hang"]


def test_json_schema_pending_then_final_over_a_resume(bench: EngineBench) -> None:
    first, second = load("codebuddy", "json-schema-turn1"), load("codebuddy", "json-schema-turn2")
    bench.case("ne-union", **SCRIPTS["ne-union"])
    played = bench.run("codebuddy", first.argv)
    assert_same_shape(first, played.stdout)
    result = played.json_lines()[-1]
    assert (result["result"], result["structured_output"]) == (
        first.lines()[-1]["result"],
        first.lines()[-1]["structured_output"],
    )
    resumed = bench.run(
        "codebuddy", with_session(second.argv, session_of(second.stdout), session_of(played.stdout))
    )
    assert_same_shape(second, resumed.stdout)
    # the follow-up "Done." is a reply, the structured branch the last one
    assert readers.read("codebuddy", resumed.stdout).assistant_messages() == (
        "Done.",
        '{"__SKILL_DONE__": true, "greeting": "Good day"}',
    )


def test_a_resume_plays_the_next_turn_in_the_same_session(bench: EngineBench) -> None:
    first, second = load("codebuddy", "resume-turn1"), load("codebuddy", "resume-turn2")
    bench.case("fid-resume", **SCRIPTS["fid-resume"])
    played = bench.run("codebuddy", first.argv)
    assert_same_shape(first, played.stdout)
    resumed = bench.run(
        "codebuddy", with_session(second.argv, session_of(second.stdout), session_of(played.stdout))
    )
    assert_same_shape(second, resumed.stdout)


@pytest.mark.parametrize("name", ["usage-unknown-flag", "resume-unknown-id", "version"])
def test_refusals_and_the_version_are_the_real_bytes(bench: EngineBench, name: str) -> None:
    real = load("codebuddy", name)
    played = bench.run("codebuddy", real.argv)
    assert (played.returncode, played.stdout, played.stderr) == (real.exit_code, real.stdout, real.stderr)


def test_an_unknown_session_is_an_error_line_that_ends_the_turn_badly(bench: EngineBench) -> None:
    real = load("codebuddy", "resume-unknown-id")
    transcript = readers.read("codebuddy", real.stdout)
    assert transcript.session_id() is None
    assert transcript.turn_end() is not None and not transcript.turn_end().ok


def test_the_stream_json_input_protocol_plays_a_turn_per_line(bench: EngineBench) -> None:
    real = load("codebuddy", "resident-stream-json-two-turns")
    bench.case("fid-resume", **SCRIPTS["fid-resume"])
    played = bench.run("codebuddy", real.argv, stdin=stdin_lines(real))
    assert played.returncode == 0
    assert_same_shape(real, played.stdout)


def test_the_call_log_keeps_the_settings_and_codebuddys_environment(bench: EngineBench) -> None:
    bench.case("fid-message", **SCRIPTS["fid-message"])
    bench.run(
        "codebuddy",
        load("codebuddy", "message").argv,
        CODEBUDDY_AUTH_TOKEN="t",
        CODEBUDDY_INTERNET_ENVIRONMENT="public",
    )
    (call,) = bench.calls()
    assert (call["permission_mode"], call["setting_sources"]) == ("bypassPermissions", "project")
    assert call["settings"] == "/tmp/ne/run-cb/.codebuddy/settings.json"
    assert call["mcp_config"] == ["/tmp/ne/run-cb/.codebuddy/mcp.json"]
    assert call["env"]["CODEBUDDY_AUTH_TOKEN"] == "<redacted>"
    assert call["env"]["CODEBUDDY_INTERNET_ENVIRONMENT"] == "public"


def test_without_the_echo_a_reply_printed_only_there_is_lost(bench: EngineBench) -> None:
    bench.case(
        "fid-think-message", **SCRIPTS["fid-think-message"], variants={"codebuddy": {"result_echo": False}}
    )
    played = bench.run("codebuddy", load("codebuddy", "fid-think-message").argv)
    assert played.json_lines()[-1]["result"] == ""
    assert readers.read("codebuddy", played.stdout).assistant_messages() == ()
