"""The command lines the real-engine tools run (fidelity, capture, drift), and the run folder each CLI
gets, for every engine with a pin.

codex, gemini and opencode get the reference orchestrator's command (build_command), so a fidelity run
and the catalog run see the same argv. claude, qwen, kilo and codebuddy, which the reference does not
drive yet, get Skill-Runner v0.7.9's, as its command builders make them (server/engines/<engine>/
adapter/command_builder.py; docs/real-engines.md, "The four new engines"); once the reference builds
one (its ``ENGINES``), the reference's command wins: adding the engine there is all this module needs.
Skill-Runner's codebuddy command names two files of the run folder, which `prepare_run` writes as its
config composer does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Final

from turngate.implementations.reference.commands import ENGINES as REFERENCE_ENGINES
from turngate.implementations.reference.commands import CommandOptions, build_command

# A CLI's command line from the prompt, the session to resume (None: a first turn) and the run folder.
Builder = Callable[[str, "str | None", Path], list[str]]


def _claude(prompt: str, session: str | None, run: Path) -> list[str]:
    resume = ["--resume", session] if session else []
    return ["claude", *resume, "-p", "--output-format", "stream-json", "--verbose", prompt]


def _qwen(prompt: str, session: str | None, run: Path) -> list[str]:
    resume = ["--resume", session] if session else []
    return ["qwen", "--output-format", "stream-json", "--approval-mode", "yolo", *resume, "-p", prompt]


def _kilo(prompt: str, session: str | None, run: Path) -> list[str]:
    resume = ["--session", session] if session else []
    return ["kilo", "run", "--dir", str(run), "--format", "json", "--auto", "--thinking", *resume, prompt]


def _codebuddy(prompt: str, session: str | None, run: Path) -> list[str]:
    defaults = ["-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"]
    resume = ["-r", session] if session else []  # after the defaults, before the managed flags
    managed = [
        *("--settings", str(run / ".codebuddy" / "settings.json"), "--setting-sources", "project"),
        *("--mcp-config", str(run / ".codebuddy" / "mcp.json"), "--strict-mcp-config"),
    ]
    return ["codebuddy", *defaults, *resume, *managed, prompt]


SKILL_RUNNER: Final[dict[str, Builder]] = {
    "claude": _claude,
    "qwen": _qwen,
    "kilo": _kilo,
    "codebuddy": _codebuddy,
}
# Skill-Runner v0.7.9's codebuddy config composer (adapter/config_composer.py): these two files.
CODEBUDDY_SETTINGS: Final = {
    "autoUpdates": False,
    "disableAllHooks": True,
    "allowUntrustedFrontmatterHooks": False,
    "enableAllProjectMcpServers": False,
}


class NoCommand(ValueError):
    """An engine neither the reference nor the Skill-Runner table builds a command for."""


def command_line(engine: str, mode: str, prompt: str, session: str | None, run: Path) -> list[str]:
    """One turn's argv (argv[0] the engine's name); ``mode``: gemini's document format."""
    if engine in REFERENCE_ENGINES:
        options = CommandOptions(
            codex_auto_flag="--yolo",
            gemini_output_format=mode if engine == "gemini" else None,  # type: ignore[arg-type]
        )
        return list(build_command(engine, "interactive", prompt=prompt, resume_id=session, options=options))
    if engine not in SKILL_RUNNER:
        raise NoCommand(f"{engine}: no command line (neither the reference's nor Skill-Runner's)")
    return SKILL_RUNNER[engine](prompt, session, run)


def prepare_run(engine: str, run: Path) -> None:
    """The files of the run folder the command line names."""
    if engine == "codebuddy" and engine not in REFERENCE_ENGINES:
        folder = run / ".codebuddy"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(CODEBUDDY_SETTINGS), encoding="utf-8")
        (folder / "mcp.json").write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
