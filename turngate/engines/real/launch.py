"""What a real-engine launcher does: isolate the CLI, point it at the model server, run it, log the call.

Runs in a launcher started with ``python -S`` (standard library only, like the
fake engines'). The settings are those checked in November 2026 (codex, gemini,
opencode) and on 2026-11-25 (claude, qwen, kilo, codebuddy; the research is in
docs/real-engines.md): each CLI gets its own HOME and config under
the state folder, no telemetry, no update checks, the model server's URL as its
provider, and a small retry limit (``DEFAULT_RETRIES``). The real CLI runs as
a child with the launcher's standard streams, so the orchestrator reads the
real bytes; signals are passed on and the child dies with the launcher.

The call log line has the fake engines' shape (docs/fake-engines.md, "Call
log") plus ``real: <engine>@<version>``, so argv checks work with real engines,
and ``passed_on``: the signal the launcher received and passed on to the CLI
(the orchestrator stopping the turn), whatever the CLI then exited with.
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
_KEPT_PREFIXES = (
    *("TURNGATE_", "GEMINI_", "GOOGLE_", "OPENCODE_", "XDG_"),
    *("ANTHROPIC_", "CLAUDE_", "IS_SANDBOX", "OPENAI_", "QWEN_", "KILO_", "CODEBUDDY_"),
)
CODEX_MODEL = "gpt-5.5"  # a name codex has metadata for; others start the stream with an error item
SCRIPTED_MODEL = "scripted"  # the model name the other CLIs are given (the server ignores it)
CODEBUDDY_MODEL = "turngate-scripted"
# How many times a CLI retries a failed model request, when nothing says otherwise: few, so that a
# scripted 429 or cut ends its turn in seconds (claude's own 10 retries take > 150 s, qwen's 10 with
# a 60 s start take hours). `TURNGATE_REAL_MAX_RETRIES` overrides it; the harness sets it to the
# script's `retries` (turngate/engines/modelserver/rounds.py, retry_limit). codex keeps 0, as
# before. opencode and codebuddy have no such setting: they retry as they do.
RETRIES_VARIABLE = "TURNGATE_REAL_MAX_RETRIES"
DEFAULT_RETRIES = {"codex": 0, "gemini": 2, "claude": 2, "qwen": 2, "kilo": 2}
# The flags that resume a session, per CLI (a launcher logs `resumed` as the fake engines do).
_RESUME_FLAGS = {
    "gemini": ("--resume", "-r"),
    "claude": ("--resume", "-r", "--continue", "-c"),
    "qwen": ("--resume", "-r", "--continue", "-c"),
    "codebuddy": ("--resume", "-r", "--continue", "-c"),
    "opencode": ("--session", "-s", "--continue", "-c"),
    "kilo": ("--session", "-s", "--continue", "-c"),
}


def codex_config(url: str, retries: int = 0) -> str:
    return (
        'model_provider = "turngate"\n'
        f'model = "{CODEX_MODEL}"\n'
        "check_for_update_on_startup = false\n"
        "\n[analytics]\nenabled = false\n"
        "\n[model_providers.turngate]\n"
        'name = "turngate scripted model"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        f"request_max_retries = {retries}\n"
        f"stream_max_retries = {retries}\n"
    )


def gemini_settings(retries: int | None = None) -> dict[str, object]:
    general: dict[str, object] = {"disableAutoUpdate": True, "disableUpdateNag": True}
    if retries is not None:
        general["maxAttempts"] = max(1, min(retries + 1, 10))  # attempts, not retries; at most 10
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": general,
    }


def opencode_config(url: str) -> dict[str, object]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "turngate/scripted",
        "small_model": "turngate/scripted",
        "provider": {"turngate": _openai_compatible(url, [SCRIPTED_MODEL])},
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
    }


def kilo_config(url: str, argv: list[str], orchestrators: Mapping[str, object] | None) -> dict[str, object]:
    """kilo's config: the orchestrator's own (``KILO_CONFIG``, Skill-Runner's ``RUN/.kilo/kilo.jsonc``:
    its permissions, ``external_directory: deny`` among them, stay) with the model server as provider
    ``turngate`` and the default model; a ``--model P/M`` on the command line is served too (provider
    P pointed at the model server), so the orchestrator's choice of model needs no change."""
    config: dict[str, object] = dict(orchestrators or {})
    config.setdefault("$schema", "https://app.kilo.ai/config.json")
    config.update(
        autoupdate=False, share="disabled", model="turngate/scripted", small_model="turngate/scripted"
    )
    existing = config.get("provider")
    providers: dict[str, object] = dict(existing) if isinstance(existing, dict) else {}
    providers["turngate"] = _openai_compatible(url, [SCRIPTED_MODEL])
    chosen = _option(argv, "--model", "-m")
    if chosen and "/" in chosen:
        provider, model = chosen.split("/", 1)
        providers[provider] = _openai_compatible(url, [model])
    config["provider"] = providers
    return config


def _openai_compatible(url: str, models: list[str]) -> dict[str, object]:
    return {
        "npm": "@ai-sdk/openai-compatible",
        "name": "turngate scripted model",
        "options": {"baseURL": f"{url}/v1", "apiKey": "fake", "timeout": False},
        "models": {name: {"name": name, "tool_call": True, "reasoning": True} for name in models},
    }


def claude_settings() -> dict[str, object]:
    # User settings, not project ones: claude 2.1.331 reports permissionMode "default" with Skill-Runner's
    # project-level bypassPermissions, and in default mode refuses `cat F; exit 1` ("requires approval")
    # and a `cat` outside its cwd. The question tool is denied, as Skill-Runner denies it.
    return {"permissions": {"defaultMode": "bypassPermissions", "deny": ["AskUserQuestion"]}}


def qwen_settings(retries: int) -> dict[str, object]:
    return {
        "security": {"auth": {"selectedType": "openai"}},
        "model": {
            "name": SCRIPTED_MODEL,
            # A 1 s first delay instead of 60 s: a scripted 429 is over in about a minute, not hours.
            "generationConfig": {"maxRetries": retries, "retryInitialDelayMs": 1000, "retryMaxDelayMs": 2000},
        },
        "general": {"enableAutoUpdate": False, "checkpointing": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "$version": 4,
    }


def codebuddy_models(url: str, argv: list[str]) -> dict[str, object]:
    """models.json: the model server as a custom model, under its own name and under any ``--model M``
    the command line names (so an orchestrator's choice needs no change)."""
    names = [CODEBUDDY_MODEL]
    chosen = _option(argv, "--model")
    if chosen and chosen not in names:
        names.append(chosen)
    models = [
        {
            "id": name,
            "name": "turngate scripted model",
            "vendor": "OpenAI",
            "apiKey": "fake",
            "url": f"{url}/v1/chat/completions",
            "maxInputTokens": 128000,
            "maxOutputTokens": 8192,
            "supportsToolCall": True,
            "supportsImages": False,
        }
        for name in names
    ]
    return {"models": models, "availableModels": names}


def environment(
    engine: str, url: str, state: str, base: Mapping[str, str], argv: list[str] | None = None
) -> dict[str, str]:
    """The CLI's environment: ``base`` plus its isolated homes and config, files written as needed."""
    argv = argv or []
    env = dict(base)
    home = os.path.join(state, f"{engine}-home")
    os.makedirs(home, exist_ok=True)
    env["HOME"] = home
    retries = _retries(engine, base)
    if engine == "codex":
        codex_home = os.path.join(home, ".codex")
        os.makedirs(codex_home, exist_ok=True)
        _write(os.path.join(codex_home, "config.toml"), codex_config(url, retries or 0))
        env["CODEX_HOME"] = codex_home
        env.pop("OPENAI_API_KEY", None)
        env.pop("OPENAI_BASE_URL", None)
    elif engine == "gemini":
        os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
        settings = gemini_settings(retries)
        _write(os.path.join(home, ".gemini", "settings.json"), json.dumps(settings, indent=2))
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
        _xdg(env, home)
        env.update(
            OPENCODE_CONFIG=config,
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        )
    elif engine == "claude":
        config_dir = os.path.join(home, ".claude")
        os.makedirs(config_dir, exist_ok=True)
        _write(os.path.join(config_dir, ".claude.json"), json.dumps({"hasCompletedOnboarding": True}))
        _write(os.path.join(config_dir, "settings.json"), json.dumps(claude_settings(), indent=2))
        for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK"):
            env.pop(name, None)
        env.update(
            CLAUDE_CONFIG_DIR=config_dir,
            ANTHROPIC_BASE_URL=url,
            ANTHROPIC_API_KEY="fake",
            CLAUDE_CODE_MAX_RETRIES=str(retries),
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        if os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"  # else bypassPermissions as root: "cannot be used with root/sudo"
    elif engine == "qwen":
        os.makedirs(os.path.join(home, ".qwen"), exist_ok=True)
        _write(
            os.path.join(home, ".qwen", "settings.json"), json.dumps(qwen_settings(retries or 0), indent=2)
        )
        env.update(
            OPENAI_BASE_URL=f"{url}/v1",
            OPENAI_API_KEY="fake",
            OPENAI_MODEL=SCRIPTED_MODEL,
            QWEN_CODE_NO_RELAUNCH="1",
        )
    elif engine == "kilo":
        config = os.path.join(home, "kilo.jsonc")
        theirs = _json_object(base.get("KILO_CONFIG"))
        _write(config, json.dumps(kilo_config(url, argv, theirs), indent=2))
        _xdg(env, home)
        env.update(
            KILO_CONFIG=config,
            KILO_DISABLE_AUTOUPDATE="1",
            KILO_DISABLE_MODELS_FETCH="1",
            KILO_DISABLE_LSP_DOWNLOAD="1",
            KILO_DISABLE_DEFAULT_PLUGINS="1",
            KILO_DISABLE_SESSION_INGEST="1",
            KILO_DISABLE_SHARE="1",
            KILO_SESSION_RETRY_LIMIT=str(retries),
            KILO_TELEMETRY_LEVEL="off",  # anything but "all" is off: saves kilo's ~3 s PostHog shutdown
        )
    elif engine == "codebuddy":
        config_dir = os.path.join(home, ".codebuddy")
        os.makedirs(config_dir, exist_ok=True)
        _write(os.path.join(config_dir, "models.json"), json.dumps(codebuddy_models(url, argv), indent=2))
        for name in ("CODEBUDDY_API_KEY", "CODEBUDDY_AUTH_TOKEN", "CODEBUDDY_BASE_URL"):
            env.pop(name, None)
        for name in ("CODEBUDDY_INTERNET_ENVIRONMENT", "CODEBUDDY_INTERNET_ENVIROMENT"):
            env.pop(name, None)
        env.update(CODEBUDDY_CONFIG_DIR=config_dir, CODEBUDDY_MODEL=CODEBUDDY_MODEL)
    return env


def _retries(engine: str, base: Mapping[str, str]) -> int | None:
    """The retry limit to give the CLI: TURNGATE_REAL_MAX_RETRIES when it is a count, else the
    engine's default (None: the CLI has no such setting)."""
    if engine not in DEFAULT_RETRIES:
        return None
    given = base.get(RETRIES_VARIABLE, "")
    return int(given) if given.isdigit() else DEFAULT_RETRIES[engine]


def _xdg(env: dict[str, str], home: str) -> None:
    for name in ("CONFIG", "DATA", "CACHE", "STATE"):
        path = os.path.join(home, f".xdg-{name.lower()}")
        os.makedirs(path, exist_ok=True)
        env[f"XDG_{name}_HOME"] = path


def _option(argv: list[str], *names: str) -> str | None:
    """The value of the last ``--name V`` or ``--name=V`` on the command line."""
    found = None
    for index, word in enumerate(argv):
        for name in names:
            if word == name and index + 1 < len(argv):
                found = argv[index + 1]
            elif word.startswith(name + "="):
                found = word.split("=", 1)[1]
    return found


def _json_object(path: str | None) -> dict[str, object] | None:
    """A JSON object read from ``path``, or None (no path, unreadable, not a JSON object: the
    launcher's own config is used alone; JSONC comments are not read)."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as source:
            document = json.load(source)
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


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
    env = environment(engine, url.rstrip("/"), state, os.environ, argv)
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
    passed_on: list[int] = []

    def pass_on(received: int, _frame: object) -> None:
        passed_on.append(received)
        child.send_signal(received)

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, pass_on)
    code = child.wait()
    record.update(
        exit_code=code if code >= 0 else None,
        outcome="exited" if code >= 0 else "signal",
        signal=-code if code < 0 else None,
        # Who stopped it: a CLI may end on a SIGTERM by exiting 0 (codebuddy 2.118.2 does), so the
        # outcome alone does not say the orchestrator stopped the turn.
        passed_on=passed_on[0] if passed_on else None,
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
    flags = _RESUME_FLAGS.get(engine, ("--resume", "-r", "--session", "-s", "--continue", "-c"))
    return any(word in flags or word.split("=", 1)[0] in flags for word in argv)


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
