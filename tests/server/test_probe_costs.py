"""What the probe says the fields it could not find cost: the cases `turngate run` skips for them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from turngate.judge import case_run
from turngate.judge.catalog import CATALOG_DIR, load_catalog
from turngate.judge.connectors.http_options import HOOK_CAPABILITIES, http_options
from turngate.judge.probe_costs import GATES, cost_lines
from turngate.protocol.connector import CaseSkipped

ENGINES = ("codex", "gemini", "iflow")  # a server that runs three of the four, as Skill-Runner 7d8914d
BASE = {"base_url": "http://127.0.0.1:1", "scripts_dir": "scripts", "engines": list(ENGINES)}


class Unplayed:
    """A target that has only its capabilities."""

    name = "stub"

    def __init__(self, capabilities: frozenset[str]) -> None:
        self.capabilities = capabilities

    def close(self) -> None:
        pass


def not_played(*_args: object, **_kwargs: object) -> None:
    raise CaseSkipped("not played here")


def run_skips(
    capabilities: frozenset[str], root: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[tuple[str, str], set[str]]:
    """The cases `turngate run` skips for what the target lacks, with what each lacks: run_case
    itself decides; a case it does not skip for them stops where its folder would be prepared."""
    monkeypatch.setattr(case_run, "prepare", not_played)
    skipped: dict[tuple[str, str], set[str]] = {}
    for scenario in load_catalog(CATALOG_DIR):
        for engine in (engine for engine in scenario.engines if engine in ENGINES):
            result = case_run.run_case(scenario, engine, Unplayed(capabilities), root=root)  # type: ignore[arg-type]
            lacking = re.fullmatch(r"target stub lacks: (.+)", result.message)
            if result.outcome == "skipped" and lacking:
                skipped[(scenario.id, engine)] = set(lacking.group(1).split(", "))
    return skipped


@pytest.mark.parametrize(
    "fields",
    [
        {"call_log": "calls.jsonl", "honours_session_timeout": True, "probes_each_run": True},
        {"call_log": "calls.jsonl", "slots": 1, "turn_timeout_sec": 15, "probes_each_run": False},
        {},
    ],
    ids=["first-hookless-run", "slots-and-watchdog-found", "nothing-found"],
)
def test_the_cost_of_each_missing_field_is_the_cases_turngate_run_skips_for_it(
    fields: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capabilities = http_options({**BASE, **fields}, None).capabilities
    skipped = run_skips(capabilities, tmp_path, monkeypatch)
    lines = cost_lines(load_catalog(CATALOG_DIR), capabilities, ENGINES, {})
    assert lines[-1].startswith(f"in all, {len(skipped)} of the catalog's ")
    said = {line.split(":", 1)[0]: line for line in lines[:-1]}
    for gate in GATES:
        count = sum(1 for lacks in skipped.values() if lacks & gate.capabilities)
        if count:
            assert f": {count} {gate.kind} cases (" in said[gate.field]
        else:
            assert gate.field not in said


def test_a_target_with_every_hook_skips_nothing() -> None:
    capabilities = http_options(
        {**BASE, "turngate_hooks": True, "call_log": "calls.jsonl"}, None
    ).capabilities
    assert capabilities >= HOOK_CAPABILITIES
    lines = cost_lines(load_catalog(CATALOG_DIR), capabilities, ENGINES, {})
    assert len(lines) == 1
    assert lines[0].startswith("nothing missing: all ")


def test_the_probe_s_own_reason_names_a_missing_field() -> None:
    capabilities = http_options(BASE, None).capabilities
    why = {"turn_timeout_sec": "no watchdog within 150 s"}
    lines = cost_lines(load_catalog(CATALOG_DIR), capabilities, ENGINES, why)
    watchdog = next(line for line in lines if line.startswith("turn_timeout_sec:"))
    assert watchdog.startswith("turn_timeout_sec: no watchdog within 150 s: ")
    restart = next(line for line in lines if line.startswith("restart_command:"))
    assert "not observable (give a shell command that restarts the server)" in restart
