"""The gate as the spec writes it: one turn's evidence → the run's next state, each row with its words.

A pure decision table (no I/O), written from 000 Decisions 1–8, 001 and 003, not from the
reference's code. Each row names the sentence IDs (``turngate/judge/catalog/sentences.yaml``) that fix its
state, its error code and its warning, so a difference from a prediction can quote the sentence
whose rule broke. Where the spec says nothing (an auto run whose output is invalid, an interrupted
auto turn), the row's authority is ``reference``: reported, never a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from turngate.judge.model.evidence import EscapedReading, TurnEvidence

SoftReading = Literal["decision-4.1-body", "decision-4.1-heading"]
MarkerReading = Literal["marker-literal", "marker-lenient"]
ProcessReading = Literal["process-failure-fails", "evidence-first"]

MAX_ATTEMPT_CODE: Final = "INTERACTIVE_MAX_ATTEMPT_EXCEEDED"
SOFT_WARNING: Final = "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"

_LIFE: Final = "interactive-run-lifecycle"
_GATE: Final = f"{_LIFE}/completion-gate-by-mode"
REFERENCE: Final = "reference"
AUTO_TERMINAL: Final = "design/architecture#1-auto"


@dataclass(frozen=True, slots=True)
class Readings:
    """The named readings of the spec's ambiguous sentences the gate depends on."""

    soft: SoftReading = "decision-4.1-body"
    marker: MarkerReading = "marker-literal"
    escaped: EscapedReading = "quoted-in-reply-counts"
    # A turn that printed the marker and a valid output and then failed (engine-fault/failed-after-marker):
    # a failed process fails the run, or the evidence completes it (001's success rule names no process).
    process: ProcessReading = "process-failure-fails"

    @property
    def names(self) -> tuple[str, str, str, str]:
        return (self.soft, self.marker, self.escaped, self.process)


DEFAULT_READINGS: Final = Readings()


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The state a turn leads to, and the words behind each predicted field."""

    state: Literal["succeeded", "failed", "waiting_user"]
    rule: str  # the row of the table, for people
    state_by: str
    error_code: str | None = None
    error_by: str = REFERENCE  # the spec names only the codes below; others are the target's
    warnings: tuple[str, ...] = ()
    warnings_by: str = REFERENCE
    reason: str | None = None  # turngate's reason code (a convention)
    data_valid: bool = False  # the output is the run's result (data predicted)
    never_waits: str | None = None  # a sentence that forbids waiting where the state's name is open


# The sentence that keeps each kind of near miss from being the marker: a decision that hinges on
# leaving one out cites it (the rule an implementation that took the near miss would break).
STRIPPED_FIRST: Final = (
    "interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation#then"
)
NEAR_MISS_WORDS: Final = {
    "tool": "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and2",
    "think": "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and1",
    "stderr": "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and1",
    "user-echo": "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection#and1",
    "look-alike": "design/decision-3.1/unified-detector#1",
}


def decide(
    evidence: TurnEvidence,
    *,
    mode: str,
    attempt: int,
    max_attempt: int | None,
    output_valid: bool,
    readings: Readings = DEFAULT_READINGS,
    echoed_reply: bool = False,
    schema: Mapping[str, Any] | None = None,
) -> GateDecision:
    """One finished turn → the decision the spec requires. ``echoed_reply``: the user's reply that
    resumed this turn carried the marker text (an engine may echo it back)."""
    decision = _decide(evidence, mode, attempt, max_attempt, output_valid, readings)
    if decision.data_valid and evidence.valid_only_when_stripped(schema):
        # Valid only once the marker is removed: an implementation that validated it as a business
        # field fails this turn, against 003's rule, which the state cites.
        return replace(decision, state_by=STRIPPED_FIRST)
    near = evidence.near_miss(readings.marker) or ("user-echo" if echoed_reply else None)
    if mode == "interactive" and near is not None and decision.rule in ("no evidence", "soft evidence"):
        # Without the near miss taken for the marker this turn waits (or completes softly): an
        # implementation that took it would break the rule that excludes it, so the state cites it.
        return replace(decision, state_by=NEAR_MISS_WORDS[near])
    return decision


def _decide(
    evidence: TurnEvidence,
    mode: str,
    attempt: int,
    max_attempt: int | None,
    output_valid: bool,
    readings: Readings,
) -> GateDecision:
    if mode == "auto":
        return _auto(evidence, output_valid)
    marker = evidence.marker(readings.marker, quoted=readings.escaped == "quoted-in-reply-counts")
    if evidence.interrupted and readings.process == "evidence-first" and marker and output_valid:
        # 001 "interactive 模式成功判定" has no clause on the process; 004 judges evidence first
        return GateDecision(
            "succeeded",
            "strong evidence, then a failed process",
            f"{_GATE}/interactive-success#then",
            reason="DONE_MARKER_FOUND",
            data_valid=True,
        )
    if evidence.interrupted:
        # 001: waiting_user is entered only when the process "未进入中断失败": an interrupted process
        # is a failure, never a wait, whatever the reply said before it ended.
        return GateDecision(
            "failed",
            "interrupted",
            f"{_LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#when-interrupted",
        )
    if marker and output_valid:
        return GateDecision(
            "succeeded",
            "strong evidence",
            f"{_GATE}/interactive-success#then",
            warnings=(),
            warnings_by="design/decision-7/stable-diagnostics#1",
            reason="DONE_MARKER_FOUND",
            data_valid=True,
        )
    if marker:
        # Decision 8: the marker never bypasses output validity, and never falls back to waiting.
        return GateDecision(
            "failed",
            "marker, invalid output",
            f"{_GATE}/interactive-marker-invalid-output#then",
            never_waits=f"{_GATE}/interactive-marker-invalid-output#and1",
        )
    hinted = evidence.hint is not None and evidence.hint.valid
    if output_valid and not (hinted and readings.soft == "decision-4.1-heading"):
        return GateDecision(
            "succeeded",
            "soft evidence",
            f"{_GATE}/interactive-soft-success#then",
            warnings=(SOFT_WARNING,),
            warnings_by=f"{_GATE}/interactive-soft-success#and1",
            reason=SOFT_WARNING,
            data_valid=True,
        )
    if max_attempt is not None and attempt >= max_attempt:
        return GateDecision(
            "failed",
            "max_attempt reached",
            f"{_LIFE}/max-attempt/exceeded-fails#then",
            error_code=MAX_ATTEMPT_CODE,
            error_by=f"{_LIFE}/max-attempt/exceeded-fails#and1",
        )
    if output_valid:  # only under the heading reading: the hint keeps a valid reply from completing
        return GateDecision(
            "waiting_user", "ask_user-signaled turn", "design/decision-4.1/soft-completion-ask-user#1"
        )
    return GateDecision("waiting_user", "no evidence", _waiting_words(evidence, attempt, max_attempt))


def _waiting_words(evidence: TurnEvidence, attempt: int, max_attempt: int | None) -> str:
    """The sentence that most specifically requires this wait."""
    if evidence.hint is not None and not evidence.hint.valid:
        return f"{_LIFE}/pausable-lifecycle/invalid-ask-user-does-not-block-waiting#then"
    if max_attempt is None and attempt > 1:
        return f"{_LIFE}/max-attempt/unbounded-without-max-attempt#then"
    return f"{_LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#then"


def _auto(evidence: TurnEvidence, output_valid: bool) -> GateDecision:
    # 001 auto-success: a run whose process succeeded and whose output is valid succeeds; the marker
    # is not required. What an auto run does otherwise the spec leaves to the implementation.
    if output_valid and not evidence.interrupted:
        return GateDecision(
            "succeeded",
            "auto, valid output",
            f"{_GATE}/auto-success#then",
            warnings=(),
            warnings_by=REFERENCE,
            reason="OUTPUT_VALIDATED",
            data_valid=True,
        )
    # Architecture Notes 1: for auto, output validation is the terminal decision: the run ends (it
    # never waits for the user); the spec names no state for the end, "failed" is the reference's.
    return GateDecision("failed", "auto, no valid output", REFERENCE, never_waits=AUTO_TERMINAL)
