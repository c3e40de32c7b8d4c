"""The HTTP connector: any orchestrator that exposes the job API of ../shared/HTTP_API.md.

The target's operator points the server's engine lookup at the launchers from
``turngate engines install DIR`` and names, in the target options, the folder
those engines read their scripts from and their call log; the runner writes
each case's script there and the case token goes into the job's input.

Robust against a real server: every request has a timeout; ``no_cache`` is
always sent; a job may sit in ``queued`` for a while; a reply to a stale
interaction answers 409, which is an observation, not an error; the events
stream may drop and is reopened from the last ``seq`` seen. A server that is
down or answers something that is not the job API raises :class:`TargetError`
with one line that says which call and what came back.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from harness.connectors import base
from harness.connectors.base import CaseSetup, Observation, ReplyResult
from harness.targets import HttpOptions

TERMINAL: Final = frozenset({"succeeded", "failed", "canceled"})
STATES: Final = TERMINAL | {"queued", "running", "waiting_user"}


class TargetError(RuntimeError):
    """The server answered something that is not the job API, or not what the step needs."""


class TargetUnreachable(TargetError, base.TargetUnreachable):
    """Nothing answers at the base URL: the run cannot go on, later cases are not reached."""


class HttpConnector:
    name = "http"

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self.capabilities = options.capabilities
        self._job: str | None = None
        self._replied_to: int | None = None  # an accepted reply's interaction: still "waiting" is stale
        self._last_status: Mapping[str, Any] = {}

    # Actions -----------------------------------------------------------------------------

    def start(self, setup: CaseSetup) -> None:
        self._install(setup.skill_dir)
        runtime = setup.runtime
        options: dict[str, Any] = {"execution_mode": runtime["mode"], "no_cache": True}
        if "require_user_reply" in runtime:
            options["interactive_require_user_reply"] = runtime["require_user_reply"]
        if "session_timeout_sec" in runtime:
            options["session_timeout_sec"] = runtime["session_timeout_sec"]
        if self.options.turngate_hooks:  # turngate serve's own options; another server would refuse them
            if runtime.get("profile"):
                options["turngate_profile"] = runtime["profile"]
            if setup.gemini_output_format and setup.engine == "gemini":
                options["turngate_gemini_output_format"] = setup.gemini_output_format
            if "turn_timeout_sec" in runtime:
                options["turngate_turn_timeout_sec"] = runtime["turn_timeout_sec"]
        request = {
            **self.options.extra_request,
            "skill_id": setup.skill_dir.name,
            "engine": setup.engine,
            "input": {"case": f"tg-case-{setup.case_id}"},
            "parameter": {},
            "runtime_options": options,
        }
        answer = self._json("POST", "/v1/jobs", request)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("request_id"), str | int):
            raise TargetError(f"POST /v1/jobs: no request_id in the answer: {_short(answer)}")
        self._job = str(answer["request_id"])
        self._replied_to = None

    def _install(self, skill_dir: Path) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(skill_dir.rglob("*")):
                if path.is_file():
                    archive.write(path, f"{skill_dir.name}/{path.relative_to(skill_dir).as_posix()}")
        boundary = f"turngate-{uuid.uuid4().hex}"
        body = (
            (
                f"--{boundary}\r\n"
                f'Content-Disposition: form-data; name="file"; filename="{skill_dir.name}.zip"\r\n'
                "Content-Type: application/zip\r\n\r\n"
            ).encode()
            + buffer.getvalue()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        content_type = f"multipart/form-data; boundary={boundary}"
        status, answer = self._call("POST", "/v1/skill-packages/install", body, content_type)
        if status != 200:
            raise TargetError(
                f"POST /v1/skill-packages/install ({skill_dir.name}): HTTP {status}: {_short(answer)}"
            )

    def reply(self, text: str, interaction_id: int | None) -> ReplyResult:
        if interaction_id is None:
            pending = self._pending()
            interaction_id = int(pending["interaction_id"]) if pending else 0
        body = json.dumps(
            {"interaction_id": interaction_id, "response": text, "idempotency_key": uuid.uuid4().hex}
        ).encode()
        status, answer = self._call(
            "POST", f"/v1/jobs/{self._id}/interaction/reply", body, "application/json"
        )
        if status == 200 and isinstance(answer, Mapping):
            accepted = bool(answer.get("accepted", True))
            if accepted:
                self._replied_to = interaction_id
            return ReplyResult(accepted, None)
        if status == 409:
            return ReplyResult(False, _error_code(answer))
        raise TargetError(f"POST /v1/jobs/{self._id}/interaction/reply: HTTP {status}: {_short(answer)}")

    def cancel(self) -> bool:
        answer = self._json("POST", f"/v1/jobs/{self._id}/cancel")
        return bool(answer.get("accepted")) if isinstance(answer, Mapping) else False

    def advance_clock(self, seconds: float) -> None:
        if not self.options.turngate_hooks:
            raise TargetError("an HTTP server's clock cannot be moved (only turngate serve --test-hooks)")
        self._json("POST", "/v1/_turngate/clock/advance", {"seconds": seconds})

    def restart(self) -> None:
        if not self.options.turngate_hooks:
            raise TargetError(
                "an HTTP server cannot be restarted by turngate (only turngate serve --test-hooks)"
            )
        self._json("POST", "/v1/_turngate/restart")

    def settle(self) -> None:
        """Wait until the job waits for a new interaction or has ended."""
        deadline = time.monotonic() + self.options.settle_timeout_sec
        pause = 0.02
        stream_ok = self.options.events_stream
        while True:
            status = self._status()
            if self._settled(status):
                break
            if time.monotonic() >= deadline:
                raise TargetError(
                    f"job {self._id} did not settle within {self.options.settle_timeout_sec:g} s"
                    f" (status {status.get('status')!r})"
                )
            opened = time.monotonic()
            if stream_ok:
                stream_ok = self._follow_stream(deadline)
            if not stream_ok or time.monotonic() - opened < 0.05:  # no stream, or it ended at once
                time.sleep(pause)
                pause = min(pause * 1.5, 0.5)  # back off: a busy server may run one job at a time
        if self.options.turngate_hooks:  # engines stopped, call log written: the reference knows
            self._json("POST", "/v1/_turngate/idle", {"timeout": self.options.settle_timeout_sec})

    def _settled(self, status: Mapping[str, Any]) -> bool:
        state = status.get("status")
        if state in TERMINAL:
            return True
        if state != "waiting_user":
            return False
        # A reply the server accepted but has not acted on yet still shows the old interaction.
        return self._replied_to is None or status.get("pending_interaction_id") != self._replied_to

    def close(self) -> None:
        """Cancel a job still holding the server (a waiting run may hold a slot), never raising."""
        if self._job is not None and self._last_status.get("status") not in TERMINAL:
            with contextlib.suppress(TargetError):
                self._call("POST", f"/v1/jobs/{self._job}/cancel", b"", "application/json")
        self._job = None

    # Observation -------------------------------------------------------------------------

    def observe(self) -> Observation:
        status = self._status()
        pending = self._pending()
        code, answer = self._call("GET", f"/v1/jobs/{self._id}/result")
        result = answer.get("result") if code == 200 and isinstance(answer, Mapping) else None
        history = self._json("GET", f"/v1/jobs/{self._id}/events/history")
        events = history.get("events") if isinstance(history, Mapping) else history
        if not isinstance(events, list) or not all(
            isinstance(event, Mapping) and "type" in event for event in events
        ):
            raise TargetError(
                f"GET /v1/jobs/{self._id}/events/history: not a list of events: {_short(history)}"
            )
        events.sort(key=lambda event: int(event.get("seq", 0)))
        error = status.get("error") or {}
        internals: Mapping[str, Any] = {}
        if self.options.turngate_hooks:
            internals = self._json("GET", f"/v1/_turngate/jobs/{self._id}/internals")
        decisions = list(internals.get("decisions", ()))
        completed = [event for event in events if event.get("type") == "conversation.completed"]
        reason_code = (
            decisions[-1].get("reason_code")
            if decisions
            else ((completed[-1].get("data") or {}).get("reason_code") if completed else None)
        )
        attempts = status.get("attempt_count")
        if not isinstance(attempts, int):
            attempts = max(
                (int((event.get("meta") or {}).get("attempt") or 0) for event in events), default=0
            )
        return Observation(
            state=str(status["status"]),
            error_code=error.get("code") if isinstance(error, Mapping) else None,
            warnings=tuple(status.get("warnings") or ()),
            reason_code=reason_code,
            data=(result or {}).get("data") if isinstance(result, Mapping) else None,
            pending=pending,
            attempts=attempts,
            history=tuple(internals["history"]) if "history" in internals else history_from_events(events),
            events=tuple({"type": event["type"], "data": dict(event.get("data") or {})} for event in events),
            slot_held=internals.get("slot_held"),
            patch=internals.get("patch"),
            extra={"decisions": decisions} if decisions else {},
        )

    def _status(self) -> Mapping[str, Any]:
        status = self._json("GET", f"/v1/jobs/{self._id}")
        if not isinstance(status, Mapping) or status.get("status") not in STATES:
            raise TargetError(f"GET /v1/jobs/{self._id}: no known status in {_short(status)}")
        self._last_status = status
        return status

    def _pending(self) -> Mapping[str, Any] | None:
        answer = self._json("GET", f"/v1/jobs/{self._id}/interaction/pending")
        pending = answer.get("pending") if isinstance(answer, Mapping) else None
        return pending if isinstance(pending, Mapping) else None

    # The events stream -------------------------------------------------------------------

    def _follow_stream(self, deadline: float) -> bool:
        """Read GET /events until ``end`` or a drop; False when the server has no usable stream."""
        url = urllib.parse.urlsplit(self.options.base_url)
        connection_class = (
            http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        )
        remaining = max(0.1, min(deadline - time.monotonic(), self.options.request_timeout_sec))
        connection = connection_class(url.hostname or "127.0.0.1", url.port, timeout=remaining)
        path = f"{url.path.rstrip('/')}/v1/jobs/{self._id}/events"
        try:
            connection.request("GET", path, headers={"Accept": "text/event-stream"})
            answer = connection.getresponse()
            if answer.status != 200 or "text/event-stream" not in answer.getheader("Content-Type", ""):
                return False
            for kind, _data in _sse_events(answer):
                if kind == "end" or time.monotonic() >= deadline:
                    break
            return True
        except (OSError, http.client.HTTPException):
            return True  # a dropped or timed-out stream: look at the status, then reopen it
        finally:
            connection.close()

    # HTTP --------------------------------------------------------------------------------

    def _call(
        self, method: str, path: str, body: bytes | None = None, content_type: str | None = None
    ) -> tuple[int, Any]:
        request = urllib.request.Request(self.options.base_url + path, data=body, method=method)
        if content_type:
            request.add_header("Content-Type", content_type)
        request.add_header("Accept", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.options.request_timeout_sec) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        except urllib.error.URLError as error:
            if isinstance(error.reason, ConnectionRefusedError | FileNotFoundError):
                raise TargetUnreachable(
                    f"{self.options.base_url}: nothing answers ({error.reason}); is the server running?"
                ) from None
            raise TargetError(f"{method} {path}: {error.reason}") from None
        except (OSError, http.client.HTTPException) as error:
            raise TargetError(f"{method} {path}: {error}") from None
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            raise TargetError(
                f"{method} {path}: HTTP {status}, the answer is not JSON: {raw[:120]!r}"
            ) from None

    def _json(self, method: str, path: str, payload: Any = None) -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        if body is None and method == "POST":
            body = b"{}"
        status, answer = self._call(method, path, body, "application/json" if body is not None else None)
        if status != 200:
            raise TargetError(f"{method} {path}: HTTP {status}: {_short(answer)}")
        return answer

    @property
    def _id(self) -> str:
        if self._job is None:
            raise TargetError("no job started")
        return self._job


def probe(options: HttpOptions) -> None:
    """Refuse a server that is down or does not speak the job API, before any case runs."""
    connector = HttpConnector(options)
    status, answer = connector._call("GET", "/v1/jobs/turngate-probe-no-such-job")
    if status != 404:
        raise TargetError(
            f"{options.base_url}: GET /v1/jobs/<unknown id> answered HTTP {status}, not 404:"
            f" is this the job API? ({_short(answer)})"
        )


def history_from_events(events: list[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """The interaction history as the in-process connector reports it, rebuilt from FCMP events."""
    rows: dict[int, dict[str, Any]] = {}
    for event in events:
        data = event.get("data") or {}
        match event.get("type"):
            case "user.input.required":
                rows[int(data["interaction_id"])] = {
                    "interaction_id": int(data["interaction_id"]),
                    "prompt": data.get("prompt"),
                    "response": None,
                    "automatic": None,
                }
            case "user.input.replied" if int(data.get("interaction_id", -1)) in rows:
                rows[int(data["interaction_id"])].update(
                    response=data.get("response"), automatic=data.get("automatic")
                )
    return tuple(rows[key] for key in sorted(rows))


def _sse_events(answer: http.client.HTTPResponse) -> Iterator[tuple[str, str]]:
    """(event, data) pairs of a server-sent events stream."""
    kind, data = "message", list[str]()
    for raw in answer:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield kind, "\n".join(data)
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:") :].lstrip())


def _error_code(answer: Any) -> str | None:
    if isinstance(answer, Mapping):
        error = answer.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("code"), str):
            return str(error["code"])
        if isinstance(answer.get("code"), str):
            return str(answer["code"])
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 200 else text[:200] + "…"
