"""Engine processes that flood their output or leave a grandchild holding the pipes: bounded output, a
watchdog that holds, and an engine group a crashed orchestrator left behind killed on restart.

Real subprocesses throughout. No test here compares an elapsed time to a limit: a
hang is shown to end by the named outcome it ends with.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.lingering import gone
from turngate.engines import readers
from turngate.implementations.reference.clock import ManualClock
from turngate.implementations.reference.lifecycle import EngineSetup, Orchestrator
from turngate.implementations.reference.outcome import ENGINE_OUTPUT_LIMIT, TIMEOUT, ProcessEnd, classify
from turngate.implementations.reference.processes import (
    OneShot,
    OutputLimits,
    Resident,
    _kill_pipe_holders,
    _TurnWatch,
    identity_of,
    kill_stale_group,
)
from turngate.implementations.reference.store import Store


def _script(tmp_path: Path, name: str, body: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


FLOOD = """
    import os, sys
    line = b'{"type":"item.completed","item":{"type":"agent_message","text":"' + b"x" * 200 + b'"}}\\n'
    while True:
        os.write(1, line * 64)
"""

# Starts a grandchild that leaves the engine's session but keeps its pipes, then (MODE) hangs or exits.
DETACHED = """
    import os, sys, time
    pid = os.fork()
    if pid == 0:
        os.setsid()
        time.sleep(600)
        os._exit(0)
    open(sys.argv[1], "w").write(str(pid))
    sys.stdout.write('{"type":"turn.completed"}\\n')
    sys.stdout.flush()
    if sys.argv[2] == "hang":
        time.sleep(600)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
class TestOneShot:
    def test_flood_past_the_limit_ends_the_turn_with_a_named_error(self, tmp_path: Path) -> None:
        limit = 1024 * 1024
        oneshot = OneShot(
            _script(tmp_path, "flood", FLOOD), cwd=tmp_path, env=dict(os.environ), limits=OutputLimits(limit)
        )
        turn = oneshot.wait(timeout=120)
        assert turn.end.killed_by == "output_limit"
        assert len(turn.stdout) == limit  # the first `limit` bytes, nothing more kept
        outcome = classify(readers.read("codex", turn.stdout, turn.stderr), turn.end, needs_session_id=False)
        assert outcome.error_code == ENGINE_OUTPUT_LIMIT

    @pytest.mark.parametrize("then", ["hang", "exit"])
    def test_a_setsid_grandchild_holding_the_pipes_neither_hangs_the_turn_nor_outlives_it(
        self, tmp_path: Path, then: str
    ) -> None:
        pid_file = tmp_path / "grandchild.pid"
        argv = [*_script(tmp_path, "detached", DETACHED), str(pid_file), then]
        turn = OneShot(argv, cwd=tmp_path, env=dict(os.environ)).wait(timeout=1.0)
        assert turn.stdout == b'{"type":"turn.completed"}\n'
        if then == "hang":
            assert turn.end.killed_by == "watchdog"
            transcript = readers.read("codex", turn.stdout)
            assert classify(transcript, turn.end, needs_session_id=False).error_code == TIMEOUT
        else:
            assert turn.end == ProcessEnd(0)
        assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
class TestResident:
    def test_flood_past_the_limit_ends_the_turn_with_a_named_error(self, tmp_path: Path) -> None:
        limit = 1024 * 1024
        resident = Resident(
            _script(tmp_path, "flood", FLOOD),
            cwd=tmp_path,
            env=dict(os.environ),
            engine="codex",
            limits=OutputLimits(limit),
        )
        turn = resident.read_turn(timeout=120)
        assert turn.end.killed_by == "output_limit"
        assert len(turn.stdout) == limit
        assert not resident.alive

    def test_a_setsid_grandchild_holding_the_pipes_does_not_outlive_the_kill(self, tmp_path: Path) -> None:
        pid_file = tmp_path / "grandchild.pid"
        argv = [*_script(tmp_path, "detached", DETACHED), str(pid_file), "hang"]
        resident = Resident(argv, cwd=tmp_path, env=dict(os.environ), engine="codex")
        turn = resident.read_turn(timeout=30)
        assert turn.end == ProcessEnd(None)  # the turn ended; the process waits for a reply
        resident.kill("ended")
        assert gone(int(pid_file.read_text()))

    def test_a_turn_read_in_many_small_chunks_is_read_a_bounded_number_of_times(self) -> None:
        """Work, not time: a turn growing in 10,000 steps with no quiet spell is read O(log n) times."""
        readings: list[int] = []
        size = 0
        watch = _TurnWatch(lambda: readings.append(size) is not None)
        for _ in range(10_000):
            size += 1000
            if watch.due(size):
                watch.read(size)
        assert sum(readings) <= 2 * size
        assert len(readings) <= 10

    def test_a_quiet_stream_is_read_again_at_once_the_first_time(self) -> None:
        watch = _TurnWatch(lambda: True)
        assert not watch.due(10)  # small and still arriving: not yet
        watch.quiet()
        assert watch.due(10)
        assert watch.read(10)
        assert not watch.due(10)  # nothing new since: never the same bytes twice


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_restart_kills_the_engine_group_a_crashed_orchestrator_left_behind(tmp_path: Path) -> None:
    engine = subprocess.Popen(["sleep", "600"], start_new_session=True)
    stranger = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        identity = identity_of(engine.pid)
        assert identity is not None
        store = Store(tmp_path / "store.sqlite3")
        store.remember_process("run-1", identity.pid, identity.started)
        # The stranger's pid is recorded with another start time: a recycled pid is never killed.
        store.remember_process("run-2", stranger.pid, "1")
        Orchestrator(
            store=store,
            runs_dir=tmp_path / "runs",
            engines=EngineSetup(bin_dir=tmp_path, env={}),
            clock=ManualClock(),
        )
        assert engine.wait(timeout=30) == -signal.SIGKILL
        assert stranger.poll() is None
        assert store.processes() == ()
        assert not kill_stale_group(identity)  # gone now: nothing to kill
    finally:
        for process in (engine, stranger):
            process.kill()
            process.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_fake_engine_detach_step_leaves_a_holder_of_its_pipes_that_the_turn_ends(tmp_path: Path) -> None:
    """The fake engines' `detach` step, seen from a plain pipe reader and from OneShot."""
    from turngate.engines.fake.install import install

    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "detach.yaml").write_text(
        'case: detach\nturns:\n  - steps:\n      - detach: 30\n      - say: "hi"\n', encoding="utf-8"
    )
    install(tmp_path / "bin")
    env = {
        **os.environ,
        "TURNGATE_SCRIPTS": str(tmp_path / "scripts"),
        "TURNGATE_STATE": str(tmp_path / "state"),
        "TURNGATE_CALL_LOG": str(tmp_path / "calls.jsonl"),
    }
    argv = [str(tmp_path / "bin" / "codex"), "exec", "--json", "--skip-git-repo-check", "tg-case-detach"]
    plain = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert plain.wait(timeout=60) == 0
    with pytest.raises(subprocess.TimeoutExpired):  # the engine is gone, its pipes are not closed
        plain.communicate(timeout=1)
    assert plain.stdout is not None
    assert plain.stderr is not None
    _kill_pipe_holders({os.fstat(plain.stdout.fileno()).st_ino})  # end the descendant now
    plain.stdout.close()
    plain.stderr.close()
    turn = OneShot(argv, cwd=tmp_path, env=env).wait(timeout=60)
    assert turn.end == ProcessEnd(0)
    assert readers.read("codex", turn.stdout).turn_end() is not None


# When a turn is over (docs/reference-orchestrator.md): an engine that lives on once its stream shows
# its end-of-turn signal, or once it closed both pipes, is stopped and its turn judged by its stream.
COMPLETE_TURN = """
    import os, sys, time
    sys.stdout.write('{"type":"thread.started","thread_id":"t-1"}\\n')
    done = '{\\"__SKILL_DONE__\\": true}'
    item = '{"id":"i","type":"agent_message","text":"%s"}' % done
    sys.stdout.write('{"type":"item.completed","item":%s}\\n' % item)
    sys.stdout.write('{"type":"turn.completed","usage":{}}\\n')
    sys.stdout.flush()
    MODE
"""


@pytest.mark.parametrize(
    ("mode", "end"),
    [
        pytest.param("time.sleep(600)", ProcessEnd(None), id="lives-on-after-its-end-of-turn"),
        pytest.param(
            "os.close(1); os.close(2); time.sleep(600)", ProcessEnd(None), id="closes-its-pipes-lives-on"
        ),
        pytest.param(
            "os.close(1); os.close(2); time.sleep(0.5)", ProcessEnd(0), id="closes-its-pipes-then-exits"
        ),
    ],
)
def test_a_complete_turn_is_judged_by_its_stream_whether_or_not_the_engine_exits(
    tmp_path: Path, mode: str, end: ProcessEnd
) -> None:
    argv = _script(tmp_path, "linger", COMPLETE_TURN.replace("MODE", mode))
    oneshot = OneShot(argv, cwd=tmp_path, env=dict(os.environ))
    # The watchdog is far: a turn that ended by it would say so (killed_by="watchdog").
    turn = oneshot.wait(600, engine="codex", linger_sec=2.0)
    assert turn.end == end
    outcome = classify(readers.read("codex", turn.stdout, turn.stderr), turn.end, needs_session_id=False)
    assert outcome.ok, outcome
    assert gone(oneshot.pid)


def test_without_its_end_of_turn_a_lingering_engine_waits_for_the_watchdog(tmp_path: Path) -> None:
    argv = _script(tmp_path, "silent", "import time\nprint('thinking', flush=True)\ntime.sleep(600)\n")
    turn = OneShot(argv, cwd=tmp_path, env=dict(os.environ)).wait(1.0, engine="codex", linger_sec=0.1)
    assert turn.end.killed_by == "watchdog"
