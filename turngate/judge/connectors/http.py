"""The HTTP connector: any orchestrator that exposes the job API of ../shared/HTTP_API.md.

The target's operator points the server's engine lookup at the launchers from
``turngate engines install DIR`` and names, in the target options, the folder
those engines read their scripts from and their call log; the runner writes
each case's script there and the case token goes into the job's input.

This module is the case's job: its actions and what it shows. Its parts, one job each:
``http_transport`` (the client, retries, anomalies, :class:`TargetError`), ``http_install``
(the skill package), ``http_jobs`` (a job's states and request), ``http_events`` (the stream or
the history endpoint), ``http_slots`` (filler jobs), ``http_clock`` (a short real session timeout).
Against any server:

- what a server answers that the job API does not foresee (pending asked of
  an auto job answered 400, a null interaction id, a reply refused with 400)
  is recorded as an observation anomaly with the request and the answer, and
  the case goes on; only a server that stops speaking the job API raises
  :class:`TargetError`, one line naming the call and what came back;
- what a server cannot show is ``None`` in the observation, never a guess;
- an engine the server refuses (400 ``SKILL_ENGINE_UNSUPPORTED``) skips the
  case with the server's reason.
"""

from __future__ import annotations

import contextlib
import math
import subprocess
import time
import uuid
from collections.abc import Mapping
from typing import Any

from turngate.judge.connectors.audit_records import audit_items
from turngate.judge.connectors.call_log import log_mark
from turngate.judge.connectors.callpatch import modules_unnamed, patch_in_call_log
from turngate.judge.connectors.http_clock import RealClock
from turngate.judge.connectors.http_events import (
    EventReader,
    attempts_from_events,
    envelope,
    history_from_events,
    terminal_reason,
)
from turngate.judge.connectors.http_install import follow_install, submit_package
from turngate.judge.connectors.http_jobs import STATES, TERMINAL, job_request
from turngate.judge.connectors.http_options import HttpOptions
from turngate.judge.connectors.http_slots import LOOKING_SEC, SlotFillers
from turngate.judge.connectors.http_transport import (
    TargetError,
    Transport,
    error_code,
    error_message,
    is_int,
    short,
)
from turngate.protocol.connector import (
    HISTORY_FIELDS,
    CaseSetup,
    CaseSkipped,
    Observation,
    ReplyResult,
    TargetUnreachable,
)


class HttpConnector:
    name = "http"

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self.capabilities = options.capabilities
        self.transport = Transport(options)
        self.events = EventReader(self.transport, options)
        self._fillers = SlotFillers(self.transport, options)
        self._clock = RealClock(options)
        self._job: str | None = None
        self._idle_status: tuple[int, Mapping[str, Any]] | None = None  # (transport.writes, status)
        self._replied_to: int | None = None  # an accepted reply's interaction: still "waiting" is stale
        self._slots_filled = False  # fill_slots held the server's free slots: "queued" is settled
        self._last_status: Mapping[str, Any] = {}
        self.install_flow: str | None = None  # "synchronous" or "asynchronous", once a skill went in
        # The fake engines' call log: where this case's part begins, and the last patch seen there.
        self._setup: CaseSetup | None = None
        self._log_start = 0
        self._seen_patch: str | None = None

    @property
    def job(self) -> str:
        """The case's job id on the server."""
        if self._job is None:
            raise TargetError("no job started")
        return self._job

    # Actions -----------------------------------------------------------------------------

    def start(self, setup: CaseSetup) -> None:
        engines = self.options.engines
        if engines is not None and setup.engine not in engines:
            raise CaseSkipped(
                f"the target runs only {', '.join(sorted(engines))} (engines: in the target file)"
            )
        self._setup = setup
        log = self.options.call_log
        self._log_start = log_mark(log) if log is not None else 0
        gemini_format = None
        by_skill = self.options.skill_gemini_settings and not self.options.turngate_hooks
        if setup.engine == "gemini" and by_skill:
            gemini_format = setup.gemini_output_format  # the skill's own gemini settings choose it
        submitted = submit_package(self.transport, setup.skill_dir, gemini_format)
        self.install_flow = submitted.flow
        if submitted.request is not None:
            follow_install(
                self.transport,
                setup.skill_dir.name,
                submitted.request,
                timeout_sec=self.options.settle_timeout_sec,
            )
        runtime = setup.runtime
        looks_at_slots = setup.observes_slots and self.options.slots is not None
        # The scenario's timeout, in real seconds the case can wait for (None: its clock is not real).
        real_timeout = self._clock.begin(setup, extra_sec=LOOKING_SEC if looks_at_slots else 0)
        hard_timeout = None
        if self.options.turn_timeout_per_job and "turn_timeout_sec" in runtime:
            hard_timeout = max(1, math.ceil(float(runtime["turn_timeout_sec"])))  # whole seconds, > 0
        options = self.options.dialect.runtime_options(
            runtime, reply_timeout=real_timeout, hard_timeout=hard_timeout
        )
        if self.options.turngate_hooks:  # turngate serve's own options; another server would refuse them
            if runtime.get("profile"):
                options["turngate_profile"] = runtime["profile"]
            if setup.gemini_output_format and setup.engine == "gemini":
                options["turngate_gemini_output_format"] = setup.gemini_output_format
            if "turn_timeout_sec" in runtime:
                options["turngate_turn_timeout_sec"] = runtime["turn_timeout_sec"]
        request = job_request(self.options, setup, setup.case_id, options)
        status, answer = self.transport.call("POST", "/v1/jobs", json=request)
        if status == 400 and error_code(answer) == "SKILL_ENGINE_UNSUPPORTED":
            raise CaseSkipped(f"POST /v1/jobs: 400 SKILL_ENGINE_UNSUPPORTED: {error_message(answer)}")
        if status != 200:
            raise TargetError(f"POST /v1/jobs: HTTP {status}: {short(answer)}")
        if not isinstance(answer, Mapping) or not isinstance(answer.get("request_id"), str | int):
            raise TargetError(f"POST /v1/jobs: no request_id in the answer: {short(answer)}")
        self._job = str(answer["request_id"])
        self._replied_to = None

    def reply(self, text: str, interaction_id: int | None) -> ReplyResult:
        if interaction_id is None:
            interaction_id = self._pending_id()
        path = f"/v1/jobs/{self.job}/interaction/reply"
        body = {"interaction_id": interaction_id, "response": text, "idempotency_key": uuid.uuid4().hex}
        # The idempotency key makes a retry after a reset safe.
        status, answer = self.transport.call("POST", path, json=body, retry_reset=True)
        if status == 200 and isinstance(answer, Mapping):
            accepted = bool(answer.get("accepted", True))
            # A server that answers with the state it moved the job to ("queued", "running") has left
            # this wait: a later wait is a new one even when it shows the same interaction id, as a
            # server taking the id from the engine's hint does when the engine repeats it.
            moved_on = isinstance(answer.get("status"), str) and answer.get("status") != "waiting_user"
            if accepted:
                self._replied_to = None if moved_on else interaction_id
            return ReplyResult(accepted, None)
        if status == 409:
            return ReplyResult(False, error_code(answer))
        if 400 <= status < 500:
            self.transport.anomaly("POST", path, status, answer, "a reply refused otherwise than 409")
            return ReplyResult(False, error_code(answer))
        raise TargetError(f"POST {path}: HTTP {status}: {short(answer)}")

    def _pending_id(self) -> int:
        """The pending interaction's id: from the pending, else the status; 0 when neither says."""
        pending, _known = self._pending()
        candidate = pending.get("interaction_id") if pending else None
        if not is_int(candidate):
            candidate = self.status().get("pending_interaction_id")
        return int(candidate) if is_int(candidate) else 0

    def cancel(self) -> bool:
        path = f"/v1/jobs/{self.job}/cancel"
        status, answer = self.transport.call("POST", path, json={})
        if status != 200 or not isinstance(answer, Mapping):
            self.transport.anomaly("POST", path, status, answer, "a cancel not answered with 200")
            return False
        return bool(answer.get("accepted"))

    def advance_clock(self, seconds: float) -> None:
        if self.options.turngate_hooks:
            # This case's job alone, so that cases sharing the server need not take turns with it.
            self.transport.call_ok(
                "POST", "/v1/_turngate/clock/advance", {"seconds": seconds, **self._scope()}
            )
            return
        if not self._clock.active:
            raise TargetError(
                "an HTTP server's clock cannot be moved (turngate serve --test-hooks), nor was a short"
                " real session_timeout_sec sent (honours_session_timeout: in the target file)"
            )
        self._clock.advance(seconds, self.status)

    def restart(self) -> None:
        if self.options.turngate_hooks:
            self.transport.call_ok("POST", "/v1/_turngate/restart")
            return
        if self.options.restart_command is None:
            raise TargetError("no restart_command in the target file: turngate cannot restart this server")
        try:
            subprocess.run(
                self.options.restart_command,
                shell=True,
                check=True,
                timeout=self.options.settle_timeout_sec,
                capture_output=True,
            )
        except (subprocess.SubprocessError, OSError) as error:
            raise TargetError(f"restart_command {self.options.restart_command!r}: {error}") from None

    def settle(self) -> None:
        """Wait until the job waits for a new interaction or has ended."""
        # With the test hooks the server waits for the job's turn itself: one request, where polling
        # the status and following the event stream took four on average. A job the hook shows
        # unsettled (queued for a slot, a reply not acted on yet) is waited for as on any server.
        if self.options.turngate_hooks:
            shown = self._idle_by_hook()
            if shown is not None and self._settled(shown):
                self._clock.settled(shown)
                return
        deadline = time.monotonic() + self.options.settle_timeout_sec
        pause = 0.02
        stream_ok = self.options.events_stream
        while True:
            status = self.status()
            if self._settled(status):
                break
            if time.monotonic() >= deadline:
                raise TargetError(
                    f"job {self.job} did not settle within {self.options.settle_timeout_sec:g} s"
                    f" (status {status.get('status')!r})"
                )
            opened = time.monotonic()
            if stream_ok:
                stream_ok = self.events.follow(self.job, deadline)
            if not stream_ok or time.monotonic() - opened < 0.05:  # no stream, or it ended at once
                time.sleep(pause)
                pause = min(pause * 1.5, 0.5)  # back off: a busy server may run one job at a time
        if self.options.turngate_hooks:  # engines stopped, call log written: the reference knows
            self._idle_by_hook()
        self._clock.settled(status)

    def _idle_by_hook(self) -> Mapping[str, Any] | None:
        """turngate serve's idle hook: wait for this job's turn to be over (this job's only: waiting
        for the whole server would make cases take turns); the job as it shows it then, if it does."""
        idle = {"timeout": self.options.settle_timeout_sec, "job_id": self.job}
        answer = self.transport.call_ok("POST", "/v1/_turngate/idle", idle)
        shown = answer.get("status") if isinstance(answer, Mapping) else None
        if not isinstance(shown, Mapping) or shown.get("status") not in STATES:
            return None
        # The job once its turn is over; it stays so until the case's next request that is not a GET
        # (the test hooks' clock moves only when told), so observe need not ask.
        self._idle_status = (self.transport.writes, shown)
        self._last_status = shown
        return shown

    def fill_slots(self) -> None:
        """Hold every free slot: turngate serve --test-hooks by its hook; any other server with the
        target file's ``slots`` by filler jobs (http_slots) until `free_slots` cancels them."""
        if self.options.turngate_hooks:  # for this case's job alone once there is one (see pool.exclusive)
            self.transport.call_ok("POST", "/v1/_turngate/slots/fill", self._scope())
        else:
            slots = self.options.slots
            if slots is None:
                raise TargetError("slots cannot be held: the target file names no slots")
            assert self._setup is not None
            self._fillers.hold(self._setup, slots)
        self._slots_filled = True

    def free_slots(self) -> None:
        if self._fillers.held is not None:
            self._fillers.release()
        elif self.options.turngate_hooks:
            self.transport.call_ok("POST", "/v1/_turngate/slots/free", self._scope())
        self._slots_filled = False

    def _scope(self) -> dict[str, str]:
        """What scopes a test hook to this case's job (none before it has one: the whole server)."""
        return {"job_id": self._job} if self._job is not None else {}

    def _settled(self, status: Mapping[str, Any]) -> bool:
        state = status.get("status")
        if state in TERMINAL or (self._slots_filled and state == "queued"):  # waits for a slot held
            return True
        if state == "waiting_auth":  # waits for credentials no case gives: it will not move on
            return True
        if state != "waiting_user":
            self._replied_to = None  # the job left the wait the reply answered: any wait now is new
            return False
        # A reply the server accepted but has not acted on yet still shows the old interaction.
        return self._replied_to is None or status.get("pending_interaction_id") != self._replied_to

    def close(self) -> None:
        """Cancel a job still holding the server (a waiting run may hold a slot), never raising."""
        # The case already has its outcome: a server that went away or misanswers now changes none.
        if self._fillers.held is not None:
            with contextlib.suppress(TargetError, TargetUnreachable):
                self.free_slots()
        if self._job is not None and self._last_status.get("status") not in TERMINAL:
            with contextlib.suppress(TargetError, TargetUnreachable):
                self.transport.call("POST", f"/v1/jobs/{self._job}/cancel", json={})
        self._job = None
        self.transport.close()

    # Observation -------------------------------------------------------------------------

    def observe(self) -> Observation:
        status = self._status_since_idle() or self.status()
        pending, pending_known = self._pending()
        code, answer = self.transport.call("GET", f"/v1/jobs/{self.job}/result")
        result = answer.get("result") if code == 200 and isinstance(answer, Mapping) else None
        # A run queued behind the slots this case holds cannot move on, so its events stream cannot
        # end: read now, it would wait until a filler is freed or killed and the run played its next
        # turn, and the call log read below would then show that turn (Skill-Runner at 7d8914d).
        waiting_for_slot = self._slots_filled and status.get("status") == "queued"
        events = self.events.protocol_events(self.job, follow_stream=not waiting_for_slot)
        internals: Mapping[str, Any] = {}
        if self.options.turngate_hooks:
            internals = self.transport.call_ok("GET", f"/v1/_turngate/jobs/{self.job}/internals")
        decisions = list(internals.get("decisions", ()))
        reason_code = decisions[-1].get("reason_code") if decisions else terminal_reason(events or ())
        attempts = status.get("attempt_count")
        if not is_int(attempts):
            attempts = attempts_from_events(events)
        if "history" in internals:
            history: tuple[Mapping[str, Any], ...] | None = tuple(internals["history"])
        else:
            history = history_from_events(events) if events is not None else None
        slot_held = internals["slot_held"] if "slot_held" in internals else self._slot_held()
        patch = internals.get("patch") or self._patch_from_call_log()
        error = status.get("error") or {}
        extra: dict[str, Any] = {}
        # What this server cannot show, declared (unverified); a null it reports is an observation.
        unobservable = [
            name
            for name, value in (
                ("events", events),
                ("history", history),
                ("attempts", attempts),
                ("slot_held", slot_held),
                ("patch", patch),
            )
            if value is None
        ]
        if patch is not None and modules_unnamed(patch):
            unobservable.append("patch.modules")  # its modules' names: the target file's patch_modules
        unobservable += [
            f"history.{name}"
            for name in HISTORY_FIELDS
            if history and any(name not in row for row in history)  # its rows do not carry it
        ]
        if unobservable:
            extra["unobservable"] = unobservable
        if decisions:
            extra["decisions"] = decisions
        if not pending_known:
            extra["pending_unknown"] = True
        if self.events.source == "stream":
            extra["events_source"] = "stream"  # the history endpoint held something else
        if events is not None:  # each event's place: what the ordering rules of an edition's contract read
            extra["event_envelopes"] = [envelope(event) for event in events]
        if anomalies := self.transport.take_anomalies():
            extra["anomalies"] = anomalies
        if "audit" in internals:  # turngate serve --test-hooks shows its audit next to the gate
            extra = {**extra, "audit": list(internals["audit"])}
        elif self.options.audit_source is not None and is_int(attempts) and self._setup is not None:
            audit = audit_items(
                self._audit_marker,
                attempts,
                mode=str(self._setup.runtime.get("mode")),
                state=str(status["status"]),
                warnings=tuple(str(warning) for warning in status.get("warnings") or ()),
            )
            if audit is not None:
                extra = {**extra, "audit": audit}
        return Observation(
            state=str(status["status"]),
            error_code=error.get("code") if isinstance(error, Mapping) else None,
            warnings=tuple(str(warning) for warning in status.get("warnings") or ()),
            reason_code=reason_code,
            data=(result or {}).get("data") if isinstance(result, Mapping) else None,
            pending=pending,
            attempts=attempts,
            history=history,
            events=(
                tuple({"type": event["type"], "data": dict(event.get("data") or {})} for event in events)
                if events is not None
                else None
            ),
            slot_held=slot_held,
            patch=patch,
            extra=extra,
        )

    def _status_since_idle(self) -> Mapping[str, Any] | None:
        """The status the idle hook answered, while nothing was sent since that could change it."""
        kept, self._idle_status = self._idle_status, None
        if kept is None or kept[0] != self.transport.writes:
            return None
        self._last_status = kept[1]
        return kept[1]

    def status(self) -> Mapping[str, Any]:
        """GET /v1/jobs/{job}: the job as the server shows it now, with a state of the job API."""
        status = self.transport.call_ok("GET", f"/v1/jobs/{self.job}")
        if not isinstance(status, Mapping) or status.get("status") not in STATES:
            raise TargetError(f"GET /v1/jobs/{self.job}: no known status in {short(status)}")
        self._last_status = status
        return status

    def _pending(self) -> tuple[Mapping[str, Any] | None, bool]:
        """The pending interaction, and whether the server said (False: it cannot tell us)."""
        path = f"/v1/jobs/{self.job}/interaction/pending"
        status, answer = self.transport.call("GET", path)
        if status == 200:
            pending = answer.get("pending") if isinstance(answer, Mapping) else None
            return (pending if isinstance(pending, Mapping) else None), True
        if status in (400, 404, 409) and self._last_status.get("status") != "waiting_user":
            # An auto job (Skill-Runner answers 400) or a finished one: there is no pending.
            return None, True
        self.transport.anomaly("GET", path, status, answer, "no pending could be read")
        return None, False

    def _slot_held(self) -> bool | None:
        """Whether this run holds a slot, asked of filler jobs; None when slots are not observable."""
        setup, slots = self._setup, self.options.slots
        if setup is None or slots is None or not setup.observes_slots:
            return None
        return self._fillers.run_holds_slot(setup, slots)

    def _patch_from_call_log(self) -> str | None:
        """A server that shows no patch: the patched SKILL.md its engine read (see callpatch.py)."""
        log, setup = self.options.call_log, self._setup
        if log is None or setup is None or not log.exists():
            return None
        patch = patch_in_call_log(
            log, self._log_start, setup.case_id, setup.skill_dir, self.options.patch_modules
        )
        self._seen_patch = patch or self._seen_patch
        return self._seen_patch

    def _audit_marker(self, attempt: int) -> bool | None:
        """The audit record's done-marker classification of one attempt, from the target file's source."""
        source = self.options.audit_source
        assert source is not None
        assert self._setup is not None
        path = source.url(job=self.job, attempt=attempt, skill=self._setup.skill_dir.name)
        status, answer = self.transport.call("GET", path)
        return source.marker_in(answer) if status == 200 else None
