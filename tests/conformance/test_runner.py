"""The runner's outcomes beyond pass/fail: skipped for a missing capability, errored for a broken target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turngate.implementations.reference_connector import ReferenceConnector
from turngate.judge.case_run import run_case
from turngate.judge.case_steps import _calls, _slots_held
from turngate.judge.catalog import load_catalog
from turngate.judge.pool import cases, run_all

CATALOG = {scenario.id: scenario for scenario in load_catalog()}
STICKY = "interactive-run-lifecycle/waiting-slot-policy/sticky-keeps-slot"
PLAIN = "interactive-run-lifecycle/max-attempt/exceeded-fails"


class WithoutClockAndSticky(ReferenceConnector):
    name = "no-clock"
    capabilities = ReferenceConnector.capabilities - {"clock", "sticky"}


class CrashesOnReply(ReferenceConnector):
    name = "crashes-on-reply"

    def reply(self, text: str, interaction_id: int | None) -> object:  # type: ignore[override]
        raise ConnectionResetError("the target hung up")


def test_a_missing_capability_skips_with_the_reason() -> None:
    result = run_case(CATALOG[STICKY], "codex", WithoutClockAndSticky())
    assert (result.outcome, result.message) == ("skipped", "target no-clock lacks: sticky")
    assert result.record is None


def test_a_broken_target_is_errored_with_the_reason_and_the_run_goes_on() -> None:
    result = run_case(CATALOG[PLAIN], "gemini", CrashesOnReply())
    assert result.outcome == "errored"
    assert result.message.startswith("ConnectionResetError: the target hung up")
    assert run_case(CATALOG[PLAIN], "gemini", ReferenceConnector()).outcome == "passed"


def test_parallel_and_serial_runs_give_the_same_records() -> None:
    planned = cases([CATALOG[PLAIN], CATALOG[STICKY]], ["iflow", "opencode"])
    serial = {(r.scenario_id, r.engine): r.record for r in run_all(planned, target="reference", jobs=1)}
    parallel = {(r.scenario_id, r.engine): r.record for r in run_all(planned, target="reference", jobs=2)}
    assert serial == parallel
    assert len(serial) == 4


def test_a_shared_call_log_gives_a_case_its_own_calls_and_the_probes_only(tmp_path: Path) -> None:
    """A server's engines write one log for every job: a slot filler killed before it noted its
    case names another case in its prompt and is not this case's call."""
    case = "x__codex"
    lines = [
        {"case": None, "action": "help", "argv": ["--help"], "stdin": None},
        {"case": case, "action": "run", "argv": ["exec", "tg-case-x__codex"], "stdin": None},
        {"case": None, "action": None, "argv": ["exec", "Inputs:\n- case: tg-case-x__codex__filler1"]},
        {"case": "y__codex", "action": "run", "argv": ["exec", "tg-case-y__codex"], "stdin": None},
        {"case": None, "action": None, "argv": ["exec", "resume", "S", "yes"], "stdin": None},
        {"case": None, "action": "version", "argv": ["--version"], "stdin": None},
    ]
    log = tmp_path / "calls.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert _calls(log, case, 0) == [lines[0], lines[1], lines[4]]


class _SlotLog:
    """What a slot_fill connector was asked, in order."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def fill_slots(self) -> None:
        self.asked.append("fill")

    def free_slots(self) -> None:
        self.asked.append("free")

    def settle(self) -> None:
        self.asked.append("settle")


def test_slots_held_for_a_step_are_given_back_then_the_target_settles() -> None:
    log = _SlotLog()
    with _slots_held(log, True):  # type: ignore[arg-type]  # a log, not a whole connector
        log.asked.append("step")
    assert log.asked == ["fill", "step", "free", "settle"]


def test_slots_held_for_a_step_that_fails_are_given_back_all_the_same() -> None:
    """A shared server must never keep them: the cases after would wait for a slot forever."""
    log = _SlotLog()
    with pytest.raises(RuntimeError), _slots_held(log, True):  # type: ignore[arg-type]
        raise RuntimeError("the target went away")
    assert log.asked == ["fill", "free"]
