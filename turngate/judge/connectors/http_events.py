"""A job's protocol (FCMP) events, from where the server keeps them: its history endpoint or its SSE stream.

A server's history may hold its own runtime events rather than the protocol's; then the stream's
``chat_event`` frames are read instead. The events also give what a server shows nowhere else: the
attempts (``meta.attempt``) and the interaction history (rebuilt from asks and replies).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

import httpx
import httpx_sse

from turngate.judge.connectors.http_options import HttpOptions
from turngate.judge.connectors.http_transport import Transport, is_int

# The protocol (FCMP) event types; a history of other types holds a server's runtime events.
FCMP_TYPES: Final = frozenset(
    {
        "conversation.started",
        "assistant.message.final",
        "user.input.required",
        "user.input.replied",
        "conversation.completed",
        "conversation.failed",
        "diagnostic.warning",
        # Skill-Runner from 46dbf1d (v0.4.0) on
        "conversation.state.changed",
        "interaction.reply.accepted",
        "interaction.auto_decide.timeout",
    }
)
# The events that answer an ask: a person's reply, and an automatic decision (strict=false, the wait
# timed out). Their names are conventions of servers of this family (HTTP_API.md); Skill-Runner names
# the automatic one interaction.auto_decide.timeout (from 4cb89ba) and says how each was resolved in
# the event's ``resolution_mode`` (user_reply, auto_decide_timeout).
USER_REPLY_EVENTS: Final = frozenset({"user.input.replied", "interaction.reply.accepted"})
AUTOMATIC_REPLY_EVENTS: Final = frozenset({"interaction.auto_decide.timeout", "interaction.auto_decided"})
REPLY_EVENTS: Final = USER_REPLY_EVENTS | AUTOMATIC_REPLY_EVENTS
MAX_STREAM_EVENTS: Final = 10_000


class EventReader:
    """One case's events: where they were found (``source``), and what the stream showed so far."""

    def __init__(self, transport: Transport, options: HttpOptions) -> None:
        self._transport = transport
        self._options = options
        self.source: str | None = None  # "history" or "stream", once auto has looked
        self._streamed: dict[tuple[Any, Any, Any], Mapping[str, Any]] = {}  # (attempt, seq, type)

    def protocol_events(self, job: str, *, follow_stream: bool = True) -> list[Mapping[str, Any]] | None:
        """The run's FCMP events from wherever this server keeps them; None when nowhere.

        ``follow_stream=False``: a stream is not opened (it would not end while the run cannot move
        on); what earlier reads of it showed is returned instead."""
        source = self.source or self._options.events_source
        if source == "none":
            return None
        if source in ("auto", "history"):
            history = self.history(job)
            if history is not None and (source == "history" or any(map(is_fcmp, history))):
                self.source = "history"
                return with_type(history)
            if source == "history":
                return None
            if history is not None and not history and not self._options.events_stream:
                return []
        if not follow_stream and self.source == "stream":
            return list(self._streamed.values())
        stream = self.stream(job) if self._options.events_stream else None
        if stream is None:
            return None
        self.source = "stream"
        # A server that streams each attempt's messages afresh (seq restarting per attempt) shows
        # only the latest attempt; what earlier observations saw is kept, each message once.
        for event in stream:
            meta = event.get("meta")
            attempt = meta.get("attempt") if isinstance(meta, Mapping) else None
            self._streamed.setdefault((attempt, event.get("seq"), event.get("type")), event)
        return list(self._streamed.values())

    def history(self, job: str) -> list[Mapping[str, Any]] | None:
        """GET /events/history's events in ``seq`` order; None when it lists none."""
        path = f"/v1/jobs/{job}/events/history"
        status, answer = self._transport.call("GET", path)
        events = answer.get("events") if isinstance(answer, Mapping) else answer
        if status != 200 or not isinstance(events, list):
            self._transport.anomaly("GET", path, status, answer, "no list of events")
            return None
        return in_seq_order([event for event in events if isinstance(event, Mapping)])

    def stream(self, job: str) -> list[Mapping[str, Any]] | None:
        """The ``chat_event`` frames of GET /events, read up to its ``end`` (the job has settled)."""
        path = f"/v1/jobs/{job}/events"
        deadline = time.monotonic() + self._options.request_timeout_sec
        events: list[Mapping[str, Any]] = []
        try:
            with self._transport.sse(path) as source:
                if source.response.status_code != 200:
                    self._transport.anomaly(
                        "GET", path, source.response.status_code, None, "no events stream"
                    )
                    return None
                for frame in source.iter_sse():
                    if frame.event == "end" or time.monotonic() >= deadline:
                        break
                    if frame.event != "chat_event" or len(events) >= MAX_STREAM_EVENTS:
                        continue
                    try:
                        event = json.loads(frame.data)
                    except ValueError:
                        self._transport.anomaly("GET", path, 200, frame.data, "a chat_event that is not JSON")
                        continue
                    if isinstance(event, Mapping) and isinstance(event.get("type"), str):
                        events.append(event)
        except httpx_sse.SSEError as error:
            self._transport.anomaly("GET", path, 200, str(error), "not an events stream")
            return None
        except httpx.HTTPError as error:
            self._transport.anomaly("GET", path, None, str(error), "the events stream broke")
        return events

    def follow(self, job: str, deadline: float) -> bool:
        """Read GET /events until ``end`` or a drop (a wait cheaper than polling the status); False when
        the server has no usable stream."""
        path = f"/v1/jobs/{job}/events"
        remaining = max(0.1, min(deadline - time.monotonic(), self._options.request_timeout_sec))
        try:
            with self._transport.sse(path, timeout=remaining) as source:
                if source.response.status_code != 200:
                    return False
                for frame in source.iter_sse():
                    if frame.event == "end" or time.monotonic() >= deadline:
                        break
            return True
        except httpx_sse.SSEError:
            return False
        except httpx.HTTPError:
            return True  # a dropped or timed-out stream: look at the status, then reopen it


def is_fcmp(event: Mapping[str, Any]) -> bool:
    version = event.get("protocol_version")
    if isinstance(version, str):
        return version.startswith("fcmp")
    return event.get("type") in FCMP_TYPES


def with_type(events: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [event for event in events if isinstance(event.get("type"), str)]


def in_seq_order(events: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Sorted by ``seq`` when every event has an integer one; else as the server listed them."""
    if all(is_int(event.get("seq")) for event in events):
        return sorted(events, key=lambda event: int(event["seq"]))
    return events


def terminal_reason(events: Sequence[Mapping[str, Any]]) -> str | None:
    """The reason code of the run's end as its events say it: ``conversation.completed``'s, or, where
    a server folds the end into the state change (Skill-Runner from 3d9e93a, in v0.4.0),
    ``conversation.state.changed``'s ``terminal``. The latest that names one; None when none does."""
    for event in reversed(events):
        data = event.get("data")
        if not isinstance(data, Mapping):
            continue
        match event.get("type"):
            case "conversation.completed":
                reason = data.get("reason_code")
            case "conversation.state.changed" if isinstance(data.get("terminal"), Mapping):
                reason = data["terminal"].get("reason_code")
            case _:
                continue
        if isinstance(reason, str):
            return reason
    return None


def envelope(event: Mapping[str, Any]) -> dict[str, int | None]:
    """Where an event stands in its run: its ``seq`` and its ``meta.attempt`` (None: not shown)."""
    meta = event.get("meta")
    attempt = meta.get("attempt") if isinstance(meta, Mapping) else None
    seq = event.get("seq")
    return {"seq": int(seq) if is_int(seq) else None, "attempt": int(attempt) if is_int(attempt) else None}


def attempts_from_events(events: Sequence[Mapping[str, Any]] | None) -> int | None:
    """The highest ``meta.attempt``; None when the events carry none (the target cannot show it)."""
    numbers = [
        int(meta["attempt"])
        for event in events or ()
        if isinstance(meta := event.get("meta"), Mapping) and is_int(meta.get("attempt"))
    ]
    return max(numbers) if numbers else None


def history_from_events(events: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...] | None:
    """The interaction history as the in-process connector reports it, rebuilt from FCMP events.

    A ``user.input.required`` without an integer ``interaction_id`` opens a row of its own (id
    None); a reply event closes the row it names, else the latest open one. A field the events do not
    carry is left out of the row (the server cannot show it; the connector declares it), a null they
    carry is kept: ``prompt`` from the ask, ``response`` (or ``response_preview``) and ``automatic``
    from the reply, ``timestamp`` from the envelope's ``ts`` of the event that last wrote the row. An
    unanswered row has ``response`` and ``automatic`` None. None (the target cannot show the history)
    when an ask was answered — a later attempt ran — but no reply event says with what.
    """
    rows: list[dict[str, Any]] = []
    asked_in: list[int | None] = []  # each row's attempt
    answered: list[bool] = []
    latest_attempt: int | None = None
    for event in events:
        data = event.get("data") or {}
        meta = event.get("meta")
        attempt = meta.get("attempt") if isinstance(meta, Mapping) else None
        if is_int(attempt):
            latest_attempt = max(attempt, latest_attempt or attempt)
        if not isinstance(data, Mapping):
            continue
        named = data.get("interaction_id")
        number = int(named) if is_int(named) else None
        stamp = {"timestamp": event["ts"]} if "ts" in event else {}
        match event.get("type"):
            case "user.input.required":
                if number is not None and any(row.get("interaction_id") == number for row in rows):
                    continue  # the same ask shown again
                row: dict[str, Any] = {"interaction_id": number}
                if "prompt" in data:
                    row["prompt"] = data["prompt"]
                rows.append({**row, "response": None, "automatic": None, **stamp})
                asked_in.append(attempt if is_int(attempt) else None)
                answered.append(False)
            case kind if kind in REPLY_EVENTS:
                open_rows = [
                    index
                    for index, row in enumerate(rows)
                    if (number is None or row.get("interaction_id") == number) and not answered[index]
                ]
                if open_rows:
                    index = open_rows[-1]
                    answered[index] = True
                    reply = rows[index]
                    reply.pop("response")
                    reply.pop("automatic")
                    reply.pop("timestamp", None)
                    for name in ("response", "response_preview"):
                        if name in data:
                            reply["response"] = data[name]
                            break
                    if "automatic" in data:
                        reply["automatic"] = data["automatic"]
                    elif isinstance(data.get("resolution_mode"), str):
                        reply["automatic"] = data["resolution_mode"] != "user_reply"
                    elif kind in AUTOMATIC_REPLY_EVENTS:
                        reply["automatic"] = True
                    reply.update(stamp)
    for attempt, done in zip(asked_in, answered, strict=True):
        later = attempt is not None and latest_attempt is not None and latest_attempt > attempt
        if later and not done:
            return None
    return tuple(rows)
