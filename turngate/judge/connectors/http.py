"""The HTTP connector: any orchestrator that exposes the job API of ../shared/HTTP_API.md.

The target's operator points the server's engine lookup at the launchers from
``turngate engines install DIR`` and names, in the target options, the folder
those engines read their scripts from and their call log; the runner writes
each case's script there and the case token goes into the job's input.

Built for real servers, on httpx (a maintained client with timeouts, pooled
connections and auth headers) and httpx-sse (the events stream):

- an install may be asynchronous: its own status is followed until it
  succeeded or failed, and a refusal is reported in the server's words;
- transient failures (a connection refused or reset, 429, 503) are retried
  with backoff; POSTs only where a retry cannot do the work twice;
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
import io
import json
import subprocess
import time
import uuid
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeGuard

import httpx
import httpx_sse

from turngate.judge.connectors.callpatch import modules_unnamed, patch_from_calls
from turngate.judge.connectors.evidence import audit_items
from turngate.judge.connectors.http_options import HttpOptions
from turngate.protocol import connector as base
from turngate.protocol.connector import CaseSetup, CaseSkipped, Observation, ReplyResult, TargetUnreachable

TERMINAL: Final = frozenset({"succeeded", "failed", "canceled"})
STATES: Final = TERMINAL | {"queued", "running", "waiting_user"}
TRANSIENT_STATUS: Final = frozenset({429, 502, 503})
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
    }
)
# Names servers of this family give the reply event (the spec leaves it open).
# The events that answer an ask: a person's reply, and an automatic decision (strict=false, the wait
# timed out). Their names are conventions of servers of this family (HTTP_API.md); Skill-Runner names
# the automatic one interaction.auto_decide.timeout (from 4cb89ba) and says how each was resolved in
# the event's ``resolution_mode`` (user_reply, auto_decide_timeout).
USER_REPLY_EVENTS: Final = frozenset({"user.input.replied", "interaction.reply.accepted"})
AUTOMATIC_REPLY_EVENTS: Final = frozenset({"interaction.auto_decide.timeout", "interaction.auto_decided"})
REPLY_EVENTS: Final = USER_REPLY_EVENTS | AUTOMATIC_REPLY_EVENTS
INSTALL_STATES: Final = frozenset({"queued", "running", "succeeded", "failed"})
MAX_ANOMALIES: Final = 20  # a misbehaving server must not grow a case's record without bound
MAX_STREAM_EVENTS: Final = 10_000
FILLER_WAIT_SEC: Final = 4.0  # how long slot fillers are given to start


class TargetError(RuntimeError):
    """The server answered something that is not the job API, or not what the step needs."""


class HttpConnector:
    name = "http"

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self.capabilities = options.capabilities
        self._client = httpx.Client(
            base_url=options.base_url,
            timeout=options.request_timeout_sec,
            headers={"Accept": "application/json", **options.headers},
        )
        self._job: str | None = None
        self._replied_to: int | None = None  # an accepted reply's interaction: still "waiting" is stale
        self._slots_filled = False  # fill_slots held the server's free slots: "queued" is settled
        self._fillers: tuple[list[str], list[Path]] | None = None  # fill_slots' filler jobs, and scripts
        self._last_status: Mapping[str, Any] = {}
        self._anomalies: list[Mapping[str, Any]] = []
        self.install_flow: str | None = None  # "synchronous" or "asynchronous", once a skill went in
        self._events_source: str | None = None  # "history" or "stream", once auto has looked
        self._streamed: dict[tuple[Any, Any, Any], Mapping[str, Any]] = {}  # (attempt, seq, type)
        # The real clock (a server that honours a short session_timeout_sec, no hooks): the
        # scenario's timeout, the scenario seconds since the run began waiting, and when it did.
        self._real_clock = False
        self._scenario_timeout = 1200.0
        self._real_timeout = options.session_timeout_real_sec
        self._clock_elapsed = 0.0
        self._waiting_since: float | None = None
        self._waiting_for: Any = None  # the pending interaction id the run waits on
        # The fake engines' call log: where this case's part begins, and the last patch seen there.
        self._setup: CaseSetup | None = None
        self._log_start = 0
        self._seen_patch: str | None = None

    # Actions -----------------------------------------------------------------------------

    def start(self, setup: CaseSetup) -> None:
        engines = self.options.engines
        if engines is not None and setup.engine not in engines:
            raise CaseSkipped(
                f"the target runs only {', '.join(sorted(engines))} (engines: in the target file)"
            )
        self._setup = setup
        log = self.options.call_log
        self._log_start = log.stat().st_size if log is not None and log.exists() else 0
        gemini_format = None
        by_skill = self.options.skill_gemini_settings and not self.options.turngate_hooks
        if setup.engine == "gemini" and by_skill:
            gemini_format = setup.gemini_output_format  # the skill's own gemini settings choose it
        self._install(setup.skill_dir, gemini_format)
        runtime = setup.runtime
        options: dict[str, Any] = {"execution_mode": runtime["mode"], "no_cache": True}
        if "require_user_reply" in runtime:
            options["interactive_require_user_reply"] = runtime["require_user_reply"]
        if "session_timeout_sec" in runtime:
            options["session_timeout_sec"] = runtime["session_timeout_sec"]
        self._real_clock = (
            setup.uses_clock and not self.options.turngate_hooks and self.options.honours_session_timeout
        )
        if self._real_clock:  # the scenario's timeout, in real seconds the case can wait for
            self._scenario_timeout = float(runtime.get("session_timeout_sec", 1200))
            self._real_timeout = self.options.session_timeout_real_sec
            if setup.observes_slots and self.options.slots is not None:
                # Looking at slots (fillers started, waited for, canceled) takes real time that must
                # not run the short timeout out before the scenario says it has.
                self._real_timeout += int(2 * FILLER_WAIT_SEC + 2)
            options["session_timeout_sec"] = self._real_timeout
        if self.options.turngate_hooks:  # turngate serve's own options; another server would refuse them
            if runtime.get("profile"):
                options["turngate_profile"] = runtime["profile"]
            if setup.gemini_output_format and setup.engine == "gemini":
                options["turngate_gemini_output_format"] = setup.gemini_output_format
            if "turn_timeout_sec" in runtime:
                options["turngate_turn_timeout_sec"] = runtime["turn_timeout_sec"]
        request: dict[str, Any] = {
            **self.options.extra_request,
            "skill_id": setup.skill_dir.name,
            "engine": setup.engine,
            "input": {"case": f"tg-case-{setup.case_id}"},
            "parameter": {},
            "runtime_options": options,
        }
        if setup.engine in self.options.models:
            request["model"] = self.options.models[setup.engine]
        status, answer = self._call("POST", "/v1/jobs", json=request)
        if status == 400 and error_code(answer) == "SKILL_ENGINE_UNSUPPORTED":
            raise CaseSkipped(f"POST /v1/jobs: 400 SKILL_ENGINE_UNSUPPORTED: {error_message(answer)}")
        if status != 200:
            raise TargetError(f"POST /v1/jobs: HTTP {status}: {short(answer)}")
        if not isinstance(answer, Mapping) or not isinstance(answer.get("request_id"), str | int):
            raise TargetError(f"POST /v1/jobs: no request_id in the answer: {short(answer)}")
        self._job = str(answer["request_id"])
        self._replied_to = None

    def _install(self, skill_dir: Path, gemini_format: str | None = None) -> None:
        path = "/v1/skill-packages/install"
        files = {"file": (f"{skill_dir.name}.zip", package_zip(skill_dir, gemini_format), "application/zip")}
        status, answer = self._call("POST", path, files=files)
        if status == 400:  # the server read the package and refused it
            raise base.PackageRefused(f"POST {path} ({skill_dir.name}): HTTP 400: {short(answer)}")
        if status != 200:
            raise TargetError(f"POST {path} ({skill_dir.name}): HTTP {status}: {short(answer)}")
        if not isinstance(answer, Mapping) or answer.get("status") not in ("queued", "running"):
            self.install_flow = "synchronous"
            return  # installed once it answers
        self.install_flow = "asynchronous"
        request = answer.get("request_id")
        if not isinstance(request, str | int):
            self._anomaly("POST", path, status, answer, "an asynchronous install without a request_id")
            return
        self._follow_install(skill_dir.name, str(request))

    def _follow_install(self, skill: str, request: str) -> None:
        """Wait for an asynchronous install to succeed or fail; a refusal names the server's reason."""
        path = f"/v1/skill-packages/{request}"
        deadline = time.monotonic() + self.options.settle_timeout_sec
        pause = 0.02
        while True:
            status, answer = self._call("GET", path)
            state = answer.get("status") if isinstance(answer, Mapping) else None
            if status != 200 or state not in INSTALL_STATES:
                self._anomaly("GET", path, status, answer, "the install's outcome cannot be followed")
                return
            if state == "succeeded":
                return
            if state == "failed":
                reason = answer.get("error") or "no reason given"
                raise base.PackageRefused(
                    f"install of skill {skill!r} failed on the server: {one_line(reason)}"
                )
            if time.monotonic() >= deadline:
                raise TargetError(
                    f"install of skill {skill!r} still {state!r} after {self.options.settle_timeout_sec:g} s"
                )
            time.sleep(pause)
            pause = min(pause * 1.5, 0.5)

    def reply(self, text: str, interaction_id: int | None) -> ReplyResult:
        if interaction_id is None:
            interaction_id = self._pending_id()
        path = f"/v1/jobs/{self._id}/interaction/reply"
        body = {"interaction_id": interaction_id, "response": text, "idempotency_key": uuid.uuid4().hex}
        status, answer = self._call("POST", path, json=body, retry_reset=True)  # idempotency key: safe
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
            self._anomaly("POST", path, status, answer, "a reply refused otherwise than 409")
            return ReplyResult(False, error_code(answer))
        raise TargetError(f"POST {path}: HTTP {status}: {short(answer)}")

    def _pending_id(self) -> int:
        """The pending interaction's id: from the pending, else the status; 0 when neither says."""
        pending, _known = self._pending()
        candidate = pending.get("interaction_id") if pending else None
        if not is_int(candidate):
            candidate = self._status().get("pending_interaction_id")
        return int(candidate) if is_int(candidate) else 0

    def cancel(self) -> bool:
        path = f"/v1/jobs/{self._id}/cancel"
        status, answer = self._call("POST", path, json={})
        if status != 200 or not isinstance(answer, Mapping):
            self._anomaly("POST", path, status, answer, "a cancel not answered with 200")
            return False
        return bool(answer.get("accepted"))

    def advance_clock(self, seconds: float) -> None:
        if self.options.turngate_hooks:
            self._json("POST", "/v1/_turngate/clock/advance", {"seconds": seconds})
            return
        if not self._real_clock:
            raise TargetError(
                "an HTTP server's clock cannot be moved (turngate serve --test-hooks), nor was a short"
                " real session_timeout_sec sent (honours_session_timeout: in the target file)"
            )
        self._clock_elapsed += seconds
        if self._clock_elapsed < self._scenario_timeout or self._waiting_since is None:
            return  # still inside the timeout: what the server shows now is what it shows then
        self._wait_past_timeout(self._waiting_since)
        self._waiting_since = None  # this wait's deadline is spent; later advances add nothing

    def _wait_past_timeout(self, since: float) -> None:
        """Sleep until the short real timeout has passed, then give the server its grace to act."""
        due = since + self._real_timeout + 0.5
        while (left := due - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))
        grace = time.monotonic() + self.options.clock_grace_sec
        pause = 0.05
        while time.monotonic() < grace:
            status = self._status()
            if (
                status.get("status") != "waiting_user"
                or status.get("pending_interaction_id") != self._waiting_for
            ):
                return
            time.sleep(pause)
            pause = min(pause * 1.5, 0.5)

    def restart(self) -> None:
        if self.options.turngate_hooks:
            self._json("POST", "/v1/_turngate/restart")
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
        if status.get("status") == "waiting_user":
            waiting_for = status.get("pending_interaction_id")
            if self._waiting_since is None or waiting_for != self._waiting_for:
                self._waiting_since, self._waiting_for = time.monotonic(), waiting_for
                self._clock_elapsed = 0.0
        else:
            self._waiting_since = None

    def fill_slots(self) -> None:
        """Hold every free slot: turngate serve --test-hooks by its hook; any other server with the
        target file's ``slots`` by filler jobs whose engines sleep until `free_slots` cancels them.
        The fillers are started while the case's run waits (holding no slot, or the case's own
        slot_held check says otherwise), so as many as the server has slots are started, and those
        that start within FILLER_WAIT_SEC hold every slot that was free."""
        if self.options.turngate_hooks:
            self._json("POST", "/v1/_turngate/slots/fill")
        else:
            slots = self.options.slots
            if slots is None:
                raise TargetError("slots cannot be held: the target file names no slots")
            fillers = self._start_fillers("holder", slots, hold_sec=self.options.settle_timeout_sec)
            if fillers is None:
                raise TargetError("slots cannot be held: the server refused a filler job")
            self._fillers = fillers
            self._running(fillers[0], until_all=True)
        self._slots_filled = True

    def free_slots(self) -> None:
        if self._fillers is not None:
            fillers, self._fillers = self._fillers, None
            self._stop_fillers(*fillers)
        elif self.options.turngate_hooks:
            self._json("POST", "/v1/_turngate/slots/free")
        self._slots_filled = False

    def _settled(self, status: Mapping[str, Any]) -> bool:
        state = status.get("status")
        if state in TERMINAL or (self._slots_filled and state == "queued"):  # waits for a slot held
            return True
        if state != "waiting_user":
            self._replied_to = None  # the job left the wait the reply answered: any wait now is new
            return False
        # A reply the server accepted but has not acted on yet still shows the old interaction.
        return self._replied_to is None or status.get("pending_interaction_id") != self._replied_to

    def close(self) -> None:
        """Cancel a job still holding the server (a waiting run may hold a slot), never raising."""
        # The case already has its outcome: a server that went away or misanswers now changes none.
        if self._fillers is not None:
            with contextlib.suppress(TargetError, TargetUnreachable):
                self.free_slots()
        if self._job is not None and self._last_status.get("status") not in TERMINAL:
            with contextlib.suppress(TargetError, TargetUnreachable):
                self._call("POST", f"/v1/jobs/{self._job}/cancel", json={})
        self._job = None
        self._client.close()

    # Observation -------------------------------------------------------------------------

    def observe(self) -> Observation:
        status = self._status()
        pending, pending_known = self._pending()
        code, answer = self._call("GET", f"/v1/jobs/{self._id}/result")
        result = answer.get("result") if code == 200 and isinstance(answer, Mapping) else None
        events = self._protocol_events()
        internals: Mapping[str, Any] = {}
        if self.options.turngate_hooks:
            internals = self._json("GET", f"/v1/_turngate/jobs/{self._id}/internals")
        decisions = list(internals.get("decisions", ()))
        completed = [event for event in events or () if event.get("type") == "conversation.completed"]
        reason_code = (
            decisions[-1].get("reason_code")
            if decisions
            else ((completed[-1].get("data") or {}).get("reason_code") if completed else None)
        )
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
        if self._events_source == "stream":
            extra["events_source"] = "stream"  # the history endpoint held something else
        if self._anomalies:
            extra["anomalies"] = list(self._anomalies)
            self._anomalies.clear()
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

    def _slot_held(self) -> bool | None:
        """Whether this run holds a slot, seen from outside: start as many filler jobs as the server
        has slots; if all of them start, this run holds none. None when slots are not observable.

        Each filler plays a case script that sleeps longer than the wait, so a started filler keeps
        its slot while the others are counted; all are canceled afterwards. While fill_slots holds the
        free slots with fillers of its own, those are counted instead: all running, the run holds none.
        """
        setup, slots = self._setup, self.options.slots
        if setup is None or slots is None or not setup.observes_slots:
            return None
        if self._fillers is not None:
            started = self._running(self._fillers[0], until_all=False)
            return False if started == slots else (True if started == slots - 1 else None)
        fillers = self._start_fillers("filler", slots, hold_sec=FILLER_WAIT_SEC + 5)
        if fillers is None:
            return None
        try:
            started = self._running(fillers[0], until_all=True)
            return False if started == slots else (True if started == slots - 1 else None)
        finally:
            self._stop_fillers(*fillers)

    def _start_fillers(
        self, name: str, count: int, *, hold_sec: float
    ) -> tuple[list[str], list[Path]] | None:
        """``count`` auto jobs of this case's skill whose engine sleeps ``hold_sec`` (holding a slot
        once started); None when the server refuses one (kept as an anomaly; those started are stopped)."""
        setup = self._setup
        assert setup is not None
        fillers: list[str] = []
        scripts: list[Path] = []
        for index in range(count):
            case = f"{setup.case_id}__{name}{index}"
            script = self.options.scripts_dir / f"{case}.yaml"
            turns = [{"steps": [{"sleep": hold_sec}, {"say": '{"greeting": "Hi", "__SKILL_DONE__": true}'}]}]
            script.write_text(json.dumps({"case": case, "turns": turns}), encoding="utf-8")
            scripts.append(script)
            request: dict[str, Any] = {
                **self.options.extra_request,
                "skill_id": setup.skill_dir.name,
                "engine": setup.engine,
                "input": {"case": f"tg-case-{case}"},
                "parameter": {},
                "runtime_options": {"execution_mode": "auto", "no_cache": True},
            }
            if setup.engine in self.options.models:
                request["model"] = self.options.models[setup.engine]
            status, answer = self._call("POST", "/v1/jobs", json=request)
            if status != 200 or not isinstance(answer, Mapping) or "request_id" not in answer:
                self._anomaly("POST", "/v1/jobs", status, answer, "a slot filler job was refused")
                self._stop_fillers(fillers, scripts)
                return None
            fillers.append(str(answer["request_id"]))
        return fillers, scripts

    def _running(self, fillers: list[str], *, until_all: bool) -> int:
        """How many fillers have started (hold a slot); ``until_all``: give them FILLER_WAIT_SEC to."""
        deadline = time.monotonic() + (FILLER_WAIT_SEC if until_all else 0.0)
        while True:
            started = sum(self._filler_state(job) not in ("queued", None) for job in fillers)
            if started == len(fillers) or time.monotonic() >= deadline:
                return started
            time.sleep(0.1)

    def _stop_fillers(self, fillers: list[str], scripts: list[Path]) -> None:
        """Cancel the fillers and wait, bounded, for them to let their slots go."""
        for job in fillers:
            # Stopping is tidying up: a server that went away or misanswers has no slot to give back.
            with contextlib.suppress(TargetError, TargetUnreachable):
                self._call("POST", f"/v1/jobs/{job}/cancel", json={})
        for job in fillers:
            until = time.monotonic() + FILLER_WAIT_SEC
            while self._filler_state(job) not in TERMINAL and time.monotonic() < until:
                time.sleep(0.1)
        for script in scripts:
            script.unlink(missing_ok=True)

    def _filler_state(self, job: str) -> str | None:
        status, answer = self._call("GET", f"/v1/jobs/{job}")
        state = answer.get("status") if status == 200 and isinstance(answer, Mapping) else None
        return str(state) if isinstance(state, str) else None

    def _patch_from_call_log(self) -> str | None:
        """A server that shows no patch: the patched SKILL.md its engine read (see callpatch.py)."""
        log, setup = self.options.call_log, self._setup
        if log is None or setup is None or not log.exists():
            return None
        with log.open("rb") as stream:
            stream.seek(self._log_start)
            lines = stream.read().decode("utf-8", "replace").splitlines()
        calls = []
        for line in lines:
            with contextlib.suppress(ValueError):
                call = json.loads(line)
                if isinstance(call, Mapping) and call.get("case") == setup.case_id:
                    calls.append(call)
        patch = patch_from_calls(calls, setup.skill_dir, self.options.patch_modules)
        self._seen_patch = patch or self._seen_patch
        return self._seen_patch

    def _audit_marker(self, attempt: int) -> bool | None:
        """The audit record's done-marker classification of one attempt, from the target file's source."""
        source = self.options.audit_source
        assert source is not None
        path = source.path.format(job=self._id, attempt=attempt)
        status, answer = self._call("GET", path)
        return source.marker_in(answer) if status == 200 else None

    def _status(self) -> Mapping[str, Any]:
        status = self._json("GET", f"/v1/jobs/{self._id}")
        if not isinstance(status, Mapping) or status.get("status") not in STATES:
            raise TargetError(f"GET /v1/jobs/{self._id}: no known status in {short(status)}")
        self._last_status = status
        return status

    def _pending(self) -> tuple[Mapping[str, Any] | None, bool]:
        """The pending interaction, and whether the server said (False: it cannot tell us)."""
        path = f"/v1/jobs/{self._id}/interaction/pending"
        status, answer = self._call("GET", path)
        if status == 200:
            pending = answer.get("pending") if isinstance(answer, Mapping) else None
            return (pending if isinstance(pending, Mapping) else None), True
        if status in (400, 404, 409) and self._last_status.get("status") != "waiting_user":
            # An auto job (Skill-Runner answers 400) or a finished one: there is no pending.
            return None, True
        self._anomaly("GET", path, status, answer, "no pending could be read")
        return None, False

    # Protocol events ---------------------------------------------------------------------

    def _protocol_events(self) -> list[Mapping[str, Any]] | None:
        """The run's FCMP events from wherever this server keeps them; None when nowhere."""
        source = self._events_source or self.options.events_source
        if source == "none":
            return None
        if source in ("auto", "history"):
            history = self._history()
            if history is not None and (source == "history" or any(map(is_fcmp, history))):
                self._events_source = "history"
                return with_type(history)
            if source == "history":
                return None
            if history is not None and not history and not self.options.events_stream:
                return []
        stream = self._stream_events() if self.options.events_stream else None
        if stream is None:
            return None
        self._events_source = "stream"
        # A server that streams each attempt's messages afresh (seq restarting per attempt) shows
        # only the latest attempt; what earlier observations saw is kept, each message once.
        for event in stream:
            meta = event.get("meta")
            attempt = meta.get("attempt") if isinstance(meta, Mapping) else None
            self._streamed.setdefault((attempt, event.get("seq"), event.get("type")), event)
        return list(self._streamed.values())

    def _history(self) -> list[Mapping[str, Any]] | None:
        path = f"/v1/jobs/{self._id}/events/history"
        status, answer = self._call("GET", path)
        events = answer.get("events") if isinstance(answer, Mapping) else answer
        if status != 200 or not isinstance(events, list):
            self._anomaly("GET", path, status, answer, "no list of events")
            return None
        return in_seq_order([event for event in events if isinstance(event, Mapping)])

    def _stream_events(self) -> list[Mapping[str, Any]] | None:
        """The ``chat_event`` frames of GET /events, read up to its ``end`` (the job has settled)."""
        path = f"/v1/jobs/{self._id}/events"
        deadline = time.monotonic() + self.options.request_timeout_sec
        events: list[Mapping[str, Any]] = []
        try:
            with httpx_sse.connect_sse(self._client, "GET", path) as source:
                if source.response.status_code != 200:
                    self._anomaly("GET", path, source.response.status_code, None, "no events stream")
                    return None
                for frame in source.iter_sse():
                    if frame.event == "end" or time.monotonic() >= deadline:
                        break
                    if frame.event != "chat_event" or len(events) >= MAX_STREAM_EVENTS:
                        continue
                    try:
                        event = json.loads(frame.data)
                    except ValueError:
                        self._anomaly("GET", path, 200, frame.data, "a chat_event that is not JSON")
                        continue
                    if isinstance(event, Mapping) and isinstance(event.get("type"), str):
                        events.append(event)
        except httpx_sse.SSEError as error:
            self._anomaly("GET", path, 200, str(error), "not an events stream")
            return None
        except httpx.HTTPError as error:
            self._anomaly("GET", path, None, str(error), "the events stream broke")
        return events

    def _follow_stream(self, deadline: float) -> bool:
        """Read GET /events until ``end`` or a drop; False when the server has no usable stream."""
        path = f"/v1/jobs/{self._id}/events"
        remaining = max(0.1, min(deadline - time.monotonic(), self.options.request_timeout_sec))
        try:
            with httpx_sse.connect_sse(self._client, "GET", path, timeout=remaining) as source:
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

    # HTTP --------------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        files: Mapping[str, Any] | None = None,
        retry_reset: bool | None = None,
    ) -> tuple[int, Any]:
        """One request, retried on transient failures; (status, decoded JSON answer or None).

        A connection refused is retried (nothing was sent); a reset mid-call is retried for GETs
        and where ``retry_reset`` says the call is idempotent; 429/502/503 are retried after the
        server's Retry-After or a growing pause.
        """
        retry_reset = method == "GET" if retry_reset is None else retry_reset
        attempt = 0
        while True:
            try:
                response = self._client.request(method, path, json=json, files=files)
            except httpx.ConnectError as error:
                if attempt < min(self.options.retries, 2):
                    attempt += 1
                    time.sleep(backoff(attempt))
                    continue
                raise TargetUnreachable(
                    f"{self.options.base_url}: nothing answers ({error}); is the server running?"
                ) from None
            except httpx.TimeoutException:
                raise TargetError(
                    f"{method} {path}: no answer within {self.options.request_timeout_sec:g} s"
                ) from None
            except httpx.TransportError as error:  # reset, closed mid-answer
                if retry_reset and attempt < self.options.retries:
                    attempt += 1
                    time.sleep(backoff(attempt))
                    continue
                raise TargetError(f"{method} {path}: {type(error).__name__}: {error}") from None
            if response.status_code in TRANSIENT_STATUS and attempt < self.options.retries:
                attempt += 1
                time.sleep(retry_after(response) or backoff(attempt))
                continue
            break
        if response.status_code in (401, 403):
            raise TargetError(
                f"{method} {path}: HTTP {response.status_code}: the server wants credentials"
                " (auth: or headers: in the target file)"
            )
        raw = response.content
        try:
            return response.status_code, response.json() if raw else None
        except ValueError:
            raise TargetError(
                f"{method} {path}: HTTP {response.status_code}, the answer is not JSON: {raw[:120]!r}"
            ) from None

    def _json(self, method: str, path: str, payload: Any = None) -> Any:
        if payload is None and method == "POST":
            payload = {}
        status, answer = self._call(method, path, json=payload)
        if status != 200:
            raise TargetError(f"{method} {path}: HTTP {status}: {short(answer)}")
        return answer

    def _anomaly(self, method: str, path: str, status: int | None, answer: Any, what: str) -> None:
        """An answer the job API does not foresee: kept as evidence in the observation, bounded."""
        if len(self._anomalies) < MAX_ANOMALIES:
            self._anomalies.append(
                {"request": f"{method} {path}", "status": status, "answer": short(answer), "note": what}
            )

    @property
    def _id(self) -> str:
        if self._job is None:
            raise TargetError("no job started")
        return self._job


def check_job_api(options: HttpOptions) -> None:
    """Refuse a server that is down or does not speak the job API, before any case runs."""
    connector = HttpConnector(options)
    try:
        status, answer = connector._call("GET", "/v1/jobs/turngate-probe-no-such-job")
    finally:
        connector.close()
    if status != 404:
        raise TargetError(
            f"{options.base_url}: GET /v1/jobs/<unknown id> answered HTTP {status}, not 404:"
            f" is this the job API? ({short(answer)})"
        )


SKILL_GEMINI_SETTINGS: Final = "assets/gemini_settings.json"


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


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


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


def attempts_from_events(events: Sequence[Mapping[str, Any]] | None) -> int | None:
    """The highest ``meta.attempt``; None when the events carry none (the target cannot show it)."""
    numbers = [
        int(meta["attempt"])
        for event in events or ()
        if isinstance(meta := event.get("meta"), Mapping) and is_int(meta.get("attempt"))
    ]
    return max(numbers) if numbers else None


# The fields of a history row (the in-process connector's); a row without one cannot show it.
HISTORY_FIELDS: Final = ("interaction_id", "prompt", "response", "automatic", "timestamp")


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


def backoff(attempt: int) -> float:
    return float(min(0.1 * 2**attempt, 5.0))


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return min(max(float(value), 0.0), 10.0)
    except ValueError:
        return None


def error_code(answer: Any) -> str | None:
    """``error.code``, ``code`` or FastAPI's ``detail.code``."""
    if isinstance(answer, Mapping):
        for holder in (answer.get("error"), answer, answer.get("detail")):
            if isinstance(holder, Mapping) and isinstance(holder.get("code"), str):
                return str(holder["code"])
    return None


def error_message(answer: Any) -> str:
    if isinstance(answer, Mapping):
        for holder in (answer.get("error"), answer.get("detail"), answer):
            if isinstance(holder, Mapping) and isinstance(holder.get("message"), str):
                return one_line(holder["message"])
            if isinstance(holder, str):
                return one_line(holder)
    return short(answer)


def one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return short(" ".join(text.split()))


def short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 200 else text[:200] + "…"
