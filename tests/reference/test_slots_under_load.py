"""Slot accounting under load: 50 runs through a pool of 2, with waits, replies, cancels and timeouts."""

from __future__ import annotations

import itertools

from tests.reference.conftest import Lab, make_orchestrator

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
QUESTION = "Which greeting style do you want?"
TERMINAL = {"succeeded", "failed", "canceled"}


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in edges:  # an end sorts before a start at the same instant
        running += step
        peak = max(peak, running)
    return peak


def test_fifty_runs_never_exceed_two_slots_and_leak_none(lab: Lab) -> None:
    lab.orchestrator = make_orchestrator(lab, slots=2)
    lab.case("auto", [{"say": '{"greeting": "Hi"}'}])
    lab.case("ask", [{"say": QUESTION}], [{"say": DONE}])
    lab.case("sticky", [{"say": QUESTION}], [{"say": DONE}], resident=True)
    skill = lab.skill()
    engines = itertools.cycle(["codex", "gemini", "iflow", "opencode"])
    kinds = ["auto", "ask", "sticky-timeout", "cancel-waiting", "cancel-queued"]
    planned: dict[str, str] = {}
    for index in range(50):
        kind = kinds[index % len(kinds)]
        engine = next(engines)
        if kind == "auto":
            run_id = lab.start(skill, engine, "auto", "auto")
        elif kind == "sticky-timeout":
            run_id = lab.start(skill, engine, "interactive", "sticky", profile="sticky_process")
        else:
            run_id = lab.start(skill, engine, "interactive", "ask", profile="resumable")
        planned[run_id] = kind
        if kind == "cancel-queued":
            lab.orchestrator.cancel(run_id)  # most of these are still queued behind the pool
    for _ in range(200):
        lab.orchestrator.wait_idle(60)
        runs = {run_id: lab.orchestrator.status(run_id) for run_id in planned}
        assert len(lab.orchestrator.slots.holders) <= 2
        if all(run.state in TERMINAL for run in runs.values()):
            break
        for run_id, run in runs.items():
            if run.state != "waiting_user":
                continue
            if planned[run_id] == "ask":
                assert run.pending is not None
                lab.orchestrator.reply(run_id, run.pending["interaction_id"], "formal")
            elif planned[run_id] == "cancel-waiting":
                lab.orchestrator.cancel(run_id)
        # Sticky waits hold both slots until their deadline passes.
        lab.clock.advance(1201)
        lab.orchestrator.check_deadlines()
    final = {run_id: lab.orchestrator.status(run_id) for run_id in planned}
    assert all(run.state in TERMINAL for run in final.values()), "some runs never ended"
    expected = {
        "auto": ("succeeded", None),
        "ask": ("succeeded", None),
        "sticky-timeout": ("failed", "INTERACTION_WAIT_TIMEOUT"),
        "cancel-waiting": ("canceled", "CANCELED_BY_USER"),
        "cancel-queued": ("canceled", "CANCELED_BY_USER"),
    }
    for run_id, run in final.items():
        assert (run.state, run.error_code) == expected[planned[run_id]], (planned[run_id], run)
    assert lab.orchestrator.slots.peak == 2
    assert lab.orchestrator.slots.holders == frozenset()  # none leaked
    # Independently of the pool's own bookkeeping: engine turns never overlapped beyond 2
    # (the --help probes that choose a profile run outside the slots, as on a real server).
    turns = [call for call in lab.calls() if call["action"] == "run"]
    assert _max_overlap([(call["start"], call["end"]) for call in turns]) <= 2
