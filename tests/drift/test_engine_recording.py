"""`turngate record`: a real process's streams kept, scrubbed, and played back exactly by a fake engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.turngate_cli import in_process
from turngate.engines.fake.install import install
from turngate.tools.drift.capture import CaptureProblem, load_capture
from turngate.tools.drift.engine_recording import SCRUB_PATTERNS, scrub
from turngate.tools.drift.gate_replay import replay


def cli(*argv: str) -> int:
    return in_process(*argv)[0]


def record_into(folder: Path, *command: str) -> int:
    """``turngate record --engine codex --quiet --out FOLDER -- COMMAND…``"""
    return cli("record", "--engine", "codex", "--quiet", "--out", str(folder), "--", *command)


def test_a_recorded_engine_turn_replays_and_its_script_plays_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The "real engine" here is a fake one: what matters is a real process and its exact bytes.
    install(tmp_path / "bin")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "rec.yaml").write_text(
        yaml.safe_dump(
            {
                "case": "rec",
                "turns": [
                    {
                        "steps": [
                            {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md"}},
                            {"say": '{"greeting": "Hi", "__SKILL_DONE__": true}'},
                        ]
                    }
                ],
            }
        )
    )
    monkeypatch.setenv("TURNGATE_SCRIPTS", str(tmp_path / "scripts"))
    monkeypatch.setenv("TURNGATE_STATE", str(tmp_path / "state"))
    engine = str(tmp_path / "bin" / "codex")
    assert (
        record_into(
            tmp_path / "cap",
            engine,
            "exec",
            "--skip-git-repo-check",
            "--json",
            "--full-auto",
            "go tg-case-rec",
        )
        == 0
    )
    capture = load_capture(tmp_path / "cap")
    assert replay(capture).assessment.decision.state == "succeeded"
    meta = yaml.safe_load((tmp_path / "cap" / "capture.yaml").read_text())
    assert meta["exit_code"] == 0
    assert "recorded by turngate record" in meta["provenance"]
    # The command line, the engine's version (its own `--version` line) and the duration are kept.
    assert capture.recorded is not None
    assert capture.recorded.argv == (
        engine,
        "exec",
        "--skip-git-repo-check",
        "--json",
        "--full-auto",
        "go tg-case-rec",
    )
    assert capture.recorded.version == "codex-cli 0.99.0"  # the fake codex's default build
    assert capture.recorded.duration_sec > 0
    assert capture.recorded.killed is None
    # The script: the same bytes again, through a fake engine, whatever its argv.
    (tmp_path / "scripts" / "cap.yaml").write_text((tmp_path / "cap" / "script.yaml").read_text())
    again = subprocess.run(
        [engine, "exec", "--json", "anything"],
        capture_output=True,
        env={**os.environ, "TURNGATE_CASE": "cap"},
    )
    assert again.stdout == capture.stdout
    assert again.returncode == 0


def test_an_engine_the_recorder_kills_is_recorded_as_killed_and_why(tmp_path: Path) -> None:
    code = "import sys, time; print('started', flush=True); time.sleep(600)"
    assert (
        cli(
            *("record", "--engine", "codex", "--quiet", "--out", str(tmp_path / "cap"), "--timeout", "0.5"),
            *("--engine-version", "9.9.9", "--", sys.executable, "-c", code),
        )
        == 0
    )
    capture = load_capture(tmp_path / "cap")
    assert capture.signal == 9
    assert capture.recorded is not None
    assert (capture.recorded.version, capture.recorded.killed) == (
        "9.9.9",
        "by the recorder after its 0.5 s timeout",
    )
    _, shown, _ = in_process("replay", str(tmp_path / "cap"))
    assert "killed by the recorder after its 0.5 s timeout" in shown.splitlines()[1]


def test_a_capture_from_before_argv_version_and_duration_were_kept_still_loads_and_says_so() -> None:
    from turngate.tools.drift.sources import CORPUS_DIR

    capture = load_capture(CORPUS_DIR / "codex" / "real-0.169.0-message")
    assert capture.recorded is None
    code, shown, _ = in_process("replay", "corpus:codex/real-0.169.0-message")
    assert code == 0
    assert shown.splitlines()[1] == (
        "recorded: not recorded (argv, version, duration: a capture from before they were kept)"
    )
    code, shown, _ = in_process("replay", "corpus:codex/real-0.169.0-message", "--json")
    assert json.loads(shown)["capture"]["recorded"] is None


@pytest.mark.parametrize(
    ("recorded", "message"),
    [
        ("yes", "recorded: 'yes' has the wrong type"),
        ({"argv": ["codex"], "version": "1"}, "recorded.duration_sec: missing"),
        ({"argv": [], "version": "1", "duration_sec": 1}, "recorded.argv: []: the command line"),
        ({"argv": ["codex", 3], "version": "1", "duration_sec": 1}, "recorded.argv: ['codex', 3]"),
        ({"argv": ["codex"], "version": "1", "duration_sec": -2}, "recorded.duration_sec: -2: seconds"),
        ({"argv": ["codex"], "version": "1", "duration_sec": True}, "duration_sec: True has the wrong type"),
        ({"argv": ["codex"], "version": "1", "duration_sec": 1, "pid": 4}, "recorded: pid: unknown field"),
    ],
)
def test_a_bad_recorded_field_is_one_line_naming_it(tmp_path: Path, recorded: object, message: str) -> None:
    folder = tmp_path / "cap"
    folder.mkdir()
    (folder / "stdout").write_bytes(b"")
    (folder / "capture.yaml").write_text(yaml.safe_dump({"engine": "codex", "recorded": recorded}))
    with pytest.raises(CaptureProblem) as raised:
        load_capture(folder)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_real_captures_of_every_engine_with_a_reader_are_replayed_and_an_unknown_engine_is_named(
    tmp_path: Path,
) -> None:
    from turngate.tools.drift.sources import corpus_captures

    for engine in ("codex", "claude", "qwen", "codebuddy"):
        folder = tmp_path / engine / "real-1.0.0-message"
        folder.mkdir(parents=True)
        (folder / "stdout").write_bytes(b"")
        (folder / "capture.yaml").write_text(yaml.safe_dump({"engine": engine}))
    assert [capture.engine for capture in corpus_captures(tmp_path)] == [
        "claude",
        "codebuddy",
        "codex",
        "qwen",
    ]
    folder = tmp_path / "aider" / "real-1.0.0-message"
    folder.mkdir(parents=True)
    (folder / "stdout").write_bytes(b"")
    (folder / "capture.yaml").write_text(yaml.safe_dump({"engine": "aider"}))
    with pytest.raises(CaptureProblem, match="engine: 'aider': known: codex, gemini, iflow, opencode, kilo"):
        load_capture(folder)


def test_a_killed_engine_is_recorded_with_its_signal(tmp_path: Path) -> None:
    code = (
        'import os, signal, sys; sys.stdout.write(\'{"type":"turn.started"}\\n\'); sys.stdout.flush();'
        " os.kill(os.getpid(), signal.SIGKILL)"
    )
    assert (
        record_into(
            tmp_path / "cap",
            sys.executable,
            "-c",
            code,
        )
        == 0
    )
    capture = load_capture(tmp_path / "cap")
    assert capture.signal == 9
    assert capture.exit_code is None
    assert "crash" in (tmp_path / "cap" / "script.yaml").read_text()


def test_secrets_never_reach_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/alice")
    monkeypatch.setenv("USER", "alice")
    secrets = [
        "sk-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "AKIAABCDEFGHIJKLMNOP",
        "ada.lovelace@example.com",
        "/home/alice/projects",
        "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlMTIz",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "xoxb-1234567890-abcdef",
    ]
    code = 'import sys; print(sys.argv[1:]); print(\'{"api_key": "hunter22secret", "password":"pw-12345"}\')'
    args = [sys.executable, "-c", code, *secrets, "Authorization: Bearer abc.def.ghijklmnop"]
    assert record_into(tmp_path / "cap", *args) == 0
    written = b"".join(path.read_bytes() for path in (tmp_path / "cap").iterdir())
    for secret in [*secrets, "hunter22secret", "pw-12345", "abc.def.ghijklmnop"]:
        assert secret.encode() not in written, secret
    assert b"<email>" in written
    assert b"<home>" in written
    assert b"<redacted>" in written


@pytest.mark.parametrize("pattern", SCRUB_PATTERNS, ids=[pattern.name for pattern in SCRUB_PATTERNS])
def test_each_scrub_pattern_leaves_ordinary_engine_output_alone(pattern: object) -> None:
    ordinary = (
        b'{"type":"item.completed","item":{"id":"item_2","type":"agent_message",'
        b'"text":"{\\"greeting\\": \\"Good day\\", \\"__SKILL_DONE__\\": true}"}}\n'
        b'{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}\n'
    )
    assert scrub(ordinary) == ordinary
