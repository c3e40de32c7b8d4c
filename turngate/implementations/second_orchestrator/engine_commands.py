"""Engine command lines per engine, mode and turn (first turn or resume).

Spec 003 "Adapter CLI 命令构造": both modes keep the auto-execution flags; iFlow always gets
``--thinking``; resume turns keep them too. Shapes follow ENGINE_FORMATS.md's table. The
sticky_process profile uses the first-turn command once and talks to the resident process.
"""

from __future__ import annotations

from pathlib import Path

from .bugs import bug


def build(
    engine_bin: Path,
    engine: str,
    mode: str,
    prompt: str,
    session_id: str | None,
    gemini_format: str,
) -> list[str]:
    """argv for one turn; ``session_id`` set means a resume turn whose ``prompt`` is the reply."""
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
    raise ValueError(f"unknown engine {engine!r}")
