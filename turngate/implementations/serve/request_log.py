"""One plain line per request on stderr: method, target, status, milliseconds (``--quiet``: none).

    GET /v1/jobs/run-3f2a9c/interaction/pending 200 1.9 ms

A line is written when the response has ended (its last byte sent, or the request given up): the
lines come in the order the responses ended, an event stream's when the stream closed, its time
how long it stayed open. The target is written as the client sent it, percent-encoding kept, with
any other byte that is not printable ASCII written visibly (``\\x1b``), so one request is always
one line and no request can write to the terminal.

The lines are written by a thread of their own from a bounded queue: a stderr that nobody reads
(a pipe its reader never drains) must not stall a request. Past the bound, lines are dropped and
counted, and the count is written as soon as stderr takes lines again.
"""

from __future__ import annotations

import os
import queue
import re
import threading
import time
from collections.abc import Callable
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from turngate.base.hostile_text import escape

QUEUED_LINES: Final = 10_000
_NOT_PRINTABLE: Final = re.compile(r"[^\x21-\x7e]")


def write_stderr(data: bytes) -> None:
    """Write to file descriptor 2 directly: no Python-level lock is held while a full pipe blocks."""
    view = memoryview(data)
    while view:
        view = view[os.write(2, view) :]


class RequestLog:
    """The writer of the lines: ``line`` never blocks; ``close`` writes what is queued (bounded)."""

    def __init__(self, write: Callable[[bytes], None] = write_stderr, *, limit: int = QUEUED_LINES) -> None:
        self._write = write
        self._queue: queue.Queue[str | None] = queue.Queue(limit)
        self._lock = threading.Lock()
        self._dropped = 0
        self._thread = threading.Thread(target=self._run, name="turngate-serve-request-log", daemon=True)
        self._thread.start()

    def line(self, text: str) -> None:
        try:
            self._queue.put_nowait(text)
        except queue.Full:
            with self._lock:
                self._dropped += 1

    def close(self, timeout_sec: float = 2.0) -> None:
        try:
            self._queue.put(None, timeout=timeout_sec)
        except queue.Full:  # the writer is stuck on a stderr nobody reads: leave it
            return
        self._thread.join(timeout_sec)

    def _run(self) -> None:
        while (text := self._queue.get()) is not None:
            with self._lock:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                text = (
                    f"turngate serve: {dropped} request log line{'s' if dropped != 1 else ''}"
                    f" dropped (stderr was not being read)\n{text}"
                )
            try:
                self._write((text + "\n").encode("utf-8", "backslashreplace"))
            except OSError:  # stderr closed: nothing to write to, and nothing to stop for
                continue


def request_line(scope: Scope, status: int, milliseconds: float) -> str:
    """``METHOD TARGET STATUS N.N ms``, the method and target as sent, written visibly."""
    raw = scope.get("raw_path") or str(scope.get("path", "")).encode("utf-8", "backslashreplace")
    query = scope.get("query_string") or b""
    target = raw.decode("latin-1") + (f"?{query.decode('latin-1')}" if query else "")
    method = str(scope.get("method", "-"))
    return (
        f"{_NOT_PRINTABLE.sub(escape, method)} {_NOT_PRINTABLE.sub(escape, target)}"
        f" {status} {milliseconds:.1f} ms"
    )


class LoggedRequests:
    """ASGI middleware, outermost: a line per HTTP request once its response has ended.

    A request whose app failed before answering is logged 500, what the server then sends.
    """

    def __init__(self, app: ASGIApp, log: RequestLog) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        logged = False

        def log() -> None:
            nonlocal logged
            if not logged:
                logged = True
                self.log.line(request_line(scope, status, (time.perf_counter() - started) * 1000))

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                log()  # now, before the event loop runs the client's next request

        try:
            await self.app(scope, receive, sending)
        finally:
            log()  # a response that never ended: the app failed, or the client went away
