"""The whole catalog against the reference orchestrator: every case passes, and its record is golden.

A verdict comes from the scenario's expectations (written from the spec). The
golden files pin the reference's full decision record (prompts, pending fields,
event sequences, argv), one JSON file per scenario and engine, side by side in
``golden/`` (``golden/<scenario id, "/" as ".">.<engine>.json``, no folders), so
that any change in the reference is seen in a diff and reviewed.
``pytest --snapshot-update`` regenerates them.

The same runs, one engine per scenario, are shown through each conforming variant that only renames
and hides (tests/variants/shown.py) and judged: a variant built right passes where the reference does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

from tests.variants.shown import SHOWN_THROUGH, one_engine_each, shown_step
from turngate.implementations.conforming_variants import variant_named
from turngate.judge.case_result import CaseResult
from turngate.judge.case_run import connector_for, run_case
from turngate.judge.catalog import Scenario, load_catalog
from turngate.judge.pool import cases
from turngate.judge.verdict import judge

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CATALOG = load_catalog()
CASES = cases(CATALOG, None)
SHOWN_RUNS = {(scenario.id, engine) for scenario, engine in one_engine_each(CATALOG)}


class GoldenRecords(JSONSnapshotExtension):
    """One file per case, all in golden/ and named by the test id:
    golden/<scenario id, "/" as ".">.<engine>.json (golden/design.decision-1.dual-track-gate.codex.json)."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(GOLDEN)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        return test_location.testname.split("[", 1)[1].rstrip("]")


@pytest.fixture
def golden(snapshot: Any) -> Any:
    return snapshot.use_extension(GoldenRecords)


@pytest.mark.parametrize(
    ("scenario", "engine"), CASES, ids=[f"{s.id.replace('/', '.')}.{engine}" for s, engine in CASES]
)
def test_reference_passes_and_matches_golden(scenario: Any, engine: str, golden: Any) -> None:
    # An ambiguous scenario is judged by its default reading, the one the reference follows without
    # --reading (unchosen, it is `ambiguous`: it breaks the other reading, see test_verdict).
    result = run_case(scenario, engine, connector_for("reference"), reading=scenario.default_reading)
    assert result.outcome == "passed", result.message
    # Not even an informational or a reference-only difference: the catalog is written in its names.
    assert result.differences == (), result.message
    assert result.record == golden
    if (scenario.id, engine) in SHOWN_RUNS:
        missed = _missed_by_variants(scenario, engine, result)
        assert not missed, "\n".join(missed)


def _missed_by_variants(scenario: Scenario, engine: str, result: CaseResult) -> list[str]:
    """What each shown-through conforming variant's verdict on this run says, where it is not the
    reference's pass: a pass, or partial where the variant hides what a check needs (never more)."""
    missed = []
    for name in SHOWN_THROUGH:
        variant = variant_named(name)
        steps = [shown_step(variant, step, engine, scenario.gemini_output_format) for step in result.observed]
        verdict = judge(scenario.checks(), steps, reading=scenario.default_reading)
        if verdict.outcome not in ("passed", "partial"):
            missed.append(f"{name}: {verdict.outcome}: {(verdict.message or ' ').splitlines()[0]}")
    return missed
