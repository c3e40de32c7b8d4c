"""FCMP events come from persisted state; the audit re-reads the saved streams with the gate's detector."""

from __future__ import annotations

import pytest

from tests.reference.conftest import GREETING_SCHEMA, Lab
from turngate.implementations.reference.audit import audit_run
from turngate.implementations.reference.protocol import envelope

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
QUESTION = "Which greeting style do you want?"
ASK = {"ask_user": {"form": "yaml_block", "prompt": QUESTION, "kind": "confirm"}}


@pytest.mark.spec("design/decision-3.1/unified-detector")
@pytest.mark.parametrize("engine", ["codex", "gemini", "iflow", "opencode"])
def test_events_follow_the_store_and_the_audit_agrees_with_the_gate(lab: Lab, engine: str) -> None:
    echo = {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": f"end with {DONE}"}}
    lab.case("flow", [echo, {"say": QUESTION}, ASK], [{"say": '{"greeting": "Hi"}'}])
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "flow"))
    required = [event for event in lab.store.events(run.run_id) if event.type == "user.input.required"]
    assert run.pending is not None
    assert len(required) == 1
    assert dict(required[0].data) == {
        name: run.pending[name] for name in ("interaction_id", "kind", "prompt", "options")
    }
    assert lab.orchestrator.reply(run.run_id, 1, "yes").accepted
    run = lab.settle(run.run_id)
    assert run.state == "succeeded"
    events = lab.store.events(run.run_id)
    types = [event.type for event in events]
    assert types[0] == "conversation.started"
    assert types.count("conversation.completed") == 1
    assert "conversation.failed" not in types
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    fcmp = envelope(run, events[-1])
    assert (fcmp["protocol_version"], fcmp["type"], fcmp["engine"]) == (
        "fcmp/1.0",
        "conversation.completed",
        engine,
    )
    assert fcmp["meta"] == {"attempt": 2}
    audit = audit_run(lab.store, run.run_id, output_schema=GREETING_SCHEMA)
    assert [(record.marker_found, record.completion) for record in audit] == [
        (False, "none"),
        (False, "soft"),
    ]
    assert all(record.agrees_with_gate for record in audit)


def test_audit_sees_the_marker_the_gate_saw(lab: Lab) -> None:
    lab.case("done", [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), "opencode", "interactive", "done"))
    (record,) = audit_run(lab.store, run.run_id, output_schema=GREETING_SCHEMA)
    assert (record.marker_found, record.completion, record.agrees_with_gate) == (True, "strong", True)


def test_audit_flags_a_record_that_disagrees_with_the_streams(lab: Lab) -> None:
    lab.case("done", [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), "codex", "interactive", "done"))
    # Tamper with the saved stream: the marker is gone, the gate's record still says found.
    stdout = lab.root / "runs" / run.run_id / "attempts" / "1.stdout"
    stdout.write_bytes(stdout.read_bytes().replace(b'\\"__SKILL_DONE__\\": true', b'\\"done\\": 1'))
    (record,) = audit_run(lab.store, run.run_id, output_schema=None)
    assert record.marker_found is False
    assert record.agrees_with_gate is False
