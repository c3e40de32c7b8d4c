"""Record: run a real engine, keep what it wrote, scrub secrets, and make a fake-engine script of it.

The engine's stdout and stderr are passed through to the terminal as they
come (tee) and kept; the capture folder gets ``stdout``, ``stderr``,
``capture.yaml`` (exit code or signal, provenance, and under ``recorded`` the
argv, the engine's version, the duration and, if the recorder killed it, why) and
``script.yaml``, a fake-engine script whose one turn writes the scrubbed
bytes back exactly (``raw`` steps, no end-of-turn added, the same exit).

Scrubbing happens before anything is written to disk. The patterns are
``SCRUB_PATTERNS`` below (documented in the README): a field report must
not carry someone's keys, tokens, e-mail address or home folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Final

import yaml

from turngate.tools.drift.capture import NOT_RECORDED, Recorded, raw_turn


@dataclass(frozen=True, slots=True)
class ScrubPattern:
    name: str
    pattern: re.Pattern[bytes]
    replacement: bytes


SCRUB_PATTERNS: Final = (
    ScrubPattern(
        "private key block",
        re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        b"<private-key>",
    ),
    ScrubPattern("bearer token", re.compile(rb"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"), b"Bearer <token>"),
    ScrubPattern("OpenAI-style key", re.compile(rb"\bsk-[A-Za-z0-9_-]{16,}"), b"<api-key>"),
    ScrubPattern("Anthropic key", re.compile(rb"\bsk-ant-[A-Za-z0-9_-]{16,}"), b"<api-key>"),
    ScrubPattern("Google API key", re.compile(rb"\bAIza[0-9A-Za-z_-]{35}"), b"<api-key>"),
    ScrubPattern("GitHub token", re.compile(rb"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}"), b"<token>"),
    ScrubPattern("Slack token", re.compile(rb"\bxox[abposr]-[A-Za-z0-9-]{10,}"), b"<token>"),
    ScrubPattern("AWS access key id", re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), b"<aws-key-id>"),
    ScrubPattern(
        "JSON web token",
        re.compile(rb"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        b"<jwt>",
    ),
    ScrubPattern(
        "secret-named value",
        re.compile(
            rb"(?i)((?:api[_-]?key|access[_-]?token|refresh[_-]?token|secret|password|passwd|auth[_-]?token)"
            rb"\\?\"?\s*[:=]\s*\\?\"?)([^\s\"\\,}]{4,})"
        ),
        rb"\1<redacted>",
    ),
    ScrubPattern(
        "e-mail address",
        re.compile(rb"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
        b"<email>",
    ),
)


def scrub(data: bytes, *, home: str | None = None, user: str | None = None) -> bytes:
    """``data`` with every pattern replaced, and the home folder (then the user name in paths) hidden."""
    for item in SCRUB_PATTERNS:
        data = item.pattern.sub(item.replacement, data)
    if home and len(home) > 1:
        data = data.replace(home.encode(), b"<home>")
    if user:
        data = re.sub(rb"(/(?:home|Users)/)" + re.escape(user.encode()) + rb"\b", rb"\1<user>", data)
    return data


@dataclass(frozen=True, slots=True)
class Recording:
    argv: tuple[str, ...]
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    signal: int | None
    duration_sec: float
    version: str | None = None  # the engine's version (None: not known: `save` says so)
    killed: str | None = None  # why the recorder killed the engine, if it did


def run_and_tee(
    argv: Sequence[str], *, tee: bool = True, timeout: float | None = None, cwd: Path | None = None
) -> Recording:
    """Run the engine; copy its streams to ours as they come and keep them."""
    started = time.monotonic()
    process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    kept: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    def pump(source: IO[bytes], name: str, sink: IO[bytes] | None) -> None:
        for chunk in iter(lambda: source.read1(65536), b""):  # type: ignore[attr-defined]
            kept[name].append(chunk)
            if sink is not None:
                sink.write(chunk)
                sink.flush()

    assert process.stdout is not None and process.stderr is not None
    threads = [
        threading.Thread(target=pump, args=(process.stdout, "stdout", sys.stdout.buffer if tee else None)),
        threading.Thread(target=pump, args=(process.stderr, "stderr", sys.stderr.buffer if tee else None)),
    ]
    for thread in threads:
        thread.start()
    killed = None
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
        killed = f"by the recorder after its {timeout:g} s timeout"
    for thread in threads:
        thread.join()
    exit_code, signal = (code, None) if code >= 0 else (None, -code)
    return Recording(
        tuple(argv),
        b"".join(kept["stdout"]),
        b"".join(kept["stderr"]),
        exit_code,
        signal,
        round(time.monotonic() - started, 3),
        killed=killed,
    )


def version_of(executable: str, timeout: float = 30.0) -> str | None:
    """The first line ``EXECUTABLE --version`` prints (``codex-cli 0.169.0``, ``2.1.331 (Claude
    Code)``), or None when it prints none or fails."""
    try:
        done = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def save(recording: Recording, folder: Path, *, engine: str, mode: str) -> Recording:
    """Scrub and write the capture folder (stdout, stderr, capture.yaml, script.yaml); the scrubbed
    recording."""
    home = os.path.expanduser("~")
    user = os.environ.get("USER") or os.environ.get("LOGNAME")
    clean = replace(
        recording,
        argv=tuple(
            scrub(arg.encode(), home=home, user=user).decode("utf-8", "replace") for arg in recording.argv
        ),
        stdout=scrub(recording.stdout, home=home, user=user),
        stderr=scrub(recording.stderr, home=home, user=user),
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stdout").write_bytes(clean.stdout)
    if clean.stderr:
        (folder / "stderr").write_bytes(clean.stderr)
    else:
        (folder / "stderr").unlink(missing_ok=True)  # a capture recorded again: no stale stderr
    meta: dict[str, Any] = {
        "engine": engine,
        "description": f"recorded from: {' '.join(clean.argv)}",
        "provenance": (
            f"recorded by turngate record on {time.strftime('%Y-%m-%d %H:%M:%SZ', time.gmtime())},"
            f" {clean.duration_sec} s; secrets scrubbed (README, 'When a real engine's output drifts')"
        ),
        "mode": mode,
    }
    if clean.signal is not None:
        meta["signal"] = clean.signal
    else:
        meta["exit_code"] = clean.exit_code
    # The command line, the engine's version and how long it ran, for whoever reads the capture later
    # (a version it could not learn is said so, not left out).
    recorded = Recorded(clean.argv, clean.version or NOT_RECORDED, clean.duration_sec, clean.killed)
    meta["recorded"] = recorded.as_yaml()
    (folder / "capture.yaml").write_text(
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    case = re.sub(r"[^A-Za-z0-9_-]", "-", folder.name) or "recorded"
    turn = raw_turn(clean.stdout, clean.stderr, clean.exit_code, clean.signal)
    script = {"case": case, "turns": [turn]}
    (folder / "script.yaml").write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    return clean
