"""Which ``interactive_profile.kind`` an engine gets: probe its help for a resume command.

ENGINE_FORMATS.md: an orchestrator decides ``resumable`` versus
``sticky_process`` by probing help output. An engine whose help shows no way
to resume a session can only continue a conversation in the same process.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from turngate.implementations.reference.outcome import ProcessEnd
from turngate.implementations.reference.processes import OneShot, OutputLimits, TurnBytes

ProfileKind = Literal["resumable", "sticky_process"]
PROFILE_KINDS: Final = ("resumable", "sticky_process")

# The probe command line and the text its help shows when the build can resume.
_PROBES: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "codex": (("exec", "resume", "--help"), "SESSION_ID"),
    "gemini": (("--resume", "X", "--help"), "--resume"),
    "iflow": (("--help",), "--resume"),
    "opencode": (("run", "--help"), "--session"),
    # Skill-Runner v0.7.9's probes (services/engine_management/agent_cli_manager.py); it also runs
    # `claude --resume probe-session -p ping`, which real claude refuses (the id is no UUID)
    "claude": (("--help",), "--resume"),
    "qwen": (("--help",), "--resume"),
    "codebuddy": (("--help",), "resume"),
    "kilo": (("run", "--help"), "--session"),  # kilo prints its help on stderr: the probe reads both
}


# A help text or version line is a few KiB: a probe keeps at most this much of each stream, and an
# engine that writes more (or runs past the timeout) is killed with what it started, like a turn
# (processes.OneShot). A probe that had to be stopped gave no answer.
PROBE_OUTPUT_LIMIT: Final = 256 * 1024
PROBE_TIMEOUT_SEC: Final = 30.0


def _answer(argv: list[str], env: Mapping[str, str], timeout: float) -> TurnBytes:
    probe = OneShot(argv, cwd=Path.cwd(), env=env, limits=OutputLimits(PROBE_OUTPUT_LIMIT))
    return probe.wait(timeout)


def probe_profile(
    engine: str, executable: Path, env: Mapping[str, str], timeout: float = PROBE_TIMEOUT_SEC
) -> ProfileKind:
    """``resumable`` when the engine's help, printed with exit 0, shows its resume command.

    A probe that ended by itself without an answer (a signal, or a non-zero exit) is asked once
    more before the engine is taken for one that cannot resume: a run's whole profile hangs on it,
    and a process that dies at start once (killed from outside, on a loaded machine) is no answer
    about the build. A probe this side stopped (its timeout, its output limit) is not asked again."""
    args, sign = _PROBES[engine]
    probe = _answer([str(executable), *args], env, timeout)
    if probe.end != ProcessEnd(0) and probe.end.killed_by is None:
        probe = _answer([str(executable), *args], env, timeout)
    text = (probe.stdout + probe.stderr).decode("utf-8", "replace")
    return "resumable" if probe.end == ProcessEnd(0) and sign in text else "sticky_process"


def probe_version(executable: Path, env: Mapping[str, str], timeout: float = PROBE_TIMEOUT_SEC) -> str | None:
    """The engine's ``--version`` line, or None when it does not answer one."""
    try:
        probe = _answer([str(executable), "--version"], env, timeout)
    except OSError:
        return None
    lines = probe.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if probe.end == ProcessEnd(0) and lines else None
