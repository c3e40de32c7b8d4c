"""How an engine process ended a turn, as the gate's ``ProcessOutcome``.

"Process interrupted" (Decision 1) is read from what the process did, not
from what it said it would do: killed by the turn watchdog, exited non-zero or
by a signal, reported a failed turn, or stopped writing before its own
end-of-turn signal. A resumable interactive run also needs the session id the
engine announces (codex ``thread.started``): without it no reply can be
delivered, so the turn fails with ``SESSION_RESUME_FAILED`` (ENGINE_FORMATS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from turngate.engines.readers import EngineError, RawLine, Transcript
from turngate.implementations.reference.gate import PROCESS_OK, ProcessOutcome

TIMEOUT: Final = "TIMEOUT"
AUTH_REQUIRED: Final = "AUTH_REQUIRED"
SESSION_RESUME_FAILED: Final = "SESSION_RESUME_FAILED"
# turngate's codes where the spec names none.
ENGINE_FAILED: Final = "ENGINE_FAILED"
ENGINE_TURN_INCOMPLETE: Final = "ENGINE_TURN_INCOMPLETE"
ENGINE_OUTPUT_LIMIT: Final = "ENGINE_OUTPUT_LIMIT"

# Why the orchestrator killed an engine; the first three end a turn, the others end a process.
KilledBy = Literal["watchdog", "cancel", "output_limit", "timeout", "ended", "shutdown", "lingered"]

# Words real engines print when credentials are missing or expired.
_AUTH_SIGNS: Final = ("OAUTH2_REQUIRED", "AUTH_REQUIRED", "Unauthorized", "not logged in", "login required")


@dataclass(frozen=True, slots=True)
class ProcessEnd:
    """What the watcher saw: exit code or signal, or None for a resident process still alive."""

    exit_code: int | None
    signal: int | None = None
    killed_by: Literal["watchdog", "cancel", "output_limit"] | None = None


def classify(transcript: Transcript, end: ProcessEnd, *, needs_session_id: bool) -> ProcessOutcome:
    """The turn's process outcome; the first matching rule wins, most specific first."""
    if end.killed_by == "watchdog":
        return ProcessOutcome(False, TIMEOUT, "the engine did not finish its turn in time and was killed")
    if end.killed_by == "cancel":
        return ProcessOutcome(False, "CANCELED_BY_USER", "the run was canceled")
    if end.killed_by == "output_limit":
        return ProcessOutcome(
            False,
            ENGINE_OUTPUT_LIMIT,
            "the engine wrote more than the per-turn output limit on one stream and was killed",
        )
    turn_end = transcript.turn_end()
    failed = (turn_end is not None and not turn_end.ok) or end.signal is not None or (end.exit_code or 0) != 0
    if failed:
        message = _failure_message(transcript, end)
        code = AUTH_REQUIRED if any(sign in message for sign in _AUTH_SIGNS) else ENGINE_FAILED
        return ProcessOutcome(False, code, message)
    if turn_end is None:
        return ProcessOutcome(
            False, ENGINE_TURN_INCOMPLETE, "the engine stream ended without its end-of-turn signal"
        )
    if needs_session_id and transcript.session_id() is None:
        return ProcessOutcome(
            False, SESSION_RESUME_FAILED, "the engine announced no session id to resume with"
        )
    return PROCESS_OK


def _failure_message(transcript: Transcript, end: ProcessEnd) -> str:
    errors = [
        event.message for event in transcript.events if isinstance(event, EngineError) and not event.transient
    ]
    stderr = [
        event.text for event in transcript.events if isinstance(event, RawLine) and event.stream == "stderr"
    ]
    how = f"killed by signal {end.signal}" if end.signal is not None else f"exit code {end.exit_code}"
    # the first line of stderr (a run of noise lines is one RawLine)
    detail = errors[-1] if errors else (stderr[0].split("\n", 1)[0].rstrip("\r") if stderr else "")
    return f"{how}: {detail}" if detail else how
