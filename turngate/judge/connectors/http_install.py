"""Installing a case's skill on a job-API server: the package, and an install the server may finish later.

An install may be asynchronous: its own status is followed until it succeeded or failed, and a
refusal (400, or a failed install) is reported in the server's words as
:class:`~turngate.protocol.connector.PackageRefused`, which a scenario about an invalid package
expects.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from turngate.judge.connectors.http_transport import TargetError, Transport, one_line, short
from turngate.protocol.connector import PackageRefused

INSTALL_PATH: Final = "/v1/skill-packages/install"
INSTALL_STATES: Final = frozenset({"queued", "running", "succeeded", "failed"})
SKILL_GEMINI_SETTINGS: Final = "assets/gemini_settings.json"


@dataclass(frozen=True, slots=True)
class Submitted:
    """How the server took a package: installed once it answered, or an install to follow."""

    flow: Literal["synchronous", "asynchronous"]
    request: str | None = None  # the asynchronous install's own id, to follow


def submit_package(transport: Transport, skill_dir: Path, gemini_format: str | None = None) -> Submitted:
    """POST the skill's package; a server that read it and refused it raises PackageRefused."""
    files = {"file": (f"{skill_dir.name}.zip", package_zip(skill_dir, gemini_format), "application/zip")}
    status, answer = transport.call("POST", INSTALL_PATH, files=files)
    if status == 400:  # the server read the package and refused it
        raise PackageRefused(f"POST {INSTALL_PATH} ({skill_dir.name}): HTTP 400: {short(answer)}")
    if status != 200:
        raise TargetError(f"POST {INSTALL_PATH} ({skill_dir.name}): HTTP {status}: {short(answer)}")
    if not isinstance(answer, Mapping) or answer.get("status") not in ("queued", "running"):
        return Submitted("synchronous")
    request = answer.get("request_id")
    if not isinstance(request, str | int):
        transport.anomaly(
            "POST", INSTALL_PATH, status, answer, "an asynchronous install without a request_id"
        )
        return Submitted("asynchronous")
    return Submitted("asynchronous", str(request))


def follow_install(transport: Transport, skill: str, request: str, *, timeout_sec: float) -> None:
    """Wait for an asynchronous install to succeed or fail; a refusal names the server's reason."""
    path = f"/v1/skill-packages/{request}"
    deadline = time.monotonic() + timeout_sec
    pause = 0.02
    while True:
        status, answer = transport.call("GET", path)
        state = answer.get("status") if isinstance(answer, Mapping) else None
        if status != 200 or state not in INSTALL_STATES:
            transport.anomaly("GET", path, status, answer, "the install's outcome cannot be followed")
            return
        if state == "succeeded":
            return
        if state == "failed":
            reason = answer.get("error") or "no reason given"
            raise PackageRefused(f"install of skill {skill!r} failed on the server: {one_line(reason)}")
        if time.monotonic() >= deadline:
            raise TargetError(f"install of skill {skill!r} still {state!r} after {timeout_sec:g} s")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.5)


def package_zip(skill_dir: Path, gemini_format: str | None = None) -> bytes:
    """The skill folder zipped under its own name, its runner.json at a version never used before.

    Servers refuse to reinstall a skill id at the same or a lower version; a nanosecond clock
    makes each install's version higher than every earlier one, across runs. With a
    ``gemini_format`` the package carries the skill's own gemini defaults
    (``assets/gemini_settings.json``, ``output.format``), the one way a client without hooks has
    to ask for gemini's output format; a server may still override it.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        if gemini_format is not None:
            settings = {"output": {"format": gemini_format}}
            archive.writestr(f"{skill_dir.name}/{SKILL_GEMINI_SETTINGS}", json.dumps(settings))
        for path in sorted(skill_dir.rglob("*")):
            if not path.is_file():
                continue
            name = f"{skill_dir.name}/{path.relative_to(skill_dir).as_posix()}"
            if name == f"{skill_dir.name}/assets/runner.json":
                runner = json.loads(path.read_text(encoding="utf-8"))
                runner["version"] = f"1.0.{time.time_ns()}"
                archive.writestr(name, json.dumps(runner, indent=2))
            else:
                archive.write(path, name)
    return buffer.getvalue()
