"""A real `turngate serve` on 127.0.0.1 (a subprocess, port 0) and helpers to talk to it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from turngate.engines.fake.script import write_compiled
from turngate.judge.case_folder import FIXED_EPOCH_MS
from turngate.judge.skill_writer import write_skill


@dataclass
class Server:
    url: str
    root: Path
    process: subprocess.Popen[str]

    @property
    def scripts(self) -> Path:
        return self.root / "scripts"

    @property
    def call_log(self) -> Path:
        return self.root / "calls.jsonl"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def install(self, spec: Mapping[str, Any] | None = None, name: str = "greet") -> tuple[int, Any]:
        folder = self.root / "packages" / uuid.uuid4().hex
        skill = write_skill(folder, spec or {}, name=name)
        body, content_type = zip_folder(skill)
        return self.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)

    def script(self, case: str, turns: list[Mapping[str, Any]]) -> str:
        self.scripts.mkdir(exist_ok=True)
        # Compiled beside it, as the HTTP connector does: no engine compiles it.
        write_compiled(
            str(self.scripts / f"{case}.yaml"), yaml.safe_dump({"case": case, "turns": turns}), None
        )
        return case

    def job(self, case: str, *, mode: str = "interactive", engine: str = "codex", **options: Any) -> str:
        status, answer = self.call(
            "POST",
            "/v1/jobs",
            {
                "skill_id": "greet",
                "engine": engine,
                "input": {"case": f"tg-case-{case}"},
                "runtime_options": {"execution_mode": mode, "no_cache": True, **options},
            },
        )
        assert status == 200, answer
        return str(answer["request_id"])

    def settle(self, job: str) -> Mapping[str, Any]:
        self.call("POST", "/v1/_turngate/idle", {"timeout": 60})
        return self.call("GET", f"/v1/jobs/{job}")[1]

    def target_fields(self, **more: Any) -> dict[str, Any]:
        """A target file's fields for this server run with --test-hooks: its URL, its fake engines'
        scripts folder and call log, hooks on; ``more`` adds fields or overrides these."""
        return {
            "base_url": self.url,
            "scripts_dir": str(self.scripts),
            "call_log": str(self.call_log),
            "turngate_hooks": True,
            **more,
        }


def zip_folder(folder: Path, *, top: str | None = None) -> tuple[bytes, str]:
    """A multipart body with the folder zipped as field `file`, and its content type."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{top or folder.name}/{path.relative_to(folder).as_posix()}")
    return multipart(buffer.getvalue())


def multipart(content: bytes, field: str = "file") -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="p.zip"\r\n'
            "Content-Type: application/zip\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def start_server(root: Path, *extra: str) -> Server:
    root.mkdir(parents=True, exist_ok=True)
    (root / "scripts").mkdir(exist_ok=True)
    env = {**os.environ, "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS), "TURNGATE_STATE": str(root / "state")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "turngate.cli.main",
            "serve",
            "--port",
            "0",
            "--data",
            str(root / "data"),
            "--scripts",
            str(root / "scripts"),
            "--call-log",
            str(root / "calls.jsonl"),
            "--turn-timeout",
            "30",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(
            f"turngate serve did not start: {line!r} {process.stderr.read() if process.stderr else ''}"
        )
    return Server(line.split("listening on ")[1].split()[0], root, process)


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("serve"), "--test-hooks")
    try:
        yield running
    finally:
        stop_server(running)
