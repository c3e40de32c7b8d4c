"""The HTTP layer of `turngate serve`: Starlette routes that translate to :class:`JobService`.

The orchestrator blocks (SQLite, killing processes), so every call runs in
the thread pool; the event stream polls the store and never holds a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from turngate.implementations.serve.errors import ApiError, http_error, server_fault
from turngate.implementations.serve.service import SETTLED_STATES, JobService

HEARTBEAT_SEC: Final = 10.0
# The test hooks' bodies are a few numbers.
MAX_HOOK_BYTES: Final = 4096
# What a multipart envelope adds around the file it carries (boundaries, part headers).
MULTIPART_SLACK: Final = 64 * 1024
POLL_SEC: Final = 0.05
_CHAT_EVENTS: Final = frozenset({"assistant.message.final", "user.input.required", "user.input.replied"})

Handler = Callable[[Request], Awaitable[Response]]


def build_app(service: JobService, *, tick_sec: float | None = 1.0) -> Starlette:
    """The ASGI app. ``tick_sec``: how often wait deadlines are checked (None: never, a manual clock)."""

    def api(
        work: Callable[[Request, Any], Any], *, body: str = "json", limit: int = MAX_HOOK_BYTES
    ) -> Handler:
        async def endpoint(request: Request) -> Response:
            try:
                payload = await _payload(request, body, limit)
                answer = await run_in_threadpool(work, request, payload)
            except ApiError as error:
                return JSONResponse(error.body(), status_code=error.status)
            return JSONResponse(answer)

        return endpoint

    def job(request: Request) -> str:
        return str(request.path_params["job_id"])

    async def events(request: Request) -> Response:
        return await _events(service, request)

    routes = [
        Route("/v1/health", api(lambda r, p: service.health(), body=""), methods=["GET"]),
        Route(
            "/v1/skill-packages/install",
            api(lambda r, p: service.install(p), body="file", limit=service.config.max_package_bytes),
            methods=["POST"],
        ),
        Route(
            "/v1/jobs",
            api(lambda r, p: service.create_job(p), limit=service.config.max_job_bytes),
            methods=["POST"],
        ),
        Route("/v1/jobs/{job_id}", api(lambda r, p: service.status(job(r)), body=""), methods=["GET"]),
        Route(
            "/v1/jobs/{job_id}/upload",
            api(lambda r, p: service.upload(job(r), p), body="file", limit=service.config.max_package_bytes),
            methods=["POST"],
        ),
        Route(
            "/v1/jobs/{job_id}/interaction/pending",
            api(lambda r, p: service.pending(job(r)), body=""),
            methods=["GET"],
        ),
        Route(
            "/v1/jobs/{job_id}/interaction/reply",
            api(lambda r, p: service.reply(job(r), p), limit=service.config.max_reply_bytes),
            methods=["POST"],
        ),
        Route(
            "/v1/jobs/{job_id}/cancel", api(lambda r, p: service.cancel(job(r)), body=""), methods=["POST"]
        ),
        Route("/v1/jobs/{job_id}/result", api(lambda r, p: service.result(job(r)), body=""), methods=["GET"]),
        Route(
            "/v1/jobs/{job_id}/events/history",
            api(lambda r, p: service.history(job(r), _after(r)), body=""),
            methods=["GET"],
        ),
        Route("/v1/jobs/{job_id}/events", events, methods=["GET"]),
        Route("/v1/_turngate/clock/advance", api(lambda r, p: service.advance_clock(p)), methods=["POST"]),
        Route("/v1/_turngate/restart", api(lambda r, p: service.restart(), body=""), methods=["POST"]),
        Route("/v1/_turngate/idle", api(lambda r, p: service.wait_idle(p)), methods=["POST"]),
        Route("/v1/_turngate/slots/fill", api(lambda r, p: service.fill_slots(p)), methods=["POST"]),
        Route("/v1/_turngate/slots/free", api(lambda r, p: service.free_slots(p)), methods=["POST"]),
        Route(
            "/v1/_turngate/jobs/{job_id}/internals",
            api(lambda r, p: service.internals(job(r)), body=""),
            methods=["GET"],
        ),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ticker = asyncio.create_task(_tick(service, tick_sec)) if tick_sec else None
        try:
            yield
        finally:
            if ticker is not None:
                ticker.cancel()
            await run_in_threadpool(service.close)

    return Starlette(
        routes=routes,
        lifespan=lifespan,
        # Every refusal in the API's JSON shape, the HTTP layer's own too (404, 405 with Allow, 500).
        exception_handlers={HTTPException: http_error, Exception: server_fault},
    )


async def _payload(request: Request, kind: str, limit: int) -> Any:
    """The request body: JSON, the multipart ``file`` field's bytes, or nothing.

    Every body is read within its limit: a declared length over it is refused at
    once, and a chunked body is refused as soon as what has arrived passes it, so
    no body is ever held whole past its limit.
    """
    if kind == "":
        return None
    envelope = limit + MULTIPART_SLACK if kind == "file" else limit
    raw = await _read_body(request, envelope)
    if kind == "file":

        async def replay() -> dict[str, Any]:
            return {"type": "http.request", "body": raw, "more_body": False}

        try:
            form = await Request(request.scope, replay).form(max_files=1, max_fields=16, max_part_size=limit)
        except Exception as error:  # python-multipart's errors: a client mistake, not a server fault
            raise ApiError(400, "REQUEST_INVALID", f"file: not a multipart upload ({error})") from None
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ApiError(400, "REQUEST_INVALID", "file: missing (multipart field 'file' with a zip)")
        data = await upload.read()
        if len(data) > limit:
            raise ApiError(413, "REQUEST_TOO_LARGE", f"file: {len(data)} bytes > {limit}")
        return data
    if not raw:
        return {}
    try:
        return json.loads(raw, parse_constant=_not_a_json_number, parse_float=_finite)
    except RecursionError:
        raise ApiError(400, "REQUEST_INVALID", "the body is JSON nested too deeply to read") from None
    except ValueError as error:
        raise ApiError(400, "REQUEST_INVALID", f"the body is not JSON ({error})") from None


def _not_a_json_number(word: str) -> float:
    """NaN, Infinity: Python's json reads them, JSON has no such numbers, and a run's input.json
    holding one would not be JSON for the engine or any later reader."""
    raise ValueError(f"{word} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e999: a JSON number, but no double holds it
        raise ValueError(f"{text[:40]} is too large for a number (it would be stored as Infinity)")
    return number


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "REQUEST_TOO_LARGE", f"body of {declared} bytes > {limit}")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:  # stop reading here: the rest is never taken in
                raise ApiError(413, "REQUEST_TOO_LARGE", f"body of more than {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError(400, "REQUEST_INVALID", "the client went away before the body ended") from None
    return b"".join(chunks)


def _after(request: Request) -> int:
    value = request.query_params.get("after_seq") or request.headers.get("last-event-id") or "0"
    if not value.isdigit():
        raise ApiError(400, "REQUEST_INVALID", f"after_seq: {value!r}: must be a non-negative integer")
    return int(value)


async def _events(service: JobService, request: Request) -> Response:
    """Server-sent events: snapshot, then each new protocol event, status changes, heartbeats, end.

    Each protocol event's SSE id is its ``seq``, so a client that reconnects with
    ``Last-Event-ID`` (or ``?after_seq=``) misses nothing and sees nothing twice.
    """
    job_id = str(request.path_params["job_id"])
    try:
        after = _after(request)
        snapshot = await run_in_threadpool(service.status, job_id)
    except ApiError as error:
        return JSONResponse(error.body(), status_code=error.status)

    async def stream() -> AsyncIterator[str]:
        nonlocal after
        yield _sse("snapshot", snapshot)
        status = snapshot["status"]
        quiet = 0.0
        while True:
            # The status first, then the events: a state change and its events are committed
            # together, so every event up to the status read is in the list read after it. (The
            # other order could end the stream at waiting_user without user.input.required.)
            current = await run_in_threadpool(service.status, job_id)
            events = await run_in_threadpool(service.events_after, job_id, after)
            for event in events:
                after = int(event["seq"])
                kind = "chat_event" if event["type"] in _CHAT_EVENTS else "run_event"
                yield _sse(kind, event, event_id=after)
            if current["status"] != status:
                status = current["status"]
                yield _sse("status", current)
            if status in SETTLED_STATES:
                reason = "waiting_user" if status == "waiting_user" else "terminal"
                yield _sse("end", {"reason": reason, "status": status})
                return
            if await request.is_disconnected():
                return
            await asyncio.sleep(POLL_SEC)
            quiet += POLL_SEC
            if quiet >= HEARTBEAT_SEC:
                quiet = 0.0
                yield _sse("heartbeat", {})

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def _sse(kind: str, data: Any, *, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _tick(service: JobService, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        with contextlib.suppress(Exception):  # a failed tick is retried on the next one
            await run_in_threadpool(service.tick)
