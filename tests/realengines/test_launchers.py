"""The lock file and the real-engine launchers (no npm: the pinned CLI is a small script in the cache)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from turngate.engines.real.lock import LockProblem, Pin, read_lock, select
from turngate.engines.real.npm_install import write_launchers

CLI = """#!/bin/sh
# stands in for the installed CLI: shows what the launcher gave it
echo "argv: $*"
env
exit 3
"""


def test_the_repository_lock_pins_ten_versions_and_an_engine_named_alone_is_its_first() -> None:
    assert [pin.name for pin in read_lock()] == [
        "codex@0.169.0",
        "codex@0.146.1",
        "gemini@0.61.0",
        "opencode@1.18.33",
        "claude@2.1.331",
        "claude@2.1.326",
        "qwen@0.24.4",
        "kilo@7.7.7",
        "kilo@7.7.2",
        "codebuddy@2.118.2",
    ]
    (codebuddy,) = select(read_lock(), ["codebuddy"])
    assert (codebuddy.source, codebuddy.requirement) == ("pip", "codebuddy-agent-sdk==0.3.205")
    assert codebuddy.executable(Path("/c")) == Path(
        "/c/codebuddy@2.118.2/site/codebuddy_agent_sdk/bin/codebuddy-headless"
    )
    (kilo,) = select(read_lock(), ["kilo"])
    assert (kilo.source, kilo.requirement) == ("npm", "@kilocode/cli@7.7.7")
    assert "7.8.1" in kilo.note  # why not the latest
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
        (
            '{"engines": {"codex": [{"package": "p", "version": "1", "bin": "c", "source": "apt"}]}}',
            r"engines.codex\[0\].source: 'apt': one of npm, pip",
        ),
        (
            '{"engines": {"codebuddy": [{"package": "p", "version": "1", "bin": "b/c", "source": "pip"}]}}',
            r"engines.codebuddy\[0\].package_version: missing",
        ),
        (
            '{"engines": {"codebuddy": [{"package": "p", "version": "1", "bin": "../c", "source": "pip",'
            ' "package_version": "2"}]}}',
            r"engines.codebuddy\[0\].bin: '../c': a command name \(npm\) or a path inside the package",
        ),
        (
            '{"engines": {"claude": [{"package": "p", "version": "1", "bin": "bin/claude"}]}}',
            r"engines.claude\[0\].bin: 'bin/claude'",
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


def _launch(
    tmp_path: Path, engine: str, *argv: str, env: dict[str, str] | None = None, retries: int | None = None
) -> tuple[dict[str, str], Path, dict[str, object]]:
    """The launcher of ``engine`` run over a stand-in CLI: the CLI's environment, HOME, call log line."""
    (pin,) = select(read_lock(), [engine])
    cache = _cache_with(tmp_path, pin)
    call_log = tmp_path / "calls.jsonl"
    write_launchers(
        tmp_path / "bin", [pin], cache, model_url="http://127.0.0.1:9", call_log=call_log, retries=retries
    )
    state = tmp_path / "state"
    done = subprocess.run(
        [str(tmp_path / "bin" / engine), *argv],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "TURNGATE_STATE": str(state), **(env or {})},
        check=False,
    )
    assert done.returncode == 3, done.stderr
    shown = dict(line.split("=", 1) for line in done.stdout.splitlines()[1:] if "=" in line)
    (line,) = [json.loads(text) for text in call_log.read_text(encoding="utf-8").splitlines()]
    assert (line["engine"], line["real"], line["exit_code"], line["action"]) == (engine, pin.name, 3, "run")
    return shown, state / "real" / f"{engine}-home", line


@pytest.mark.parametrize("engine", ["codex", "gemini", "opencode", "claude", "qwen", "kilo", "codebuddy"])
def test_a_launcher_isolates_the_cli_points_it_at_the_model_server_and_logs_the_call(
    tmp_path: Path, engine: str
) -> None:
    shown, home, line = _launch(tmp_path, engine, "resume-words", "tg-case-abc")
    assert shown["HOME"] == str(home)
    assert line["case"] == "abc"
    match engine:
        case "codex":
            config = (home / ".codex" / "config.toml").read_text(encoding="utf-8")
            assert 'base_url = "http://127.0.0.1:9/v1"' in config
            assert "request_max_retries = 0" in config
        case "gemini":
            assert shown["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"
            settings = json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
            assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
            assert settings["general"]["maxAttempts"] == 3  # two retries
        case "opencode":
            config = json.loads(Path(shown["OPENCODE_CONFIG"]).read_text(encoding="utf-8"))
            assert config["provider"]["turngate"]["options"]["baseURL"] == "http://127.0.0.1:9/v1"
        case "claude":
            assert (shown["ANTHROPIC_BASE_URL"], shown["ANTHROPIC_API_KEY"]) == ("http://127.0.0.1:9", "fake")
            assert shown["CLAUDE_CONFIG_DIR"] == str(home / ".claude")
            assert shown["CLAUDE_CODE_MAX_RETRIES"] == "2"
            assert shown.get("IS_SANDBOX") == ("1" if os.geteuid() == 0 else None)
            settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
            assert settings["permissions"] == {
                "defaultMode": "bypassPermissions",
                "deny": ["AskUserQuestion"],
            }
            onboarding = json.loads((home / ".claude" / ".claude.json").read_text(encoding="utf-8"))
            assert onboarding == {"hasCompletedOnboarding": True}
        case "qwen":
            assert shown["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
            settings = json.loads((home / ".qwen" / "settings.json").read_text(encoding="utf-8"))
            assert settings["security"]["auth"]["selectedType"] == "openai"
            assert settings["model"]["generationConfig"]["maxRetries"] == 2
        case "kilo":
            config = json.loads(Path(shown["KILO_CONFIG"]).read_text(encoding="utf-8"))
            assert config["model"] == "turngate/scripted"
            assert config["provider"]["turngate"]["options"]["baseURL"] == "http://127.0.0.1:9/v1"
            assert (shown["KILO_SESSION_RETRY_LIMIT"], shown["KILO_TELEMETRY_LEVEL"]) == ("2", "off")
            assert shown["XDG_CONFIG_HOME"].startswith(str(home))
        case "codebuddy":
            assert (shown["CODEBUDDY_CONFIG_DIR"], shown["CODEBUDDY_MODEL"]) == (
                str(home / ".codebuddy"),
                "turngate-scripted",
            )
            models = json.loads((home / ".codebuddy" / "models.json").read_text(encoding="utf-8"))
            assert models["models"][0]["url"] == "http://127.0.0.1:9/v1/chat/completions"


@pytest.mark.parametrize(
    ("engine", "variable", "value"),
    [
        ("codex", None, "stream_max_retries = 4"),
        ("claude", "CLAUDE_CODE_MAX_RETRIES", "4"),
        ("kilo", "KILO_SESSION_RETRY_LIMIT", "4"),
    ],
)
def test_the_retry_limit_is_the_one_the_launcher_is_given(
    tmp_path: Path, engine: str, variable: str | None, value: str
) -> None:
    shown, home, _ = _launch(tmp_path, engine, "x", retries=4)
    if variable is None:
        assert value in (home / ".codex" / "config.toml").read_text(encoding="utf-8")
    else:
        assert shown[variable] == value


def test_kilo_keeps_the_orchestrators_config_and_serves_the_model_it_names(tmp_path: Path) -> None:
    theirs = tmp_path / "run" / ".kilo" / "kilo.jsonc"
    theirs.parent.mkdir(parents=True)
    theirs.write_text(
        json.dumps(
            {
                "model": "kilo/kilo-auto/free",
                "permission": {"external_directory": "deny", "question": "deny"},
                "provider": {"anthropic": {"options": {"timeout": False}}},
            }
        ),
        encoding="utf-8",
    )
    shown, _, _ = _launch(
        tmp_path, "kilo", "run", "--model", "kilo/kilo-auto/free", "hi", env={"KILO_CONFIG": str(theirs)}
    )
    config = json.loads(Path(shown["KILO_CONFIG"]).read_text(encoding="utf-8"))
    assert config["permission"] == {"external_directory": "deny", "question": "deny"}  # the orchestrator's
    assert config["provider"]["anthropic"] == {"options": {"timeout": False}}
    assert config["provider"]["kilo"]["options"]["baseURL"] == "http://127.0.0.1:9/v1"
    assert list(config["provider"]["kilo"]["models"]) == ["kilo-auto/free"]


def test_codebuddy_serves_the_model_the_command_line_names(tmp_path: Path) -> None:
    _, home, _ = _launch(tmp_path, "codebuddy", "-p", "--model", "hy3", "hi")
    models = json.loads((home / ".codebuddy" / "models.json").read_text(encoding="utf-8"))
    assert models["availableModels"] == ["turngate-scripted", "hy3"]


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
    assert _resumed("claude", ["--resume", "u", "-p", "--output-format", "stream-json", "hi"])
    assert _resumed("qwen", ["--output-format", "stream-json", "--resume", "u", "-p", "hi"])
    assert _resumed("kilo", ["run", "--dir", "d", "--session", "ses_1", "hi"])
    assert _resumed("codebuddy", ["-p", "-r", "u", "hi"])
    assert not _resumed("codebuddy", ["-p", "--output-format", "stream-json", "resume me"])
