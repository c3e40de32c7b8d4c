"""Which automatic-execution flag the reference gives codex, by the build's version.

Spec 003 allows `--full-auto` or `--yolo`; codex 0.169.0 refuses `--full-auto`
(exit 2), every build seen takes `--yolo`. The reference asks `codex --version`
and builds `--yolo` from 0.169.0 on (turngate/implementations/reference/commands.py).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from tests.reference.conftest import Lab
from turngate.implementations.reference.commands import codex_auto_flag_for
from turngate.implementations.reference.lifecycle import EngineSetup, Orchestrator, RunRequest

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'


@pytest.mark.parametrize(
    ("line", "flag"),
    [
        (None, "--full-auto"),
        ("", "--full-auto"),
        ("codex-cli 0.99.0", "--full-auto"),
        ("codex-cli 0.146.1", "--full-auto"),
        ("codex-cli 0.168.9", "--full-auto"),
        ("codex-cli 0.169.0", "--yolo"),
        ("codex-cli 0.170.2", "--yolo"),
        ("codex-cli 1.0.0", "--yolo"),
        ("not a version", "--full-auto"),
    ],
)
def test_flag_by_version_line(line: str | None, flag: str) -> None:
    assert codex_auto_flag_for(line) == flag


def _orchestrator(lab: Lab, emulate: str | None) -> Orchestrator:
    env = lab.engine_env() | ({"TURNGATE_EMULATE": emulate} if emulate else {})
    engines = EngineSetup(bin_dir=lab.bin, env=env, turn_timeout_sec=30.0)
    lab.orchestrator.shutdown()
    lab.orchestrator = Orchestrator(
        store=lab.store, runs_dir=lab.root / "runs", engines=engines, clock=lab.clock
    )
    return lab.orchestrator


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/codex-interactive")
@pytest.mark.parametrize(
    ("emulate", "flag"),
    [(None, "--full-auto"), ("codex@0.146.1", "--full-auto"), ("codex@0.169.0", "--yolo")],
)
def test_the_reference_runs_each_codex_build_with_a_flag_it_accepts(
    lab: Lab, emulate: str | None, flag: str
) -> None:
    _orchestrator(lab, emulate)
    lab.case("ask", [{"say": "Which style?"}], [{"say": DONE}])
    run = lab.settle(lab.start(lab.skill(), "codex", "interactive", "ask"))
    assert run.state == "waiting_user"
    assert lab.orchestrator.reply(run.run_id, 1, "formal").accepted
    assert lab.settle(run.run_id).state == "succeeded"
    turns = [call for call in lab.all_calls() if call["action"] == "run"]
    assert [flag in call["argv"] for call in turns] == [True, True]
    other = "--yolo" if flag == "--full-auto" else "--full-auto"
    assert not any(other in call["argv"] for call in turns)
    assert sum(call["action"] == "version" for call in lab.all_calls()) == 1  # asked once, cached


# A codex whose --version answers only once the test says so; anything else is the fake codex.
HELD_VERSION = """#!{python}
import os, sys, time
if sys.argv[1:] == ["--version"]:
    open({marker!r}, "w").close()
    for _ in range(6000):
        if os.path.exists({release!r}):
            break
        time.sleep(0.01)
os.execv({codex!r}, [{codex!r}, *sys.argv[1:]])
"""


def _wait_for(path: Path) -> None:
    for _ in range(6000):  # a bound on a wait, not a time asserted
        if path.exists():
            return
        time.sleep(0.01)
    raise AssertionError(f"{path.name} never appeared")


def test_the_version_is_asked_outside_the_orchestrators_lock(lab: Lab, tmp_path: Path) -> None:
    """The probe starts the engine: while it runs, every other call (a reply, a status, a cancel) must
    go on. It was asked under the lock, so one slow ``codex --version`` stalled the whole API."""
    marker, release = tmp_path / "asked", tmp_path / "release"
    held = tmp_path / "held-bin"
    held.mkdir()
    (held / "codex").write_text(
        HELD_VERSION.format(
            python=sys.executable, marker=str(marker), release=str(release), codex=str(lab.bin / "codex")
        )
    )
    (held / "codex").chmod(0o755)
    lab.orchestrator.shutdown()
    lab.orchestrator = Orchestrator(
        store=lab.store,
        runs_dir=lab.root / "runs",
        engines=EngineSetup(bin_dir=held, env=lab.engine_env(), turn_timeout_sec=30.0),
        clock=lab.clock,
    )
    lab.case("held", [{"say": DONE}])
    request = RunRequest(
        skill=lab.skill(), engine="codex", mode="auto", input={"case": "tg-case-held"}, profile="resumable"
    )
    submitted: list[str] = []
    submitter = threading.Thread(target=lambda: submitted.append(lab.orchestrator.submit(request)))
    submitter.start()
    try:
        _wait_for(marker)
        free = lab.orchestrator._lock.acquire(blocking=False)  # the probe is running now
        if free:
            lab.orchestrator._lock.release()
    finally:
        release.touch()
        submitter.join()
    assert free, "the orchestrator's lock was held while codex --version ran"
    assert lab.settle(submitted[0]).state == "succeeded"
