"""The lock file and the real-engine launchers (no npm: the pinned CLI is a small script in the cache)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from turngate.engines.fake.invocation import ENGINES
from turngate.engines.real.lock import LockProblem, Pin, read_lock, select
from turngate.engines.real.npm_install import write_launchers

CLI = """#!/bin/sh
# stands in for the npm-installed CLI: shows what the launcher gave it
echo "argv: $*"
echo "HOME=$HOME"
echo "CODEX_HOME=$CODEX_HOME"
echo "GOOGLE_GEMINI_BASE_URL=$GOOGLE_GEMINI_BASE_URL"
echo "OPENCODE_CONFIG=$OPENCODE_CONFIG"
exit 3
"""


def test_the_repository_lock_pins_four_versions_and_an_engine_named_alone_is_its_first() -> None:
    assert [pin.name for pin in read_lock()] == [
        "codex@0.169.0",
        "codex@0.146.1",
        "gemini@0.61.0",
        "opencode@1.18.33",
    ]
    assert [pin.name for pin in select(read_lock(), ["codex", "gemini"])] == [
        "codex@0.169.0",
        "gemini@0.61.0",
    ]


def test_an_unpinned_version_is_one_line_naming_the_pins() -> None:
    with pytest.raises(LockProblem, match=r"'codex@9\.9\.9': not pinned \(pinned: codex@0\.169\.0, "):
        select(read_lock(), ["codex@9.9.9"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "Expecting property name"),
        ('{"engines": []}', r"engines: \[\]: a mapping of engine to pins"),
        ('{"engines": {"iflow": []}}', "engines.iflow: not installable"),
        (
            '{"engines": {"codex": [{"package": "@openai/codex", "version": ""}]}}',
            r"engines.codex\[0\].version: ''",
        ),
    ],
)
def test_a_bad_lock_file_names_file_field_and_value(tmp_path: Path, text: str, message: str) -> None:
    lock = tmp_path / "engines.lock.json"
    lock.write_text(text, encoding="utf-8")
    with pytest.raises(LockProblem, match=message) as raised:
        read_lock(lock)
    assert str(raised.value).startswith(str(lock))
    assert "\n" not in str(raised.value)


def _cache_with(tmp_path: Path, pin: Pin) -> Path:
    cache = tmp_path / "cache"
    executable = pin.executable(cache)
    executable.parent.mkdir(parents=True)
    executable.write_text(CLI, encoding="utf-8")
    executable.chmod(0o755)
    return cache


@pytest.mark.parametrize("engine", ["codex", "gemini", "opencode"])
def test_a_launcher_isolates_the_cli_points_it_at_the_model_server_and_logs_the_call(
    tmp_path: Path, engine: str
) -> None:
    (pin,) = select(read_lock(), [engine])
    cache = _cache_with(tmp_path, pin)
    call_log = tmp_path / "calls.jsonl"
    written = write_launchers(
        tmp_path / "bin", [pin], cache, model_url="http://127.0.0.1:9", call_log=call_log
    )
    assert sorted(path.name for path in written) == sorted(ENGINES)  # the rest stay fake
    state = tmp_path / "state"
    done = subprocess.run(
        [str(tmp_path / "bin" / engine), "resume-words", "tg-case-abc"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "TURNGATE_STATE": str(state)},
        check=False,
    )
    assert done.returncode == 3
    shown = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    home = state / "real" / f"{engine}-home"
    assert shown["HOME"] == str(home)
    match engine:
        case "codex":
            config = (home / ".codex" / "config.toml").read_text(encoding="utf-8")
            assert 'base_url = "http://127.0.0.1:9/v1"' in config
            assert "request_max_retries = 0" in config
        case "gemini":
            assert shown["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"
            settings = json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
            assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
        case "opencode":
            config = json.loads(Path(shown["OPENCODE_CONFIG"]).read_text(encoding="utf-8"))
            assert config["provider"]["turngate"]["options"]["baseURL"] == "http://127.0.0.1:9/v1"
    (line,) = [json.loads(text) for text in call_log.read_text(encoding="utf-8").splitlines()]
    assert (line["engine"], line["real"], line["case"], line["exit_code"], line["action"]) == (
        engine,
        pin.name,
        "abc",
        3,
        "run",
    )


def test_a_launcher_without_a_model_server_says_so_in_one_line(tmp_path: Path) -> None:
    (pin,) = select(read_lock(), ["codex"])
    cache = _cache_with(tmp_path, pin)
    write_launchers(tmp_path / "bin", [pin], cache)
    done = subprocess.run(
        [str(tmp_path / "bin" / "codex"), "exec", "x"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "TURNGATE_STATE": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 97
    assert done.stderr.splitlines() == [
        "turngate-real-codex: TURNGATE_MODEL_URL: unset: start `turngate engines real serve`"
    ]


def test_the_launcher_marks_resume_command_lines() -> None:
    from turngate.engines.real.launch import _resumed

    assert _resumed("codex", ["exec", "resume", "--json", "T", "hi"])
    assert not _resumed("codex", ["exec", "--json", "resume me"])
    assert _resumed("gemini", ["--resume", "S", "--yolo", "hi"])
    assert _resumed("opencode", ["run", "--session=ses_1", "hi"])
    assert not _resumed("opencode", ["run", "--format", "json", "hi"])
