"""`turngate record`: a real process's streams kept, scrubbed, and played back exactly by a fake engine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.turngate_cli import in_process
from turngate.engines.fake.install import install
from turngate.tools.drift.capture import load_capture
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
    # The script: the same bytes again, through a fake engine, whatever its argv.
    (tmp_path / "scripts" / "cap.yaml").write_text((tmp_path / "cap" / "script.yaml").read_text())
    again = subprocess.run(
        [engine, "exec", "--json", "anything"],
        capture_output=True,
        env={**os.environ, "TURNGATE_CASE": "cap"},
    )
    assert again.stdout == capture.stdout
    assert again.returncode == 0


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
