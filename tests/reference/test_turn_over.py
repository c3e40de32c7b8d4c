"""When an engine's turn is over: opencode ends each step of a turn with step_finish, and only
reason "stop" ends the turn (ENGINE_FORMATS.md). A step ended by a tool call ("tool-calls") is
followed by the model's next answer, which may take a while; the turn is not over there, and a turn
read as over at that point was stopped after the linger and failed (scenario
engine-fault/linger/slow-answer-after-tool)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from turngate.engines import readers
from turngate.implementations.reference.outcome import ProcessEnd, classify
from turngate.implementations.reference.processes import OneShot, turn_over


def _line(kind: str, **part: object) -> bytes:
    return (json.dumps({"type": kind, "timestamp": 1, "sessionID": "ses_x", "part": part}) + "\n").encode()


TOOL_STEP = (
    _line("step_start", type="step-start")
    + _line(
        "tool_use",
        type="tool",
        tool="bash",
        callID="call_1",
        state={"status": "completed", "input": {"command": "ls"}, "output": "SKILL.md\n"},
    )
    + _line("step_finish", type="step-finish", reason="tool-calls")
)
ANSWER_STEP = (
    _line("step_start", type="step-start")
    + _line("text", type="text", text='{"greeting": "Hello", "__SKILL_DONE__": true}')
    + _line("step_finish", type="step-finish", reason="stop")
)


@pytest.mark.parametrize(
    ("stdout", "over"),
    [
        (TOOL_STEP, False),  # a step ended by a tool call: the model answers next
        (TOOL_STEP.replace(b"tool-calls", b"unknown"), False),  # a step opencode asks again after
        (TOOL_STEP + ANSWER_STEP, True),
        (b"", False),
    ],
)
def test_only_a_stop_ends_an_opencode_turn(stdout: bytes, over: bool) -> None:
    assert turn_over("opencode", readers.read("opencode", stdout)) is over


def test_a_failed_end_of_turn_still_ends_the_other_engines_turns() -> None:
    failed = b'{"type":"thread.started","thread_id":"t"}\n{"type":"turn.failed","error":{"message":"x"}}\n'
    assert turn_over("codex", readers.read("codex", failed)) is True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_slow_answer_after_a_tool_call_is_waited_for(tmp_path: Path) -> None:
    """The model takes longer than the linger after the tool call: the engine is not stopped, and its
    turn ends with its answer."""
    script = tmp_path / "opencode.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, time
            os.write(1, {TOOL_STEP!r})
            time.sleep(1.5)
            os.write(1, {ANSWER_STEP!r})
            """
        ),
        encoding="utf-8",
    )
    turn = OneShot([sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ)).wait(
        60, engine="opencode", linger_sec=0.3
    )
    assert turn.end == ProcessEnd(0)  # it exited by itself: not stopped as lingering after its tool step
    transcript = readers.read("opencode", turn.stdout, turn.stderr)
    assert transcript.assistant_messages() == ('{"greeting": "Hello", "__SKILL_DONE__": true}',)
    assert classify(transcript, turn.end, needs_session_id=False).ok
