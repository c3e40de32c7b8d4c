"""A real CLI the orchestrator stopped before the model server answered its turn's last round did not play
the case's script: the case is skipped saying so, never judged on the stop. (A real opencode takes about
3 s to ask the model anything, so the 1 s turn budget of engine-fault/failed-after-marker/opencode-loop
made it "pass" with no model request at all; a real kilo slowed past 30 s "failed" with TIMEOUT.) And a
case that sets no turn budget gives a real CLI the reference's own (120 s), not the fakes' 30 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.realengines.stand_in import run_with_stand_in
from tests.turngate_cli import in_process
from turngate.base.json_lines import logged_objects
from turngate.engines.real.caseengines import REAL_TURN_TIMEOUT_SEC
from turngate.engines.real.lock import read_lock, select
from turngate.engines.real.played import not_played
from turngate.implementations.reference.lifecycle import EngineSetup
from turngate.implementations.reference_connector import ReferenceConnector
from turngate.judge.targets import Target

# One turn of two rounds (a tool call, then the answer), then a second turn of one.
SCRIPT: dict[str, Any] = {
    "turns": [
        {
            "steps": [
                {"tool": {"name": "bash", "input": {}, "output": "x", "exit_code": 0}},
                {"say": ["done"]},
            ]
        },
        {"steps": [{"say": ["again"]}]},
    ]
}


def call(outcome: str = "signal", start: float = 100.0, end: float = 110.0, **more: Any) -> dict[str, Any]:
    """A launcher's line; by default the orchestrator stopped the CLI (SIGTERM passed on, died of it)."""
    record = {"engine": "kilo", "real": "kilo@7.7.7", "action": "run", "outcome": outcome}
    stopped = 15 if outcome == "signal" else None
    record.update({"signal": stopped, "passed_on": stopped, "start": start, "end": end, **more})
    return record


def answer(turn: int | None, round_: int | None, time: float) -> dict[str, Any]:
    return {"seq": 1, "time": time, "turn": turn, "round": round_, "answer": "round"}


def test_a_cli_stopped_before_any_answer_did_not_play_its_script() -> None:
    side = answer(None, None, 101.0)  # a title request is no round of the script
    reason = not_played("kilo", SCRIPT, [call()], [side])
    assert reason == "stopped (signal 15) before the model server answered any request of its turn"


def test_a_cli_stopped_between_two_rounds_names_the_round_it_had_reached() -> None:
    reason = not_played("kilo", SCRIPT, [call()], [answer(1, 1, 103.0)])
    assert reason == "stopped (signal 15) in turn 1 after the model server answered round 1 of 2"


def test_an_answer_written_after_the_stop_was_not_given_to_the_cli() -> None:
    # A sleep step's answer is logged when it is written: after the CLI was killed waiting for it.
    reason = not_played("kilo", SCRIPT, [call()], [answer(1, 1, 103.0), answer(1, 2, 111.0)])
    assert reason == "stopped (signal 15) in turn 1 after the model server answered round 1 of 2"


def test_a_cli_stopped_after_its_last_answer_played_its_script() -> None:
    # opencode after a cut stream asks the model again for ever: the watchdog stopping it is the case.
    requests = [answer(1, 1, 101.0), answer(1, 2, 102.0), answer(1, 2, 103.0)]
    assert not_played("kilo", SCRIPT, [call()], requests) is None


def test_the_turn_a_stopped_cli_was_playing_is_the_one_its_requests_were_placed_at() -> None:
    first = call("exited", 100.0, 105.0, exit_code=0)
    second = call("signal", 106.0, 120.0)
    requests = [answer(1, 1, 101.0), answer(1, 2, 102.0), answer(2, 1, 110.0)]
    assert not_played("kilo", SCRIPT, [first, second], requests) is None
    requests = [answer(1, 1, 101.0), answer(1, 2, 102.0)]
    reason = not_played("kilo", SCRIPT, [first, second], requests)
    assert reason == "stopped (signal 15) before the model server answered any request of its turn"


def test_a_cli_that_ended_by_itself_early_is_judged_as_it_is() -> None:
    # Giving up after a model error is the CLI's own behaviour: the verdict stands.
    assert not_played("kilo", SCRIPT, [call("exited", exit_code=1)], [answer(1, 1, 101.0)]) is None


def test_a_cli_that_exits_0_on_the_signal_was_stopped_all_the_same() -> None:
    # codebuddy 2.118.2 ends on a SIGTERM with exit 0: the launcher's passed_on says who stopped it.
    stopped = call("exited", exit_code=0, passed_on=15)
    reason = not_played("kilo", SCRIPT, [stopped], [])
    assert reason == "stopped (signal 15) before the model server answered any request of its turn"


def test_a_cli_dying_of_its_own_signal_was_not_stopped() -> None:
    crashed = call("signal", signal=11, passed_on=None)
    assert not_played("kilo", SCRIPT, [crashed], [answer(1, 1, 101.0)]) is None
    # A line written before launchers noted passed_on: a CLI that died of a signal was stopped.
    older = {key: value for key, value in call().items() if key != "passed_on"}
    assert not_played("kilo", SCRIPT, [older], []) is not None


def test_fake_engines_and_probes_are_not_real_turns() -> None:
    fake = {**call(), "real": None}
    probe = {**call(), "action": "version"}
    other = {**call(), "engine": "iflow"}
    assert not_played("kilo", SCRIPT, [fake, probe, other], []) is None


def test_logged_objects_passes_over_a_line_cut_off_and_one_still_being_written(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    assert logged_objects(log) == []
    log.write_text('{"a": 1}\n{"b": \n[1]\n{"c": 3}', encoding="utf-8")
    assert logged_objects(log) == [{"a": 1}]


@pytest.mark.parametrize(
    "stand_in",
    [
        "exec sleep 600",  # dies of the SIGTERM
        "trap 'exit 0' TERM\nsleep 600 &\nwait",  # exits 0 on it, as codebuddy 2.118.2 does
    ],
    ids=["killed", "exits-0"],
)
def test_run_with_a_real_cli_slower_than_the_turn_budget_skips_the_case_saying_so(
    tmp_path: Path, stand_in: str
) -> None:
    scenario = "engine-fault/failed-after-marker/opencode-loop"  # turn_timeout_sec: 1
    # Stands in for the npm-installed opencode: it never asks the model anything (a slow start).
    done, case = run_with_stand_in(tmp_path, "opencode", scenario, stand_in)
    assert done.returncode == 5, done.stderr  # nothing verified: every case skipped
    assert case["outcome"] == "skipped"
    assert case["message"] == (
        "the real opencode did not play this script: stopped (signal 15) before the model server"
        " answered any request of its turn"
    )


def test_real_engines_get_the_references_own_turn_budget_where_a_case_sets_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The harness gives the fakes 30 s a turn; a real kilo takes 10-15 s, twice that on a loaded
    # machine, and was killed as TIMEOUT in cases about something else.
    import turngate.cli.run as run_module

    (pin,) = select(read_lock(), ["codex"])
    cache = tmp_path / "cache"
    pin.executable(cache).parent.mkdir(parents=True)
    pin.executable(cache).write_text("#!/bin/sh\nexit 99\n", encoding="utf-8")
    monkeypatch.setenv("TURNGATE_ENGINE_CACHE", str(cache))
    seen: list[Target] = []

    def no_cases(planned: object, *, target: Target, **_: object) -> list[object]:
        seen.append(target)
        return []

    monkeypatch.setattr(run_module, "run_all", no_cases)
    in_process("run", "--engines", "real", "--engine", "codex", "-k", "dual-track-gate")
    in_process("run", "--engine", "codex", "-k", "dual-track-gate")
    assert [target.turn_timeout_sec for target in seen] == [REAL_TURN_TIMEOUT_SEC, None]
    assert EngineSetup(Path("bin"), {}).turn_timeout_sec == REAL_TURN_TIMEOUT_SEC  # the reference's own
    budget = ReferenceConnector(turn_timeout_sec=REAL_TURN_TIMEOUT_SEC)._turn_timeout_sec
    assert seen[0].connector()._turn_timeout_sec == budget  # type: ignore[attr-defined]
    assert seen[1].connector()._turn_timeout_sec == 30.0  # type: ignore[attr-defined]
