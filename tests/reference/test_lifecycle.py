"""Spec 001 lifecycle rules on the reference orchestrator: slots, profiles, deadlines, strictness, cancel."""

from __future__ import annotations

import pytest

from tests.reference.conftest import Lab, make_orchestrator

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
QUESTION = "Which greeting style do you want?"


def _ask_then_done(lab: Lab, case_id: str, *, resident: bool = False) -> None:
    lab.case(case_id, [{"say": QUESTION}], [{"say": DONE}], resident=resident)


@pytest.mark.spec("interactive-run-lifecycle/waiting-slot-policy/resumable-releases-slot")
@pytest.mark.spec("interactive-run-lifecycle/waiting-slot-policy/resumable-reacquires-slot-before-running")
def test_resumable_wait_releases_the_slot_and_reply_takes_one_again(lab: Lab) -> None:
    lab.orchestrator = make_orchestrator(lab, slots=1)
    _ask_then_done(lab, "ask")
    lab.case("blocker", [{"say": QUESTION}])
    skill = lab.skill()
    waiting = lab.settle(lab.start(skill, "codex", "interactive", "ask", profile="resumable"))
    assert waiting.state == "waiting_user"
    assert not lab.orchestrator.slots.holds(waiting.run_id)
    # The freed slot lets another queued run execute; it then waits too and frees it again.
    other = lab.settle(lab.start(skill, "opencode", "interactive", "blocker", profile="resumable"))
    assert other.state == "waiting_user"
    assert lab.orchestrator.reply(waiting.run_id, 1, "formal").accepted
    assert lab.settle(waiting.run_id).state == "succeeded"
    assert lab.orchestrator.slots.holders == frozenset()


@pytest.mark.spec("interactive-run-lifecycle/waiting-slot-policy/resumable-reacquires-slot-before-running")
def test_reply_queues_when_no_slot_is_free(lab: Lab) -> None:
    lab.orchestrator = make_orchestrator(lab, slots=1)
    _ask_then_done(lab, "ask")
    lab.case("sticky", [{"say": QUESTION}], [{"say": DONE}], resident=True)
    skill = lab.skill()
    waiting = lab.settle(lab.start(skill, "codex", "interactive", "ask", profile="resumable"))
    holder = lab.settle(lab.start(skill, "gemini", "interactive", "sticky", profile="sticky_process"))
    assert holder.state == "waiting_user"
    assert lab.orchestrator.slots.holds(holder.run_id)
    outcome = lab.orchestrator.reply(waiting.run_id, 1, "formal")
    assert (outcome.accepted, outcome.status) == (True, "queued")  # no slot: it may not run yet
    assert lab.settle(waiting.run_id).state == "queued"
    lab.orchestrator.cancel(holder.run_id)
    assert lab.settle(waiting.run_id).state == "succeeded"


@pytest.mark.spec("interactive-run-lifecycle/waiting-slot-policy/sticky-keeps-slot")
@pytest.mark.parametrize("engine", ["codex", "gemini", "iflow", "opencode"])
def test_sticky_wait_keeps_slot_and_process(lab: Lab, engine: str) -> None:
    _ask_then_done(lab, "sticky", resident=True)
    run = lab.settle(lab.start(lab.skill(), engine, "interactive", "sticky", profile="sticky_process"))
    assert run.state == "waiting_user"
    assert lab.orchestrator.slots.holds(run.run_id)
    assert lab.orchestrator.reply(run.run_id, 1, "formal").accepted
    run = lab.settle(run.run_id)
    assert run.state == "succeeded"
    calls = lab.calls()
    assert len(calls) == 1
    assert calls[0]["turns"] == [1, 2]  # one process played both turns
    assert lab.orchestrator.slots.holders == frozenset()


@pytest.mark.spec("interactive-run-lifecycle/sticky-wait-timeout/sticky-timeout-fails")
@pytest.mark.spec("interactive-run-lifecycle/strict-switch/sticky-strict-true")
def test_sticky_strict_wait_timeout_fails_and_terminates(lab: Lab) -> None:
    _ask_then_done(lab, "sticky", resident=True)
    run = lab.settle(lab.start(lab.skill(), "iflow", "interactive", "sticky", profile="sticky_process"))
    assert run.wait_deadline_at == lab.clock.now() + 1200
    lab.clock.advance(1199)
    lab.orchestrator.check_deadlines()
    assert lab.orchestrator.status(run.run_id).state == "waiting_user"
    lab.clock.advance(2)
    lab.orchestrator.check_deadlines()
    run = lab.settle(run.run_id)
    assert (run.state, run.error_code) == ("failed", "INTERACTION_WAIT_TIMEOUT")
    assert not lab.orchestrator.slots.holds(run.run_id)
    assert lab.calls()[-1]["outcome"] in ("killed", "signal")  # the resident process was terminated


def test_session_timeout_option_sets_the_deadline(lab: Lab) -> None:
    _ask_then_done(lab, "sticky", resident=True)
    run = lab.settle(
        lab.start(
            lab.skill(), "codex", "interactive", "sticky", profile="sticky_process", session_timeout_sec=30
        )
    )
    lab.clock.advance(31)
    lab.orchestrator.check_deadlines()
    assert lab.settle(run.run_id).error_code == "INTERACTION_WAIT_TIMEOUT"


@pytest.mark.spec("interactive-run-lifecycle/strict-switch/resumable-strict-true")
def test_resumable_strict_keeps_waiting_past_the_deadline(lab: Lab) -> None:
    _ask_then_done(lab, "ask")
    run = lab.settle(lab.start(lab.skill(), "opencode", "interactive", "ask", profile="resumable"))
    lab.clock.advance(10 * 1200)
    lab.orchestrator.check_deadlines()
    run = lab.settle(run.run_id)
    assert run.state == "waiting_user"
    assert len(lab.calls()) == 1  # no automatic next turn
    assert lab.orchestrator.cancel(run.run_id)
    assert lab.orchestrator.status(run.run_id).error_code == "CANCELED_BY_USER"


@pytest.mark.spec("interactive-run-lifecycle/strict-switch/resumable-strict-false")
def test_resumable_non_strict_auto_reply_resumes(lab: Lab) -> None:
    _ask_then_done(lab, "ask")
    run = lab.settle(
        lab.start(lab.skill(), "gemini", "interactive", "ask", profile="resumable", require_user_reply=False)
    )
    lab.clock.advance(1200)
    lab.orchestrator.check_deadlines()
    run = lab.settle(run.run_id)
    assert run.state == "succeeded"
    (history,) = lab.store.interactions(run.run_id)
    assert history.automatic is True
    assert history.response
    assert lab.calls()[-1]["resumed"] is True  # a resume turn, not a new conversation


@pytest.mark.spec("interactive-run-lifecycle/strict-switch/sticky-strict-false")
def test_sticky_non_strict_injects_decision_into_the_process(lab: Lab) -> None:
    _ask_then_done(lab, "sticky", resident=True)
    run = lab.settle(
        lab.start(
            lab.skill(), "codex", "interactive", "sticky", profile="sticky_process", require_user_reply=False
        )
    )
    lab.clock.advance(1200)
    lab.orchestrator.check_deadlines()
    run = lab.settle(run.run_id)
    assert run.state == "succeeded"
    (history,) = lab.store.interactions(run.run_id)
    assert history.automatic is True
    (call,) = lab.calls()
    assert call["stdin"]
    assert history.response in call["stdin"]  # written to the resident process


@pytest.mark.spec("interactive-decision-policy/free-text-reply/any-kind-free-text")
def test_stale_reply_is_refused_and_free_text_accepted(lab: Lab) -> None:
    ask = {"ask_user": {"form": "yaml_block", "prompt": "Proceed?", "kind": "confirm"}}
    lab.case("confirm", [{"say": QUESTION}, ask], [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), "codex", "interactive", "confirm"))
    stale = lab.orchestrator.reply(run.run_id, 7, "yes")
    assert (stale.accepted, stale.code) == (False, "INTERACTION_STALE")
    assert lab.orchestrator.reply(run.run_id, 1, "Well, maybe, if you must: go ahead.").accepted
    assert lab.settle(run.run_id).state == "succeeded"
    late = lab.orchestrator.reply(run.run_id, 1, "again")
    assert (late.accepted, late.code) == (False, "RUN_NOT_WAITING")


def test_interaction_ids_are_monotonic_whatever_the_hint_says(lab: Lab) -> None:
    same_id = {"ask_user": {"form": "legacy_json", "prompt": "Again?", "interaction_id": 1}}
    lab.case("repeat", [{"say": QUESTION}, same_id], [{"say": QUESTION}, same_id], [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), "opencode", "interactive", "repeat"))
    assert lab.orchestrator.reply(run.run_id, 1, "a").accepted
    run = lab.settle(run.run_id)
    assert run.pending is not None
    assert run.pending["interaction_id"] == 2
    assert lab.orchestrator.reply(run.run_id, 2, "b").accepted
    assert lab.settle(run.run_id).state == "succeeded"
    assert [item.interaction_id for item in lab.store.interactions(run.run_id)] == [1, 2]


def test_cancel_from_every_non_terminal_state(lab: Lab) -> None:
    lab.orchestrator = make_orchestrator(lab, slots=1)
    lab.case("hang", [{"hang": True}])
    _ask_then_done(lab, "ask")
    skill = lab.skill()
    running = lab.start(skill, "codex", "auto", "hang")
    queued = lab.start(skill, "codex", "interactive", "ask")
    assert lab.orchestrator.status(queued).state == "queued"
    assert lab.orchestrator.cancel(queued)
    assert lab.orchestrator.status(running).state == "running"
    assert lab.orchestrator.cancel(running)
    assert lab.settle(running).state == "canceled"
    waiting = lab.settle(lab.start(skill, "codex", "interactive", "ask"))
    assert waiting.state == "waiting_user"
    assert lab.orchestrator.cancel(waiting.run_id)
    for run_id in (queued, running, waiting.run_id):
        run = lab.orchestrator.status(run_id)
        assert (run.state, run.error_code) == ("canceled", "CANCELED_BY_USER")
        assert lab.orchestrator.cancel(run_id) is False  # a second cancel is not accepted
        types = [event.type for event in lab.store.events(run_id)]
        assert types.count("conversation.failed") == 1
        assert "conversation.completed" not in types
    assert lab.orchestrator.slots.holders == frozenset()


@pytest.mark.parametrize("profile", ["resumable", "sticky_process"])
def test_a_cancel_before_the_engine_starts_starts_none(lab: Lab, profile: str) -> None:
    """Canceled between the dispatch and the spawn (held there by the orchestrator's own lock): no
    engine starts, so none runs on, unwatched, until its turn timeout (a race seen once in 2,000 runs)."""
    lab.case("hang", [{"hang": True}])
    skill = lab.skill()
    with lab.orchestrator._lock:  # the worker thread waits here, before it would spawn the engine
        run_id = lab.start(skill, "gemini", "interactive", "hang", profile=profile)
        assert lab.orchestrator.cancel(run_id)
    run = lab.settle(run_id)
    assert (run.state, run.error_code) == ("canceled", "CANCELED_BY_USER")
    assert lab.calls() == []
    assert lab.orchestrator.slots.holders == frozenset()


def test_hanging_turn_is_killed_by_the_watchdog(lab: Lab) -> None:
    lab.orchestrator = make_orchestrator(lab, turn_timeout_sec=1.0)
    lab.case("hang", [{"say": QUESTION}, {"hang": True}])
    run = lab.settle(lab.start(lab.skill(), "gemini", "interactive", "hang"))
    assert (run.state, run.error_code) == ("failed", "TIMEOUT")


def test_restart_keeps_resumable_waits_and_fails_the_rest(lab: Lab) -> None:
    _ask_then_done(lab, "ask")
    _ask_then_done(lab, "sticky", resident=True)
    lab.case("hang", [{"hang": True}])
    skill = lab.skill()
    resumable = lab.settle(lab.start(skill, "codex", "interactive", "ask", profile="resumable"))
    sticky = lab.settle(lab.start(skill, "gemini", "interactive", "sticky", profile="sticky_process"))
    running = lab.start(skill, "iflow", "auto", "hang")
    assert lab.orchestrator.status(running).state == "running"
    lab.reopen()
    assert lab.orchestrator.status(resumable.run_id).state == "waiting_user"
    assert lab.orchestrator.status(resumable.run_id).pending == resumable.pending
    assert lab.orchestrator.status(sticky.run_id).error_code == "INTERACTION_PROCESS_LOST"
    assert lab.orchestrator.status(running).error_code == "ORCHESTRATOR_RESTART_INTERRUPTED"
    assert lab.orchestrator.reply(resumable.run_id, 1, "formal").accepted
    assert lab.settle(resumable.run_id).state == "succeeded"


def test_a_turn_is_judged_outside_the_orchestrators_lock(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """One run's judgement (up to 16 MiB of stream) never holds up the other runs or the API."""
    from turngate.implementations.reference import lifecycle

    held: list[bool] = []
    original = lifecycle.assess

    def watched(*args: object, **kwargs: object) -> object:
        held.append(lab.orchestrator._lock._is_owned())  # type: ignore[attr-defined]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lifecycle, "assess", watched)
    _ask_then_done(lab, "judged")
    run_id = lab.start(lab.skill(), "codex", "interactive", "judged", profile="resumable")
    assert lab.settle(run_id).state == "waiting_user"
    assert held == [False]
