"""The gate's decision table, row by row, each row next to the spec sentence it implements."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turngate.implementations.reference.gate import (
    PROCESS_OK,
    READING_BODY,
    READING_HEADING,
    Decision,
    ProcessOutcome,
    TurnEvidence,
    decide,
    soft_completion_allowed,
)


def evidence(
    *,
    mode: str = "interactive",
    marker: bool = False,
    valid: bool = False,
    attempt: int = 1,
    max_attempt: int | None = None,
    process: ProcessOutcome = PROCESS_OK,
    soft_allowed: bool = True,
) -> TurnEvidence:
    return TurnEvidence(
        mode=mode,  # type: ignore[arg-type]
        marker_found=marker,
        output_valid=valid,
        output_problem=None if valid else "OUTPUT_SCHEMA_INVALID",
        process=process,
        attempt_number=attempt,
        max_attempt=max_attempt,
        soft_completion_allowed=soft_allowed,
    )


# 001 "auto 模式成功判定": WHEN auto AND process succeeded and output passes schema
# THEN succeeded AND the marker is not required.
@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/auto-success")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/auto-marker-optional")
@pytest.mark.spec("design/decision-2/auto-output-validity")
@pytest.mark.parametrize("marker", [False, True])
def test_auto_valid_output_succeeds_with_or_without_marker(marker: bool) -> None:
    assert decide(evidence(mode="auto", marker=marker, valid=True)) == Decision(
        "succeeded", "OUTPUT_VALIDATED", "auto-output-valid"
    )


@pytest.mark.spec("design/decision-2/auto-output-validity")
@pytest.mark.parametrize("marker", [False, True])
def test_auto_invalid_output_fails_and_never_waits(marker: bool) -> None:
    decision = decide(evidence(mode="auto", marker=marker, valid=False))
    assert (decision.state, decision.error_code) == ("failed", "OUTPUT_SCHEMA_INVALID")


# Decision 6: "max_attempt ... only applied to interactive mode".
@pytest.mark.spec("design/decision-6/max-attempt-interactive-only")
def test_auto_ignores_max_attempt() -> None:
    decision = decide(evidence(mode="auto", valid=True, attempt=9, max_attempt=1))
    assert decision.state == "succeeded"
    decision = decide(evidence(mode="auto", valid=False, attempt=9, max_attempt=1))
    assert decision.error_code == "OUTPUT_SCHEMA_INVALID"


# 001 "interactive 模式成功判定": marker AND output valid THEN succeeded.
@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/interactive-success")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/interactive-strong-evidence")
@pytest.mark.spec("interactive-decision-policy/evidence-priority/strong-evidence-completes")
@pytest.mark.spec("design/decision-1/dual-track-gate")
def test_interactive_marker_and_valid_output_succeeds() -> None:
    decision = decide(evidence(marker=True, valid=True))
    assert decision == Decision("succeeded", "DONE_MARKER_FOUND", "interactive-marker-output-valid")


# 001 "interactive 模式 marker 命中但输出校验失败": THEN failed AND MUST NOT waiting_user.
@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/interactive-marker-invalid-output")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/marker-with-invalid-output-fails")
@pytest.mark.spec("design/decision-8/marker-no-bypass")
@pytest.mark.parametrize("max_attempt", [None, 1, 5])
def test_interactive_marker_with_invalid_output_fails(max_attempt: int | None) -> None:
    decision = decide(evidence(marker=True, valid=False, max_attempt=max_attempt))
    assert decision.state == "failed"
    assert decision.error_code == "OUTPUT_SCHEMA_INVALID"
    assert decision.rule == "interactive-marker-output-invalid"


# 001 "interactive 模式软条件成功判定": no marker AND output valid THEN succeeded AND warning.
@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/interactive-soft-success")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/interactive-soft-evidence")
@pytest.mark.spec("interactive-decision-policy/evidence-priority/soft-evidence-completes-with-warning")
@pytest.mark.spec("design/decision-7/stable-diagnostics")
def test_interactive_soft_completion_warns() -> None:
    decision = decide(evidence(marker=False, valid=True))
    assert decision.state == "succeeded"
    assert decision.warnings == ("INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER",)
    assert decision.reason_code == "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"


# 001 "interactive 回合未完成进入等待态" and 003 "interactive 模式缺失 done marker 进入等待态".
@pytest.mark.spec("interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/interactive-missing-marker-waits")
def test_interactive_no_evidence_waits() -> None:
    decision = decide(evidence(marker=False, valid=False))
    assert decision == Decision("waiting_user", "WAITING_FOR_USER", "interactive-no-evidence")


# 001 "超过最大回合数触发失败": attempt_number >= max_attempt AND neither evidence THEN failed.
@pytest.mark.spec("interactive-run-lifecycle/max-attempt/exceeded-fails")
@pytest.mark.spec("interactive-decision-policy/max-attempt-stop/exceeded-without-evidence")
@pytest.mark.spec("design/decision-6/max-attempt-interactive-only")
@pytest.mark.parametrize(
    ("attempt", "max_attempt", "state"),
    [(1, 2, "waiting_user"), (2, 2, "failed"), (3, 2, "failed"), (1, 1, "failed")],
)
def test_max_attempt_boundary(attempt: int, max_attempt: int, state: str) -> None:
    decision = decide(evidence(attempt=attempt, max_attempt=max_attempt))
    assert decision.state == state
    if state == "failed":
        assert decision.error_code == "INTERACTIVE_MAX_ATTEMPT_EXCEEDED"


@pytest.mark.spec("interactive-run-lifecycle/max-attempt/exceeded-fails")
def test_max_attempt_reached_with_evidence_still_completes() -> None:
    assert decide(evidence(marker=True, valid=True, attempt=3, max_attempt=3)).state == "succeeded"
    assert decide(evidence(valid=True, attempt=3, max_attempt=3)).state == "succeeded"


# 001 "未声明 max_attempt 允许无限回合".
@pytest.mark.spec("interactive-run-lifecycle/max-attempt/unbounded-without-max-attempt")
@given(st.integers(min_value=1, max_value=10**9))
def test_without_max_attempt_any_attempt_waits(attempt: int) -> None:
    assert decide(evidence(attempt=attempt, max_attempt=None)).state == "waiting_user"


def test_interrupted_process_fails_whatever_the_output_says() -> None:
    crashed = ProcessOutcome(False, "ENGINE_FAILED", "exit code 1")
    for mode in ("auto", "interactive"):
        for marker in (False, True):
            decision = decide(evidence(mode=mode, marker=marker, valid=True, process=crashed))
            assert (decision.state, decision.error_code) == ("failed", "ENGINE_FAILED")


# Decision 4.1: heading and body disagree; the default reading follows the body.
@pytest.mark.spec("design/decision-4.1/soft-completion-ask-user")
def test_decision_4_1_readings() -> None:
    assert soft_completion_allowed(READING_BODY, ask_user_signaled=True) is True
    assert soft_completion_allowed(READING_HEADING, ask_user_signaled=True) is False
    assert soft_completion_allowed(READING_HEADING, ask_user_signaled=False) is True
    heading = decide(evidence(valid=True, soft_allowed=False))
    assert heading.state == "waiting_user"
    with pytest.raises(ValueError, match=r"decision-4\.1-body"):
        soft_completion_allowed("whatever", ask_user_signaled=False)


def test_evidence_cannot_be_half_built() -> None:
    with pytest.raises(ValueError, match="attempt_number"):
        evidence(attempt=0)
    with pytest.raises(ValueError, match="max_attempt"):
        evidence(max_attempt=0)
    with pytest.raises(ValueError, match="mode"):
        evidence(mode="batch")
    with pytest.raises(ValueError, match="output_problem"):
        TurnEvidence("auto", False, True, "OUTPUT_SCHEMA_INVALID", PROCESS_OK, 1, None)
    with pytest.raises(ValueError, match="error_code"):
        ProcessOutcome(False)


@given(
    mode=st.sampled_from(["auto", "interactive"]),
    marker=st.booleans(),
    valid=st.booleans(),
    attempt=st.integers(1, 20),
    max_attempt=st.none() | st.integers(1, 20),
)
def test_gate_invariants(mode: str, marker: bool, valid: bool, attempt: int, max_attempt: int | None) -> None:
    decision = decide(
        evidence(mode=mode, marker=marker, valid=valid, attempt=attempt, max_attempt=max_attempt)
    )
    if marker or mode == "auto":
        assert decision.state != "waiting_user"  # Decision 8 / Decision 2
    if decision.state == "succeeded":
        assert valid  # nothing bypasses output validity
        assert decision.error_code is None
    else:
        assert (decision.error_code is None) == (decision.state == "waiting_user")
    if decision.error_code == "INTERACTIVE_MAX_ATTEMPT_EXCEEDED":
        assert mode == "interactive"
        assert max_attempt is not None
        assert attempt >= max_attempt
