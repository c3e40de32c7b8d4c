"""The probe's findings on what a server holds back: turngate's test hooks, its slots, its watchdog.

Each is seen from outside, by jobs of turngate's fake engines, never guessed from the server's name:

- ``turngate_hooks``: a finished probe job's internals asked of ``GET /v1/_turngate/jobs/{job}/internals``
  (a read; turngate serve answers it with --test-hooks, 404 without). The same job's engine takes
  BACKGROUND_SEC: a server that shows it ended as soon as it answered POST /v1/jobs runs engines
  before answering, and then neither slots nor the watchdog can be seen with jobs held;
- ``slots``: auto filler jobs whose engines sleep, started one at a time until one stays queued
  (`FILLER_WAIT_SEC`, as the HTTP connector's own slot fillers wait); the count before it, if every
  filler started before still holds its engine (one that ended, killed by a watchdog shorter than
  the count, makes the count "not found"). Bounded:
  all of at most ``most`` running is "at least most", and then nothing is written, because a
  ``slots`` below the server's would make every filler start and the connector read "the run holds
  no slot" of a run that holds one;
- ``turn_timeout_sec``: one auto job whose engine sleeps past the bound (a turn that does not end
  within it; a sleep rather than a hang, so that an engine the server fails to kill still ends), watched
  for at most ``wait_sec``; a failure with a timeout code is the server's watchdog, written rounded
  up with a margin (`safe_turn_timeout`).

Every job is canceled by the step that started it, and kept in the probe's ledger to be checked again
at the probe's end. A step the server refuses is a "not found" finding, never the probe's failure.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from turngate.engines.fake.script import remove_compiled
from turngate.judge.connectors.http import HttpConnector
from turngate.judge.connectors.http_jobs import TERMINAL, job_request
from turngate.judge.connectors.http_options import HttpOptions
from turngate.judge.connectors.http_slots import FILLER_RUNTIME, FILLER_WAIT_SEC
from turngate.judge.connectors.http_transport import TargetError, Transport, error_code, short
from turngate.judge.probe_jobs import (
    DONE,
    PROBE_SKILL,
    Ledger,
    case_setup,
    job_state,
    write_script,
)
from turngate.protocol.connector import CaseSkipped, TargetUnreachable

HOOKS_PATH: Final = "/v1/_turngate/jobs/{job}/internals"
# The first look's engine takes this long: a server that shows its job ended as soon as it answered
# POST /v1/jobs ran the engine first.
BACKGROUND_SEC: Final = 2.0
SLOTS_MOST: Final = 8
# A filler's engine sleeps this long unless canceled (it is, as soon as the count is known).
FILLER_SLEEP_SEC: Final = 120.0
WATCHDOG_WAIT_SEC: Final = 150.0
# The hung engine sleeps this much past the probe's wait: it outlives the wait, and still ends.
HUNG_EXTRA_SEC: Final = 60.0
POLL_SEC: Final = 0.25
# The room a case is given past the watchdog to see the job fail (settle_timeout_sec, when the
# default 300 s is not more than the watchdog).
SETTLE_ROOM_SEC: Final = 60
REFUSED: Final = (CaseSkipped, TargetError, TargetUnreachable)


@dataclass(frozen=True, slots=True)
class Limit:
    """One finding: its printed line, the target file's fields it gives (none: not found), and, when
    not found, why, in the words of the closing list of what the probe could not find."""

    line: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    missing: str | None = None

    @classmethod
    def not_found(cls, what: str, why: str) -> Limit:
        return cls(f"{what}: not found: {why}", missing=f"not found: {why}")


@dataclass(frozen=True, slots=True)
class FirstLook:
    """What one short job shows: whether the hooks answer, and whether the server runs a job's engine
    in the background (answering POST /v1/jobs at once), which holding a server with jobs needs."""

    hooks: Limit
    background: bool
    why_not: str = ""  # when not in the background: what was seen


def first_look(
    options: HttpOptions, skill: Path, engine: str, scripts: Path, workdir: Path, ledger: Ledger
) -> FirstLook:
    """An auto job whose engine takes BACKGROUND_SEC: already ended when POST /v1/jobs has answered,
    the server ran the engine before answering (no job of it can be held while another starts);
    then its internals, asked of turngate serve's test hooks (a read)."""
    case = f"{PROBE_SKILL}__hooks__{engine}"
    script = write_script(scripts, case, [{"steps": [{"sleep": BACKGROUND_SEC}, {"say": DONE}]}])
    connector = HttpConnector(options)
    path = HOOKS_PATH.format(job="<job>")
    try:
        connector.start(case_setup(skill, engine, case, "auto", workdir))
        ledger.add(connector.job)
        state = connector.status().get("status")
        connector.settle()
        job = connector.job
        try:
            status, answer = connector.transport.call("GET", HOOKS_PATH.format(job=job))
        except TargetError as error:  # e.g. a 404 that is not JSON: no hooks there
            status, answer = None, str(error)
    except REFUSED as error:
        why = f"the probe job did not run: {error}"
        return FirstLook(Limit(f"turngate test hooks: not found: {why}", missing=why), False, why)
    finally:
        connector.close()
        remove_compiled(str(script))
    background = state not in TERMINAL
    why_not = "" if background else (
        f"a job whose engine takes {BACKGROUND_SEC:g} s was already {state} when POST /v1/jobs answered:"
        " the server runs engines before answering, so no job can be held"
    )  # fmt: skip
    if status == 200 and isinstance(answer, Mapping) and "slot_held" in answer:
        line = f"turngate test hooks: yes (GET {path} answers): written as turngate_hooks: true"
        return FirstLook(Limit(line, {"turngate_hooks": True}), background, why_not)
    if status is None:
        why = str(answer)
    else:
        why = f"GET {path} answers HTTP {status}" + (f" {error_code(answer)}" if error_code(answer) else "")
    return FirstLook(Limit(f"turngate test hooks: no ({why})", missing=f"no ({why})"), background, why_not)


def count_slots(
    options: HttpOptions,
    skill: Path,
    engine: str,
    scripts: Path,
    workdir: Path,
    ledger: Ledger,
    *,
    most: int = SLOTS_MOST,
) -> Limit:
    """The runs the server lets hold an engine at once: filler jobs started one at a time until one
    stays queued. Every filler is canceled before this returns (or the probe's ledger names it)."""
    connector = HttpConnector(options)
    fillers = Ledger()
    written: list[Path] = []
    transport = connector.transport
    try:
        for index in range(most):
            case = f"{PROBE_SKILL}__slots{index}__{engine}"
            turns = [{"steps": [{"sleep": FILLER_SLEEP_SEC}, {"say": DONE}]}]
            written.append(write_script(scripts, case, turns))
            setup = case_setup(skill, engine, case, "auto", workdir)
            if index == 0:
                connector.start(setup)  # installs the probe skill, once
                job = connector.job
            else:
                job = _post_filler(transport, options, setup, case, index)
            ledger.add(job)
            fillers.add(job)
            state = _past_queue(transport, job)
            # Every earlier filler must still hold its engine, or a slot came free during the count.
            ended = [job for job in fillers.jobs[:-1] if job_state(transport, job) != "running"]
            if ended:
                why = (
                    f"{len(ended)} of the {index} filler jobs started before ended while the count went"
                    " on (a watchdog shorter than the count, or a filler's engine failed)"
                )
                return Limit.not_found("slots", why)
            if state == "running":
                continue
            if state != "queued":
                why = f"filler job {index + 1} was {state or 'unknown'} instead of running or queued"
                return Limit.not_found("slots", why)
            if index == 0:
                why = "the first filler job stayed queued (is another job holding the server?)"
                return Limit.not_found("slots", why)
            return Limit(
                f"slots: {index} (filler job {index + 1} queued while {index} held an engine): written as"
                f" slots: {index}",
                {"slots": index},
            )
        why = f"at least {most} ({most} filler jobs held an engine at once; the probe stops there)"
        return Limit(
            f"slots: {why}: not written, since fewer slots than the server has would misread a run's slot",
            missing=f"{why}: write the server's count by hand",
        )
    except REFUSED as error:
        why = f"a filler job did not run: {error}"
        return Limit.not_found("slots", why)
    finally:
        fillers.tidy(options)
        connector.close()
        for script in written:
            remove_compiled(str(script))


def _post_filler(transport: Transport, options: HttpOptions, setup: Any, case: str, index: int) -> str:
    request = job_request(options, setup, case, FILLER_RUNTIME)
    status, answer = transport.call("POST", "/v1/jobs", json=request)
    if status != 200 or not isinstance(answer, Mapping) or "request_id" not in answer:
        raise TargetError(f"filler job {index + 1}: POST /v1/jobs: HTTP {status}: {short(answer)}")
    return str(answer["request_id"])


def _past_queue(transport: Transport, job: str) -> str | None:
    """The job's state once it left the queue, or "queued" if it did not within FILLER_WAIT_SEC."""
    deadline = time.monotonic() + FILLER_WAIT_SEC
    while True:
        state = job_state(transport, job)
        if state != "queued" or time.monotonic() >= deadline:
            return state
        time.sleep(0.1)


def find_watchdog(
    options: HttpOptions,
    skill: Path,
    engine: str,
    scripts: Path,
    workdir: Path,
    ledger: Ledger,
    *,
    wait_sec: float = WATCHDOG_WAIT_SEC,
) -> Limit:
    """The server's own engine watchdog: an auto job whose engine does not end its turn, watched for
    at most ``wait_sec`` seconds, then canceled."""
    watched = watch_hung_job(options, skill, engine, scripts, workdir, ledger, wait_sec=wait_sec)
    if isinstance(watched, Limit):
        return watched
    value = safe_turn_timeout(watched.took)
    fields: dict[str, Any] = {"turn_timeout_sec": value}
    settle = ""
    if value >= options.settle_timeout_sec:  # a hung engine's case must be able to wait past it
        fields["settle_timeout_sec"] = value + SETTLE_ROOM_SEC
        settle = f" and settle_timeout_sec: {value + SETTLE_ROOM_SEC}"
    return Limit(
        f"engine watchdog: a hung engine's job failed {watched.code} after {watched.took:.1f} s: written as"
        f" turn_timeout_sec: {value}{settle}",
        fields,
    )


@dataclass(frozen=True, slots=True)
class Watched:
    """A hung engine's job that failed by a timeout: its error code, and the seconds it ran."""

    code: str | None
    took: float


def watch_hung_job(
    options: HttpOptions,
    skill: Path,
    engine: str,
    scripts: Path,
    workdir: Path,
    ledger: Ledger,
    *,
    wait_sec: float,
    runtime: Mapping[str, Any] | None = None,
    label: str = "engine watchdog",
) -> Watched | Limit:
    """An auto job whose engine does not end its turn (``runtime`` added to the case's), watched for at
    most ``wait_sec`` seconds: how it failed by a timeout, or the finding that it did not."""
    case = f"{PROBE_SKILL}__watchdog__{engine}"
    turns = [{"steps": [{"sleep": wait_sec + HUNG_EXTRA_SEC}, {"say": DONE}]}]
    script = write_script(scripts, case, turns)
    connector = HttpConnector(options)
    none_within = f"no watchdog within {wait_sec:g} s"
    try:
        connector.start(case_setup(skill, engine, case, "auto", workdir, runtime))
        ledger.add(connector.job)
        posted = time.monotonic()
        deadline = posted + wait_sec
        running_since: float | None = None
        while True:
            status = connector.status()
            seen = time.monotonic()
            state = status.get("status")
            if state == "running" and running_since is None:
                running_since = seen
            if state in TERMINAL:
                break
            if seen >= deadline:
                return Limit(
                    f"{label}: none within {wait_sec:g} s (a hung engine's job was still {state}):"
                    f" {'turn_timeout_sec' if label == 'engine watchdog' else 'nothing'} written",
                    missing=none_within,
                )
            time.sleep(min(POLL_SEC, deadline - seen))
    except REFUSED as error:
        why = f"the hung engine's job did not run: {error}"
        return Limit.not_found(label, why)
    finally:
        connector.close()
        remove_compiled(str(script))
    took = seen - (running_since if running_since is not None else posted)
    code = error_code(status) or None
    if state != "failed" or not _is_timeout(code, status.get("error")):
        ended = f"{state} ({code or 'no error code'}) after {took:.1f} s"
        why = f"the hung engine's job ended {ended}, not by a timeout"
        return Limit.not_found(label, why)
    return Watched(code, took)


def safe_turn_timeout(observed_sec: float) -> int:
    """The observed watchdog rounded up to whole seconds past a margin of 10% (at least 1 s).

    The observation runs from the first poll that saw the job running to the first that saw it
    failed: either end may be a poll late (POLL_SEC), and a server busy with cases side by side
    starts and kills engines later than an idle one. The value is an upper bound of the watchdog a
    case meets, never below it."""
    return math.ceil(observed_sec + max(1.0, observed_sec * 0.1))


def _is_timeout(code: str | None, error: Any) -> bool:
    """A failure by a timeout: its code says so (TIMEOUT, ENGINE_TIMEOUT...), or, without a code,
    its error message."""
    if code:
        return "TIMEOUT" in code.upper()
    message = error.get("message") if isinstance(error, Mapping) else error
    text = message.lower() if isinstance(message, str) else ""
    return "timeout" in text or "timed out" in text
