"""A step the model server cannot play makes a real engine's case skipped with a reason naming the step,
never played without it (which made engine-fault/detach/grandchild-holds-pipes "pass" on real engines
without a daemonised descendant anywhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.realengines.stand_in import run_with_stand_in
from turngate.engines.real.caseengines import RealEngines
from turngate.engines.real.lock import read_lock, select
from turngate.judge.catalog import load_catalog

DETACH = "engine-fault/detach/grandchild-holds-pipes"


def scenario_script(scenario_id: str) -> dict[str, Any]:
    (scenario,) = [s for s in load_catalog() if s.id == scenario_id]
    return dict(scenario.engine_script)


@pytest.mark.parametrize("engine", ["codex", "gemini", "opencode"])
def test_the_detach_scenario_is_unplayable_on_every_real_engine_naming_the_step(engine: str) -> None:
    real = RealEngines(select(read_lock(), [engine]), Path("/nonexistent"))
    reason = real.unplayable(engine, "case", scenario_script(DETACH))
    assert reason == "turn 1: step 'detach' shapes the engine's process, not a model answer"


@pytest.mark.parametrize(
    ("scenario_id", "names"),
    [
        ("engine-fault/linger/done-then-never-exits", "linger"),
        ("engine-format/hostile-text/cut-emoji-ask", "lone surrogate"),
        ("interactive-run-lifecycle/repair/repair-stays-in-the-attempt", "repair answers"),
        ("engine-fault/hang/question-tool", "step 'tool' that never finishes"),
    ],
)
def test_other_steps_the_server_used_to_drop_are_refused_by_name(scenario_id: str, names: str) -> None:
    real = RealEngines(select(read_lock(), ["opencode"]), Path("/nonexistent"))
    reason = real.unplayable("opencode", "case", scenario_script(scenario_id))
    assert reason is not None
    assert names in reason


def test_run_with_real_engines_skips_the_detach_case_with_the_reason(tmp_path: Path) -> None:
    # Stands in for the npm-installed codex: the case must be skipped before anything runs it.
    done, case = run_with_stand_in(tmp_path, "codex", DETACH, "echo 'the real codex was run' >&2\nexit 99")
    assert done.returncode == 5, done.stderr  # nothing verified: every case skipped
    assert case["outcome"] == "skipped"
    assert case["message"] == (
        "the real codex cannot play this script: turn 1: step 'detach' shapes the engine's process,"
        " not a model answer"
    )
    assert "the real codex was run" not in done.stdout + done.stderr
