"""The fake claude against the real Claude Code 2.1.331 (tests/data/real-captures/claude/).

Each test plays, on the installed fake, the conversation a real capture recorded, with the
capture's own command line, and compares what a gate depends on: the sequence of events,
each event's keys in order (the `result`'s `type` late among them), the exit code, stderr.
Not compared: `fid-tool-failed` (the real CLI refused the command in its `default`
permission mode, a `system/permission_denied` the fake does not model; the fake's failed
command is Claude Code's `Exit code N` result); `hazard-*` without `-max2` (killed after 150 s
of ten retries).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import EngineBench
from tests.fake_engines.real_captures import (
    CAPTURES,
    SCRIPTS,
    assert_same_shape,
    keys,
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
    "ne-two-messages": "ne-two-messages",
    "fid-error": "fid-error",
    "json-schema-message": "fid-message",
}
MARKER = '{"greeting": "Hello", "__SKILL_DONE__": true}'


def _script(bench: EngineBench, case: str) -> None:
    bench.case(case, **SCRIPTS[case])


@pytest.mark.parametrize(("name", "case"), ONE_TURN.items())
def test_one_turn_has_the_real_shape(bench: EngineBench, name: str, case: str) -> None:
    real = load("claude", name)
    if name == "json-schema-message":  # the final branch, answered through StructuredOutput
        bench.case(case, turns=[{"steps": [{"final": {"greeting": "Hello"}}]}])
    else:
        _script(bench, case)
    played = bench.run("claude", real.argv)
    assert played.returncode == real.exit_code
    assert played.stderr == real.stderr == b""
    assert_same_shape(real, played.stdout)


def test_the_result_repeats_the_last_text_with_its_type_late(bench: EngineBench) -> None:
    _script(bench, "ne-two-messages")
    played = bench.run("claude", load("claude", "ne-two-messages").argv)
    result_line = played.stdout.splitlines()[-1]
    result = json.loads(result_line)
    assert next(iter(result)) == "duration_api_ms"
    assert result_line.index(b'"type":"result"') > result_line.index(b'"result":')
    assert result["result"] == MARKER
    transcript = readers.read("claude", played.stdout, played.stderr)
    assert transcript.assistant_messages() == ("Let me read the skill first.", MARKER)  # the echo is no reply


@pytest.mark.parametrize(
    ("name", "spec", "text"),
    [
        (
            "hazard-429-max2",
            {"status": 429, "retries": 2},
            "API Error: Request rejected (429) · turngate hazard 429",
        ),
        (
            "hazard-500-max2",
            {"status": 500, "retries": 2},
            "API Error: 500 turngate hazard 500. This is a server-side issue, usually temporary — try again"
            " in a moment. If it persists, check your inference gateway (127.0.0.1:42023).",
        ),
        (  # the research server dropped the connection mid-body: the dropped form
            "hazard-cut-max2",
            {"cut": True, "dropped": True, "retries": 2},
            "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again.",
        ),
    ],
)
def test_a_failed_model_request_is_a_synthetic_text_and_an_error_result(
    bench: EngineBench, name: str, spec: dict[str, object], text: str
) -> None:
    real = load("claude", name)
    message = {} if spec.get("cut") else {"message": f"turngate hazard {spec['status']}"}
    bench.case("fid-message", turns=[{"steps": [{"model_error": {**spec, **message}}]}])
    played = bench.run("claude", real.argv, ANTHROPIC_BASE_URL="http://127.0.0.1:42023")
    assert played.returncode == real.exit_code == 1
    assert_same_shape(real, played.stdout)
    lines = played.json_lines()
    assert [line["attempt"] for line in lines if line.get("subtype") == "api_retry"] == [1, 2]
    synthetic = lines[-2]["message"]["content"][0]["text"]
    assert synthetic == text == real.lines()[-2]["message"]["content"][0]["text"]
    assert (lines[-1]["subtype"], lines[-1]["is_error"], lines[-1]["result"]) == ("success", True, text)
    transcript = readers.read("claude", played.stdout)
    assert transcript.assistant_messages() == ()  # the synthetic text is an error, never a reply
    assert transcript.turn_end() is not None and not transcript.turn_end().ok


def test_json_schema_pending_then_final_over_a_resume(bench: EngineBench) -> None:
    first, second = load("claude", "json-schema-turn1"), load("claude", "json-schema-turn2")
    _script(bench, "ne-union")
    played = bench.run("claude", first.argv)
    assert_same_shape(first, played.stdout)
    result = played.json_lines()[-1]
    assert result["structured_output"] == {
        "__SKILL_DONE__": False,
        "message": "Which style?",
        "ui_hints": {"kind": "choose_one", "options": [{"label": "Formal", "value": "formal"}]},
    }
    assert result["result"] == json.dumps(result["structured_output"], separators=(",", ":"))
    resumed = bench.run(
        "claude", with_session(second.argv, session_of(second.stdout), session_of(played.stdout))
    )
    assert resumed.returncode == 0, resumed.err
    assert_same_shape(second, resumed.stdout)
    transcript = readers.read("claude", resumed.stdout)
    assert transcript.assistant_messages() == ('{"__SKILL_DONE__": true, "greeting": "Good day"}',)


def test_a_resume_repeats_the_init_with_the_same_session(bench: EngineBench) -> None:
    first, second = load("claude", "resume-turn1"), load("claude", "resume-turn2")
    _script(bench, "fid-resume")
    played = bench.run("claude", first.argv)
    assert_same_shape(first, played.stdout)
    session = session_of(played.stdout)
    resumed = bench.run("claude", with_session(second.argv, session_of(second.stdout), session))
    assert_same_shape(second, resumed.stdout)
    assert {line["session_id"] for line in resumed.json_lines()} == {session}


def test_an_unknown_uuid_is_an_error_result_alone(bench: EngineBench) -> None:
    real = load("claude", "resume-unknown-uuid")
    played = bench.run("claude", real.argv)
    assert (played.returncode, played.stderr) == (real.exit_code, real.stderr)
    assert_same_shape(real, played.stdout)
    assert played.json_lines()[0]["errors"] == real.lines()[0]["errors"]


@pytest.mark.parametrize(
    "name", ["usage-unknown-flag", "usage-stream-json-without-verbose", "resume-probe", "version"]
)
def test_refusals_and_the_version_are_the_real_bytes(bench: EngineBench, name: str) -> None:
    real = load("claude", name)
    played = bench.run("claude", real.argv)
    assert (played.returncode, played.stdout, played.stderr) == (real.exit_code, real.stdout, real.stderr)


def test_help_is_the_real_help_and_loses_resume_when_not_resumable(bench: EngineBench) -> None:
    real = (CAPTURES / "claude" / "help.txt").read_text(encoding="utf-8")
    assert bench.run("claude", ["--help"]).out == real
    hidden = bench.run("claude", ["--help"], TURNGATE_NON_RESUMABLE="claude").out
    assert "--resume" not in hidden and "--print" in hidden
    refused = bench.run(
        "claude",
        ["--resume", "c0ffee00-0000-4000-8000-000000000000", "-p", "hi"],
        TURNGATE_NON_RESUMABLE="claude",
    )
    assert (refused.returncode, refused.err) == (1, "error: unknown option '--resume'\n")


def test_root_may_not_skip_permissions_outside_a_sandbox(bench: EngineBench) -> None:
    real = load("claude", "root-permission-mode-flag")
    _script(bench, "fid-message")
    refused = bench.run("claude", real.argv)
    allowed = bench.run("claude", real.argv, IS_SANDBOX="1")
    assert allowed.returncode == 0, allowed.err
    if os.geteuid() == 0:
        assert (refused.returncode, refused.stderr) == (real.exit_code, real.stderr)
    else:
        assert refused.returncode == 0


def test_the_stream_json_input_protocol_plays_a_turn_per_line(bench: EngineBench) -> None:
    real = load("claude", "resident-stream-json-two-turns")
    _script(bench, "fid-resume")
    played = bench.run("claude", real.argv, stdin=stdin_lines(real))
    assert played.returncode == real.meta["exit_code_after_stdin_eof"] == 0
    assert_same_shape(real, played.stdout)
    (call,) = bench.calls()
    assert (call["turns"], call["stdin"], call["input_format"]) == (
        [1, 2],
        real.meta["stdin_messages"],
        "stream-json",
    )


def test_the_call_log_keeps_the_command_lines_choices(bench: EngineBench) -> None:
    _script(bench, "fid-message")
    schema = '{"type":"object","properties":{"greeting":{"type":"string"}}}'
    argv = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--effort",
        "high",
        "--json-schema",
        schema,
        "tg-case-fid-message",
    ]
    bench.run("claude", argv, ANTHROPIC_API_KEY="sk-ant-x", CLAUDE_CONFIG_DIR="/c", OPENAI_API_KEY="o")
    (call,) = bench.calls()
    assert call["json_schema"] == json.loads(schema)
    assert (call["output_format"], call["input_format"], call["effort"]) == ("stream-json", "text", "high")
    assert call["env"]["ANTHROPIC_API_KEY"] == "<redacted>"
    assert call["env"]["CLAUDE_CONFIG_DIR"] == "/c"
    assert "OPENAI_API_KEY" not in call["env"]


def test_variants_put_the_result_type_first_and_empty_the_echo(bench: EngineBench) -> None:
    bench.case(
        "fid-message",
        **SCRIPTS["fid-message"],
        variants={"claude": {"result_type": "first", "result_echo": False}},
    )
    played = bench.run("claude", load("claude", "message").argv)
    result = played.json_lines()[-1]
    assert (next(iter(result)), result["result"]) == ("type", "")
    assert readers.read("claude", played.stdout).assistant_messages() == (MARKER,)


def _corpus_lines(name: str) -> list[dict[str, object]]:
    folder = Path(__file__).resolve().parents[2] / "corpus" / "claude" / name
    return [json.loads(line) for line in (folder / "stdout").read_bytes().splitlines()]


@pytest.mark.parametrize("version", ["2.1.331", "2.1.326"])
def test_an_emulated_build_prints_its_own_init_line(bench: EngineBench, version: str) -> None:
    # corpus/claude/real-<version>-message: 2.1.326's init lacks served_by_anthropic and
    # sandbox_enabled, and four capabilities.
    real = _corpus_lines(f"real-{version}-message")[0]
    _script(bench, "fid-message")
    argv = ["-p", "--output-format", "stream-json", "--verbose", "tg-case-fid-message"]
    played = bench.run("claude", argv, TURNGATE_EMULATE=f"claude@{version}")
    init = json.loads(played.stdout.splitlines()[0])
    assert list(init) == list(real)
    assert (init["claude_code_version"], init["capabilities"]) == (version, real["capabilities"])
    assert bench.run("claude", ["--version"], TURNGATE_EMULATE=f"claude@{version}").out == (
        f"{version} (Claude Code)\n"
    )


def test_bypass_mode_in_the_user_settings_is_the_mode_every_tool_decision_names(
    bench: EngineBench, tmp_path: Path
) -> None:
    # corpus/claude/real-2.1.331-tool-echo: the launcher's user settings say bypassPermissions.
    real = _corpus_lines("real-2.1.331-tool-echo")
    config = tmp_path / "claude-config"
    config.mkdir()
    (config / "settings.json").write_text('{"permissions": {"defaultMode": "bypassPermissions"}}')
    _script(bench, "fid-tool-echo")
    argv = ["-p", "--output-format", "stream-json", "--verbose", "tg-case-fid-tool-echo"]
    lines = [
        json.loads(line)
        for line in bench.run("claude", argv, CLAUDE_CONFIG_DIR=str(config)).stdout.splitlines()
    ]
    assert lines[0]["permissionMode"] == real[0]["permissionMode"] == "bypassPermissions"
    (user,) = [line for line in lines if line["type"] == "user"]
    (real_user,) = [line for line in real if line["type"] == "user"]
    assert (
        user["tool_result_meta"][0]["permission_decision"]
        == real_user["tool_result_meta"][0]["permission_decision"]
        == {"decision": "accept", "source": "config", "reason_type": "mode"}
    )
    default = bench.run("claude", argv).stdout.splitlines()
    assert json.loads(default[0])["permissionMode"] == "default"
    assert b'"reason_type"' not in b"".join(default)


def test_a_written_file_is_a_result_with_the_real_keys(bench: EngineBench) -> None:
    # corpus/claude/real-2.1.331-file-change: the Write result's tool_use_result ends with userModified.
    real = next(line for line in _corpus_lines("real-2.1.331-file-change") if line["type"] == "user")
    change = {"path": "drafts/greeting.json", "content": MARKER}
    bench.case("write", turns=[{"steps": [{"file_change": change}, {"say": "Which style?"}]}])
    argv = ["-p", "--output-format", "stream-json", "--verbose", "tg-case-write"]
    played = bench.run("claude", argv).json_lines()
    (user,) = [line for line in played if line["type"] == "user"]
    assert list(user["tool_use_result"]) == list(real["tool_use_result"])


GO_ON = (
    "Your response above was cut off mid-stream. Resume directly from where it stops — no apology,"
    " no recap. If none of it survived, answer the request from the start."
)


def _synthetic_user_texts(lines: list[dict[str, object]]) -> list[object]:
    return [line["message"] for line in lines if line["type"] == "user" and line.get("isSynthetic") is True]


@pytest.mark.parametrize("version", ["2.1.326", "2.1.331"])
@pytest.mark.parametrize(("name", "retries"), [("hazard-cut", 0), ("hazard-cut-retried", 2)])
def test_an_ended_cut_is_printed_and_claude_asks_three_times_to_go_on(
    bench: EngineBench, version: str, name: str, retries: int
) -> None:
    # corpus/claude/real-<version>-hazard-cut(-retried): the body ends without message_stop, the
    # connection closed cleanly; whatever the retry limit, the answer, three go-on messages each
    # answered by the cut answer again, then "Connection lost mid-response", num_turns 4, exit 1.
    real = _corpus_lines(f"real-{version}-{name}")
    cut: dict[str, object] = {"cut": True, **({"retries": retries} if retries else {})}
    bench.case("cut", turns=[{"steps": [{"say": MARKER}, {"model_error": cut}]}])
    argv = ["-p", "--output-format", "stream-json", "--verbose", "tg-case-cut"]
    played = bench.run("claude", argv, TURNGATE_EMULATE=f"claude@{version}")
    assert played.returncode == 1
    fake = played.json_lines()
    assert kinds(fake) == kinds(real)
    assert [keys(line) for line in fake] == [keys(line) for line in real]
    assert (
        _synthetic_user_texts(fake)
        == _synthetic_user_texts(real)
        == [{"role": "user", "content": [{"type": "text", "text": GO_ON}]}] * 3
    )
    texts = [line["message"]["content"][0]["text"] for line in fake if line["type"] == "assistant"]
    assert texts == [line["message"]["content"][0]["text"] for line in real if line["type"] == "assistant"]
    result, real_result = fake[-1], real[-1]
    for key in ("subtype", "is_error", "num_turns", "api_error_status", "api_error", "result"):
        assert result[key] == real_result[key], key
    transcript = readers.read("claude", played.stdout)
    assert transcript.turn_end() is not None and not transcript.turn_end().ok


def test_a_cut_that_recovers_goes_on_in_the_answer_that_came_whole(bench: EngineBench) -> None:
    steps = [{"say": "Part one."}, {"model_error": {"cut": True, "retries": 2, "recovers": True}}]
    bench.case("cut", turns=[{"steps": [*steps, {"say": MARKER}]}])
    played = bench.run("claude", ["-p", "--output-format", "stream-json", "--verbose", "tg-case-cut"])
    assert played.returncode == 0, played.err
    lines = played.json_lines()
    assert kinds(lines)[1:] == [
        "assistant:text",
        "user:text",
        "assistant:text",
        "user:text",
        "assistant:text",
        "assistant:text",
        "result",
    ]
    answers = [line["message"] for line in lines if line["type"] == "assistant"]
    assert [a["content"][0]["text"] for a in answers] == ["Part one.", "Part one.", "Part one.", MARKER]
    assert answers[2]["id"] == answers[3]["id"] != answers[1]["id"] != answers[0]["id"]
    assert (lines[-1]["is_error"], lines[-1]["num_turns"], lines[-1]["result"]) == (False, 3, MARKER)


def test_a_cut_recovering_after_more_than_three_go_ons_is_given_up(bench: EngineBench) -> None:
    steps = [{"say": MARKER}, {"model_error": {"cut": True, "retries": 5, "recovers": True}}]
    bench.case("cut", turns=[{"steps": [*steps, {"say": "never printed"}]}])
    played = bench.run("claude", ["-p", "--output-format", "stream-json", "--verbose", "tg-case-cut"])
    assert played.returncode == 1
    assert b"never printed" not in played.stdout
    assert played.json_lines()[-1]["num_turns"] == 4


@pytest.mark.parametrize("version", ["2.1.326", "2.1.331"])
def test_a_dropped_connection_never_prints_the_answer(bench: EngineBench, version: str) -> None:
    # corpus/claude/real-2.1.326-hazard-drop and real-2.1.331-hazard-drop-retried: the form in which
    # every attempt's connection was lost (the other runs' timing is named by a fidelity variant).
    name, retries = ("hazard-drop", 0) if version == "2.1.326" else ("hazard-drop-retried", 2)
    real = _corpus_lines(f"real-{version}-{name}")
    drop = {"cut": True, "dropped": True, "retries": retries}
    bench.case("drop", turns=[{"steps": [{"say": MARKER}, {"model_error": drop}]}])
    argv = ["-p", "--output-format", "stream-json", "--verbose", "tg-case-drop"]
    played = bench.run("claude", argv, TURNGATE_EMULATE=f"claude@{version}")
    assert played.returncode == 1
    fake = played.json_lines()
    assert kinds(fake) == kinds(real)
    assert [keys(line) for line in fake] == [keys(line) for line in real]
    assert MARKER.encode() not in played.stdout
    assert fake[-1]["num_turns"] == real[-1]["num_turns"] == 1


NO_VISIBLE_OUTPUT = (
    "[Your previous response had no visible output. Please continue and produce a user-visible response.]"
)


@pytest.mark.parametrize("last", ["tool", "file_change"])
def test_an_empty_answer_after_a_call_makes_claude_ask_once_more(bench: EngineBench, last: str) -> None:
    # Live fidelity run of 2026-11-25, design/decision-5/backend-pending-baseline turn 3 (2.1.326 and
    # 2.1.331): a tool call, an empty answer, the synthetic user message, the same empty answer again;
    # result "" and num_turns 3.
    call: dict[str, object] = (
        {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md\n"}}
        if last == "tool"
        else {"file_change": {"path": "out.txt", "content": "hi"}}
    )
    bench.case("empty", turns=[{"steps": [{"say": "Let me look."}, call]}])
    played = bench.run("claude", ["-p", "--output-format", "stream-json", "--verbose", "tg-case-empty"])
    assert played.returncode == 0, played.err
    lines = played.json_lines()
    assert kinds(lines)[1:] == [
        "assistant:text",
        "assistant:tool_use",
        "user:tool_result",
        "user:text",
        "result",
    ]
    asked = lines[-2]
    assert list(asked) == [
        "type",
        "message",
        "parent_tool_use_id",
        "session_id",
        "uuid",
        "timestamp",
        "isSynthetic",
    ]
    assert asked["message"] == {"role": "user", "content": [{"type": "text", "text": NO_VISIBLE_OUTPUT}]}
    assert asked["isSynthetic"] is True
    assert (lines[-1]["result"], lines[-1]["num_turns"], lines[-1]["is_error"]) == ("", 3, False)
    transcript = readers.read("claude", played.stdout)
    assert transcript.assistant_messages() == ("Let me look.",)


def test_an_answer_after_the_call_is_not_asked_again(bench: EngineBench) -> None:
    _script(bench, "fid-tool-echo")
    played = bench.run("claude", load("claude", "fid-tool-echo").argv)
    assert b"isSynthetic" not in played.stdout
    assert played.json_lines()[-1]["num_turns"] == 2
