"""Record: run a real engine, keep what it wrote, scrub secrets, and make a fake-engine script of it.

The engine's stdout and stderr are passed through to the terminal as they
come (tee) and kept; the capture folder gets ``stdout``, ``stderr``,
``capture.yaml`` (argv, exit code or signal, timing, provenance) and
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
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import yaml

from turngate.tools.drift.capture import Capture


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
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
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
    )


def save(recording: Recording, folder: Path, *, engine: str, mode: str) -> Capture:
    """Scrub and write the capture folder (stdout, stderr, capture.yaml, script.yaml)."""
    home = os.path.expanduser("~")
    user = os.environ.get("USER") or os.environ.get("LOGNAME")
    clean = Recording(
        tuple(scrub(arg.encode(), home=home, user=user).decode("utf-8", "replace") for arg in recording.argv),
        scrub(recording.stdout, home=home, user=user),
        scrub(recording.stderr, home=home, user=user),
        recording.exit_code,
        recording.signal,
        recording.duration_sec,
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stdout").write_bytes(clean.stdout)
    if clean.stderr:
        (folder / "stderr").write_bytes(clean.stderr)
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
    (folder / "capture.yaml").write_text(
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    capture = Capture(
        engine=engine,
        stdout=clean.stdout,
        stderr=clean.stderr,
        mode=mode,
        exit_code=clean.exit_code,
        signal=clean.signal,
        name=folder.name,
    )
    case = re.sub(r"[^A-Za-z0-9_-]", "-", folder.name) or "recorded"
    script = {"case": case, "turns": [capture.raw_turn()]}
    (folder / "script.yaml").write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    return capture
