"""A call begun but not yet written: the judge waits for it once a run has ended, never forever."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from turngate.judge.connectors.call_log import LogMarks, started_path, unfinished, wait_finished


def _begin(log: Path, case: str, pid: int, start: float = 1.0) -> None:
    with started_path(log).open("a", encoding="utf-8") as file:
        file.write(json.dumps({"engine": "codex", "case": case, "pid": pid, "start": start}) + "\n")


def _end(log: Path, case: str, pid: int, start: float = 1.0) -> None:
    with log.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"engine": "codex", "case": case, "pid": pid, "start": start}) + "\n")


class Clock:
    """An injected clock: each pause moves it on, so the bound is reached without real waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses = 0

    def __call__(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.pauses += 1
        self.now += seconds


def test_a_call_begun_by_a_live_process_is_waited_for_until_the_bound(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    marks = LogMarks.of(log)
    _begin(log, "one", os.getpid())  # this process: alive
    _begin(log, "two", os.getpid(), start=2.0)  # another case: not this one's business
    clock = Clock()
    left = wait_finished(log, marks, "one", bound_sec=1.0, clock=clock, pause=clock.pause)
    assert [call["case"] for call in left] == ["one"]
    assert clock.now >= 1.0
    _end(log, "one", os.getpid())
    assert unfinished(log, marks, "one") == []


def test_a_written_call_or_a_process_gone_without_a_word_is_not_waited_for(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    _end(log, "earlier", 1)  # before the mark: not this case's
    marks = LogMarks.of(log)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    _begin(log, "one", int(gone.stdout))  # killed before it wrote its line: never coming
    _begin(log, "one", os.getpid(), start=3.0)
    _end(log, "one", os.getpid(), start=3.0)
    clock = Clock()
    assert wait_finished(log, marks, "one", bound_sec=5.0, clock=clock, pause=clock.pause) == []
    assert clock.pauses == 0


def test_the_fake_engine_says_a_call_has_begun_before_it_plays(tmp_path: Path) -> None:
    """The companion line is written with the call's pid and start, which its log line repeats."""
    from turngate.engines.fake.calllog import CallLog

    log = tmp_path / "calls.jsonl"
    call = CallLog(str(log), "codex", ["exec"], {})
    call.note(case="one")
    call.started()
    marks = LogMarks(0, 0)
    assert [begun["case"] for begun in unfinished(log, marks, "one")] == ["one"]
    call.write("exited", 0)
    assert unfinished(log, marks, "one") == []
