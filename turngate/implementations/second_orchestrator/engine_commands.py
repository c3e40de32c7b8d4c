"""Engine command lines per engine, mode and turn (first turn or resume).

Spec 003 "Adapter CLI 命令构造": both modes keep the auto-execution flags; iFlow always gets
``--thinking``; resume turns keep them too. The seed four follow ENGINE_FORMATS.md's table.
The sticky_process profile uses the first-turn command once and talks to the resident process.

The spec names no flags for claude, qwen, kilo and codebuddy; their lines are the ones
Skill-Runner v0.7.9 runs (as the engine notes record them), checked against each CLI's
``--help``::

    claude     claude [--resume ID] -p --output-format stream-json --verbose PROMPT
    qwen       qwen --output-format stream-json --approval-mode yolo [--resume ID] -p PROMPT
    kilo       kilo run --dir RUN --format json --auto --thinking [--session ID] PROMPT
    codebuddy  codebuddy -p --output-format stream-json --permission-mode bypassPermissions [-r ID] PROMPT

claude gets no permission flag (as root it refuses ``bypassPermissions`` outside a sandbox):
its automatic execution is the project settings file ``prepare`` writes into the run folder.
A resident (sticky) claude, qwen or codebuddy is started with ``--input-format stream-json``
and no prompt; every user message, the first one too, is a stream-json line on its stdin
(``stdin_line``). kilo's ``run`` has no stdin protocol, so a resident kilo is started like
the seed engines and gets its replies as plain lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from .bugs import bug

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
STREAM_JSON_STDIN: Final = ("claude", "qwen", "codebuddy")  # resident: messages as JSON lines
CLAUDE_SETTINGS: Final = {"permissions": {"defaultMode": "bypassPermissions", "deny": ["AskUserQuestion"]}}


def build(
    engine_bin: Path,
    engine: str,
    mode: str,
    prompt: str,
    session_id: str | None,
    gemini_format: str,
    rundir: Path | None = None,
    resident: bool = False,
) -> list[str]:
    """argv for one turn; ``session_id`` set means a resume turn whose ``prompt`` is the reply.

    ``resident``: the command line that starts a sticky process; for the stdin stream-json
    engines it carries no prompt (the first message goes to stdin, ``stdin_line``)."""
    exe = str(engine_bin / engine)
    if engine == "codex":
        auto = [] if session_id is not None and bug("codex_resume_drops_auto_flag") else ["--full-auto"]
        if session_id is None:
            return [exe, "exec", "--skip-git-repo-check", "--json", *auto, prompt]
        return [exe, "exec", "resume", "--skip-git-repo-check", "--json", *auto, session_id, prompt]
    if engine == "gemini":
        yolo = [] if mode == "interactive" and bug("gemini_yolo_auto_only") else ["--yolo"]
        resume = ["--resume", session_id] if session_id is not None else []
        return [exe, *resume, *yolo, "--output-format", gemini_format, prompt]
    if engine == "iflow":
        thinking = [] if session_id is not None and bug("iflow_resume_drops_thinking") else ["--thinking"]
        resume = ["--resume", session_id] if session_id is not None else []
        return [exe, *resume, "--yolo", *thinking, "-p", prompt]
    if engine == "opencode":
        resume = [f"--session={session_id}"] if session_id is not None else []
        return [exe, "run", *resume, "--format", "json", prompt]
    if engine == "kilo":
        where = ["--dir", str(rundir)] if rundir is not None else []
        session = ["--session", session_id] if session_id is not None else []
        auto = [] if session_id is not None and bug("kilo_resume_drops_auto") else ["--auto"]
        return [exe, "run", *where, "--format", "json", *auto, "--thinking", *session, prompt]
    if engine == "claude":
        resume = ["--resume", session_id] if session_id is not None else []
        stream = ["-p", "--output-format", "stream-json", "--verbose"]
        if resident and stdin_messages(engine):
            return [exe, *resume, "-p", "--input-format", "stream-json", *stream[1:]]
        return [exe, *resume, *stream, prompt]
    if engine == "qwen":
        yolo = [] if session_id is not None and bug("qwen_resume_drops_yolo") else ["--approval-mode", "yolo"]
        common = ["--output-format", "stream-json", *yolo]
        resume = ["--resume", session_id] if session_id is not None else []
        if resident and stdin_messages(engine):
            return [exe, "--input-format", "stream-json", *common, *resume]
        return [exe, *common, *resume, "-p", prompt]
    if engine == "codebuddy":
        common = ["-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"]
        resume = ["-r", session_id] if session_id is not None else []
        if resident and stdin_messages(engine):
            return [exe, "-p", "--input-format", "stream-json", *common[1:], *resume]
        return [exe, *common, *resume, prompt]
    raise ValueError(f"unknown engine {engine!r}")


def stdin_messages(engine: str) -> bool:
    """Whether a resident ``engine`` takes every user message as a stream-json line on stdin."""
    return engine in STREAM_JSON_STDIN and not bug("sticky_sdk_prompt_in_argv")


def stdin_line(engine: str, text: str) -> str:
    """One user message for a resident process: a stream-json line, or the text itself."""
    if stdin_messages(engine):
        message = {"type": "user", "message": {"role": "user", "content": text}}
        return json.dumps(message, ensure_ascii=False)
    return text


def prepare(engine: str, rundir: Path) -> None:
    """Files an engine reads from the run folder before its first turn."""
    if engine == "claude":
        folder = rundir / ".claude"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2), encoding="utf-8")
