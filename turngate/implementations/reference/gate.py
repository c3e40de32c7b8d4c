"""The gate: a pure function from one turn's evidence to the run's decision.

It is the design's decision table (000, Architecture Notes 1) and nothing else:

    process interrupted                    -> failed (the process's error code)
    auto:        output valid              -> succeeded   (marker optional, Decision 2)
                 output invalid            -> failed      (max_attempt ignored, Decision 6)
    interactive: marker + output valid     -> succeeded   (Decision 1, strong evidence)
                 marker + output invalid   -> failed      (Decision 8: never waiting_user)
                 no marker + output valid  -> succeeded + INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER
                 neither, attempt >= max   -> failed INTERACTIVE_MAX_ATTEMPT_EXCEEDED (Decision 6)
                 neither                   -> waiting_user

Ask-user hints are not an input (Decision 4.1's body). The one place a reading
of the spec enters is ``soft_completion_allowed``, computed outside by
``soft_completion_allowed()`` from the named reading of Decision 4.1; under the
default reading it is always True.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Mode = Literal["auto", "interactive"]
GateState = Literal["succeeded", "failed", "waiting_user"]

# Stable codes (HTTP_API.md "Stable codes" and FCMP reason codes).
DONE_MARKER_FOUND: Final = "DONE_MARKER_FOUND"
OUTPUT_VALIDATED: Final = "OUTPUT_VALIDATED"
INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER: Final = "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"
INTERACTIVE_MAX_ATTEMPT_EXCEEDED: Final = "INTERACTIVE_MAX_ATTEMPT_EXCEEDED"
# turngate's own reason codes where the spec names none.
WAITING_FOR_USER: Final = "WAITING_FOR_USER"
PROCESS_INTERRUPTED: Final = "PROCESS_INTERRUPTED"
OUTPUT_INVALID: Final = "OUTPUT_INVALID"

# Decision 4.1: its heading ("soft completion MUST exclude ask_user-signaled
# turns") contradicts its body ("hints MUST NOT be used as lifecycle gate
# predicates"). Both readings are named; the default follows the body.
READING_BODY: Final = "decision-4.1-body"
READING_HEADING: Final = "decision-4.1-heading"
SOFT_COMPLETION_READINGS: Final = (READING_BODY, READING_HEADING)


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How the engine process ended this turn; ``error_code`` is set exactly when not ``ok``."""

    ok: bool
    error_code: str | None = None
    message: str = ""

    def __post_init__(self) -> None:
        if self.ok == (self.error_code is not None):
            raise ValueError(f"ProcessOutcome: ok={self.ok} needs error_code {'None' if self.ok else 'set'}")


PROCESS_OK: Final = ProcessOutcome(ok=True)


@dataclass(frozen=True, slots=True)
class TurnEvidence:
    """Everything the gate may look at, and nothing more."""

    mode: Mode
    marker_found: bool
    output_valid: bool
    output_problem: str | None  # why the output is invalid (a stable code), None when valid
    process: ProcessOutcome
    attempt_number: int
    max_attempt: int | None
    soft_completion_allowed: bool = True

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "interactive"):
            raise ValueError(f"TurnEvidence.mode: {self.mode!r}: must be 'auto' or 'interactive'")
        if self.attempt_number < 1:
            raise ValueError(f"TurnEvidence.attempt_number: {self.attempt_number!r}: must be >= 1")
        if self.max_attempt is not None and self.max_attempt < 1:
            raise ValueError(f"TurnEvidence.max_attempt: {self.max_attempt!r}: must be >= 1 or None")
        if self.output_valid != (self.output_problem is None):
            raise ValueError("TurnEvidence: output_problem must be set exactly when the output is invalid")


@dataclass(frozen=True, slots=True)
class Decision:
    """The gate's answer. ``rule`` names the row of the table that fired, for reports."""

    state: GateState
    reason_code: str
    rule: str
    warnings: tuple[str, ...] = ()
    error_code: str | None = None


def decide(evidence: TurnEvidence) -> Decision:
    """Apply the decision table to one turn."""
    if not evidence.process.ok:
        return Decision(
            "failed", PROCESS_INTERRUPTED, "process-interrupted", error_code=evidence.process.error_code
        )
    if evidence.mode == "auto":
        return _decide_auto(evidence)
    return _decide_interactive(evidence)


def _decide_auto(evidence: TurnEvidence) -> Decision:
    # Decision 2: output validity is the terminal decision; the marker is optional and
    # max_attempt does not apply (Decision 6: interactive-only).
    if evidence.output_valid:
        return Decision("succeeded", OUTPUT_VALIDATED, "auto-output-valid")
    return Decision("failed", OUTPUT_INVALID, "auto-output-invalid", error_code=evidence.output_problem)


def _decide_interactive(evidence: TurnEvidence) -> Decision:
    if evidence.marker_found:
        # Strong evidence takes the complete path; Decision 8: an invalid output
        # there fails the run and never falls back to waiting_user.
        if evidence.output_valid:
            return Decision("succeeded", DONE_MARKER_FOUND, "interactive-marker-output-valid")
        return Decision(
            "failed", OUTPUT_INVALID, "interactive-marker-output-invalid", error_code=evidence.output_problem
        )
    if evidence.output_valid and evidence.soft_completion_allowed:
        return Decision(
            "succeeded",
            INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER,
            "interactive-soft-completion",
            warnings=(INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER,),
        )
    if evidence.max_attempt is not None and evidence.attempt_number >= evidence.max_attempt:
        return Decision(
            "failed",
            INTERACTIVE_MAX_ATTEMPT_EXCEEDED,
            "interactive-max-attempt-exceeded",
            error_code=INTERACTIVE_MAX_ATTEMPT_EXCEEDED,
        )
    return Decision("waiting_user", WAITING_FOR_USER, "interactive-no-evidence")


def soft_completion_allowed(reading: str, *, ask_user_signaled: bool) -> bool:
    """Whether soft evidence may complete this turn under the chosen reading of Decision 4.1."""
    match reading:
        case "decision-4.1-body":
            return True  # hints are never a gate predicate
        case "decision-4.1-heading":
            return not ask_user_signaled
    raise ValueError(f"soft completion reading: {reading!r}: known: {', '.join(SOFT_COMPLETION_READINGS)}")
