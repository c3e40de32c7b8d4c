"""The reference orchestrator end to end: every fake engine as a real subprocess, every gate path."""

from __future__ import annotations

import pytest

from tests.reference.conftest import Lab

ENGINES = ("codex", "gemini", "iflow", "opencode")
DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
SOFT = '{"greeting": "Hello"}'
QUESTION = "Which greeting style do you want?"
ASK = {
    "ask_user": {
        "form": "yaml_block",
        "prompt": QUESTION,
        "kind": "choose_one",
        "options": [{"label": "Formal", "value": "formal"}, {"label": "Casual", "value": "casual"}],
    }
}
pytestmark = pytest.mark.parametrize("engine", ENGINES)


def _events(lab: Lab, run_id: str) -> list[str]:
    return [event.type for event in lab.store.events(run_id)]


@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/auto-success")
def test_auto_success_without_marker(lab: Lab, engine: str) -> None:
    lab.case("auto-ok", [{"say": SOFT}])
    run = lab.settle(lab.start(lab.skill(), engine, "auto", "auto-ok"))
    assert (run.state, run.warnings, run.error_code) == ("succeeded", (), None)
    assert run.result is not None
    assert run.result["data"] == {"greeting": "Hello"}
    assert _events(lab, run.run_id)[-1] == "conversation.completed"


@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/interactive-success")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation")
@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection")
def test_interactive_marker_success_strips_marker(lab: Lab, engine: str) -> None:
    lab.case("done", [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "done"))
    assert (run.state, run.warnings) == ("succeeded", ())
    assert run.result is not None
    assert run.result["data"] == {"greeting": "Hello"}  # marker stripped
    decision = lab.store.attempts(run.run_id)[0].decision
    assert decision is not None
    assert decision["reason_code"] == "DONE_MARKER_FOUND"
    stdout = (lab.root / "runs" / run.run_id / "attempts" / "1.stdout").read_bytes()
    if engine in ("codex", "opencode"):
        assert b'\\"__SKILL_DONE__\\": true' in stdout  # found although escaped on the wire
    assert "user.input.required" not in _events(lab, run.run_id)


@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/interactive-soft-success")
@pytest.mark.spec("design/decision-7/stable-diagnostics")
def test_soft_completion_warns(lab: Lab, engine: str) -> None:
    lab.case("soft", [{"say": SOFT}])
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "soft"))
    assert run.state == "succeeded"
    assert run.warnings == ("INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER",)
    events = lab.store.events(run.run_id)
    assert [e.data["code"] for e in events if e.type == "diagnostic.warning"] == [
        "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"
    ]
    completed = [e for e in events if e.type == "conversation.completed"]
    assert completed[0].data["reason_code"] == "INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"


@pytest.mark.spec("interactive-run-lifecycle/interaction-history/ask-reply-recorded")
@pytest.mark.spec("interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting")
def test_waiting_then_reply_then_success(lab: Lab, engine: str) -> None:
    lab.case("ask", [{"say": "I need the style first."}, ASK], [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "ask"))
    assert run.state == "waiting_user"
    assert run.pending is not None
    assert (run.pending["interaction_id"], run.pending["kind"]) == (1, "choose_one")
    assert [option["value"] for option in run.pending["options"]] == ["formal", "casual"]
    assert run.wait_deadline_at == lab.clock.now() + 1200
    outcome = lab.orchestrator.reply(run.run_id, 1, "Formal, please")
    assert outcome.accepted
    run = lab.settle(run.run_id)
    assert run.state == "succeeded"
    (history,) = lab.store.interactions(run.run_id)
    assert (history.interaction_id, history.response, history.automatic) == (1, "Formal, please", False)
    assert history.prompt
    assert history.replied_at is not None
    resume = lab.calls()[-1]
    assert resume["resumed"] is True
    assert "Formal, please" in resume["argv"]
    events = _events(lab, run.run_id)
    assert events.count("user.input.required") == 1
    assert events.count("user.input.replied") == 1
    seqs = [event.seq for event in lab.store.events(run.run_id)]
    assert seqs == sorted(set(seqs))


@pytest.mark.spec("interactive-run-lifecycle/max-attempt/exceeded-fails")
def test_max_attempt_exhaustion(lab: Lab, engine: str) -> None:
    lab.case("loop", [{"say": QUESTION}], [{"say": QUESTION}])
    run = lab.settle(lab.start(lab.skill(max_attempt=2), engine, "interactive", "loop"))
    assert run.state == "waiting_user"
    assert lab.orchestrator.reply(run.run_id, 1, "casual").accepted
    run = lab.settle(run.run_id)
    assert (run.state, run.error_code) == ("failed", "INTERACTIVE_MAX_ATTEMPT_EXCEEDED")
    assert _events(lab, run.run_id)[-1] == "conversation.failed"


@pytest.mark.spec("interactive-run-lifecycle/completion-gate-by-mode/interactive-marker-invalid-output")
@pytest.mark.spec("design/decision-8/marker-no-bypass")
def test_marker_with_invalid_output_fails(lab: Lab, engine: str) -> None:
    lab.case("bad", [{"say": '{"greeting": 5, "__SKILL_DONE__": true}'}])
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "bad"))
    assert (run.state, run.error_code) == ("failed", "OUTPUT_SCHEMA_INVALID")
    assert "user.input.required" not in _events(lab, run.run_id)


@pytest.mark.spec("interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection")
def test_tool_echo_of_marker_is_ignored(lab: Lab, engine: str) -> None:
    echo = {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": f"finish with {DONE}"}}
    lab.case("echo", [echo, {"say": QUESTION}])
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "echo"))
    assert run.state == "waiting_user"
    assert run.pending is not None
    assert run.pending["prompt"] == QUESTION


@pytest.mark.spec("interactive-run-lifecycle/pausable-lifecycle/invalid-ask-user-does-not-block-waiting")
@pytest.mark.spec("interactive-engine-turn-protocol/ask-user-validation/incomplete-payload")
@pytest.mark.parametrize(
    "defect", ["missing_prompt", "non_numeric_interaction_id", "broken_syntax", "truncated"]
)
def test_malformed_ask_user_still_waits_with_baseline(lab: Lab, engine: str, defect: str) -> None:
    hint = {"ask_user": {**ASK["ask_user"], "form": "legacy_json", "defect": defect}}
    lab.case("malformed", [{"say": QUESTION}, hint])
    run = lab.settle(
        lab.start(lab.skill(output_schema={"type": "object"}), engine, "interactive", "malformed")
    )
    assert run.state == "waiting_user"  # never failed, never taken for business output
    assert run.pending is not None
    assert (run.pending["interaction_id"], run.pending["kind"]) == (1, "open_text")
    assert not run.pending.get("options")
