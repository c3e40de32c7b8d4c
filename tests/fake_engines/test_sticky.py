"""Sticky resident mode over a pseudo-terminal, driven with pexpect as an orchestrator would."""

from __future__ import annotations

import pexpect
import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args
from turngate.engines.fake.engine import STDIN_PROTOCOL_ENGINES

END_OF_TURN = {
    "codex": '"type":"turn.completed"',
    "gemini": '"type":"result"',
    "iflow": "</Execution Info>",
    "opencode": '"type":"step_finish"',
    "claude": '"type":"result"',
    "qwen": '"type":"result"',
    "codebuddy": '"type":"result"',
    "kilo": '"type":"step_finish"',
}


@pytest.mark.pty
@pytest.mark.parametrize("engine", [engine for engine in ENGINES if engine not in STDIN_PROTOCOL_ENGINES])
def test_two_turn_sticky_conversation(bench: EngineBench, engine: str) -> None:
    bench.case(
        "sticky",
        resident=True,
        turns=[
            {"steps": [{"say": "Which greeting style do you want?"}]},
            {"steps": [{"say": '{"greeting": "Good day", "__SKILL_DONE__": true}'}]},
        ],
    )
    child = pexpect.spawn(
        str(bench.bin / engine),
        first_turn_args(engine, "tg-case-sticky"),
        cwd=str(bench.workdir),
        env=bench.env(),
        encoding="utf-8",
        timeout=20,
    )
    child.setecho(False)
    try:
        child.expect_exact("Which greeting style do you want?")
        child.expect_exact(END_OF_TURN[engine])
        assert child.isalive(), "a resident engine waits for the reply"

        child.sendline("Formal, please")
        child.expect_exact("Good day")
        child.expect_exact(END_OF_TURN[engine])
        assert child.isalive()

        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    (call,) = bench.calls()
    assert call["turns"] == [1, 2]
    assert call["stdin"] == ["Formal, please"]


@pytest.mark.parametrize("engine", sorted(STDIN_PROTOCOL_ENGINES))
def test_a_stdin_protocol_engine_given_its_prompt_answers_once_and_exits(
    bench: EngineBench, engine: str
) -> None:
    """claude, qwen and codebuddy stay resident only with --input-format stream-json (their tests);
    started with a prompt on the command line they answer it and exit, as the real CLIs do, whatever
    the script's `resident` says: a sticky orchestrator that starts them so finds them gone."""
    bench.case(
        "prompted",
        resident=True,
        turns=[{"steps": [{"say": "Which greeting style do you want?"}]}, {"steps": [{"say": "Good day"}]}],
    )
    done = bench.run(engine, first_turn_args(engine, "tg-case-prompted"), stdin=b"Formal, please\n")
    assert done.returncode == 0
    assert b"Which greeting style do you want?" in done.stdout
    assert b"Good day" not in done.stdout
    (call,) = bench.calls()
    assert (call["turns"], call["stdin"]) == ([1], None)  # stdin never read


@pytest.mark.pty
def test_sticky_engine_killed_while_waiting_logs_its_call(bench: EngineBench) -> None:
    bench.case("sticky-wait", resident=True, turns=[{"steps": [{"say": "Still there?"}]}])
    child = pexpect.spawn(
        str(bench.bin / "codex"),
        first_turn_args("codex", "tg-case-sticky-wait"),
        cwd=str(bench.workdir),
        env=bench.env(),
        encoding="utf-8",
        timeout=20,
    )
    child.expect_exact('"type":"turn.completed"')
    child.terminate(force=True)  # SIGHUP, then SIGINT: the orchestrator's timeout path
    (call,) = bench.calls()
    assert call["outcome"] == "killed"
    assert call["turns"] == [1]
