"""A run queued behind the slots a case holds: its events are what the stream showed before.

The stream of such a run does not end until the run moves on, which it cannot do while the
case holds the slots; reading it would wait until a filler is freed or killed and the run had
played its next turn, so the slot check would see that turn (seen at Skill-Runner 7d8914d:
resumable-waits-for-a-slot failed although the server waited for the slot).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.server.miniatures.app import run_app
from turngate.judge.connectors.http_events import EventReader
from turngate.judge.connectors.http_options import http_options
from turngate.judge.connectors.http_transport import Transport

STARTED = {"type": "conversation.started", "seq": 1, "meta": {"attempt": 1}}
WAITING = {"type": "user.input.required", "seq": 2, "meta": {"attempt": 1}, "data": {"interaction_id": 1}}


class Streams:
    """An events stream that ends at the first open (the run waits) and never after (queued)."""

    def __init__(self) -> None:
        self.opened = 0

    async def stream(self, request: Request) -> Response:
        self.opened += 1
        ends = self.opened == 1

        async def frames() -> AsyncIterator[str]:
            for event in (STARTED, WAITING):
                yield f"event: chat_event\ndata: {json.dumps(event)}\n\n"
            if ends:
                yield 'event: end\ndata: {"reason": "waiting"}\n\n'
            else:  # the run waits for a slot: nothing more until it moves on (or the test ends)
                await asyncio.sleep(10)

        return StreamingResponse(frames(), media_type="text/event-stream")

    async def history(self, request: Request) -> Response:
        return JSONResponse({"detail": "Not Found"}, status_code=404)


@contextlib.contextmanager
def reader() -> Iterator[tuple[EventReader, Streams]]:
    streams = Streams()
    app = Starlette(
        routes=[
            Route("/v1/jobs/{job}/events", streams.stream),
            Route("/v1/jobs/{job}/events/history", streams.history),
        ]
    )
    with run_app(app, stop_wait_sec=15) as url:
        options = http_options(
            {"base_url": url, "scripts_dir": "scripts", "events_stream": True, "request_timeout_sec": 5},
            None,
        )
        transport = Transport(options)
        try:
            yield EventReader(transport, options), streams
        finally:
            transport.close()


def test_a_queued_run_is_not_waited_for_its_stream_shows_what_it_showed() -> None:
    with reader() as (events, streams):
        first = events.protocol_events("job")
        again = events.protocol_events("job", follow_stream=False)
    assert streams.opened == 1  # the second read opened no stream (it would have waited an hour)
    assert [event["type"] for event in first or ()] == ["conversation.started", "user.input.required"]
    assert again == first


def test_the_stream_never_ends_at_a_status_without_the_events_committed_with_it() -> None:
    """A state change and its events are committed together; the stream reads the status first and
    the events after it, so a run that reaches waiting_user between the two reads is shown with its
    user.input.required (read the other way round, the stream ended without it)."""
    import asyncio
    from typing import Any

    from starlette.requests import Request

    from turngate.implementations.serve.app import _events

    class Service:  # commits the wait (state and event) on the second look at the status
        def __init__(self) -> None:
            self.looks, self.events = 0, [{"seq": 1, "type": "conversation.started"}]

        def status(self, job_id: str) -> dict[str, Any]:
            self.looks += 1
            if self.looks == 2:
                self.events.append({"seq": 2, "type": "user.input.required"})
            return {"request_id": job_id, "status": "running" if self.looks == 1 else "waiting_user"}

        def events_after(self, job_id: str, after: int) -> list[dict[str, Any]]:
            return [event for event in self.events if event["seq"] > after]

    async def frames() -> str:
        scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b"",
                 "path_params": {"job_id": "run-1"}}  # fmt: skip
        response = await _events(Service(), Request(scope))  # type: ignore[arg-type]
        chunks = [chunk async for chunk in response.body_iterator]  # type: ignore[attr-defined]
        return "".join(chunk if isinstance(chunk, str) else chunk.decode() for chunk in chunks)

    sent = asyncio.run(frames())
    assert sent.index('"user.input.required"') < sent.index("event: end"), sent
