"""Captures made by playing the fake engines as real processes, for the drift tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from turngate.tools.drift.capture import Capture
from turngate.tools.drift.sources import FakeEngines

Play = Callable[..., Capture]


@pytest.fixture(scope="session")
def play(tmp_path_factory: pytest.TempPathFactory) -> Play:
    engines = FakeEngines(tmp_path_factory.mktemp("drift-engines"))
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
        script = {"turns": [{"steps": steps}]}
        capture = engines.play(f"drift-{count}", script, engine, mode, output_format=gemini)
        assert capture is not None, "the scripted turn hung"
        return capture

    return run


DONE = [
    {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": "SKILL.md: greet the user"}},
    {"say": '{"greeting": "Good day", "__SKILL_DONE__": true}'},
]
QUESTION = [
    {"tool": {"name": "bash", "input": {"command": "ls"}, "output": "SKILL.md\nassets\n"}},
    {"say": "Which greeting style do you want: formal or casual?"},
]
