"""The JSON Lines report's schema: every line turngate writes validates, by its kind; broken lines do not."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.schemas.schemas import REPORT, ROOT, line_problems, load, problems
from tests.turngate_cli import turngate
from turngate.judge.catalog import ENGINES
from turngate.judge.verdict import OUTCOMES, SEVERITIES

# Two decisions on two engines: decision 4.1 has readings (ambiguous cases), and the mutant breaks
# MUST sentences of both, so the report carries failed differences with their quotes.
SELECTION = (
    "-k", "design/decision-1/*", "-k", "design/decision-4.1/*", "--engine", "codex", "--engine", "gemini",
    "--jobs", "1",
)  # fmt: skip
MUTANT = "no-evidence-fails"
REPORTS = ("failing", "fixed", "known", "enforced")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Reports of real runs of the in-process reference: a mutant's (failing); the reference's against
    the mutant's differences as a baseline (each one fixed); and, judged again (``report judge -o``),
    the mutant's against that baseline (each one known) and under a convention set."""
    root = tmp_path_factory.mktemp("reports")
    failing = turngate("run", *SELECTION, "--mutant", MUTANT, "--report-json", "failing.jsonl", cwd=root)
    assert failing.returncode == 1, failing.stderr
    written = turngate("baseline", "write", "failing.jsonl", "-o", "known.yaml", cwd=root)
    assert written.returncode == 0, written.stderr
    fixed = turngate("run", *SELECTION, "--baseline", "known.yaml", "--report-json", "fixed.jsonl", cwd=root)
    assert fixed.returncode == 1, fixed.stderr  # every known difference is gone: fixed, which fails the run
    known = turngate(
        "report", "judge", "failing.jsonl", "--baseline", "known.yaml", "-o", "known.jsonl", cwd=root
    )
    assert known.returncode == 0, known.stderr  # it fails for the known differences only
    enforced = turngate(
        "report", "judge", "failing.jsonl", "--conventions", "skill-runner", "-o", "enforced.jsonl", cwd=root
    )
    assert enforced.returncode == 1, enforced.stderr
    return {name: (root / f"{name}.jsonl").read_text(encoding="utf-8") for name in REPORTS}


@pytest.mark.parametrize("name", REPORTS)
def test_every_line_of_a_real_run_validates(reports: dict[str, str], name: str) -> None:
    assert line_problems(REPORT, reports[name]) == []


def test_the_runs_show_what_the_schema_constrains(reports: dict[str, str]) -> None:
    """The reports above are worth validating: failed differences quoting their sentences, ambiguous
    cases with their readings, baseline statuses on case lines and in the footer, a convention set."""
    lines = [json.loads(line) for text in reports.values() for line in text.splitlines()]
    cases = [line for line in lines if line["kind"] == "case"]
    differences = [item for case in cases for item in case["differences"]]
    assert any(item["severity"] == "failed" and item["quote"] for item in differences)
    assert any(item["severity"] == "reference" for item in differences)
    assert any(case["outcome"] == "ambiguous" and case["readings"] for case in cases)
    assert {case.get("baseline") for case in cases} >= {"known", "fixed"}
    assert any(case["conventions"] == "skill-runner" for case in cases)
    footers = [line for line in lines if line["kind"] == "footer"]
    assert any(footer.get("baseline", {}).get("fixed") for footer in footers)
    steps = [step for case in cases for step in case["observed"]]
    assert any(step["observation"]["patch"] for step in steps) and any(step["calls"] for step in steps)


@pytest.mark.parametrize(
    "report", sorted((ROOT / "docs").rglob("*.jsonl")), ids=lambda path: str(path.relative_to(ROOT))
)
def test_the_reports_in_docs_validate(report: Path) -> None:
    """Reports of a real server (Skill-Runner), written by earlier turngates: the schema keeps them valid."""
    assert line_problems(REPORT, report.read_text(encoding="utf-8")) == []


def test_the_schema_names_the_outcomes_severities_and_engines_the_code_has() -> None:
    defs = load(REPORT)["$defs"]
    assert defs["outcome"]["enum"] == list(OUTCOMES)
    assert defs["difference"]["properties"]["severity"]["enum"] == list(SEVERITIES)
    assert defs["engine"]["enum"] == list(ENGINES)


# Broken lines ----------------------------------------------------------------------------------------


def _first(
    reports: dict[str, str], kind: str, where: Callable[[dict[str, Any]], bool] = bool
) -> dict[str, Any]:
    lines = [json.loads(line) for line in reports["failing"].splitlines()]
    return next(line for line in lines if line["kind"] == kind and where(line))


def _failing_case(line: dict[str, Any]) -> bool:
    return any(item["severity"] == "failed" for item in line["differences"])


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set the field at a dotted path (numbers index lists); ``...`` removes it."""

    def change(line: dict[str, Any]) -> None:
        *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
        target: Any = line
        for part in parents:
            target = target[part]
        if value is ...:
            del target[last]
        else:
            target[last] = value

    return change


def _failed_difference(line: dict[str, Any]) -> int:
    return next(index for index, item in enumerate(line["differences"]) if item["severity"] == "failed")


BROKEN: list[tuple[str, str, str, Any]] = [
    # (line kind, what is broken, dotted field, value)
    ("header", "no start time", "started_at", ...),
    ("header", "a local start time", "started_at", "2026-11-24 14:23:12"),
    ("header", "an engine turngate does not fake", "engines.0", "aider"),
    ("footer", "a negative count", "counts.passed", -1),
    ("footer", "a count of an outcome that does not exist", "counts.green", 3),
    ("footer", "interrupted said false (it is present only when true)", "interrupted", False),
    ("case", "an outcome that does not exist", "outcome", "green"),
    ("case", "no observed steps field", "observed", ...),
    ("case", "a field turngate never writes", "verdict", "passed"),
    ("case", "a scenario ID that is not capability/requirement/scenario", "scenario_id", "design-1"),
    ("case", "a baseline status without its note", "baseline", "known"),
    ("case", "an observed step without its observation", "observed.0.observation", ...),
    ("case", "an observed state that is not a string", "observed.0.observation.state", 7),
    ("case", "an engine call's argv that is not a list", "observed.0.calls.0.argv", "exec --json"),
    ("case", "a record step with the patch it leaves out", "record.steps.0.observation.patch", ""),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "broken", "field", "value"), BROKEN, ids=[item[1] for item in BROKEN])
def test_a_broken_line_is_rejected(
    reports: dict[str, str], kind: str, broken: str, field: str, value: Any
) -> None:
    line = copy.deepcopy(_first(reports, kind, _failing_case if kind == "case" else bool))
    assert problems(REPORT, line) == []
    _set(field, value)(line)
    assert problems(REPORT, line) != [], broken


DIFFERENCE_BROKEN: list[tuple[str, str, Any]] = [
    ("a severity that does not exist", "severity", "fatal"),
    ("a MUST sentence's difference said non-strict", "severity", "non-strict"),
    ("a sentence's difference without its quote", "quote", None),
    ("an unverified difference with an observed value", "severity", "unverified"),
    ("a step index below 0", "step", -1),
    ("no authority", "authority", ...),
]


@pytest.mark.parametrize(
    ("broken", "field", "value"), DIFFERENCE_BROKEN, ids=[item[0] for item in DIFFERENCE_BROKEN]
)
def test_a_broken_difference_is_rejected(
    reports: dict[str, str], broken: str, field: str, value: Any
) -> None:
    line = copy.deepcopy(_first(reports, "case", _failing_case))
    index = _failed_difference(line)
    assert line["differences"][index]["actual"] is not None  # an unverified one has none
    _set(f"differences.{index}.{field}", value)(line)
    assert any(problem.startswith(f"differences.{index}") for problem in problems(REPORT, line)), broken


def test_a_line_of_no_known_kind_is_rejected() -> None:
    assert problems(REPORT, {"kind": "summary", "counts": {}}) != []
    assert problems(REPORT, {"counts": {}, "duration_sec": 1.0}) != []
