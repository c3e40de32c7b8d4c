"""Which ``interactive_profile.kind`` an engine gets: probe its help for a resume command.

ENGINE_FORMATS.md: an orchestrator decides ``resumable`` versus
``sticky_process`` by probing help output. An engine whose help shows no way
to resume a session can only continue a conversation in the same process.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

ProfileKind = Literal["resumable", "sticky_process"]
PROFILE_KINDS: Final = ("resumable", "sticky_process")

# The probe command line and the text its help shows when the build can resume.
_PROBES: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "codex": (("exec", "resume", "--help"), "SESSION_ID"),
    "gemini": (("--resume", "X", "--help"), "--resume"),
    "iflow": (("--help",), "--resume"),
    "opencode": (("run", "--help"), "--session"),
}


def probe_profile(
    engine: str, executable: Path, env: Mapping[str, str], timeout: float = 30.0
) -> ProfileKind:
    args, sign = _PROBES[engine]
    probe = subprocess.run(
        [str(executable), *args],
        capture_output=True,
        env=dict(env),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    text = (probe.stdout + probe.stderr).decode("utf-8", "replace")
    return "resumable" if probe.returncode == 0 and sign in text else "sticky_process"


def probe_version(executable: Path, env: Mapping[str, str], timeout: float = 30.0) -> str | None:
    """The engine's ``--version`` line, or None when it does not answer one."""
    try:
        probe = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            env=dict(env),
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = probe.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if probe.returncode == 0 and lines else None
