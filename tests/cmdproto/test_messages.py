"""The protocol's schemas: valid messages pass; a broken one is named by direction, cmd, field and value."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from turngate.implementations.reference_connector import ReferenceConnector
from turngate.protocol.command import (
    KNOWN_CAPABILITIES,
    REQUEST_COMMANDS,
    ProtocolError,
    check_request,
    check_response,
    schema,
)

CASE: dict[str, Any] = {
    "case_id": "greet__codex",
    "engine": "codex",
    "skill_dir": "/tmp/case/skills/greet",
    "runtime": {"mode": "interactive"},
    "reading": None,
    "workdir": "/tmp/case",
    "engine_env": {"HOME": "/tmp/case/home"},
    "engine_bin": "/tmp/case/bin",
    "gemini_output_format": None,
}
REQUESTS: dict[str, dict[str, Any]] = {
    "start": {"cmd": "start", "version": 1},
    "run.start": {"cmd": "run.start", "case": CASE},
    "run.reply": {"cmd": "run.reply", "text": "formal", "interaction_id": None},
    "run.cancel": {"cmd": "run.cancel"},
    "run.advance_clock": {"cmd": "run.advance_clock", "seconds": 1.5},
    "run.restart": {"cmd": "run.restart"},
    "run.fill_slots": {"cmd": "run.fill_slots"},
    "run.free_slots": {"cmd": "run.free_slots"},
    "run.settle": {"cmd": "run.settle"},
    "run.observe": {"cmd": "run.observe"},
    "run.close": {"cmd": "run.close"},
    "stop": {"cmd": "stop"},
}
OBSERVATION: dict[str, Any] = {
    "state": "waiting_user",
    "error_code": None,
    "warnings": ["W_SOFT"],
    "reason_code": "ask_user",
    "data": None,
    "pending": {"interaction_id": 1, "prompt": "Which style?"},
    "attempts": 1,
    "history": [{"interaction_id": 1, "prompt": "Which style?", "response": None}],
    "events": [{"type": "user.input.required", "data": {"interaction_id": 1}}],
    "slot_held": False,
    "patch": None,
    "extra": {"decisions": []},
}
RESPONSES: dict[str, dict[str, Any]] = {
    "start": {
        "ready": True,
        "version": 1,
        "implementation": {"name": "x", "version": "1", "language": "go", "capabilities": ["clock", "http2"]},
    },
    "run.start": {"ok": True},
    "run.reply": {"accepted": False, "code": "stale_interaction"},
    "run.cancel": {"accepted": True},
    "run.advance_clock": {"ok": True},
    "run.restart": {"ok": True},
    "run.fill_slots": {"ok": True},
    "run.free_slots": {"ok": True},
    "run.settle": {"ok": True},
    "run.observe": {"observation": OBSERVATION},
    "run.close": {"ok": True},
}


def test_the_shipped_schemas_are_valid_draft_2020_12_package_data() -> None:
    folder = files("turngate.protocol.command") / "schemas"
    assert sorted(item.name for item in folder.iterdir() if item.name.endswith(".json")) == [
        "request.schema.json",
        "response.schema.json",
    ]
    for direction in ("request", "response"):
        Draft202012Validator.check_schema(schema(direction))


def test_every_cmd_has_an_example_here() -> None:
    assert set(REQUESTS) == set(REQUEST_COMMANDS)
    assert set(RESPONSES) == set(REQUEST_COMMANDS) - {"stop"}


@pytest.mark.parametrize("cmd", REQUEST_COMMANDS)
def test_valid_requests_pass_both_the_per_cmd_check_and_the_whole_schema(cmd: str) -> None:
    assert check_request(REQUESTS[cmd]) == cmd
    # The root schema (oneOf over the cmds) is what other languages validate with: it must agree.
    assert Draft202012Validator(schema("request")).is_valid(REQUESTS[cmd])


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"cmd": "run.settle", "wait": True}, "run.settle with an invalid message: Additional properties"),
        ({"cmd": "run.launch"}, "run.launch with an invalid message: cmd: 'run.launch'"),
        ({"version": 1}, "(no cmd) with an invalid message: 'cmd' is a required property"),
        ({"cmd": "start", "version": 2}, "start with an invalid message: version: 1 was expected"),
        ({"cmd": "run.reply", "text": 3, "interaction_id": None}, "text: 3 is not of type 'string'"),
        ({"cmd": "run.reply", "text": "a", "interaction_id": "1"}, "interaction_id: '1' is not of type"),
        ({"cmd": "run.advance_clock", "seconds": "5"}, "seconds: '5' is not of type 'number'"),
        ({"cmd": "run.start", "case": {**CASE, "workdir": None}}, "case.workdir: None is not of type"),
        ({"cmd": "run.start", "case": {**CASE, "engine_env": {"A": 1}}}, "case.engine_env.A: 1 is not of"),
    ],
)
def test_a_broken_request_is_named_by_cmd_and_field(message: dict[str, Any], expected: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        check_request(message)
    assert str(caught.value).startswith("turngate sent ")
    assert expected in str(caught.value)
    assert not Draft202012Validator(schema("request")).is_valid(message)


@pytest.mark.parametrize("cmd", [cmd for cmd in REQUEST_COMMANDS if cmd != "stop"])
def test_valid_answers_and_error_answers_pass(cmd: str) -> None:
    check_response(cmd, RESPONSES[cmd])
    check_response(cmd, {"error": {"message": "cannot", "code": "unsupported"}})
    assert Draft202012Validator(schema("response")).is_valid(RESPONSES[cmd])


def _observation(**changed: Any) -> dict[str, Any]:
    return {"observation": {**OBSERVATION, **changed}}


@pytest.mark.parametrize(
    ("cmd", "message", "path", "expected"),
    [
        ("run.observe", _observation(state=7), "observation.state", "7 is not of type 'string'"),
        ("run.observe", _observation(warnings="W"), "observation.warnings", "'W' is not of type 'array'"),
        ("run.observe", _observation(attempts=-1), "observation.attempts", "-1 is less than the minimum"),
        ("run.observe", _observation(events=[{"type": "x"}]), "observation.events[0]", "'data' is a"),
        ("run.observe", _observation(status="ok"), "observation", "Additional properties are not allowed"),
        ("run.observe", {"state": "running"}, "", "'observation' is a required property"),
        ("run.reply", {"accepted": "yes", "code": None}, "accepted", "'yes' is not of type 'boolean'"),
        ("run.settle", {"ok": False}, "ok", "True was expected"),
        ("run.cancel", {"error": {"message": 5}}, "error.message", "5 is not of type 'string'"),
        ("start", {**RESPONSES["start"], "version": 2}, "version", "1 was expected"),
        (
            "start",
            {"ready": True, "version": 1, "implementation": {"name": "x", "version": "1", "language": "go"}},
            "implementation",
            "'capabilities' is a required property",
        ),
    ],
)
def test_a_broken_answer_is_named_by_cmd_field_and_value(
    cmd: str, message: dict[str, Any], path: str, expected: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        check_response(cmd, message)
    error = caught.value
    where = f"{path}: " if path else ""
    assert str(error).startswith(f"implementation answered {cmd} with an invalid message: {where}{expected}")
    assert (error.direction, error.cmd, error.path) == ("response", cmd, path)


def test_the_error_carries_the_bad_value_and_reads_as_one_sentence() -> None:
    with pytest.raises(ProtocolError) as caught:
        check_response("run.observe", _observation(state=7))
    assert str(caught.value) == (
        "implementation answered run.observe with an invalid message: "
        "observation.state: 7 is not of type 'string'"
    )
    assert caught.value.value == 7


def test_the_known_capability_words_are_the_references() -> None:
    assert ReferenceConnector.capabilities == KNOWN_CAPABILITIES
