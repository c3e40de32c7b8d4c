"""The SQLite store: round trips, atomic transitions, and surviving a SIGKILL of the orchestrator."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.reference.conftest import Lab, write_skill
from turngate.implementations.reference.store import RunRecord, Store


def _record(run_id: str = "run-1") -> RunRecord:
    return RunRecord(
        run_id=run_id, skill_id="greet", engine="codex", mode="interactive", profile="resumable",
        require_user_reply=True, session_timeout_sec=1200, max_attempt=None, state="queued", attempt_count=0,
        session_id=None, pending=None, wait_deadline_at=None, warnings=(),
        error_code=None, error_message=None,
        result=None, run_dir="/tmp/x", request={"input": {"a": 1}},
        created_at=1.0, updated_at=1.0,
    )  # fmt: skip


def test_run_round_trip_and_update(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    with store.transaction() as tx:
        tx.insert_run(_record())
    with store.transaction() as tx:
        tx.update_run(_record(), state="waiting_user", pending={"interaction_id": 1}, warnings=("W",))
    run = store.run("run-1")
    assert run == dataclasses.replace(
        _record(), state="waiting_user", pending={"interaction_id": 1}, warnings=("W",)
    )
    assert run is not None
    assert (run.state, run.pending, run.warnings, run.request) == (
        "waiting_user", {"interaction_id": 1}, ("W",), {"input": {"a": 1}}
    )  # fmt: skip


def test_a_failed_transition_writes_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    with store.transaction() as tx:
        tx.insert_run(_record())
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.update_run(_record(), state="failed")
        tx.append_event("run-1", "conversation.failed", 1, 2.0, {})
        raise RuntimeError("crash between two writes")
    run = store.run("run-1")
    assert run is not None
    assert run.state == "queued"
    assert store.events("run-1") == ()


def test_event_seq_strictly_increases_per_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    with store.transaction() as tx:
        seqs = [tx.append_event(run, "x", 1, 0.0, {}) for run in ("a", "b", "a", "a", "b")]
    assert seqs == [1, 1, 2, 3, 2]
    assert [event.seq for event in store.events("a")] == [1, 2, 3]


_CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from turngate.implementations.reference.clock import ManualClock
    from turngate.implementations.reference.lifecycle import EngineSetup, Orchestrator, RunRequest
    from turngate.implementations.reference.skill import load_skill
    from turngate.implementations.reference.store import Store
    import json
    root = Path(sys.argv[1])
    env = json.loads(sys.argv[2])
    store = Store(root / "turngate.sqlite3")
    orchestrator = Orchestrator(store=store, runs_dir=root / "runs", clock=ManualClock(),
                                engines=EngineSetup(bin_dir=root / "bin", env=env))
    skill = load_skill(root / "skills" / "greet")
    run_id = orchestrator.submit(RunRequest(skill=skill, engine="codex", mode="interactive",
                                            input={"case": "tg-case-ask"}, profile="resumable"))
    orchestrator.wait_idle(60)
    print(run_id, orchestrator.status(run_id).state, flush=True)
    time.sleep(600)
    """
)


@pytest.mark.spec("interactive-run-lifecycle/interaction-history/ask-reply-recorded")
def test_sigkill_of_the_orchestrator_loses_no_waiting_run(lab: Lab) -> None:
    write_skill(lab.root / "skills")
    lab.case(
        "ask",
        [{"say": "Which greeting style do you want?"}],
        [{"say": '{"greeting": "Hi", "__SKILL_DONE__": true}'}],
    )
    lab.store.close()
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(lab.root), json.dumps(lab.engine_env())],
        stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2], env={**os.environ},
    )  # fmt: skip
    assert child.stdout is not None
    run_id, state = child.stdout.readline().decode().split()
    assert state == "waiting_user"
    before = Store(lab.root / "turngate.sqlite3")
    snapshot = (before.run(run_id), before.interactions(run_id), before.events(run_id))
    before.close()
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    lab.store = Store(lab.root / "turngate.sqlite3")
    from tests.reference.conftest import make_orchestrator

    lab.orchestrator = make_orchestrator(lab)  # recovery runs on open
    after = (lab.store.run(run_id), lab.store.interactions(run_id), lab.store.events(run_id))
    assert after == snapshot
    run = after[0]
    assert run is not None
    assert run.state == "waiting_user"
    assert run.pending is not None
    assert lab.orchestrator.reply(run_id, run.pending["interaction_id"], "formal").accepted
    assert lab.settle(run_id).state == "succeeded"
