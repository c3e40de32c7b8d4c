"""The fake opencode's builds: `run --dir` and `run --thinking` (Skill-Runner v0.7.3+ passes both).

Texts marked "real 1.2.1" are byte copies (or sha256) of what the real
opencode 1.2.1 (`opencode-linux-x64` from the registry) printed, captured
November 2026 with stdout not a terminal. Parser tests call the parser
directly; the rest run the installed launchers as real subprocesses.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EngineBench
from tests.schemas.schemas import CALL_LOG, line_problems
from turngate.engines.fake.argv import opencode
from turngate.engines.fake.invocation import Invocation, UsageError

ERROR = "\x1b[91m\x1b[1mError: \x1b[0m"  # opencode's UI.error prefix
REAL_1_2_1_TOP_HELP_SHA256 = "5205efffa491665c6c2a9cb6aaea0a1dd9d334ae2678523adc7cca0cd18ba154"
REAL_1_2_1_RUN_HELP_SHA256 = "23bf701dd2eab2087310d4f12c2c8c6b7d27d2451894507fb3250e2d31fb56e4"
# Skill-Runner v0.7.9's opencode command line (command_builder.py, adapter_profile.json).
SKILL_RUNNER_START = ["run", "--dir", "RUN_DIR", "--format", "json", "--thinking", "--model", "openai/gpt-5"]


def parse(argv: list[str], emulate: str = "", *, resumable: bool = True, tty: bool = False) -> Invocation:
    return opencode.parse(argv, resumable=resumable, stdin_is_tty=tty, emulate=emulate)


def refusal(argv: list[str], emulate: str = "", *, resumable: bool = True, tty: bool = False) -> UsageError:
    with pytest.raises(UsageError) as raised:
        parse(argv, emulate, resumable=resumable, tty=tty)
    return raised.value


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("emulate", ["", "1.2.1"])
def test_skill_runner_command_line_is_taken(tmp_path: Path, emulate: str) -> None:
    argv = [str(tmp_path) if word == "RUN_DIR" else word for word in SKILL_RUNNER_START]
    invocation = parse([*argv, "Run the skill."], emulate)
    assert (invocation.action, invocation.prompt, invocation.directory) == (
        "run",
        "Run the skill.",
        str(tmp_path),
    )
    assert (invocation.thinking, invocation.output_format, invocation.model) == (True, "json", "openai/gpt-5")
    resumed = parse([*argv[:3], "--session=ses_1", *argv[3:], "Formal."], emulate)
    assert (resumed.resume_id, resumed.directory) == ("ses_1", str(tmp_path))


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--dir", ".", "--format", "json", "hi"],
        ["run", "--format", "json", "--thinking", "hi"],
        ["run", "--thinking=false", "hi"],
    ],
)
def test_1_0_62_keeps_its_strictness(argv: list[str]) -> None:
    error = refusal(argv, "1.0.62")
    assert (error.text, error.exit_code) == (opencode.run_help_text(True, "1.0.62"), 1)
    assert "--dir" not in error.text and "--thinking" not in error.text


def test_the_default_build_is_1_0_62_with_the_two_options() -> None:
    assert parse(["--version"]).text == "1.0.62\n"
    assert opencode.run_help_text(True) == opencode.run_help_text(True, "1.0.62")
    assert opencode.top_help_text(True) == opencode.top_help_text(True, "1.0.62")
    assert parse(["run", "--thinking", "hi"]).thinking
    assert not parse(["run", "hi"]).thinking
    # Reasoning: the format's own rule (opencode json always prints it), whatever --thinking says.
    assert parse(["run", "--thinking", "hi"]).reasoning == parse(["run", "hi"]).reasoning == ""
    # Still 1.0.62 elsewhere: 1.2.1's other new options are unknown.
    for argv in (["run", "--variant", "high", "hi"], ["run", "--fork", "-s", "ses_1", "hi"]):
        assert refusal(argv).text == opencode.run_help_text(True)


def test_1_2_1_help_and_version_are_the_real_builds() -> None:
    assert sha256(opencode.top_help_text(True, "1.2.1")) == REAL_1_2_1_TOP_HELP_SHA256
    assert sha256(opencode.run_help_text(True, "1.2.1")) == REAL_1_2_1_RUN_HELP_SHA256
    assert parse(["run", "-v"], "1.2.1").text == "1.2.1\n"
    # The real 1.2.1 answers an unknown argument with the command's help and exit 1.
    error = refusal(["run", "--foo", "hi"], "1.2.1")
    assert (sha256(error.text), error.exit_code) == (REAL_1_2_1_RUN_HELP_SHA256, 1)
    assert sha256(refusal(["--foo"], "1.2.1").text) == REAL_1_2_1_TOP_HELP_SHA256


def test_1_2_1_without_resume_shows_and_takes_no_resume_options() -> None:
    for text in (opencode.run_help_text(False, "1.2.1"), opencode.top_help_text(False, "1.2.1")):
        assert "--session" not in text and "--continue" not in text and "--fork" not in text
        assert "--agent" in text
    assert "--dir" in opencode.run_help_text(False, "1.2.1")
    error = refusal(["run", "--session", "ses_1", "hi"], "1.2.1", resumable=False)
    assert error.text == opencode.run_help_text(False, "1.2.1")


def test_1_2_1_prints_reasoning_only_with_thinking() -> None:
    assert parse(["run", "--thinking", "hi"], "1.2.1").reasoning == "shown"
    assert parse(["run", "hi"], "1.2.1").reasoning == "hidden"
    assert parse(["run", "--thinking=false", "hi"], "1.2.1").reasoning == "hidden"


def test_1_2_1_fork() -> None:
    alone = refusal(["run", "--fork", "hi"], "1.2.1")
    assert (alone.text, alone.exit_code) == (ERROR + "--fork requires --continue or --session\n", 1)
    assert "not simulated" in refusal(["run", "--fork", "-s", "ses_1", "hi"], "1.2.1").text


@pytest.mark.parametrize("emulate", ["", "1.2.1"])
def test_a_directory_that_cannot_be_entered_is_refused_as_the_real_one(tmp_path: Path, emulate: str) -> None:
    missing = str(tmp_path / "nowhere")
    error = refusal(["run", "--dir", missing, "hi"], emulate)
    # Real 1.2.1: `opencode run --dir /nonexistent hi` wrote exactly this on stderr and exited 1.
    assert (error.text, error.exit_code) == (f"{ERROR}Failed to change directory to {missing}\n", 1)
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    assert refusal(["run", f"--dir={a_file}", "hi"], emulate).text.endswith(f"directory to {a_file}\n")
    # Before the message check, as run.ts changes directory first.
    assert "Failed to change directory" in refusal(["run", "--dir", missing], emulate, tty=True).text


def test_directory_values_as_run_ts_reads_them(tmp_path: Path) -> None:
    # Repeated, yargs makes an array, which chdir refuses; JavaScript prints it comma-joined.
    twice = refusal(["run", "--dir", str(tmp_path), "--dir", str(tmp_path), "hi"])
    assert twice.text == f"{ERROR}Failed to change directory to {tmp_path},{tmp_path}\n"
    # `if (!args.dir) return`: absent, empty, negated.
    for argv in (
        ["run", "--dir=", "hi"],
        ["run", "--dir", "--format", "json", "hi"],
        ["run", "--no-dir", "hi"],
    ):
        assert parse(argv).directory is None
    # With --attach the directory is the server's: nothing to enter here.
    assert parse(["run", "--attach", "http://127.0.0.1:4096", "--dir", "/elsewhere", "hi"]).directory is None


# Subprocesses -----------------------------------------------------------------------------


def test_skill_runner_turns_run_in_the_dir_it_names(bench: EngineBench) -> None:
    bench.case("dir", turns=[{"steps": [{"think": "reading"}, {"say": "one"}]}, {"steps": [{"say": "two"}]}])
    run_dir = bench.root / "runs" / "r1"
    skill = run_dir / ".opencode" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\n---\nGreet.\n", encoding="utf-8")
    # The case token only in the run folder's input.json: found there, as the real CLI would see it.
    (run_dir / "input.json").write_text('{"note": "tg-case-dir"}', encoding="utf-8")
    start = [str(run_dir) if word == "RUN_DIR" else word for word in SKILL_RUNNER_START]
    first = bench.run("opencode", [*start, "/skills greet"])
    assert first.returncode == 0, first.err
    events = first.json_lines()
    assert [event["type"] for event in events] == ["step_start", "reasoning", "text", "step_finish"]
    session = events[0]["sessionID"]
    resumed = bench.run("opencode", [*start[:3], f"--session={session}", *start[3:], "Formal."])
    assert [event["part"].get("text") for event in resumed.json_lines() if event["type"] == "text"] == ["two"]
    calls = bench.calls()
    assert [(call["case_source"], call["turns"]) for call in calls] == [("input.json", [1]), ("session", [2])]
    for call in calls:
        assert (call["workdir"], call["cwd"]) == (str(run_dir), str(bench.workdir))
        assert list(call["skills"]) == [".opencode/skills/greet"]
        assert call["argv"][:3] == ["run", "--dir", str(run_dir)]
        assert "--thinking" in call["argv"]
    assert line_problems(CALL_LOG, bench.call_log.read_text(encoding="utf-8")) == []


def test_a_relative_dir_is_relative_to_where_the_engine_started(bench: EngineBench) -> None:
    bench.case("rel", turns=[{"steps": [{"say": "ok"}]}])
    (bench.workdir / "sub").mkdir()
    played = bench.run("opencode", ["run", "--dir", "sub", "--format", "json", "tg-case-rel"])
    assert played.returncode == 0, played.err
    assert bench.calls()[0]["workdir"] == str(bench.workdir / "sub")


def test_a_dir_that_cannot_be_entered_ends_the_engine_before_any_turn(bench: EngineBench) -> None:
    bench.case("gone", turns=[{"steps": [{"say": "never"}]}])
    missing = bench.root / "gone"
    played = bench.run("opencode", ["run", "--dir", str(missing), "--format", "json", "tg-case-gone"])
    assert (played.returncode, played.stdout) == (1, b"")
    assert played.err == f"{ERROR}Failed to change directory to {missing}\n"
    (call,) = bench.calls()
    assert (call["outcome"], call["action"], call["turns"], call.get("workdir")) == (
        "usage_error",
        None,
        [],
        None,
    )


@pytest.mark.parametrize(("flags", "shown"), [(["--thinking"], True), ([], False)])
def test_emulated_1_2_1_prints_reasoning_only_with_thinking(
    bench: EngineBench, flags: list[str], shown: bool
) -> None:
    bench.case("think", turns=[{"steps": [{"think": "pondering"}, {"say": "done"}]}])
    json_run = bench.run(
        "opencode", ["run", "--format", "json", *flags, "tg-case-think"], TURNGATE_EMULATE="opencode@1.2.1"
    )
    assert ("reasoning" in [event["type"] for event in json_run.json_lines()]) is shown
    text_run = bench.run("opencode", ["run", *flags, "tg-case-think"], TURNGATE_EMULATE="opencode@1.2.1")
    assert text_run.out == ("Thinking: pondering\ndone\n" if shown else "done\n")


def test_emulated_1_0_62_refuses_skill_runner_s_command_line(bench: EngineBench) -> None:
    bench.case("old", turns=[{"steps": [{"say": "never"}]}])
    played = bench.run(
        "opencode",
        ["run", "--dir", str(bench.workdir), "--format", "json", "--thinking", "tg-case-old"],
        TURNGATE_EMULATE="opencode@1.0.62",
    )
    assert (played.returncode, played.stdout) == (1, b"")
    assert played.err == opencode.run_help_text(True, "1.0.62")
    assert bench.calls()[0]["outcome"] == "usage_error"


def test_an_unknown_opencode_build_names_the_known_ones(tmp_path: Path) -> None:
    from turngate.engines.fake.install import install

    install(tmp_path / "bin")
    done = subprocess.run(
        [str(tmp_path / "bin" / "opencode"), "--version"],
        capture_output=True,
        env={
            "TURNGATE_EMULATE": "opencode@1.18.33",
            "TURNGATE_STATE": str(tmp_path),
            "PATH": sys.exec_prefix,
        },
        check=False,
    )
    assert done.returncode == 97
    assert done.stderr.decode().splitlines() == [
        "turngate-fake-opencode: TURNGATE_EMULATE: opencode@1.18.33: known: opencode@1.0.62, opencode@1.2.1"
    ]


def test_default_output_keeps_reasoning_with_or_without_thinking(bench: EngineBench) -> None:
    bench.case("keep", turns=[{"steps": [{"think": "hmm"}, {"say": "ok"}]}])
    plain = bench.run("opencode", ["run", "--format", "json", "tg-case-keep"])
    thinking = bench.run("opencode", ["run", "--format", "json", "--thinking", "tg-case-keep"])
    for played in (plain, thinking):
        assert [event["type"] for event in played.json_lines()] == [
            "step_start",
            "reasoning",
            "text",
            "step_finish",
        ]
    assert json.loads(thinking.stdout.splitlines()[1])["part"]["text"] == "hmm"
