"""What a real-engine launcher does: isolate the CLI, point it at the model server, run it, log the call.

Runs in a launcher started with ``python -S`` (standard library only, like the
fake engines'). The settings are those checked in November 2026:
each CLI gets its own HOME and config under the state folder, no telemetry, no
update checks, and the model server's URL as its provider. The real CLI runs as
a child with the launcher's standard streams, so the orchestrator reads the
real bytes; signals are passed on and the child dies with the launcher.

The call log line has the fake engines' shape (docs/fake-engines.md, "Call
log") plus ``real: <engine>@<version>``, so argv checks work with real engines.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

from turngate.engines.fake.calllog import relevant_environment  # standard library only, like this module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_CASE = re.compile(r"tg-case-([A-Za-z0-9_-]+)")
# The real CLIs read their config under XDG_ folders; the fake engines' IFLOW_ knobs mean nothing here.
_KEPT_PREFIXES = ("TURNGATE_", "GEMINI_", "GOOGLE_", "OPENCODE_", "XDG_")
CODEX_MODEL = "gpt-5.5"  # a name codex has metadata for; others start the stream with an error item


def codex_config(url: str) -> str:
    return (
        'model_provider = "turngate"\n'
        f'model = "{CODEX_MODEL}"\n'
        "check_for_update_on_startup = false\n"
        "\n[analytics]\nenabled = false\n"
        "\n[model_providers.turngate]\n"
        'name = "turngate scripted model"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def gemini_settings() -> dict[str, object]:
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }


def opencode_config(url: str) -> dict[str, object]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "turngate/scripted",
        "small_model": "turngate/scripted",
        "provider": {
            "turngate": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "turngate scripted model",
                "options": {"baseURL": f"{url}/v1", "apiKey": "fake"},
                "models": {"scripted": {"name": "scripted", "tool_call": True, "reasoning": True}},
            }
        },
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
    }


def environment(engine: str, url: str, state: str, base: Mapping[str, str]) -> dict[str, str]:
    """The CLI's environment: ``base`` plus its isolated homes and config, files written as needed."""
    env = dict(base)
    home = os.path.join(state, f"{engine}-home")
    os.makedirs(home, exist_ok=True)
    env["HOME"] = home
    if engine == "codex":
        codex_home = os.path.join(home, ".codex")
        os.makedirs(codex_home, exist_ok=True)
        _write(os.path.join(codex_home, "config.toml"), codex_config(url))
        env["CODEX_HOME"] = codex_home
        env.pop("OPENAI_API_KEY", None)
        env.pop("OPENAI_BASE_URL", None)
    elif engine == "gemini":
        os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
        _write(os.path.join(home, ".gemini", "settings.json"), json.dumps(gemini_settings(), indent=2))
        env.update(
            GEMINI_API_KEY="fake",
            GOOGLE_GEMINI_BASE_URL=url,
            GEMINI_CLI_NO_RELAUNCH="true",
            NO_BROWSER="true",
        )
        for name in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"):
            env.pop(name, None)
    elif engine == "opencode":
        config = os.path.join(home, "opencode.json")
        _write(config, json.dumps(opencode_config(url), indent=2))
        for name in ("CONFIG", "DATA", "CACHE", "STATE"):
            path = os.path.join(home, f".xdg-{name.lower()}")
            os.makedirs(path, exist_ok=True)
            env[f"XDG_{name}_HOME"] = path
        env.update(
            OPENCODE_CONFIG=config,
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        )
    return env


def _write(path: str, text: str) -> None:
    try:
        with open(path, encoding="utf-8") as existing:
            if existing.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def main(engine: str, executable: str, version: str, defaults: Mapping[str, str], argv: list[str]) -> int:
    for name, value in defaults.items():
        os.environ.setdefault(name, value)
    url = os.environ.get("TURNGATE_MODEL_URL", "")
    if not url:
        sys.stderr.write(
            f"turngate-real-{engine}: TURNGATE_MODEL_URL: unset: start `turngate engines real serve`\n"
        )
        return 97
    state = os.environ.get("TURNGATE_REAL_STATE") or os.path.join(
        os.environ.get("TURNGATE_STATE") or os.path.join(os.getcwd(), ".turngate-state"), "real"
    )
    env = environment(engine, url.rstrip("/"), state, os.environ)
    started = time.time()
    record: dict[str, object] = {
        "engine": engine,
        "argv": argv,
        "cwd": os.getcwd(),
        "env": relevant_environment(env, _KEPT_PREFIXES),
        "stdin": None,
        "action": _action(argv),
        "case": _case(argv),
        "case_source": None,
        "resumed": _resumed(engine, argv),
        "real": f"{engine}@{version}",
        "pid": os.getpid(),
        "start": started,
    }
    record["case_source"] = "prompt" if record["case"] else None
    if record["case"] is None:
        record["case"] = _case_from_input_json()
        record["case_source"] = "input.json" if record["case"] else None
    child = subprocess.Popen([executable, *argv], env=env, preexec_fn=_die_with_parent)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda received, _frame: child.send_signal(received))
    code = child.wait()
    record.update(
        exit_code=code if code >= 0 else None,
        outcome="exited" if code >= 0 else "signal",
        signal=-code if code < 0 else None,
        end=time.time(),
    )
    _log(os.environ.get("TURNGATE_CALL_LOG"), record)
    return code if code >= 0 else 128 - code


def _action(argv: list[str]) -> str:
    """As the fake engines name it: a probe prints help or a version, anything else runs a turn."""
    if any(word in ("--version", "-V") for word in argv):
        return "version"
    if any(word in ("--help", "-h") for word in argv):
        return "help"
    return "run"


def _resumed(engine: str, argv: list[str]) -> bool:
    """Whether the command line resumes a session, as each CLI spells it (docs/fake-engines.md)."""
    if engine == "codex":
        return "resume" in argv[: argv.index("--") if "--" in argv else len(argv)]
    if engine == "gemini":
        return any(word in ("--resume", "-r") or word.startswith("--resume=") for word in argv)
    return any(
        word in ("--session", "-s", "--continue", "-c") or word.startswith("--session=") for word in argv
    )


def _case(argv: list[str]) -> str | None:
    for word in argv:
        found = _CASE.search(word)
        if found:
            return found.group(1)
    return None


def _case_from_input_json() -> str | None:
    try:
        with open("input.json", encoding="utf-8") as data:
            found = _CASE.search(data.read())
    except OSError:
        return os.environ.get("TURNGATE_CASE")
    return found.group(1) if found else os.environ.get("TURNGATE_CASE")


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG: the CLI gets SIGKILL if the launcher is killed (a watchdog's SIGKILL).
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _log(path: str | None, record: Mapping[str, object]) -> None:
    if not path:
        return
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.close(descriptor)
    except OSError:
        pass
