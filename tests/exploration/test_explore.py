"""Exploration: generated runs judged by the spec model, on the reference and on broken ones.

Budgets are small (the suite runs on two cores); ``nox -s explore`` runs thousands.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from turngate.implementations.conforming_variants import VARIANTS
from turngate.implementations.mutants.registry import mutant_named
from turngate.judge.case_run import run_case
from turngate.judge.catalog import load_catalog
from turngate.judge.exploration.explorer import explore, save
from turngate.judge.exploration.plans import ENGINES
from turngate.judge.targets import Target, parse_target

REFERENCE = parse_target("reference")
CAPABILITIES = REFERENCE.connector().capabilities


def _mutant(name: str) -> Target:
    return replace(REFERENCE, mutant=name)


def test_exploring_the_reference_finds_no_difference() -> None:
    # seed 18: thirty runs that reach all eight engines (seeds 1-59 found no difference either)
    report = explore(REFERENCE, CAPABILITIES, engines=ENGINES, budget=30, seed_value=18)
    assert report.finding is None, report.finding and report.finding.result.message
    assert report.runs >= 20
    assert set(report.per_engine) == set(ENGINES)
    assert set(report.outcomes) == {"passed"}


def test_a_broken_implementation_is_found_shrunk_and_saved_as_a_catalog_scenario(tmp_path: Path) -> None:
    mutant = mutant_named("soft-completion-silent")
    report = explore(_mutant(mutant.name), CAPABILITIES, engines=("codex",), budget=200, seed_value=3)
    found = report.finding
    assert found is not None
    assert found.sentence in mutant.sentences  # the sentence the mutant breaks, not a later one
    assert len(found.plan.steps) <= 2  # shrunk
    path = save(found, tmp_path)
    (scenario,) = load_catalog(tmp_path)  # a valid catalog scenario, citing its sentence
    assert scenario.source["quote"]
    on_mutant = run_case(scenario, found.plan.engine, _mutant(mutant.name).connector())
    on_reference = run_case(scenario, found.plan.engine, REFERENCE.connector())
    assert (on_mutant.outcome, on_reference.outcome) == ("failed", "passed")
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["provenance"]["from"] == "turngate explore"


def test_the_same_seed_explores_the_same_runs() -> None:
    first = explore(REFERENCE, CAPABILITIES, engines=ENGINES, budget=12, seed_value=9)
    again = explore(REFERENCE, CAPABILITIES, engines=ENGINES, budget=12, seed_value=9)
    other = explore(REFERENCE, CAPABILITIES, engines=ENGINES, budget=12, seed_value=10)
    assert first.digests == again.digests
    assert first.digests != other.digests


def test_a_target_without_a_capability_is_never_asked_for_it() -> None:
    """No clock, restart, sticky, watchdog: no generated run needs them, so none is skipped."""
    report = explore(
        REFERENCE, frozenset({"history", "events"}), engines=("gemini",), budget=30, seed_value=2
    )
    assert report.finding is None
    assert "skipped" not in report.outcomes


def _turngate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turngate.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_the_command_exits_1_with_the_finding_saved_and_2_on_bad_input(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    bad = _turngate("explore", "--engine", "nope", cwd=root)
    assert bad.returncode == 2
    assert "--engine" in bad.stderr
    found = _turngate(
        "explore", "--mutant", "max-attempt-greater-than", "--engine", "codex", "--budget", "120",
        "--seed", "4", "--no-shrink", "--save", str(tmp_path), cwd=root,
    )  # fmt: skip
    assert found.returncode == 1, found.stderr
    assert "FOUND after" in found.stdout
    assert list(tmp_path.rglob("*.yaml"))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_exploring_a_conforming_variant_finds_nothing(variant: str) -> None:
    """Variants differ only where the spec allows (names, exposure, id numbering, open asks)."""
    target = replace(REFERENCE, variant=variant)
    report = explore(target, CAPABILITIES, engines=ENGINES, budget=4, seed_value=len(variant))
    assert report.finding is None, report.finding and report.finding.result.message
