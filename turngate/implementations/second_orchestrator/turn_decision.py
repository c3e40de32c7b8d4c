"""The dual gate: one turn's evidence in, the run's next state out. Pure; no I/O.

auto: output validity decides (Decision 2). interactive: marker -> complete path, where an
invalid output fails and never waits (Decision 8); no marker + valid output -> soft success
with a warning (Decision 7); neither -> waiting_user unless attempt >= max_attempt
(Decision 6). An interrupted process fails whatever its text says: "进程未进入中断失败" is the
condition for waiting at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .bugs import bug
from .output_check import OutputCheck

SOFT_WARNING: Final = "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"
MAX_ATTEMPT_ERROR: Final = "INTERACTIVE_MAX_ATTEMPT_EXCEEDED"


@dataclass(frozen=True)
class Evidence:
    mode: str
    process_error: str | None  # None: the engine ran its turn to its own end
    marker: bool
    output: OutputCheck
    attempt: int  # 1-based number of this turn
    max_attempt: int | None


@dataclass(frozen=True)
class Decision:
    state: str  # succeeded | failed | waiting_user
    reason_code: str
    error_code: str | None = None
    warnings: tuple[str, ...] = ()
    data: dict[str, Any] | None = None


def _output_error(output: OutputCheck) -> str:
    return "OUTPUT_NOT_FOUND" if not output.found else "OUTPUT_SCHEMA_INVALID"


def _attempts_exhausted(ev: Evidence) -> bool:
    if ev.max_attempt is None:
        return False
    attempt = ev.attempt - 1 if bug("max_attempt_counts_replies") else ev.attempt
    if bug("max_attempt_gt"):
        return attempt > ev.max_attempt
    return attempt >= ev.max_attempt


def decide(ev: Evidence) -> Decision:
    if ev.process_error is not None and not (bug("crash_waits") and ev.mode == "interactive"):
        return Decision("failed", "ENGINE_FAILED", ev.process_error)
    out = ev.output
    if ev.mode != "interactive" and not bug("auto_waits_for_user"):
        if out.valid:
            return Decision("succeeded", "OUTPUT_VALIDATED", data=out.data)
        return Decision("failed", _output_error(out), _output_error(out))
    if ev.marker:
        if out.valid:
            return Decision("succeeded", "DONE_MARKER_FOUND", data=out.data)
        if not bug("marker_invalid_waits"):
            return Decision("failed", _output_error(out), _output_error(out))
    if bug("max_attempt_ignores_soft") and ev.mode == "interactive" and _attempts_exhausted(ev):
        return Decision("failed", MAX_ATTEMPT_ERROR, MAX_ATTEMPT_ERROR)
    if out.valid and not ev.marker:
        warnings = () if bug("soft_success_no_warning") else (SOFT_WARNING,)
        data = None if bug("soft_success_data_null") else out.data
        return Decision("succeeded", SOFT_WARNING, warnings=warnings, data=data)
    if ev.mode == "interactive" and _attempts_exhausted(ev):
        return Decision("failed", MAX_ATTEMPT_ERROR, MAX_ATTEMPT_ERROR)
    return Decision("waiting_user", "WAITING_FOR_USER")
