"""`turngate serve` says what it does: one plain line per request on stderr (none with --quiet).

Real servers on 127.0.0.1 (tests/server/conftest.py). Nothing is timed: a line's milliseconds are
only checked to be a number.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.server.conftest import Server, start_server, stop_server
from turngate.implementations.serve.request_log import RequestLog, request_line

LINE = re.compile(r"^(?P<method>\S+) (?P<target>\S+) (?P<status>\d{3}) (?P<ms>\d+\.\d) ms$")


class Lines:
    """A stream's lines as they come, read by a thread of their own (a pipe must be drained)."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self.lines: list[str] = []
        self._stream = stream
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            self.lines.append(line.rstrip("\n"))

    def until(self, wanted: str, *, tries: int = 400) -> list[str]:
        """The lines so far once one contains ``wanted`` (bounded: a missing line fails, not hangs)."""
        for _ in range(tries):
            if any(wanted in line for line in self.lines):
                return list(self.lines)
            time.sleep(0.05)
        raise AssertionError(f"no line with {wanted!r} in {self.lines}")

    def rest(self) -> list[str]:
        """Every line, once the process has ended and the stream closed."""
        self._thread.join(30)
        return list(self.lines)


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[tuple[Server, Lines]]:
    running = start_server(tmp_path / "serve")
    try:
        yield running, Lines(running.process.stderr)
    finally:
        stop_server(running)


def send(server: Server, method: str, target: str, body: bytes | None = None) -> int:
    url = urllib.parse.urlsplit(server.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        connection.request(method, target, body=body, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def test_each_request_is_one_plain_line_on_stderr_with_method_path_status_and_ms(
    logged: tuple[Server, Lines],
) -> None:
    server, stderr = logged
    assert send(server, "GET", "/v1/health") == 200
    assert send(server, "GET", "/v1/jobs") == 405
    assert send(server, "POST", "/v1/jobs", b"{nope") == 400
    assert send(server, "GET", "/v1/jobs/nope/events/history?after_seq=3") == 404
    lines = stderr.until("after_seq=3")
    requests = [match.groupdict() for line in lines if (match := LINE.match(line))]
    shown = [(entry["method"], entry["target"], entry["status"]) for entry in requests]
    assert shown == [
        ("GET", "/v1/health", "200"),
        ("GET", "/v1/jobs", "405"),
        ("POST", "/v1/jobs", "400"),
        ("GET", "/v1/jobs/nope/events/history?after_seq=3", "404"),
    ]
    assert len(lines) == len(requests)  # nothing else: no banner, no uvicorn access lines


def test_quiet_logs_no_request(tmp_path: Path) -> None:
    server = start_server(tmp_path / "serve", "--quiet")
    stderr = Lines(server.process.stderr)
    try:
        assert send(server, "GET", "/v1/health") == 200
        assert send(server, "GET", "/v1/jobs") == 405
    finally:
        stop_server(server)
    assert not any("/v1/" in line for line in stderr.rest())


def test_a_stderr_nobody_reads_never_stalls_the_server(tmp_path: Path) -> None:
    # conftest's start_server pipes stderr and never reads it: the pipe (64 KiB) fills after a few
    # dozen of these kilobyte-long lines, and every request must still be answered.
    server = start_server(tmp_path / "serve")
    try:
        for number in range(300):
            assert send(server, "GET", f"/v1/jobs/{number:04d}{'x' * 1000}") == 404
        assert send(server, "GET", "/v1/health") == 200
    finally:
        stop_server(server)


def test_a_request_line_writes_what_is_not_printable_visibly_and_stays_one_line() -> None:
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/v1/\x1b[31m\n",
        "raw_path": b"/v1/\x1b[31m\nx y\xff",
        "query_string": b"a=\x07",
    }
    line = request_line(scope, 404, 1.25)
    assert line == r"GET /v1/\x1b[31m\x0ax\x20y\xff?a=\x07 404 1.2 ms"
    assert LINE.match(line)


def test_the_log_drops_and_counts_lines_while_stderr_takes_none_then_says_so() -> None:
    written: list[bytes] = []
    blocked = threading.Event()
    release = threading.Event()

    def write(data: bytes) -> None:
        blocked.set()
        release.wait(30)
        written.append(data)

    log = RequestLog(write, limit=2)
    log.line("first")
    assert blocked.wait(30)  # the writer holds "first", stuck on a stderr nobody reads
    for number in range(5):
        log.line(f"queued {number}")  # returns at once: two are queued, three dropped
    release.set()
    log.close()
    assert b"".join(written).decode().splitlines() == [
        "first",
        "turngate serve: 3 request log lines dropped (stderr was not being read)",
        "queued 0",
        "queued 1",
    ]


# What is served ---------------------------------------------------------------------------------


def started(server: Server) -> str:
    """The line after the listening line (start_server has read that one)."""
    assert server.process.stdout is not None
    return server.process.stdout.readline().rstrip("\n")


def health(server: Server) -> dict[str, Any]:
    code, answer = server.call("GET", "/v1/health")
    assert code == 200
    return dict(answer)


def test_the_reference_says_so_on_start_and_in_health(logged: tuple[Server, Lines]) -> None:
    server, _ = logged
    assert started(server) == "turngate serve: serving the reference orchestrator"
    implementation = health(server)["implementation"]
    assert implementation["description"] == "the reference orchestrator"
    assert (implementation["variant"], implementation["mutant"]) == (None, None)


def test_a_mutant_says_on_start_and_in_health_which_sentences_it_breaks(tmp_path: Path) -> None:
    from turngate.implementations.mutants.registry import mutant_named

    mutant = mutant_named("no-evidence-fails")
    server = start_server(tmp_path / "serve", "--quiet", "--mutant", mutant.name)
    try:
        line = started(server)
        implementation = health(server)["implementation"]
    finally:
        stop_server(server)
    assert line.startswith(f"turngate serve: serving the reference with spec mutant {mutant.name}: breaks ")
    for sentence in mutant.sentences:
        assert sentence in line
    assert mutant.summary in line
    assert "does not conform to the spec" in line
    assert implementation["description"] == line.removeprefix("turngate serve: serving ")
    assert implementation["mutant"] == {
        "name": mutant.name,
        "summary": mutant.summary,
        "breaks": list(mutant.sentences),
    }


def test_a_variant_a_reading_and_a_mutant_are_each_named() -> None:
    from turngate.implementations.conforming_variants import variant_named
    from turngate.implementations.mutants.registry import mutant_named
    from turngate.implementations.reference.gate import READING_HEADING
    from turngate.implementations.serve.identity import Served

    variant, mutant = variant_named("reason-codes"), mutant_named("no-evidence-fails")
    alone = Served(variant).description()
    assert alone == f"the reference as conforming variant reason-codes ({variant.summary})"
    both = Served(variant, mutant, READING_HEADING).description()
    assert both.startswith(
        f"the reference as conforming variant reason-codes ({variant.summary}),"
        f" under the soft-completion reading {READING_HEADING}, with spec mutant no-evidence-fails: breaks "
    )
    shown = Served(variant, mutant).to_json()
    assert shown["variant"] == {"name": "reason-codes", "summary": variant.summary}
