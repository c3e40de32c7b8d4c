"""Hostile requests to `turngate serve`: zip bombs and bad entries, bodies past their limit, bad values,
replies resent after a kill -9; each a named 4xx, nothing left behind.

A real server on 127.0.0.1. A body that the server must stop reading is sent
without its end: a server that read it whole would never answer, and the
socket's timeout turns that into a failure rather than a hang.
"""

from __future__ import annotations

import io
import json
import socket
import stat
import struct
import urllib.parse
import uuid
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lingering import gone
from tests.server.conftest import Server, multipart, start_server, stop_server, zip_folder
from tests.server.test_api import waiting_job
from turngate.implementations.serve.archives import ArchiveLimits, unpack
from turngate.implementations.serve.errors import ApiError


def _zip(entries: list[tuple[str, bytes, int | None]]) -> bytes:
    """A zip of (name, content, unix mode or None) entries."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content, mode in entries:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def _bomb(declared: int, actual_mib: int = 2048) -> bytes:
    """A small zip whose one entry inflates to ``actual_mib`` MiB of zeros, declaring ``declared`` bytes.

    The deflate stream is one fully flushed block of 1 MiB of zeros repeated (a
    full flush makes each copy independent), then an empty final block.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(1024 * 1024)) + compressor.flush(zlib.Z_FULL_FLUSH)
    data = block * actual_mib + b"\x03\x00"
    name = b"greet/big.bin"
    crc = 0  # never reached: the archive is refused before the entry's end
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), declared, len(name), 0)
    central = struct.pack(
        "<4s6H3I5H2I",
        b"PK\x01\x02",
        0x031E,
        20,
        0,
        8,
        0,
        0,
        crc,
        len(data),
        declared,
        len(name),
        0,
        0,
        0,
        0,
        0o100644 << 16,
        0,
    )
    directory_at = len(local) + len(name) + len(data)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name), directory_at, 0)
    return local + name + data + central + name + end


def _post_file(server: Server, path: str, archive: bytes) -> tuple[int, Any]:
    body, content_type = multipart(archive)
    return server.call("POST", path, raw=body, content_type=content_type)


def _partials(server: Server) -> list[Path]:
    return sorted((server.root / "data" / "skills").rglob("*.partial"))


# Zip installs: bombs, understated sizes, conflicting and dot entries ------------------------------


def test_a_small_zip_holding_a_2_gib_entry_is_refused_before_it_is_inflated(server: Server) -> None:
    bomb = _bomb(declared=2**31)
    assert len(bomb) < 4 * 1024 * 1024
    code, answer = _post_file(server, "/v1/skill-packages/install", bomb)
    assert (code, answer["error"]["code"]) == (400, "PACKAGE_UNPACKED_TOO_LARGE")
    assert _partials(server) == []


def test_an_entry_whose_header_understates_its_size_is_refused_not_inflated(server: Server) -> None:
    code, answer = _post_file(server, "/v1/skill-packages/install", _bomb(declared=100))
    assert (code, answer["error"]["code"]) == (400, "PACKAGE_INVALID")
    assert "does not inflate" in answer["error"]["message"]


def test_inflation_is_counted_as_it_comes_whatever_the_headers_say() -> None:
    archive = _zip([("a.txt", b"x" * 5000, None), ("b.txt", b"y" * 5000, None)])
    with pytest.raises(ApiError) as refused:
        unpack(archive, ArchiveLimits(unpacked_bytes=8000))
    assert refused.value.code == "PACKAGE_UNPACKED_TOO_LARGE"
    many = _zip([(f"f{index}.txt", b"", None) for index in range(20)])
    with pytest.raises(ApiError) as refused:
        unpack(many, ArchiveLimits(files=10))
    assert refused.value.code == "PACKAGE_TOO_MANY_FILES"


@pytest.mark.parametrize(
    ("entries", "why"),
    [
        ([("greet/SKILL.md", b"x", None), ("greet/SKILL.md/inner", b"y", None)], "both a file and a folder"),
        ([("greet/a", b"x", None), ("greet/a/", b"", None)], "both a file and a folder"),
        (
            [("greet/SKILL.md", b"x", None), ("greet/link", b"/etc/passwd", stat.S_IFLNK | 0o777)],
            "symbolic link",
        ),
        ([("greet/SKILL.md", b"x", None), ("greet/./SKILL.md", b"y", None)], "appears twice"),
    ],
)
def test_conflicting_entries_are_400_and_leave_no_staging_folder(
    server: Server, entries: list[tuple[str, bytes, int | None]], why: str
) -> None:
    code, answer = _post_file(server, "/v1/skill-packages/install", _zip(entries))
    assert (code, answer["error"]["code"]) == (400, "PACKAGE_INVALID")
    assert why in answer["error"]["message"]
    assert _partials(server) == []


def test_a_package_the_loader_refuses_leaves_no_staging_folder_and_names_no_server_path(
    server: Server, tmp_path: Path
) -> None:
    from turngate.judge.skill_writer import write_skill

    body, content_type = zip_folder(write_skill(tmp_path, {"max_attempt": 0}))
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400
    assert str(server.root) not in answer["error"]["message"]
    assert "assets/runner.json" in answer["error"]["message"]
    assert _partials(server) == []


def test_a_job_upload_with_a_dot_entry_is_400_and_the_job_still_takes_uploads(server: Server) -> None:
    job = waiting_job(server)
    code, answer = _post_file(server, f"/v1/jobs/{job}/upload", _zip([(".", b"x", None)]))
    assert (code, answer["error"]["code"]) == (400, "PACKAGE_INVALID")
    code, answer = _post_file(server, f"/v1/jobs/{job}/upload", _zip([("data/a.txt", b"x", None)]))
    assert code == 200
    assert answer["files"] == ["data/a.txt"]
    # A later upload that would turn that file into a folder is refused, and the job goes on taking them.
    code, answer = _post_file(server, f"/v1/jobs/{job}/upload", _zip([("data/a.txt/b", b"x", None)]))
    assert (code, answer["error"]["code"]) == (400, "PACKAGE_INVALID")
    code, _ = _post_file(server, f"/v1/jobs/{job}/upload", _zip([("data/b.txt", b"y", None)]))
    assert code == 200


# Body limits, held while the body is read ----------------------------------------------------------


def _chunked_without_end(server: Server, path: str, size: int, content_type: str) -> tuple[int, Any]:
    """POST ``size`` bytes chunked and never the last chunk; the server must answer before the end."""
    url = urllib.parse.urlsplit(server.url)
    assert url.hostname is not None
    assert url.port is not None
    with socket.create_connection((url.hostname, url.port), timeout=30) as connection:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {url.hostname}\r\nContent-Type: {content_type}\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        connection.sendall(head.encode())
        chunk = b"[" * 65536
        sent = 0
        try:
            while sent < size:
                connection.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed while we were still sending: what we want
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
            piece = connection.recv(65536)
            if not piece:
                break
            answer += piece
    status = int(answer.split(b" ", 2)[1])
    return status, json.loads(answer.split(b"\r\n\r\n", 1)[1] or b"null")


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


@pytest.mark.parametrize(
    ("path", "size", "content_type"),
    [
        ("/v1/jobs", 4 * 1024 * 1024, "application/json"),
        ("/v1/jobs/{job}/interaction/reply", 1024 * 1024, "application/json"),
        ("/v1/skill-packages/install", 24 * 1024 * 1024, "multipart/form-data; boundary=x"),
        ("/v1/jobs/{job}/upload", 24 * 1024 * 1024, "multipart/form-data; boundary=x"),
    ],
)
def test_a_chunked_body_past_its_limit_is_413_before_it_ends(
    server: Server, path: str, size: int, content_type: str
) -> None:
    job = waiting_job(server) if "{job}" in path else ""
    status, answer = _chunked_without_end(server, path.format(job=job), size, content_type)
    assert (status, answer["error"]["code"]) == (413, "REQUEST_TOO_LARGE")


# Bad values -----------------------------------------------------------------------------------------


def _runs(server: Server) -> set[str]:
    runs = server.root / "data" / "runs"
    return {path.name for path in runs.iterdir()} if runs.exists() else set()


def _job_body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "skill_id": "greet",
        "engine": "codex",
        "input": {"case": "tg-case-none"},
        "runtime_options": {"execution_mode": "interactive"},
    }
    body.update(changes)
    return body


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b"[" * 100_000, "nested too deeply"),
        (
            json.dumps(
                _job_body(input={"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]})
            ).encode(),
            "nested deeper",
        ),
        (b'{"skill_id":"greet","engine":"codex","input":{"\\ud800":"x"}}', "not valid Unicode"),
        (json.dumps(_job_body(input={"case": "a\u0000b"})).encode(), "input.case: contains a NUL"),
        (
            json.dumps(_job_body(runtime_options={"session_timeout_sec": 99999999999999999999999})).encode(),
            "runtime_options.session_timeout_sec",
        ),
    ],
)
def test_a_bad_value_is_400_naming_it_and_leaves_no_run_folder(
    server: Server, raw: bytes, field: str
) -> None:
    assert server.install()[0] == 200
    before = _runs(server)
    code, answer = server.call("POST", "/v1/jobs", raw=raw)
    assert code == 400, answer
    assert answer["error"]["code"] in ("REQUEST_INVALID", "RUNTIME_OPTION_INVALID")
    assert field in answer["error"]["message"]
    assert str(server.root) not in answer["error"]["message"]
    assert _runs(server) == before


@pytest.mark.parametrize("response", ["a\u0000b", "\ud800"])
def test_a_reply_no_engine_could_be_given_is_400_and_the_job_still_waits(
    server: Server, response: str
) -> None:
    job = waiting_job(server)
    raw = json.dumps({"interaction_id": 1, "response": response}).encode()
    code, answer = server.call("POST", f"/v1/jobs/{job}/interaction/reply", raw=raw)
    assert (code, answer["error"]["code"]) == (400, "REQUEST_INVALID")
    assert server.call("GET", f"/v1/jobs/{job}")[1]["status"] == "waiting_user"


# Idempotency keys survive a kill -9 -----------------------------------------------------------------


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path / "serve", "--test-hooks")
    try:
        yield running
    finally:
        stop_server(running)


def test_a_reply_resent_with_its_key_after_a_kill_9_gets_the_first_answer(own_server: Server) -> None:
    job = waiting_job(own_server)
    body = {"interaction_id": 1, "response": "Formal", "idempotency_key": f"k-{uuid.uuid4().hex}"}
    first = own_server.call("POST", f"/v1/jobs/{job}/interaction/reply", body)
    assert first[0] == 200
    own_server.process.kill()
    own_server.process.wait()
    restarted = start_server(own_server.root, "--test-hooks")
    try:
        again = restarted.call("POST", f"/v1/jobs/{job}/interaction/reply", body)
        assert again == first
        other = {**body, "idempotency_key": "another"}
        assert restarted.call("POST", f"/v1/jobs/{job}/interaction/reply", other)[0] == 409
    finally:
        stop_server(restarted)


# An engine outlives a kill -9 of the server, not its restart ----------------------------------------


def test_the_engine_of_a_turn_hung_when_the_server_was_killed_is_killed_on_restart(
    own_server: Server,
) -> None:
    import sqlite3
    import time

    assert own_server.install()[0] == 200
    case = own_server.script(f"hang-{uuid.uuid4().hex[:8]}", [{"steps": [{"hang": True}]}])
    job = own_server.job(case, mode="auto")
    store = own_server.root / "data" / "reference.sqlite3"
    # Wait (bounded; nothing is timed) until the engine hangs: its call-log line is written first.
    for _ in range(600):
        log = own_server.call_log.read_text() if own_server.call_log.exists() else ""
        if case in log and "hang" in log:
            break
        time.sleep(0.05)
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT pid, started FROM engine_processes").fetchall()
    assert len(rows) == 1
    engine_pid = rows[0][0]
    own_server.process.kill()
    own_server.process.wait()
    assert Path(f"/proc/{engine_pid}").exists()  # orphaned, still hanging
    restarted = start_server(own_server.root, "--test-hooks")
    try:
        status = restarted.call("GET", f"/v1/jobs/{job}")[1]
        assert status["status"] == "failed"
        assert status["error"]["code"] == "ORCHESTRATOR_RESTART_INTERRUPTED"
        assert gone(engine_pid)
    finally:
        stop_server(restarted)
