"""The fake kilo against the real kilo 7.7.7: the same events, keys in the same order, exits, stderr.

The real bytes are `corpus/kilo/real-7.7.7-*` (turns, with their `meta.json`) and
`tests/fake_engines/kilo_7.7.7/` (help and version), recorded against
turngate's scripted model server. Each fake script below is the model's side of
one capture (the research's `captures/tools/scripts/`); the fake plays it with
Skill-Runner v0.7.9's command line, and its stream must have the real one's
shape: the sequence of event types and, per event, every key path in order
(values aside: ids, times and token counts are the fake's own). What a model
gives (a tool's `input`) and what a provider sends (`responseHeaders`) are left
out of the shape.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EngineBench, first_turn_args, resume_args
from tests.schemas.schemas import CALL_LOG, line_problems
from turngate.engines.fake.argv import kilo as kilo_argv
from turngate.engines.fake.invocation import Invocation, UsageError
from turngate.tools.drift.sources import CORPUS_DIR

REAL = CORPUS_DIR / "kilo"
CLI = Path(__file__).with_name("kilo_7.7.7")
GREETING = '{"greeting": "Hello", "__SKILL_DONE__": true}'
ECHO = 'Finish with {"__SKILL_DONE__": true}\n'
SHELL = {"command": "cat t1-r1.out", "description": "turngate scripted tool call"}
# Key paths whose values are free-form: what the model passed, what the provider's server sent.
FREE_FORM = ("part.state.input", "error.data.responseHeaders", "part.state.metadata.approval")


def key_paths(value: Any, prefix: str = "") -> list[str]:
    """Every key of nested objects, depth first in the order written (lists are values)."""
    paths: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.append(path)
            if path not in FREE_FORM:
                paths.extend(key_paths(inner, path))
    return paths


def shape(stdout: bytes) -> list[tuple[str, list[str]]]:
    return [(event["type"], key_paths(event)) for event in map(json.loads, stdout.decode().splitlines())]


def real(name: str) -> tuple[bytes, bytes, int]:
    folder = REAL / f"real-7.7.7-{name}"
    stderr = folder / "stderr"
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    return (
        (folder / "stdout").read_bytes(),
        stderr.read_bytes() if stderr.exists() else b"",
        meta["exit_code"],
    )


def skill_runner_args(prompt: str, session: str | None = None) -> list[str]:
    """Skill-Runner v0.7.9's kilo argv (engines/kilo/adapter/command_builder.py), `--dir` aside."""
    resume = ["--session", session] if session else []
    return [
        "run",
        "--format",
        "json",
        "--auto",
        "--thinking",
        *resume,
        "--model",
        "turngate/scripted",
        prompt,
    ]


# capture: the model's side of it as a fake-engine turn (and a variant of the fake's, if any)
TURNS: dict[str, dict[str, Any]] = {
    "message": {"steps": [{"say": GREETING}]},
    "fid-think-message": {"steps": [{"think": "The skill wants a greeting object."}, {"say": GREETING}]},
    "ne-two-messages": {
        "steps": [
            {"say": "Let me read the skill first."},
            {"tool": {"name": "bash", "input": SHELL, "output": ECHO}},
            {"say": GREETING},
        ]
    },
    "fid-tool-echo": {
        "steps": [{"tool": {"name": "bash", "input": SHELL, "output": ECHO}}, {"say": "Which style?"}]
    },
    # a command that exits 1 is a completed call (its exit in the metadata): `status: ok`, `exit_code: 1`
    "fid-tool-failed": {
        "steps": [
            {
                "tool": {
                    "name": "bash",
                    "input": SHELL,
                    "output": "cat: missing.txt: No such file\n",
                    "exit_code": 1,
                }
            },
            {"say": GREETING},
        ]
    },
    # the external_directory rule refusing the call: the tool itself failed
    "fid-tool-echo-external-directory-denied": {
        "steps": [
            {
                "tool": {
                    "name": "bash",
                    "input": SHELL,
                    "output": "The user has specified a rule",
                    "status": "error",
                }
            },
            {"say": "Which style?"},
        ]
    },
    "fid-error": {
        "steps": [{"error": {"message": "scripted failure: quota exhausted", "code": 400}}],
        "end": "failed",
    },
}
# 7.7.7's hazard captures (429, 500, cuts, drops) are recorded with their model server's script:
# tests/realengines/test_variants_cannot_hide_format_changes.py holds the fake to them.


@pytest.mark.parametrize("name", sorted(TURNS))
def test_a_turn_has_the_real_shape_exit_and_stderr(bench: EngineBench, name: str) -> None:
    bench.case("c", turns=[TURNS[name]])
    played = bench.run("kilo", skill_runner_args("Run the skill. tg-case-c"))
    stdout, stderr, exit_code = real(name)
    assert shape(played.stdout) == shape(stdout)
    assert played.returncode == exit_code
    assert played.stderr == stderr  # the same message, so the same bytes


def test_a_resume_keeps_the_session_and_the_real_shapes(bench: EngineBench) -> None:
    hint = {
        "form": "yaml_block",
        "text": "I need the style first.",
        "prompt": "Which style?",
        "kind": "choose_one",
    }
    bench.case("r", turns=[{"steps": [{"ask_user": hint}]}, {"steps": [{"say": GREETING}]}])
    first = bench.run("kilo", skill_runner_args("Run the skill. tg-case-r"))
    session = json.loads(first.stdout.splitlines()[0])["sessionID"]
    second = bench.run("kilo", skill_runner_args("Formal", session))
    for played, name in ((first, "resume-turn1"), (second, "resume-turn2")):
        stdout, stderr, exit_code = real(name)
        assert (shape(played.stdout), played.stderr, played.returncode) == (shape(stdout), stderr, exit_code)
    assert {json.loads(line)["sessionID"] for line in second.stdout.splitlines()} == {session}
    assert re.fullmatch(r"ses_[0-9a-f]{12}[0-9A-Za-z]{14}", session)
    ids = [json.loads(line)["part"]["id"] for line in second.stdout.splitlines()]
    assert all(re.fullmatch(r"prt_[0-9a-f]{12}[0-9A-Za-z]{14}", part) for part in ids)


def test_an_unknown_session_is_refused_as_the_real_one(bench: EngineBench) -> None:
    played = bench.run("kilo", skill_runner_args("Formal", "ses_00000000000000000000000000"))
    assert (played.stdout, played.stderr, played.returncode) == real("resume-unknown-id")


def test_a_bad_dir_and_an_unknown_option_are_refused_as_the_real_one(bench: EngineBench) -> None:
    missing = str(bench.root / "does-not-exist")
    bad_dir = bench.run("kilo", ["run", "--dir", missing, "--format", "json", "--auto", "--thinking", "x"])
    stdout, stderr, exit_code = real("usage-bad-dir")
    assert (bad_dir.stdout, bad_dir.returncode) == (stdout, exit_code)
    assert bad_dir.stderr == stderr.replace(b"/tmp/ne/does-not-exist", missing.encode())
    unknown = bench.run("kilo", ["run", "--bogus", "--format", "json", "x"])
    assert (unknown.stdout, unknown.stderr, unknown.returncode) == real("usage-unknown-flag")
    assert b"Unknown argument" not in unknown.stderr


def test_help_goes_to_stderr_after_a_log_line_and_version_to_stdout(bench: EngineBench) -> None:
    top = bench.run("kilo", ["--help"])
    captured = (CLI / "help-probe.stderr").read_bytes()
    assert (top.stdout, top.returncode) == (b"", 0)
    log, _, text = top.stderr.partition(b"\n")
    assert text == captured.partition(b"\n")[2]
    uuid4 = rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    log_form = rb"INFO  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d \+\d+ms service=default version=7\.7\.7 command=--help"
    log_form += rb" process_role=main run_id=" + uuid4 + rb" opencode"
    assert re.fullmatch(log_form, log) and re.fullmatch(log_form, captured.partition(b"\n")[0])
    run_help = bench.run("kilo", ["run", "--help"])
    assert (run_help.stdout, run_help.stderr) == (b"", (CLI / "run-help.txt").read_bytes())
    version = bench.run("kilo", ["--version"])
    assert (version.stdout, version.stderr) == ((CLI / "version.stdout").read_bytes(), b"")


# --- the command line ---------------------------------------------------------------------------


def parse(argv: list[str], resumable: bool = True) -> Invocation:
    return kilo_argv.parse(argv, resumable=resumable, stdin_is_tty=True)


def refusal(argv: list[str], resumable: bool = True) -> UsageError:
    with pytest.raises(UsageError) as raised:
        parse(argv, resumable)
    return raised.value


def test_skill_runner_s_command_lines() -> None:
    start = parse(
        ["run", "--dir", ".", "--format", "json", "--auto", "--thinking", "--model", "p/m", "Hi there"]
    )
    assert start == Invocation(
        engine="kilo",
        action="run",
        prompt="Hi there",
        model="p/m",
        output_format="json",
        auto_flags=("--auto",),
        thinking=True,
        directory=".",
        reasoning="shown",
    )
    resume = parse(["run", "--format", "json", "--auto", "--thinking", "--session", "ses_1", "Formal"])
    assert (resume.resume_id, resume.prompt) == ("ses_1", "Formal")
    assert parse(["run", "-s", "ses_2", "a", "b"]).resume_id == "ses_2"
    assert parse(["run", "-c", "again"]).resume_latest
    assert parse(["run", "hi"]).reasoning == "hidden"  # `run` prints reasoning only with --thinking
    assert parse(["run", "--command", "init", "now"]).prompt == "/init now"


def test_what_kilo_refuses_or_the_fake_does_not_simulate() -> None:
    assert refusal(["run", "--format", "xml", "hi"]).text == kilo_argv.run_help_text(True)
    assert "invalid model 'gpt'" in refusal(["run", "-m", "gpt", "hi"]).text
    assert refusal(["run", "--fork", "hi"]).text.endswith("--fork requires --continue or --session\n")
    for argv in (
        ["run", "--fork", "-c", "hi"],
        ["run", "--cloud-fork", "-s", "x", "hi"],
        ["run", "-i", "hi"],
    ):
        assert "is not simulated" in refusal(argv).text
    assert "is not simulated" in refusal(["serve"]).text
    assert "the interactive TUI is not simulated" in refusal([]).text
    assert refusal(["--bogus"]).text == kilo_argv.top_help_text(True)


def test_a_build_without_resume() -> None:
    for text in (kilo_argv.run_help_text(False), kilo_argv.top_help_text(False)):
        assert "--session" not in text and "--continue" not in text and "fork" not in text
    for argv in (["run", "--session", "ses_1", "hi"], ["run", "-c", "hi"], ["run", "--cloud-fork", "hi"]):
        error = refusal(argv, resumable=False)
        assert (error.text, error.exit_code) == (kilo_argv.run_help_text(False), 1)


# --- what the fake adds to the call log and its variants -----------------------------------------


def test_the_call_log_keeps_kilo_config_and_the_folder_run_dir_moved_to(bench: EngineBench) -> None:
    run_dir = bench.root / "run-kilo"
    (run_dir / ".kilo").mkdir(parents=True)
    config = run_dir / ".kilo" / "kilo.jsonc"
    config.write_text(
        '{\n  // Skill-Runner writes JSON; kilo reads comments too\n  "permission": {"bash": "allow",\n'
        '    "external_directory": "deny", "question": "deny",},\n  /* done */\n}\n',
        encoding="utf-8",
    )
    (run_dir / "input.json").write_text('{"input": {"note": "tg-case-here"}}', encoding="utf-8")
    bench.case("here", turns=[{"steps": [{"say": "hi"}]}])
    played = bench.run(
        "kilo",
        ["run", "--dir", str(run_dir), *first_turn_args("kilo", "no token")[1:]],
        KILO_CONFIG=".kilo/kilo.jsonc",
        KILO_DISABLE_AUTOUPDATE="1",
    )
    assert played.returncode == 0, played.err
    (call,) = bench.calls()
    assert (call["case_source"], call["workdir"]) == ("input.json", str(run_dir))
    assert call["kilo_config"] == {
        "path": str(config),
        "permission": {"question": "deny", "external_directory": "deny"},
    }
    assert call["env"]["KILO_DISABLE_AUTOUPDATE"] == "1"
    config.write_text("{not json", encoding="utf-8")
    bench.run("kilo", ["run", "--dir", str(run_dir), "tg-case-here"], KILO_CONFIG=str(config))
    assert bench.calls()[-1]["kilo_config"]["error"].startswith("not JSON with comments")
    assert line_problems(CALL_LOG, bench.call_log.read_text(encoding="utf-8")) == []


def test_the_first_step_at_once_and_the_no_output_string_error(bench: EngineBench) -> None:
    bench.case(
        "early", turns=[{"steps": [], "end": "failed"}], variants={"kilo": {"error_before_step": False}}
    )
    early = bench.run("kilo", first_turn_args("kilo", "tg-case-early"))
    assert [line["type"] for line in early.json_lines()] == ["step_start", "error"]
    bench.case("empty", turns=[{"steps": [], "end": "failed"}], variants={"kilo": {"error_string": True}})
    empty = bench.run("kilo", first_turn_args("kilo", "tg-case-empty"))
    lines = empty.json_lines()
    assert [line["type"] for line in lines] == ["step_start", "step_finish", "error"]
    message = "run ended without an assistant message\n the model returned no output"
    assert lines[-1]["error"] == message
    assert empty.stderr == b"\x1b[91m\x1b[1mError: \x1b[0m" + message.encode() + b"\n"
    assert empty.returncode == 1


@pytest.mark.parametrize(
    "variants", [{}, {"kilo": {"cut_ends_step": True}}, {"kilo": {"text_after_error": True}}]
)
@pytest.mark.parametrize(
    "capture", ["real-7.7.2-hazard-cut", "real-7.7.2-hazard-cut-retried", "real-7.7.7-hazard-cut-retried"]
)
def test_a_cut_that_ends_its_step_as_the_real_one(
    bench: EngineBench, capture: str, variants: dict[str, Any]
) -> None:
    """A body that ends without its end-of-answer event: no error, the text, step_finish reason other
    without metrics, exit 0 (whatever the variants: kilo took the answer as finished)."""
    cut = {"steps": [{"say": GREETING}, {"model_error": {"cut": True, "retries": 7}}]}
    bench.case("cut", turns=[cut], variants=variants)
    played = bench.run("kilo", skill_runner_args("Run the skill. tg-case-cut"))
    assert shape(played.stdout) == shape((REAL / capture / "stdout").read_bytes())
    assert played.json_lines()[-1]["part"]["reason"] == "other"
    assert (played.returncode, played.stderr) == (0, b"")


@pytest.mark.parametrize(
    "capture", ["real-7.7.2-hazard-drop", "real-7.7.2-hazard-drop-retried", "real-7.7.7-hazard-drop"]
)
def test_a_dropped_connection_reports_the_error_then_the_answer(bench: EngineBench, capture: str) -> None:
    """The connection closed mid-body: the answer's step, the error, then the answer's text, exit 1."""
    dropped = {"steps": [{"say": GREETING}, {"model_error": {"cut": True, "dropped": True, "retries": 2}}]}
    bench.case("drop", turns=[dropped])
    played = bench.run("kilo", skill_runner_args("Run the skill. tg-case-drop"))
    folder = REAL / capture
    assert shape(played.stdout) == shape((folder / "stdout").read_bytes())
    assert (played.returncode, played.stderr) == (1, (folder / "stderr").read_bytes())


@pytest.mark.parametrize("status", [429, 500])
def test_a_refused_request_is_worded_with_its_body_as_the_real_one(bench: EngineBench, status: int) -> None:
    """A provider message that is only the reason phrase is followed by the response body (stdout's
    message and stderr's line); the headers are the model server's, `server` among them."""
    bench.case("refused", turns=[{"steps": [{"model_error": {"status": status, "retries": 2}}]}])
    played = bench.run("kilo", skill_runner_args("Run the skill. tg-case-refused"))
    folder = REAL / f"real-7.7.2-hazard-{status}"
    real_error = json.loads((folder / "stdout").read_bytes())["error"]
    fake_error = played.json_lines()[-1]["error"]
    assert fake_error["data"]["message"] == real_error["data"]["message"]
    assert fake_error["data"]["responseBody"] == real_error["data"]["responseBody"]
    assert list(fake_error["data"]["responseHeaders"]) == list(real_error["data"]["responseHeaders"])
    assert (played.returncode, played.stderr) == (1, (folder / "stderr").read_bytes())


def test_a_request_retried_into_success_goes_on_silently(bench: EngineBench) -> None:
    steps = [{"model_error": {"status": 429, "retries": 2, "recovers": True}}, {"say": GREETING}]
    bench.case("retried", turns=[{"steps": steps}])
    played = bench.run("kilo", first_turn_args("kilo", "tg-case-retried"))
    assert (played.returncode, played.stderr) == (0, b"")
    assert shape(played.stdout) == shape(real("message")[0])


def test_default_format_prints_trimmed_text_and_thinking(bench: EngineBench) -> None:
    bench.case("plain", turns=[{"steps": [{"think": " Hmm. "}, {"say": "  Hello  "}, {"say": " "}]}])
    shown = bench.run("kilo", ["run", "--thinking", "tg-case-plain"])
    assert (shown.out, shown.returncode) == ("Thinking: Hmm.\nHello\n", 0)
    assert bench.run("kilo", ["run", "tg-case-plain"]).out == "Hello\n"
    assert bench.run("kilo", resume_args("kilo", "ses_none", "x")).returncode == 1
