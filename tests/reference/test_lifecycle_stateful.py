"""The run lifecycle as a state machine: random sequences of requests against the reference.

hypothesis drives the reference orchestrator (real fake-engine processes, real
SQLite, a manual clock) through start / turn outcomes / reply (right, stale,
duplicate) / cancel / clock advance / restart, and after every step, once no
turn is running, checks the invariants the spec sets:

- every run is in one of the lifecycle's states, and a terminal run stays so;
- a pending interaction is present exactly when the run is waiting_user, and
  its id is the attempt number (backend-owned, attempt-based, Decision 5);
- attempt numbers are 1..n with no gap and never go down;
- the slots held are exactly those of running runs and of sticky runs that
  wait (001 slot policy), never more than the pool has: no slot leaks;
- history is complete: one interaction per waiting entry, every one but the
  open one answered, one ``user.input.required`` event for each, and the
  protocol events' sequence numbers strictly increase (001 "记录交互历史").

Bounded for CI: a handful of examples of a dozen steps (each turn is a real
process), deadline off.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, rule

from tests.reference.conftest import Lab, make_orchestrator
from turngate.engines.fake.install import install
from turngate.implementations.reference.clock import ManualClock
from turngate.implementations.reference.lifecycle import TERMINAL_STATES
from turngate.implementations.reference.store import Store

STATES = frozenset({"queued", "running", "waiting_user", *TERMINAL_STATES})
DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'
# What one turn of the fake engine does; the last turn of a script always ends the run.
ASK = [{"say": "Which greeting style do you want?"}]
ENDINGS = {
    "done": [{"say": DONE}],
    "crash": [{"say": "working"}, {"crash": {"exit_code": 3}}],
    "invalid": [{"say": '{"nope": 1, "__SKILL_DONE__": true}'}],
}
SLOTS = 2
_CASES = itertools.count()


class Lifecycle(RuleBasedStateMachine):
    runs = Bundle("runs")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="tg-stateful-"))
        for name in ("scripts", "state", "home", "runs", "skills"):
            (self.folder / name).mkdir()
        install(self.folder / "bin")
        self.lab = Lab(
            root=self.folder,
            bin=self.folder / "bin",
            scripts=self.folder / "scripts",
            state=self.folder / "state",
            call_log=self.folder / "calls.jsonl",
            clock=ManualClock(),
            store=Store(self.folder / "turngate.sqlite3"),
            orchestrator=None,  # type: ignore[arg-type]
        )
        self.lab.orchestrator = make_orchestrator(self.lab, slots=SLOTS)
        self.skill = self.lab.skill()
        self.attempts_seen: dict[str, int] = {}
        self.terminal: dict[str, str] = {}

    def teardown(self) -> None:
        self.lab.orchestrator.shutdown()
        self.lab.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _settle(self) -> None:
        assert self.lab.orchestrator.wait_idle(60), "turns still running after 60 s"

    @initialize()
    def nothing_yet(self) -> None:
        assert self.lab.store.runs() == ()

    @rule(
        target=runs,
        asks=st.integers(min_value=0, max_value=3),
        ending=st.sampled_from(sorted(ENDINGS)),
        profile=st.sampled_from(["resumable", "sticky_process"]),
        strict=st.booleans(),
    )
    def start(self, asks: int, ending: str, profile: str, strict: bool) -> str:
        case_id = f"s{next(_CASES)}"
        turns = [ASK] * asks + [ENDINGS[ending]]
        self.lab.case(case_id, *turns, resident=profile == "sticky_process")
        run_id = self.lab.start(
            self.skill, "codex", "interactive", case_id, profile=profile, require_user_reply=strict
        )
        self._settle()
        return run_id

    @rule(run_id=runs)
    def reply_right(self, run_id: str) -> None:
        run = self.lab.orchestrator.status(run_id)
        if run.state != "waiting_user" or run.pending is None:
            outcome = self.lab.orchestrator.reply(run_id, run.attempt_count, "formal")
            assert not outcome.accepted
            assert outcome.code == "RUN_NOT_WAITING"
            return
        outcome = self.lab.orchestrator.reply(run_id, run.pending["interaction_id"], "formal")
        assert outcome.accepted
        self._settle()

    @rule(run_id=runs, offset=st.sampled_from([-1, 1, 7]))
    def reply_stale(self, run_id: str, offset: int) -> None:
        before = self.lab.orchestrator.status(run_id)
        interaction_id = (before.pending or {}).get("interaction_id", before.attempt_count) + offset
        outcome = self.lab.orchestrator.reply(run_id, interaction_id, "stale")
        assert not outcome.accepted
        expected = "INTERACTION_STALE" if before.state == "waiting_user" else "RUN_NOT_WAITING"
        assert outcome.code == expected
        after = self.lab.orchestrator.status(run_id)
        assert (after.state, after.attempt_count, after.pending) == (
            before.state,
            before.attempt_count,
            before.pending,
        )

    @rule(run_id=runs)
    def reply_twice(self, run_id: str) -> None:
        run = self.lab.orchestrator.status(run_id)
        if run.state != "waiting_user" or run.pending is None:
            return
        interaction_id = run.pending["interaction_id"]
        first = self.lab.orchestrator.reply(run_id, interaction_id, "formal")
        second = self.lab.orchestrator.reply(run_id, interaction_id, "formal")
        assert first.accepted
        assert not second.accepted  # exactly one reply takes the interaction
        self._settle()

    @rule(run_id=runs)
    def cancel(self, run_id: str) -> None:
        was = self.lab.orchestrator.status(run_id).state
        assert self.lab.orchestrator.cancel(run_id) == (was not in TERMINAL_STATES)
        self._settle()
        run = self.lab.orchestrator.status(run_id)
        if was not in TERMINAL_STATES:
            assert (run.state, run.error_code) == ("canceled", "CANCELED_BY_USER")

    @rule(seconds=st.sampled_from([1, 600, 1300]))
    def advance_clock(self, seconds: int) -> None:
        self.lab.clock.advance(seconds)
        self.lab.orchestrator.check_deadlines()
        self._settle()

    @rule()
    def restart(self) -> None:
        self.lab.reopen(slots=SLOTS)
        self._settle()

    @rule(run_id=consumes(runs))
    def forget(self, run_id: str) -> None:
        """Stop choosing this run for later rules (it stays in the store and in the invariants)."""

    # -- invariants, checked after every step --------------------------------------------------

    @invariant()
    def states_and_pending(self) -> None:
        for run in self.lab.store.runs():
            assert run.state in STATES
            assert run.state != "running", f"{run.run_id} running while no turn runs"
            assert (run.pending is not None) == (run.state == "waiting_user"), run
            if run.pending is not None:
                assert run.pending["interaction_id"] == run.attempt_count
                assert run.wait_deadline_at is not None
            if run.run_id in self.terminal:
                assert run.state == self.terminal[run.run_id], "a terminal run changed state"
            elif run.state in TERMINAL_STATES:
                self.terminal[run.run_id] = run.state

    @invariant()
    def attempts_monotonic(self) -> None:
        for run in self.lab.store.runs():
            numbers = [attempt.attempt_number for attempt in self.lab.store.attempts(run.run_id)]
            assert numbers == list(range(1, run.attempt_count + 1))
            assert run.attempt_count >= self.attempts_seen.get(run.run_id, 0)
            self.attempts_seen[run.run_id] = run.attempt_count

    @invariant()
    def slots_not_leaked(self) -> None:
        holders = self.lab.orchestrator.slots.holders
        should = {
            run.run_id
            for run in self.lab.store.runs()
            if run.state == "running" or (run.state == "waiting_user" and run.profile == "sticky_process")
        }
        assert holders == should
        assert len(holders) <= SLOTS
        queued = [run for run in self.lab.store.runs() if run.state == "queued"]
        assert not queued or len(holders) == SLOTS, "a run queues while a slot is free"

    @invariant()
    def history_complete(self) -> None:
        for run in self.lab.store.runs():
            interactions = self.lab.store.interactions(run.run_id)
            events = self.lab.store.events(run.run_id)
            seqs = [event.seq for event in events]
            assert seqs == sorted(set(seqs))
            asked = [event for event in events if event.type == "user.input.required"]
            assert len(asked) == len(interactions)
            ids = [interaction.interaction_id for interaction in interactions]
            assert ids == sorted(set(ids))
            assert all(1 <= number <= run.attempt_count for number in ids)
            for interaction in interactions:
                is_open = run.state == "waiting_user" and interaction.interaction_id == run.attempt_count
                if is_open:
                    assert interaction.response is None
                elif run.state not in TERMINAL_STATES:
                    assert interaction.response is not None, "an interaction left behind unanswered"


Lifecycle.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestLifecycle = Lifecycle.TestCase
