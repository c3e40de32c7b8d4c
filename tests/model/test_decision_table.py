"""The model's decision table, row by row, with the sentences each row cites."""

from __future__ import annotations

from typing import Any

import pytest

from turngate.judge.model import RunConfig, Undetermined, Unmodelled, predict, turn_evidence
from turngate.judge.model.decision_table import DEFAULT_READINGS, Readings, decide
from turngate.judge.model.scenarios import GREETING_SCHEMA

MARKER = '"__SKILL_DONE__": true'


def _say(text: str, *more: dict[str, Any]) -> dict[str, Any]:
    return {"steps": [*more, {"say": text}]}


def _decided(
    turn: dict[str, Any],
    *,
    mode: str = "interactive",
    attempt: int = 1,
    max_attempt: int | None = None,
    readings: Readings = DEFAULT_READINGS,
) -> tuple[str, str]:
    evidence = turn_evidence(turn)
    decision = decide(
        evidence,
        mode=mode,
        attempt=attempt,
        max_attempt=max_attempt,
        output_valid=evidence.output_valid(GREETING_SCHEMA),
        readings=readings,
    )
    return decision.state, decision.state_by


@pytest.mark.parametrize(
    ("turn", "state", "sentence"),
    [
        (_say('{"greeting": "Hi", ' + MARKER + "}"), "succeeded", "interactive-success#then"),
        (_say('{"greeting": 4, ' + MARKER + "}"), "failed", "interactive-marker-invalid-output#then"),
        (_say('{"greeting": "Hi"}'), "succeeded", "interactive-soft-success#then"),
        (_say("Which style?"), "waiting_user", "incomplete-turn-enters-waiting#then"),
        (
            _say('{"greeting": 4, "note": "{\\"__SKILL_DONE__\\": true}"}'),
            "failed",
            "interactive-marker-invalid-output#then",
        ),
        (
            _say("Which style?", {"tool": {"name": "bash", "input": {}, "output": MARKER}}),
            "waiting_user",
            "escaped-marker-detection#and2",  # the echo left out is the rule that decides
        ),
        (_say("Which style?", {"think": MARKER}), "waiting_user", "escaped-marker-detection#and1"),
        (_say("Which style?", {"stderr": MARKER}), "waiting_user", "escaped-marker-detection#and1"),
        (_say('{"style": "x", "__SKILL_DONE__": "true"}'), "waiting_user", "unified-detector#1"),
        ({"steps": [{"say": "Which style?"}, {"crash": {"exit_code": 1}}]}, "failed", "#when-interrupted"),
        ({"steps": [{"say": "Which style?"}], "end": "none"}, "failed", "#when-interrupted"),
        (
            {"steps": [{"ask_user": {"form": "yaml_block", "defect": "broken_syntax", "prompt": "x"}}]},
            "waiting_user",
            "invalid-ask-user-does-not-block-waiting#then",
        ),
    ],
)
def test_each_row_of_the_interactive_table(turn: dict[str, Any], state: str, sentence: str) -> None:
    decided, by = _decided(turn)
    assert decided == state
    assert by.endswith(sentence)


def test_max_attempt_stops_at_attempt_number_equal_to_the_limit() -> None:
    question = _say("Which style?")
    assert _decided(question, attempt=2, max_attempt=3)[0] == "waiting_user"
    state, by = _decided(question, attempt=3, max_attempt=3)
    assert (state, by) == ("failed", "interactive-run-lifecycle/max-attempt/exceeded-fails#then")
    # soft evidence completes even at the limit: the stop needs "neither strong nor soft evidence"
    assert _decided(_say('{"greeting": "Hi"}'), attempt=3, max_attempt=3)[0] == "succeeded"


def test_auto_mode_ignores_the_marker_and_the_limit() -> None:
    assert _decided(_say('{"greeting": "Hi"}'), mode="auto", attempt=5, max_attempt=1)[0] == "succeeded"
    state, by = _decided(_say("Which style?"), mode="auto")
    assert (state, by) == ("failed", "reference")  # the spec leaves an auto run's failure open


def test_the_readings_of_decision_4_1_and_of_the_marker_look_alikes() -> None:
    hinted = {
        "steps": [{"ask_user": {"form": "yaml_block", "text": '{"greeting": "Hi"}', "prompt": "More?"}}]
    }
    assert _decided(hinted)[0] == "succeeded"
    assert _decided(hinted, readings=Readings(soft="decision-4.1-heading"))[0] == "waiting_user"
    look_alike = _say('{"style": "x", "__SKILL_DONE__": "true"}')
    assert _decided(look_alike)[0] == "waiting_user"
    assert _decided(look_alike, readings=Readings(marker="marker-lenient"))[0] == "failed"


def test_a_legacy_ask_user_envelope_is_never_the_output() -> None:
    envelope = _say('{"outcome": "ask_user", "interaction": {"prompt": "x"}}')
    assert turn_evidence(envelope).output is None


def test_raw_bytes_and_engine_errors_are_not_guessed() -> None:
    with pytest.raises(Unmodelled):
        turn_evidence({"steps": [{"raw": "x"}]})
    with pytest.raises(Unmodelled):
        turn_evidence({"steps": [{"error": {"message": "x"}}]})


def _run(**options: Any) -> RunConfig:
    turns = (_say("Which style?"), _say('{"greeting": "Hi", ' + MARKER + "}"), _say("More?"))
    return RunConfig(
        engine="codex", mode="interactive", turns=turns, output_schema=GREETING_SCHEMA, **options
    )


def _states(config: RunConfig, *steps: tuple[str, Any]) -> list[str]:
    return [step.observed["observation"]["state"] for step in predict(config, [("start", None), *steps])]


def test_the_wait_deadline_per_profile_and_strict_switch() -> None:
    wait = [("advance_clock", 50), ("advance_clock", 20)]
    assert _states(_run(session_timeout_sec=60), *wait) == ["waiting_user"] * 3  # resumable, strict
    assert _states(_run(session_timeout_sec=60, require_user_reply=False), *wait)[-1] == "succeeded"
    sticky = _run(session_timeout_sec=60, profile="sticky_process")
    assert _states(sticky, *wait) == ["waiting_user", "waiting_user", "failed"]
    assert predict(sticky, [("start", None), *wait])[-1].observed["observation"]["error_code"] == (
        "INTERACTION_WAIT_TIMEOUT"
    )


def test_the_deadline_is_armed_when_the_wait_begins_not_when_the_run_began() -> None:
    turns = (_say("Which style?"), _say("Sure?"), _say('{"greeting": "Hi"}'))
    config = RunConfig(
        engine="codex",
        mode="interactive",
        turns=turns,
        output_schema=GREETING_SCHEMA,
        session_timeout_sec=60,
        require_user_reply=False,
    )
    states = _states(
        config,
        ("advance_clock", 50),
        ("reply", "Formal"),
        ("advance_clock", 50),  # 100 s after the start, 50 s into the second wait: no timeout yet
    )
    assert states == ["waiting_user", "waiting_user", "waiting_user", "waiting_user"]


def test_a_clock_that_lands_on_the_deadline_is_undetermined() -> None:
    with pytest.raises(Undetermined):
        predict(
            _run(session_timeout_sec=60, profile="sticky_process"), [("start", None), ("advance_clock", 60)]
        )


def test_a_stale_reply_is_refused_and_changes_nothing() -> None:
    steps = predict(_run(), [("start", None), ("reply", {"text": "x", "interaction_id": 7})])
    assert steps[1].observed["reply"] == {"accepted": False, "code": "stale_interaction"}
    assert steps[1].observed["observation"]["state"] == "waiting_user"
    assert {check.key: check.value for check in steps[1].checks}["pending_id"] == "same"


def test_an_invalid_max_attempt_refuses_the_package() -> None:
    for value in (0, -1, 1.5, "three", True):
        assert _states(_run(max_attempt=value)) == ["refused"]


def test_a_wait_begun_inside_a_clock_advance_has_an_uncertain_start() -> None:
    """An automatic decision fires at the deadline; if its turn waits again, the new wait began
    between the deadline and the end of the advance: a later advance that lands inside that span is
    not decided by the spec (a real server and a manual clock disagree), and none is predicted."""
    turns = (_say("Which style?"), _say("Sure?"), _say('{"greeting": "Hi"}'))
    config = RunConfig(
        engine="codex",
        mode="interactive",
        turns=turns,
        output_schema=GREETING_SCHEMA,
        session_timeout_sec=60,
        require_user_reply=False,
    )
    fired = ("advance_clock", 78)  # fires at 60; the new wait began in [60, 78]
    assert _states(config, fired, ("advance_clock", 10))[-1] == "waiting_user"  # 88: under 60 either way
    with pytest.raises(Undetermined):
        predict(config, [("start", None), fired, ("advance_clock", 50)])  # 128: 68 s after 60, 50 after 78
    assert _states(config, fired, ("advance_clock", 70))[-1] == "succeeded"  # 148: over 60 either way
    with pytest.raises(Undetermined):
        predict(config, [("start", None), ("advance_clock", 150)])  # long enough for two decisions
