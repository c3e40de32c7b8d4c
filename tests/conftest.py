"""Shared fixtures: fake engines installed into a temporary folder and run as real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

from turngate.engines.fake.install import install
from turngate.engines.fake.script import write_compiled
from turngate.judge.case_folder import FIXED_EPOCH_MS  # deterministic timestamps: 1 ms per event from here

# In CI every property test runs the same examples each time: a new random example that fails is
# for a developer's run or `nox -s fuzz` to find, not a red build for an unrelated change.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that mostly wait on real time go first: pytest-xdist gives each worker a block of the
    collection and the others take work from its end, so a worker that waits a minute at the start
    leaves the cores to the rest (`nox -s tests` runs twice as many workers as cores)."""
    items.sort(key=lambda item: item.get_closest_marker("mostly_waiting") is None)


@pytest.fixture(autouse=True)
def _signals_left_as_found() -> Iterator[None]:
    """A test leaves the process's Ctrl-C and SIGTERM handling as it found them: a worker left
    ignoring SIGINT passes that on to every `turngate run` it starts later, and the Ctrl-C tests
    there then fail (the run ignores the signal and finishes), far from the test to blame."""
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    yield
    after = {number: signal.getsignal(number) for number in before}
    assert after == before, f"signal handlers changed by this test: {before} -> {after}"


@dataclass(frozen=True)
class Played:
    """What one engine process did."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8")

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]


@dataclass(frozen=True)
class EngineBench:
    """A folder with launchers, scripts, state and a call log, for one test."""

    root: Path
    bin: Path
    scripts: Path
    state: Path
    call_log: Path
    workdir: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self.root / "home"),
            "TURNGATE_SCRIPTS": str(self.scripts),
            "TURNGATE_STATE": str(self.state),
            "TURNGATE_CALL_LOG": str(self.call_log),
            "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS),
        }
        env.update(extra)
        return env

    def case(self, case_id: str, **script: Any) -> Path:
        """Write a case script (given as keyword fields) and return its path."""
        path = self.scripts / f"{case_id}.yaml"
        # Compiled into the engines' cache now, as a harness does: every engine start of the test takes
        # the fast path instead of the first one importing PyYAML and jsonschema (an invalid script is
        # left for the engine to report, as it is without this).
        write_compiled(
            str(path), yaml.safe_dump({"case": case_id, **script}, sort_keys=False), str(self.state)
        )
        return path

    def run(
        self,
        engine: str,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float = 20,
        cwd: Path | None = None,
        **env: str,
    ) -> Played:
        completed = subprocess.run(
            [str(self.bin / engine), *args],
            input=stdin if stdin is not None else b"",
            capture_output=True,
            cwd=cwd or self.workdir,
            env=self.env(**env),
            timeout=timeout,
            check=False,
        )
        return Played(completed.returncode, completed.stdout, completed.stderr)

    def start(self, engine: str, args: Sequence[str]) -> subprocess.Popen[bytes]:
        """The engine started and left running (stdin empty, both outputs piped): for a caller that
        watches it, then ends it."""
        return subprocess.Popen(
            [str(self.bin / engine), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.workdir,
            env=self.env(),
        )

    def calls(self) -> list[dict[str, Any]]:
        if not self.call_log.exists():
            return []
        return [json.loads(line) for line in self.call_log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[EngineBench]:
    root = tmp_path
    paths = EngineBench(
        root=root,
        bin=root / "bin",
        scripts=root / "scripts",
        state=root / "state",
        call_log=root / "calls.jsonl",
        workdir=root / "run",
    )
    for folder in (paths.scripts, paths.workdir, root / "home"):
        folder.mkdir(parents=True)
    install(paths.bin)
    yield paths


# The command lines an orchestrator builds (../shared/ENGINE_FORMATS.md), first turn.
def first_turn_args(engine: str, prompt: str, *, gemini_format: str = "stream-json") -> list[str]:
    match engine:
        case "codex":
            return ["exec", "--skip-git-repo-check", "--json", "--full-auto", prompt]
        case "gemini":
            return ["--yolo", "--output-format", gemini_format, prompt]
        case "iflow":
            return ["--yolo", "--thinking", "-p", prompt]
        case "opencode":
            return ["run", "--format", "json", prompt]
        case "kilo":  # Skill-Runner v0.7.9's, without its `--dir RUN` (the tests run in RUN)
            return ["run", "--format", "json", "--auto", "--thinking", prompt]
        case "claude":  # Skill-Runner v0.7.9's claude command line
            return ["-p", "--output-format", "stream-json", "--verbose", prompt]
        case "qwen":
            return ["--output-format", "stream-json", "--approval-mode", "yolo", "-p", prompt]
        case "codebuddy":
            return ["-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions", prompt]
    raise ValueError(engine)


def resume_args(engine: str, session_id: str, reply: str, *, gemini_format: str = "stream-json") -> list[str]:
    match engine:
        case "codex":
            return ["exec", "resume", "--skip-git-repo-check", "--json", "--full-auto", session_id, reply]
        case "gemini":
            return ["--resume", session_id, "--yolo", "--output-format", gemini_format, reply]
        case "iflow":
            return ["--resume", session_id, "--yolo", "--thinking", "-p", reply]
        case "opencode":
            return ["run", f"--session={session_id}", "--format", "json", reply]
        case "kilo":
            return ["run", "--format", "json", "--auto", "--thinking", "--session", session_id, reply]
        case "claude":
            return ["--resume", session_id, "-p", "--output-format", "stream-json", "--verbose", reply]
        case "qwen":
            return [
                "--output-format",
                "stream-json",
                "--approval-mode",
                "yolo",
                "--resume",
                session_id,
                "-p",
                reply,
            ]
        case "codebuddy":
            flags = ["-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions"]
            return [*flags, "-r", session_id, reply]
    raise ValueError(engine)


ENGINES = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
