"""The conforming second orchestrator against a representative slice of the catalog.

Runs turngate's CLI as a subprocess (the command protocol end to end, real fake-engine
processes) and asserts no case fails, is non-strict or errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLICE = (
    "design/decision-1/",
    "design/decision-2/",
    "design/decision-3/",
    "design/decision-5/",
    "design/decision-6/",
    "design/decision-8/",
    "engine-fault/crash/exit-code",
    "engine-fault/hang/",
    "engine-format/escaped-marker/",
    "engine-format/tool-echo/",
    "engine-format/split-marker/",
    "adapter-cli-command/interactive-resume",
    "ask-user-validation/incomplete-payload",
    "interaction-history",
    "max-attempt/exceeded-fails",
    "strict-switch/",
    "waiting-slot-policy/",
    "sticky-wait-timeout/sticky-timeout-fails",
)


# The engines Skill-Runner v0.7.9 added: their format hazards, the resident stdin protocol,
# resume turns and crashes.
NEW_ENGINES = ("claude", "qwen", "kilo", "codebuddy")
NEW_ENGINE_SLICE = (
    "engine-format/",
    "sticky-keeps-slot-across-turns",
    "sticky-exceeded-after-reply",
    "crash/sticky-after-reply",
    "interaction-history/ask-reply-recorded",
    "engine-fault/crash/exit-code",
)


def run_slice(tmp_path: Path, words: tuple[str, ...], engines: tuple[str, ...]) -> Counter[str]:
    report = tmp_path / "report.jsonl"
    target = f"cmd:{sys.executable} -m turngate.implementations.second_orchestrator"
    command = [str(Path(sys.executable).parent / "turngate"), "run", "--target", target, "--jobs", "2"]
    for word in words:
        command += ["-k", word]
    for engine in engines:
        command += ["--engine", engine]
    command += ["--report-json", str(report)]
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False, timeout=300)
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").split("\n") if line.strip()]
    cases = [row for row in rows if "outcome" in row and row.get("kind") != "header"]
    bad = [
        (row["scenario_id"], row["engine"], row.get("message"))
        for row in cases
        if row["outcome"] in ("failed", "non-strict", "errored", "unreached")
    ]
    assert not bad, bad
    return Counter(row["outcome"] for row in cases)


def test_conforming_build_passes_a_slice(tmp_path: Path) -> None:
    outcomes = run_slice(tmp_path, SLICE, ("codex", "gemini"))
    assert outcomes["passed"] >= 30, outcomes


def test_conforming_build_passes_a_slice_on_the_new_engines(tmp_path: Path) -> None:
    outcomes = run_slice(tmp_path, NEW_ENGINE_SLICE, NEW_ENGINES)
    assert outcomes["passed"] >= 70, outcomes
