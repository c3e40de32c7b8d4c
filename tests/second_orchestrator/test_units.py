"""Small unit checks of the detector, hint scanner, output check and gate."""

from __future__ import annotations

from turngate.implementations.second_orchestrator.ask_user_hints import scan
from turngate.implementations.second_orchestrator.done_marker import has_marker
from turngate.implementations.second_orchestrator.output_check import check
from turngate.implementations.second_orchestrator.turn_decision import Evidence, decide

SCHEMA = {
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}


def test_detector_plain_and_escaped() -> None:
    assert has_marker('{"greeting": "hi", "__SKILL_DONE__": true}')
    assert has_marker('"{\\"greeting\\": \\"hi\\", \\"__SKILL_DONE__\\": true}"')
    assert not has_marker('{"__SKILL_DONE__": false}')


def test_marker_stripped_before_validation() -> None:
    result = check('{"greeting": "hi", "__SKILL_DONE__": true}', SCHEMA, "auto")
    assert result.valid
    assert result.data == {"greeting": "hi"}


def test_malformed_hint_is_found_but_not_used() -> None:
    text = "Pick one.\n\n<ASK_USER_YAML>\nask_user:\n  kind: choose_one\n</ASK_USER_YAML>"
    hints = scan(text)
    assert hints.found
    assert hints.hint is None
    assert hints.rest == "Pick one."


def test_legacy_envelope_is_not_output() -> None:
    text = '{"outcome":"ask_user","interaction":{"interaction_id":1,"prompt":"Which?"}}'
    hints = scan(text)
    assert hints.hint is not None
    assert hints.hint.prompt == "Which?"
    assert not check(hints.rest, {"type": "object"}, "interactive").found


def test_gate_table() -> None:
    valid = check('{"greeting": "hi"}', SCHEMA, "interactive")
    invalid = check("Which style?", SCHEMA, "interactive")

    def state(mode: str, marker: bool, output: object, attempt: int = 1, limit: int | None = None) -> str:
        assert output is valid or output is invalid
        ev = Evidence(mode, None, marker, valid if output is valid else invalid, attempt, limit)
        return decide(ev).state

    assert state("interactive", True, valid) == "succeeded"
    assert state("interactive", True, invalid) == "failed"
    assert state("interactive", False, valid) == "succeeded"
    assert state("interactive", False, invalid) == "waiting_user"
    assert state("interactive", False, invalid, attempt=2, limit=2) == "failed"
    assert state("auto", False, invalid, attempt=5, limit=2) == "failed"
    assert decide(Evidence("interactive", "ENGINE_FAILED", False, invalid, 1, None)).state == "failed"
