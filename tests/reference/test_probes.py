"""The engine probes (``--help`` for the profile, ``--version`` for the codex flag) under engines that
misbehave (flood, hang, leave a grandchild holding the pipes): they are bounded like a turn.
`turngate serve` once read a flooding engine's whole ``--version`` answer: 4.3 GB resident for a
1 GiB flood (`nox -s bench`, serve_flood_memory).

Real subprocesses; no test compares an elapsed time to a limit.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.lingering import gone
from turngate.implementations.reference.processes import OneShot
from turngate.implementations.reference.profiles import PROBE_OUTPUT_LIMIT, probe_profile, probe_version


def _engine(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "engine"
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), encoding="utf-8")
    path.chmod(0o755)
    return path


def test_well_behaved_answers() -> None:
    engine = Path(sys.executable)  # python --version: one line, exit 0
    assert probe_version(engine, dict(os.environ)) == f"Python {sys.version.split()[0]}"


def test_an_answer_past_the_output_limit_is_no_answer(tmp_path: Path) -> None:
    # the sign of a resumable build and a version line, at the end of far more than a help text
    engine = _engine(
        tmp_path,
        f"""
        import os
        os.write(1, b"x" * {4 * PROBE_OUTPUT_LIMIT} + b"\\nexec resume SESSION_ID\\ncodex-cli 0.170.0\\n")
        """,
    )
    assert probe_version(engine, dict(os.environ)) is None
    assert probe_profile("codex", engine, dict(os.environ)) == "sticky_process"


def test_a_probe_that_hangs_is_stopped_by_its_timeout(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    engine = _engine(tmp_path, f"open({str(calls)!r}, 'a').write('x')\nimport time\ntime.sleep(120)\n")
    assert probe_profile("codex", engine, dict(os.environ), timeout=0.5) == "sticky_process"
    assert calls.read_text() == "x"  # stopped here: not asked again
    assert probe_version(engine, dict(os.environ), timeout=0.5) is None


# Dies at start the first time (killed from outside), answers as a resumable build the second.
_DIES_ONCE = """
import os, signal
calls = {calls!r}
first = not os.path.exists(calls)
open(calls, "a").write("x")
if first:
    os.kill(os.getpid(), signal.SIGKILL)
print("Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]")
"""


def test_a_probe_that_died_by_itself_is_asked_once_more_and_a_refusal_twice_is_an_answer(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    engine = _engine(tmp_path, _DIES_ONCE.format(calls=str(calls)))
    assert probe_profile("codex", engine, dict(os.environ)) == "resumable"
    assert calls.read_text() == "xx"
    refusing = _engine(tmp_path, f"open({str(calls)!r}, 'a').write('r')\nraise SystemExit(2)\n")
    assert probe_profile("codex", refusing, dict(os.environ)) == "sticky_process"
    assert calls.read_text() == "xxrr"


# Answers a version line and leaves a setsid'd grandchild holding its pipes (its pid in pid_file).
_LEAVES_A_HOLDER = """
import os, time
pid = os.fork()
if pid == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
open({pid_file!r}, "w").write(str(pid))
print("codex-cli 0.170.0", flush=True)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_setsid_grandchild_holding_the_pipes_neither_hangs_the_probe_nor_outlives_it(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    engine = _engine(tmp_path, _LEAVES_A_HOLDER.format(pid_file=str(pid_file)))
    assert probe_version(engine, dict(os.environ), timeout=60) == "codex-cli 0.170.0"
    assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_child_of_this_process_holding_the_pipes_as_it_starts_is_never_taken_for_the_holder(
    tmp_path: Path,
) -> None:
    """Another thread's child between its fork and its exec holds a copy of every descriptor this
    process has, an engine's pipes among them: a forked child stands in for it here. Only the
    engine's own descendant is killed; the sibling (another run's engine, a help probe) starts on."""
    pid_file = tmp_path / "grandchild.pid"
    engine = _engine(tmp_path, _LEAVES_A_HOLDER.format(pid_file=str(pid_file)))
    probe = OneShot([str(engine), "--version"], cwd=tmp_path, env=dict(os.environ))
    sibling = os.fork()
    if sibling == 0:  # holds the probe's pipes as a child being started would
        time.sleep(120)
        os._exit(0)
    try:
        turn = probe.wait(60)
        assert turn.stdout == b"codex-cli 0.170.0\n"
        assert gone(int(pid_file.read_text()))  # the engine's descendant holding the pipes: ended
        assert os.waitpid(sibling, os.WNOHANG) == (0, 0)  # this process's child: untouched
    finally:
        os.kill(sibling, signal.SIGKILL)
        os.waitpid(sibling, 0)
