"""The whole catalog through the command protocol against the example implementation: the in-process records.

The example wraps the reference orchestrator, so every record must equal the
golden file the in-process connector is pinned to (tests/conformance/test_golden.py).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.catalog_parts import PARTS, part_of
from turngate.judge.catalog import ENGINES, Scenario, load_catalog
from turngate.judge.pool import cases, run_all
from turngate.judge.targets import parse_target

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"


def over_the_protocol(catalog: tuple[Scenario, ...]) -> list[tuple[Scenario, str]]:
    engines_of: dict[str, list[str]] = {}
    scenarios: dict[str, Scenario] = {}
    for scenario, engine in cases(catalog, None):  # what the default edition plans
        engines_of.setdefault(scenario.id, []).append(engine)
        scenarios[scenario.id] = scenario
    planned: list[tuple[Scenario, str]] = []
    for index, (scenario_id, engines) in enumerate(engines_of.items()):
        scenario = scenarios[scenario_id]
        chosen = {"codex"} if "codex" in engines else {engines[index % len(engines)]}
        if scenario.gemini_output_format and "gemini" in engines:
            chosen.add("gemini")
        planned += [(scenario, engine) for engine in engines if engine in chosen]
    return planned


def test_every_engine_runs_over_the_protocol() -> None:
    assert {engine for _, engine in over_the_protocol(load_catalog(ROOT / "scenarios"))} == set(ENGINES)


@pytest.mark.parametrize("part", PARTS)
def test_the_whole_catalog_over_the_command_protocol_gives_the_in_process_records(part: str) -> None:
    """The protocol carries engine-neutral values: the whole catalog on codex, gemini where the job
    chooses its output format, and every scenario codex does not run once, on its engines in turn
    (every engine's stream hazards among them; the in-process goldens pin the rest per engine)."""
    target = parse_target(f"cmd:{shlex.quote(sys.executable)} -m turngate.implementations.command_example")
    planned = [
        case for case in over_the_protocol(load_catalog(ROOT / "scenarios")) if part_of(case[0]) == part
    ]
    # One case at a time: each pool worker would start an implementation process of its own (a
    # second reference and its imports, per part), and pytest-xdist already runs the parts at once.
    results = list(run_all(planned, target=target, jobs=1))
    assert len(results) == len(planned)
    problems = []
    for result in results:
        golden = json.loads(
            (GOLDEN / f"{result.scenario_id.replace('/', '.')}.{result.engine}.json").read_text()
        )
        # the goldens judge an ambiguous scenario by its default reading (unchosen here: `ambiguous`)
        record = dict(result.record or {}, outcome=result.readings.get(str(result.reading), result.outcome))
        if record != golden:
            problems.append(
                f"{result.scenario_id} [{result.engine}]: {result.outcome}: {result.message[:200]}"
            )
    assert not problems, "\n".join(problems[:10])
