"""The whole catalog against the reference orchestrator: every case passes, and its record is golden.

A verdict comes from the scenario's expectations (written from the spec). The
golden files pin the reference's full decision record (prompts, pending fields,
event sequences, argv), one JSON file per scenario and engine, side by side in
``golden/`` (``golden/<scenario id, "/" as ".">.<engine>.json``, no folders), so
that any change in the reference is seen in a diff and reviewed.
``pytest --snapshot-update`` regenerates them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

from turngate.judge.case_run import connector_for, run_case
from turngate.judge.catalog import load_catalog
from turngate.judge.pool import cases

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = cases(load_catalog(), None)


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
