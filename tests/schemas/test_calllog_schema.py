"""The call log's schema: the lines the fake engines (and the real-engine launchers) write validate."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args, resume_args
from tests.schemas.schemas import CALL_LOG, ROOT, line_problems, load, problems
from turngate.engines.real.lock import read_lock, select
from turngate.engines.real.npm_install import write_launchers

DONE = '{"greeting": "Hello", "__SKILL_DONE__": true}'


def _hang(bench: EngineBench) -> None:
    """A hanging engine: its line is written before it hangs; the caller then ends it."""
    process = subprocess.Popen(
        [str(bench.bin / "opencode"), *first_turn_args("opencode", "tg-case-hang")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=bench.workdir,
        env=bench.env(),
    )
    try:
        deadline = time.monotonic() + 15
        while '"hang"' not in bench.call_log.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        process.terminate()
        process.communicate(timeout=10)


@pytest.fixture
def played(bench: EngineBench) -> list[dict[str, Any]]:
    """Every engine's first turn and a resume, probes, refusals and abnormal endings, in one call log."""
    bench.case("greet", turns=[{"steps": [{"say": "Which style?"}]}, {"steps": [{"say": DONE}]}])
    bench.case("crash", turns=[{"steps": [{"say": "partly"}, {"crash": {"exit_code": 3}}]}])
    bench.case("killed", turns=[{"steps": [{"crash": {"signal": "SIGKILL"}}]}])
    bench.case(
        "cut", turns=[{"steps": [{"say": "a long answer"}, {"truncate": {"at": 0.5, "exit_code": 1}}]}]
    )
    bench.case("hang", turns=[{"steps": [{"say": "thinking hard"}, {"hang": True}]}])
    skill = bench.workdir / ".codex" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\n---\n\nGreet the user.\n", encoding="utf-8")
    for engine in ENGINES:
        first = bench.run(
            engine, first_turn_args(engine, "Run greet. tg-case-greet"), TURNGATE_CALL_LOG_OUTPUT="1"
        )
        assert first.returncode == 0, first.err
        bench.run(engine, ["--version"])
    session = str(bench.calls()[0]["session_id"])
    assert bench.run("codex", resume_args("codex", session, "Formal")).returncode == 0
    bench.run("codex", ["exec", "--no-such-flag"])  # a usage error
    bench.run("gemini", resume_args("gemini", "no-such-session", "hello"))  # an engine error
    bench.run("iflow", first_turn_args("iflow", "a prompt without a case token"))  # a script error
    bench.run("codex", ["exec", "--skip-git-repo-check", "--json", "-"], stdin=b"tg-case-greet from stdin")
    bench.run("gemini", first_turn_args("gemini", "tg-case-crash"))
    bench.run("iflow", first_turn_args("iflow", "tg-case-killed"))
    bench.run("opencode", first_turn_args("opencode", "tg-case-cut"))
    _hang(bench)
    return bench.calls()


def test_every_line_the_fake_engines_write_validates(
    bench: EngineBench, played: list[dict[str, Any]]
) -> None:
    assert line_problems(CALL_LOG, bench.call_log.read_text(encoding="utf-8")) == []
    # the log shows what the schema constrains: every way an invocation ends, its bytes, the skills it saw
    assert {call["outcome"] for call in played} == {
        "exited", "crashed", "signal", "truncated", "hang", "usage_error", "script_error", "engine_error",
    }  # fmt: skip
    assert {call["action"] for call in played} == {"run", "version", None}
    assert any(call["resumed"] for call in played) and any(call["stdin"] for call in played)
    assert any(call["error"] for call in played) and any("output" in call for call in played)
    assert any(call.get("skills") for call in played) and any("output_format" in call for call in played)


def test_a_real_engine_launchers_line_validates(tmp_path: Path) -> None:
    """The launcher of a pinned real CLI (here a stand-in script) writes its own line to the same log."""
    (pin,) = select(read_lock(), ["codex"])
    executable = pin.executable(tmp_path / "cache")
    executable.parent.mkdir(parents=True)
    executable.write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    executable.chmod(0o755)
    call_log = tmp_path / "calls.jsonl"
    write_launchers(
        tmp_path / "bin", [pin], tmp_path / "cache", model_url="http://127.0.0.1:9", call_log=call_log
    )
    subprocess.run(
        [str(tmp_path / "bin" / "codex"), "exec", "tg-case-abc"],
        capture_output=True,
        env={"PATH": os.environ["PATH"], "TURNGATE_STATE": str(tmp_path / "state")},
        check=False,
        timeout=60,
    )
    text = call_log.read_text(encoding="utf-8")
    assert json.loads(text)["real"] == pin.name
    assert line_problems(CALL_LOG, text) == []


def test_the_schema_has_every_outcome_the_docs_list() -> None:
    """docs/fake-engines.md lists the outcomes a reader may meet ("`outcome` is one of ..."); the
    schema has each."""
    docs = (ROOT / "docs" / "fake-engines.md").read_text(encoding="utf-8")
    listed = re.search(r"`outcome` is one of (.*?)\.", docs, re.DOTALL)
    assert listed is not None
    named = re.findall(r"`([a-z_]+)`", listed.group(1))
    assert "exited" in named and set(named) <= set(load(CALL_LOG)["properties"]["outcome"]["enum"])


LINE: dict[str, Any] = {
    "engine": "codex", "argv": ["exec", "--json", "tg-case-greet"], "cwd": "/run", "env": {"HOME": "/home/u"},
    "stdin": None, "action": "run", "case": "greet", "case_source": "prompt", "session_id": "0199-a",
    "resumed": False, "turns": [1], "exit_code": 0, "outcome": "exited", "error": None, "pid": 1234,
    "start": 1763812345.123, "end": 1763812345.140,
}  # fmt: skip

BROKEN: list[tuple[str, dict[str, Any]]] = [
    ("an outcome that does not exist", {"outcome": "exploded"}),
    ("no argv", {"argv": ...}),
    ("argv a string", {"argv": "exec --json"}),
    ("turn 0 (turns are 1-based)", {"turns": [0]}),
    ("an environment value that is not a string", {"env": {"HOME": 1}}),
    ("an engine turngate does not fake", {"engine": "aider"}),
    ("a fake engine's line without its turns", {"turns": ...}),
    ("a case from nowhere", {"case_source": "guess"}),
    ("a script error that is not one", {"outcome": "script_error", "error": {"code": "X"}}),
    ("a real launcher's line with a fake engine's fields", {"real": "codex@0.169.0", "signal": None}),
    ("a real launcher's line that hangs", {"real": "codex@0.169.0", "signal": None, "outcome": "hang"}),
]


@pytest.mark.parametrize(("broken", "change"), BROKEN, ids=[item[0] for item in BROKEN])
def test_a_broken_line_is_rejected(broken: str, change: dict[str, Any]) -> None:
    assert problems(CALL_LOG, LINE) == []
    line = {name: value for name, value in {**LINE, **change}.items() if value is not ...}
    assert problems(CALL_LOG, line) != [], broken


REAL_LINE: dict[str, Any] = {
    "engine": "codebuddy", "argv": ["-p", "tg-case-greet"], "cwd": "/run", "env": {"HOME": "/home/u"},
    "stdin": None, "action": "run", "case": "greet", "case_source": "prompt", "resumed": False,
    "real": "codebuddy@2.118.2", "pid": 1234, "start": 1763812345.1, "exit_code": 0, "outcome": "exited",
    "signal": None, "passed_on": 15, "end": 1763812346.2,
}  # fmt: skip


def test_a_real_launchers_line_of_any_pinned_engine_says_which_signal_it_passed_on() -> None:
    # codebuddy exits 0 on the SIGTERM that stopped its turn: passed_on says it was stopped.
    assert problems(CALL_LOG, REAL_LINE) == []
    assert problems(CALL_LOG, {**REAL_LINE, "passed_on": None}) == []
    assert problems(CALL_LOG, {**REAL_LINE, "passed_on": 0}) != []
    assert problems(CALL_LOG, {**REAL_LINE, "real": "aider@1.0"}) != []
