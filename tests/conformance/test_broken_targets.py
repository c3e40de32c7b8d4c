"""Deliberately broken orchestrators, as Bowtie tests itself with fake implementations.

Each is the reference with one bug a real orchestrator has had, injected with
monkeypatch. The catalog must catch each one in the scenarios the spec says
should catch it (named here), and the broken target must still pass the
scenarios its bug does not touch (so a "catch" is not just everything failing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from turngate.engines import readers
from turngate.implementations.reference import gate, lifecycle, output, slots, turn
from turngate.implementations.reference.marker import MarkerEvidence, find_markers
from turngate.judge.case_run import connector_for, run_case
from turngate.judge.catalog import load_catalog

CATALOG = {scenario.id: scenario for scenario in load_catalog()}


def _outcome(scenario_id: str, engine: str = "codex", reading: str | None = None) -> tuple[str, str]:
    scenario = CATALOG[scenario_id]
    chosen = engine if engine in scenario.engines else scenario.engines[0]
    result = run_case(scenario, chosen, connector_for("reference"), reading=reading)
    return result.outcome, result.message


def _scan_all_stdout(transcript: readers.Transcript) -> MarkerEvidence:
    """The bug: the marker counts wherever it appears, tool echoes and reasoning included."""
    texts = []
    for event in transcript.events:
        for name in ("text", "output", "raw"):
            value = getattr(event, name, None)
            if isinstance(value, str):
                texts.append(value)
    return MarkerEvidence(
        tuple((index, hit) for index, text in enumerate(texts) for hit in find_markers(text))
    )


def _ignore_max_attempt(decide: Callable[[gate.TurnEvidence], gate.Decision]) -> Any:
    return lambda evidence: decide(dataclasses.replace(evidence, max_attempt=None))


def _fail_on_malformed_hint(assess: Callable[..., turn.TurnAssessment]) -> Any:
    def broken(*args: Any, **kwargs: Any) -> turn.TurnAssessment:
        assessment = assess(*args, **kwargs)
        if assessment.hint is not None and not assessment.hint.clean:
            failed = gate.Decision("failed", "ASK_USER_INVALID", "broken", error_code="ASK_USER_INVALID")
            return dataclasses.replace(assessment, decision=failed, pending=None)
        return assessment

    return broken


def _hint_as_gate(assess: Callable[..., turn.TurnAssessment]) -> Any:
    def broken(*args: Any, **kwargs: Any) -> turn.TurnAssessment:
        assessment = assess(*args, **kwargs)
        if assessment.hint is not None and assessment.decision.state == "succeeded":
            # The bug: an ask_user hint means "not done", whatever the evidence says.
            waiting = gate.Decision("waiting_user", "WAITING_FOR_USER", "broken")
            pending = turn.build_pending(
                attempt_number=assessment.evidence.attempt_number, final_message=assessment.final_message
            )
            return dataclasses.replace(assessment, decision=waiting, pending=pending)
        return assessment

    return broken


BUGS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], list[str], list[str]]] = {
    "scans-all-stdout-for-the-marker": (
        lambda mp: mp.setattr(turn, "marker_evidence", _scan_all_stdout),
        [
            "engine-format/tool-echo/codex",
            "engine-format/tool-echo/gemini",
            "engine-format/marker-in-reasoning/echo-not-evidence",
            "engine-format/marker-in-user-echo/echo-not-evidence",
        ],
        ["interactive-run-lifecycle/max-attempt/exceeded-fails"],
    ),
    "ignores-max-attempt": (
        lambda mp: mp.setattr(gate, "decide", _ignore_max_attempt(gate.decide)),
        [
            "interactive-run-lifecycle/max-attempt/exceeded-fails",
            "interactive-decision-policy/max-attempt-stop/exceeded-without-evidence",
        ],
        ["interactive-run-lifecycle/completion-gate-by-mode/interactive-success"],
    ),
    "fails-on-malformed-ask-user": (
        lambda mp: mp.setattr(lifecycle, "assess", _fail_on_malformed_hint(turn.assess)),
        [
            "interactive-run-lifecycle/pausable-lifecycle/invalid-ask-user-does-not-block-waiting",
            "interactive-engine-turn-protocol/ask-user-validation/incomplete-payload",
        ],
        ["interactive-run-lifecycle/max-attempt/exceeded-fails"],
    ),
    "treats-ask-user-as-a-gate": (
        lambda mp: mp.setattr(lifecycle, "assess", _hint_as_gate(turn.assess)),
        ["design/decision-4.1/soft-completion-ask-user"],
        ["interactive-run-lifecycle/max-attempt/exceeded-fails"],
    ),
    "forgets-to-strip-the-marker": (
        lambda mp: mp.setattr(output, "MARKER_KEY", "__not_the_marker__"),
        [
            "interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation",
            "design/decision-3/marker-control-only",
        ],
        ["interactive-run-lifecycle/max-attempt/exceeded-fails"],
    ),
    "never-releases-slots": (
        lambda mp: mp.setattr(slots.SlotPool, "release", lambda self, run_id: None),
        ["interactive-run-lifecycle/waiting-slot-policy/resumable-releases-slot"],
        ["interactive-run-lifecycle/completion-gate-by-mode/auto-success"],
    ),
}


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_broken_target_is_caught_by_the_scenarios_that_should_catch_it(
    bug: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject, catching, unaffected = BUGS[bug]
    inject(monkeypatch)
    for scenario_id in catching:
        default = CATALOG[scenario_id].default_reading
        outcome, message = _outcome(scenario_id, reading=default)
        assert outcome == "failed", f"{bug} slipped through {scenario_id}: {outcome} {message}"
        if default is not None:  # unchosen, a bug that another reading allows is reading-dependent
            outcome, message = _outcome(scenario_id)
            assert outcome in ("ambiguous", "failed"), f"{bug}: {scenario_id}: {outcome} {message}"
            assert outcome == "failed" or f"breaks reading {default}" in message, message
    for scenario_id in unaffected:
        outcome, message = _outcome(scenario_id)
        assert outcome == "passed", f"{bug} also broke {scenario_id}: {message}"
