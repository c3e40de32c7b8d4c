"""The real-capture tooling without npm: the command lines each CLI is played with, and what a capture
folder keeps of how it was recorded (a stand-in CLI plays the real one)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml

from turngate.engines.real.lock import Pin
from turngate.implementations.reference.commands import CommandOptions, build_command
from turngate.tools.drift.capture import load_capture
from turngate.tools.realengines.captures import WANTED, Wanted, all_scripts, capture_all, chosen
from turngate.tools.realengines.commands import NoCommand, command_line, prepare_run


@pytest.mark.parametrize(
    ("engine", "first", "resumed"),
    [
        (
            "claude",
            ["claude", "-p", "--output-format", "stream-json", "--verbose", "P"],
            ["claude", "--resume", "S", "-p", "--output-format", "stream-json", "--verbose", "P"],
        ),
        (
            "qwen",
            ["qwen", "--output-format", "stream-json", "--approval-mode", "yolo", "-p", "P"],
            ["qwen", "--output-format", "stream-json", "--approval-mode", "yolo", "--resume", "S", "-p", "P"],
        ),
        (
            "kilo",
            ["kilo", "run", "--dir", "/r", "--format", "json", "--auto", "--thinking", "P"],
            ["kilo", "run", "--dir", "/r", "--format", "json", "--auto", "--thinking", "--session", "S", "P"],
        ),
        (
            "codebuddy",
            [
                *(
                    "codebuddy",
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--permission-mode",
                    "bypassPermissions",
                ),
                *("--settings", "/r/.codebuddy/settings.json", "--setting-sources", "project"),
                *("--mcp-config", "/r/.codebuddy/mcp.json", "--strict-mcp-config", "P"),
            ],
            [
                *(
                    "codebuddy",
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--permission-mode",
                    "bypassPermissions",
                ),
                *("-r", "S", "--settings", "/r/.codebuddy/settings.json", "--setting-sources", "project"),
                *("--mcp-config", "/r/.codebuddy/mcp.json", "--strict-mcp-config", "P"),
            ],
        ),
    ],
)
def test_the_new_engines_are_played_with_skill_runner_v0_7_9s_command_lines(
    engine: str, first: list[str], resumed: list[str]
) -> None:
    # The captures were recorded with these (Skill-Runner v0.7.9's own); now that the reference drives
    # the engine, its command wins, as the module says, so that fidelity plays what the catalog plays.
    assert first[0] == resumed[0] == engine
    for session in (None, "S"):
        built = build_command(engine, "interactive", prompt="P", resume_id=session, options=CommandOptions())
        assert command_line(engine, "json", "P", session, Path("/r")) == list(built)


def test_the_reference_builds_the_command_where_it_knows_the_engine() -> None:
    assert command_line("codex", "json", "P", None, Path("/r")) == [
        *("codex", "exec", "--skip-git-repo-check", "--json", "--yolo", "P")
    ]
    assert command_line("gemini", "stream-json", "P", "S", Path("/r"))[:3] == ["gemini", "--resume", "S"]
    with pytest.raises(NoCommand, match="iflow2: no command line"):
        command_line("iflow2", "json", "P", None, Path("/r"))


def test_a_run_folder_gets_no_files_the_reference_command_does_not_name(tmp_path: Path) -> None:
    # Skill-Runner's codebuddy command named .codebuddy/settings.json and mcp.json; the reference's names none
    prepare_run("codebuddy", tmp_path)
    assert not (tmp_path / ".codebuddy").exists()
    prepare_run("claude", tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_every_wanted_capture_has_its_script_and_a_unique_name() -> None:
    scripts = all_scripts()
    assert all(wanted.script in scripts for wanted in WANTED)
    assert len({wanted.name for wanted in WANTED}) == len(WANTED)
    assert [w.name for w in chosen(["hazard-*"])] == [
        "hazard-429",
        "hazard-500",
        "hazard-cut",
        "hazard-cut-retried",
        "hazard-drop",
        "hazard-drop-retried",
    ]
    assert {w.kind for w in chosen(None, ["exploration"])} == {"exploration"}
    assert all(w.engines == frozenset({"codex"}) for w in chosen(None, ["exploration"]))


STAND_IN = """#!/bin/sh
# stands in for the installed CLI: one JSON line naming the session, or a turn that never ends
case "$*" in
  *tg-case-fid-message*) echo '{"type":"result","session_id":"s-1","result":"hi"}' ;;
  *) echo '{"type":"system"}'; exec sleep 600 ;;
esac
"""


def test_a_capture_keeps_the_argv_as_played_the_pins_version_the_duration_and_a_kill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = Pin("claude", "@anthropic-ai/claude-code", "9.9.9", "claude")
    cache = tmp_path / "cache"
    executable = pin.executable(cache)
    executable.parent.mkdir(parents=True)
    executable.write_text(STAND_IN, encoding="utf-8")
    executable.chmod(0o755)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the capture's fixed work folder goes here
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    wanted = [
        Wanted("message", "fid-message", 1, "d", {"state": "succeeded"}),
        Wanted("hazard-cut", "hazard-cut", 1, "d", {"state": "failed"}, "hazard", timeout_sec=0.5),
    ]
    corpus = tmp_path / "corpus"
    written = capture_all([pin], cache, corpus, wanted)
    assert [folder.name for folder in written] == ["real-9.9.9-message", "real-9.9.9-hazard-cut"]
    message = yaml.safe_load((written[0] / "capture.yaml").read_text(encoding="utf-8"))
    assert message["recorded"]["argv"][:5] == ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    assert "tg-case-fid-message" in message["recorded"]["argv"][-1]
    assert message["recorded"]["version"] == "9.9.9"
    assert message["recorded"]["duration_sec"] > 0
    assert "killed" not in message["recorded"]
    assert (message["exit_code"], message["expect"]) == (0, {"state": "succeeded"})
    killed = yaml.safe_load((written[1] / "capture.yaml").read_text(encoding="utf-8"))
    assert killed["signal"] == 9
    assert "exit_code" not in killed
    assert killed["recorded"]["killed"] == "by the recorder after its 0.5 s timeout"
    assert (written[1] / "stdout").read_bytes() == b'{"type":"system"}\n'
    assert load_capture(written[0]).engine == "claude"  # replayable: turngate reads claude
