"""One turn, from the engine's bytes to the gate's decision: observations -> evidence -> decision.

Reading, marker detection, the output check, the hint and the process outcome
are each computed by their own module; this one only wires them in the order
the design fixes (lifecycle first, then output validation) and keeps every
intermediate value, so a report can show why the gate decided as it did.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turngate.engines import readers
from turngate.engines.readers import Transcript
from turngate.implementations.reference import gate, outcome
from turngate.implementations.reference.gate import Decision, Mode, TurnEvidence
from turngate.implementations.reference.hints import HintReading, scan_hints
from turngate.implementations.reference.marker import MarkerEvidence, marker_evidence
from turngate.implementations.reference.output import OutputCheck, check_output
from turngate.implementations.reference.pending import Pending, build_pending


@dataclass(frozen=True, slots=True)
class TurnInput:
    """What the orchestrator knows about a turn besides the engine's bytes."""

    engine: str
    mode: Mode
    attempt_number: int
    max_attempt: int | None
    output_schema: Mapping[str, Any] | None
    required_artifacts: Sequence[str] = ()
    present_artifacts: Collection[str] = ()
    needs_session_id: bool = False
    soft_completion_reading: str = gate.READING_BODY
    reader_options: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class TurnAssessment:
    """Every intermediate value of one turn's judgement."""

    transcript: Transcript
    final_message: str | None
    marker: MarkerEvidence
    hint: HintReading | None
    output: OutputCheck
    process: gate.ProcessOutcome
    evidence: TurnEvidence
    decision: Decision
    pending: Pending | None  # built exactly when the decision is waiting_user

    @property
    def warnings(self) -> tuple[str, ...]:
        """The decision's warnings, then the output check's, once each."""
        return tuple(dict.fromkeys(self.decision.warnings + self.output.warnings))


def assess(turn: TurnInput, stdout: bytes, stderr: bytes, end: outcome.ProcessEnd) -> TurnAssessment:
    transcript = readers.read(turn.engine, stdout, stderr, **dict(turn.reader_options or {}))
    messages = transcript.assistant_messages()
    final_message = messages[-1] if messages else None
    marker = marker_evidence(transcript)
    hints = scan_hints(final_message or "")  # one pass: the hint, the output and the prompt share it
    hint = hints.last
    output = check_output(
        final_message,
        output_schema=turn.output_schema,
        required_artifacts=turn.required_artifacts,
        present_artifacts=turn.present_artifacts,
        hints=hints,
    )
    process = outcome.classify(transcript, end, needs_session_id=turn.needs_session_id)
    evidence = TurnEvidence(
        mode=turn.mode,
        marker_found=marker.found,
        output_valid=output.valid,
        output_problem=output.problem,
        process=process,
        attempt_number=turn.attempt_number,
        max_attempt=turn.max_attempt,
        soft_completion_allowed=gate.soft_completion_allowed(
            turn.soft_completion_reading, ask_user_signaled=hint is not None
        ),
    )
    decision = gate.decide(evidence)
    pending = None
    if decision.state == "waiting_user":
        pending = build_pending(attempt_number=turn.attempt_number, final_message=final_message, hints=hints)
    return TurnAssessment(
        transcript, final_message, marker, hint, output, process, evidence, decision, pending
    )
