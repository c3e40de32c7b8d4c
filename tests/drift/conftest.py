"""Captures made by playing the fake engines as real processes, for the drift tests."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import yaml

from fake_engines.install import install
from harness.drift.capture import Capture
from harness.reference.commands import CommandOptions, build_command
from harness.runner import FIXED_EPOCH_MS

Play = Callable[..., Capture]


@pytest.fixture(scope="session")
def play(tmp_path_factory: pytest.TempPathFactory) -> Play:
    root = tmp_path_factory.mktemp("drift-engines")
    install(root / "bin")
    (root / "scripts").mkdir()
    env = {
        **os.environ,
        "TURNGATE_SCRIPTS": str(root / "scripts"),
        "TURNGATE_STATE": str(root / "state"),
        "TURNGATE_CALL_LOG": str(root / "calls.jsonl"),
        "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS),
    }
    count = 0

    def run(
        engine: str,
        steps: list[Mapping[str, Any]],
        *,
        mode: str = "interactive",
        gemini: str = "json",
        **turn: Any,
    ) -> Capture:
        nonlocal count
        count += 1
        case = f"drift-{count}"
        script = {"case": case, "turns": [{"steps": steps, **turn}]}
        (root / "scripts" / f"{case}.yaml").write_text(yaml.safe_dump(script), encoding="utf-8")
        run_dir = root / "runs" / case
        run_dir.mkdir(parents=True)
        argv = build_command(
            engine,
            mode,
            prompt=f"Run greet.\n- case: tg-case-{case}",
            options=CommandOptions(gemini_output_format=gemini if engine == "gemini" else None),  # type: ignore[arg-type]
        )
        done = subprocess.run(
            [str(root / "bin" / engine), *argv[1:]],
            cwd=run_dir,
            env=env,
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        return Capture(
            engine=engine,
            stdout=done.stdout,
            stderr=done.stderr,
            mode=mode,
            exit_code=done.returncode,
            reader_options={"mode": gemini} if engine == "gemini" else {},
            name=f"{engine}/{case}",
        )

    return run


DONE = [
    {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": "SKILL.md: greet the user"}},
    {"say": '{"greeting": "Good day", "__SKILL_DONE__": true}'},
]
QUESTION = [
    {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md\nassets\n"}},
    {"say": "Which greeting style do you want: formal or casual?"},
]
