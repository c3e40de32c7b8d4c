"""The command connector against real implementation processes: the example passes, broken ones are errored.

Every implementation here is a real process started by the connector; the
broken ones (tests/cmdproto/impls/) are the example with one fault injected,
as Bowtie tests its harness with deliberately broken implementations.
"""

from __future__ import annotations

import multiprocessing
import os
import shlex
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from turngate.implementations.reference_connector import ReferenceConnector
from turngate.judge.case_run import run_case
from turngate.judge.catalog import Scenario, load_catalog
from turngate.judge.connectors.command import CommandConnector, command_connector
from turngate.protocol.connector import Observation

ROOT = Path(__file__).resolve().parents[2]
IMPLS = Path(__file__).resolve().parent / "impls"
CATALOG = {scenario.id: scenario for scenario in load_catalog(ROOT / "scenarios")}
EXAMPLE = f"{shlex.quote(sys.executable)} -m turngate.implementations.command_example"
PLAIN = "interactive-run-lifecycle/max-attempt/exceeded-fails"
REPRESENTATIVE = (
    PLAIN,  # events, history
    "interactive-run-lifecycle/strict-switch/sticky-strict-false",  # argv, clock, history, sticky
    "interactive-run-lifecycle/sticky-wait-timeout/sticky-timeout-fails",  # clock, slots, sticky
    "interactive-decision-policy/auto-patch/keeps-auto-semantics",  # patch
    "interactive-engine-turn-protocol/adapter-cli-command/interactive-resume",  # argv across a resume
    "engine-format/split-marker/gemini-deltas",  # a gemini output format chosen by the scenario
)
CASES = [(CATALOG[name], engine) for name in REPRESENTATIVE for engine in CATALOG[name].engines]


def impl(script: str, marker: Path | None = None) -> str:
    """The command line of a broken implementation; with a marker it breaks only once."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(IMPLS / script))}"
    return f"TG_ONCE_MARKER={shlex.quote(str(marker))} {command}" if marker else command


def run(scenario: Scenario, engine: str, connector: CommandConnector) -> tuple[str, str]:
    result = run_case(scenario, engine, connector)
    return result.outcome, result.message


@pytest.mark.parametrize(
    ("scenario", "engine"), CASES, ids=[f"{s.id.replace('/', '.')}.{engine}" for s, engine in CASES]
)
def test_the_example_passes_with_the_references_record(scenario: Scenario, engine: str) -> None:
    over_the_protocol = run_case(scenario, engine, command_connector(EXAMPLE))
    in_process = run_case(scenario, engine, ReferenceConnector())
    assert over_the_protocol.outcome == "passed", over_the_protocol.message
    assert over_the_protocol.record == in_process.record


def test_the_implementation_declares_itself_and_is_started_once() -> None:
    first, second = command_connector(EXAMPLE), command_connector(EXAMPLE)
    assert first.name == "cmd"
    assert first.capabilities == ReferenceConnector.capabilities
    assert (first.implementation.name, first.implementation.language) == ("turngate-reference", "python")
    assert run(CATALOG[PLAIN], "codex", first)[0] == "passed"
    assert run(CATALOG[PLAIN], "iflow", second)[0] == "passed"
    assert first.pid == second.pid == command_connector(EXAMPLE).pid


def test_answers_written_in_pieces_are_read_as_one_line() -> None:
    connector = command_connector(impl("split_writes.py"))
    result = run_case(CATALOG[PLAIN], "gemini", connector)
    assert result.outcome == "passed", result.message
    assert result.record == run_case(CATALOG[PLAIN], "gemini", ReferenceConnector()).record


def test_a_crash_is_errored_with_the_exit_code_and_stderr_and_the_next_case_gets_a_new_process(
    tmp_path: Path,
) -> None:
    command = impl("crashes_on_start.py", tmp_path / "crashed")
    crashing = command_connector(command)
    outcome, message = run(CATALOG[PLAIN], "codex", crashing)
    assert outcome == "errored"
    assert message.startswith(
        "turngate.judge.connectors.command.CommandProtocolError: implementation exited with code 3"
    )
    assert "stderr tail: crashing on purpose at run.start" in message
    crashing.close()  # again, after the runner's own close: still quiet
    following = command_connector(command)
    assert following.pid != crashing.pid
    assert run(CATALOG[PLAIN], "codex", following) == ("passed", "")


def test_a_connector_reused_after_a_crash_starts_its_next_case_on_a_new_process(tmp_path: Path) -> None:
    connector = command_connector(impl("crashes_on_start.py", tmp_path / "crashed"))
    crashed_pid = connector.pid
    assert run(CATALOG[PLAIN], "opencode", connector)[0] == "errored"
    assert run(CATALOG[PLAIN], "opencode", connector) == ("passed", "")
    assert connector.pid != crashed_pid


def test_a_hang_is_killed_after_the_timeout_and_the_next_case_gets_a_new_process(tmp_path: Path) -> None:
    command = impl("hangs_on_settle.py", tmp_path / "hung")
    hanging = command_connector(command, timeout_sec=2)
    outcome, message = run(CATALOG[PLAIN], "gemini", hanging)
    assert outcome == "errored"
    assert "CommandProtocolError: no answer to run.settle within 2 s" in message
    assert not _alive(hanging.pid)
    following = command_connector(command)
    assert following.pid != hanging.pid
    assert run(CATALOG[PLAIN], "gemini", following) == ("passed", "")


def test_an_answer_that_is_not_json_is_errored_with_the_line(tmp_path: Path) -> None:
    command = impl("invalid_json.py", tmp_path / "garbled")
    outcome, message = run(CATALOG[PLAIN], "iflow", command_connector(command))
    assert outcome == "errored"
    assert "CommandProtocolError: answer to run.observe is not JSON: 'observation: state=running'" in message
    assert run(CATALOG[PLAIN], "iflow", command_connector(command)) == ("passed", "")


def test_a_schema_invalid_observation_is_errored_naming_the_field(tmp_path: Path) -> None:
    command = impl("invalid_observation.py", tmp_path / "numeric")
    outcome, message = run(CATALOG[PLAIN], "codex", command_connector(command))
    assert outcome == "errored"
    assert (
        "CommandProtocolError: implementation answered run.observe with an invalid message: "
        "observation.state: 7 is not of type 'string'"
    ) in message
    assert run(CATALOG[PLAIN], "codex", command_connector(command)) == ("passed", "")


def test_an_error_answer_errors_the_case_but_keeps_the_process(tmp_path: Path) -> None:
    command = impl("refuses_start.py", tmp_path / "refused")
    refusing = command_connector(command)
    outcome, message = run(CATALOG[PLAIN], "codex", refusing)
    assert outcome == "errored"
    assert message.startswith(
        "turngate.judge.connectors.command.ImplementationError: implementation could not perform run.start "
        "[no-engine]: this engine is not installed here"
    )
    following = command_connector(command)
    assert following.pid == refusing.pid  # a well-formed refusal is not a broken process
    assert run(CATALOG[PLAIN], "codex", following) == ("passed", "")


def test_a_command_that_cannot_start_leaves_the_case_unreached_with_the_reason() -> None:
    connector = command_connector("/nonexistent/turngate-implementation --serve")
    assert (connector.implementation, connector.pid) == (None, None)
    outcome, message = run(CATALOG[PLAIN], "codex", connector)
    assert outcome == "unreached"
    first_line = message.split("\n")[0]
    assert first_line.startswith(
        "turngate.protocol.connector.TargetUnreachable: the implementation did not start: "
        "implementation exited with code 127 (stderr tail: "
    )
    assert "not found" in message


def test_a_refused_handshake_leaves_the_case_unreached_and_the_process_killed() -> None:
    connector = command_connector(impl("refuses_handshake.py"))
    outcome, message = run(CATALOG[PLAIN], "gemini", connector)
    assert outcome == "unreached"
    assert message.startswith(
        "turngate.protocol.connector.TargetUnreachable: the implementation did not start: the"
        " handshake was refused: implementation could not perform start: no licence for this machine"
    )


def test_the_implementations_are_stopped_when_python_exits(tmp_path: Path) -> None:
    program = textwrap.dedent(
        f"""
        from turngate.judge.connectors.command import command_connector
        print(command_connector({EXAMPLE!r}).pid, flush=True)
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=30, check=True, cwd=ROOT
    )
    pid = int(finished.stdout.strip())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_flood_on_stderr_never_blocks_and_only_its_tail_is_kept() -> None:
    connector = command_connector(impl("noisy_stderr.py"), timeout_sec=20)
    assert run(CATALOG[PLAIN], "opencode", connector) == ("passed", "")
    assert len(connector._process._stderr) == 20  # type: ignore[union-attr]


def test_capabilities_are_the_declared_words_turngate_knows() -> None:
    connector = command_connector(impl("unusual_capabilities.py"))
    assert connector.capabilities == ReferenceConnector.capabilities - {"clock"}
    sticky_timeout = CATALOG["interactive-run-lifecycle/sticky-wait-timeout/sticky-timeout-fails"]
    assert run(sticky_timeout, "codex", connector) == ("skipped", "target cmd lacks: clock")
    assert run(CATALOG[PLAIN], "codex", connector) == ("passed", "")


def _case_in_worker(command: str) -> tuple[str, int | None]:
    connector = command_connector(command, timeout_sec=10)
    return run(CATALOG[PLAIN], "iflow", connector)[0], connector.pid


def test_a_forked_worker_starts_its_own_process_and_leaves_the_parents_alone() -> None:
    parent = command_connector(EXAMPLE)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        outcome, worker_pid = pool.submit(_case_in_worker, EXAMPLE).result(timeout=60)
    assert outcome == "passed"
    assert worker_pid not in (None, parent.pid)
    assert not _alive(worker_pid)  # type: ignore[arg-type]  # it ended with the worker
    after = command_connector(EXAMPLE)
    assert after.pid == parent.pid
    assert run(CATALOG[PLAIN], "iflow", after) == ("passed", "")


class Recording(CommandConnector):
    """Keeps every Observation value, which the record only shows normalised."""

    seen: list[Observation]

    def observe(self) -> Observation:
        observation = super().observe()
        self.seen = [*getattr(self, "seen", []), observation]
        return observation


def test_the_observation_is_rebuilt_with_tuples_as_the_reference_gives_it() -> None:
    connector = Recording(EXAMPLE)
    assert run(CATALOG[PLAIN], "codex", connector) == ("passed", "")
    last = connector.seen[-1]
    assert all(isinstance(value, tuple) for value in (last.warnings, last.history, last.events))
    assert last.events
    assert last.history
    assert isinstance(last.extra["decisions"], list)
