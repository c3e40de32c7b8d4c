"""Conforming variants: right but different, so the whole catalog must give no failed and no non-strict.

In-process, each variant is judged on the whole catalog: the variant that changes
what a client sends back runs live on one engine; every other one is shown one
run of the reference per scenario (the spec's four engines in turn), through
`variant_observation` (what its connector shows), and judged. The reference
itself is pinned by the goldens. Over HTTP, `turngate serve --variant
skill-runner` (every Skill-Runner convention at once) runs the whole catalog on
codex.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.catalog_parts import PARTS, in_part, part_of
from tests.server.conftest import Server, start_server, stop_server
from turngate.implementations.conforming_variants import (
    REFERENCE,
    SPEC_CODES,
    VARIANTS,
    Variant,
    variant_named,
    variant_observation,
)
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import load_catalog
from turngate.judge.connectors.http_options import HOOK_CAPABILITIES, TargetProblem, http_options
from turngate.judge.pool import cases, run_all
from turngate.judge.targets import Target, parse_target
from turngate.judge.verdict import judge
from turngate.protocol.connector import Observation

CATALOG = load_catalog()
BY_ID = {scenario.id: scenario for scenario in CATALOG}
WRONG = ("failed", "non-strict", "errored", "unreached")
CONFORMING = sorted(name for name in VARIANTS if name != REFERENCE.name)
# The live variant runs on one engine; the others are shown one run per scenario, the engines in
# turn (a variant renames and hides what an orchestrator shows, whatever the engine; the golden test
# runs every engine, and every engine's whole catalog here would double the suite's longest test).
SPEC_ENGINES = ("codex", "gemini", "iflow", "opencode")
ENGINE_OF = {name: SPEC_ENGINES[index % len(SPEC_ENGINES)] for index, name in enumerate(CONFORMING)}


def wrong(results: list[CaseResult]) -> list[str]:
    return [
        f"{result.scenario_id} [{result.engine}] {result.outcome}: {(result.message or ' ').splitlines()[0]}"
        for result in results
        if result.outcome in ("failed", "non-strict", "errored", "unreached")
    ]


def test_there_are_at_least_six_conforming_variants() -> None:
    assert len(CONFORMING) >= 6


# The variant whose numbering changes what a client sends back (a reply names the shown id): it runs
# live, through the connector that maps ids both ways. Every other variant only renames and hides
# what the reference shows, so one run of the reference per case, shown through each variant
# (`variant_observation`, the connector's own function) and judged, is the same run.
LIVE = ("ids-from-101",)


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("name", LIVE)
def test_a_conforming_variant_passes_the_whole_catalog_in_process(name: str, part: str) -> None:
    planned = cases(in_part(CATALOG, part), [ENGINE_OF[name]])
    results = list(run_all(planned, target=parse_target(f"reference:{name}"), jobs=2))
    assert len(results) == len(planned)
    assert not wrong(results), "\n".join(wrong(results)[:10])
    outcomes = Counter(result.outcome for result in results)
    assert outcomes["passed"] + outcomes["partial"] > len(planned) // 2, outcomes


_SHOWN = (
    "state",
    "error_code",
    "warnings",
    "reason_code",
    "data",
    "pending",
    "attempts",
    "history",
    "events",
)


def shown_step(
    variant: Variant, step: Mapping[str, Any], engine: str, gemini_format: str | None
) -> dict[str, Any]:
    """An observed step (``decision_record.observed_step``) as a target built as ``variant`` shows it."""
    seen = step["observation"]
    observation = Observation(
        **{name: tuple(seen[name]) if isinstance(seen[name], list) else seen[name] for name in _SHOWN},
        extra={"decisions": seen.get("decisions", []), "unobservable": seen.get("unobservable", [])},
    )
    shown = variant_observation(variant, observation, engine=engine, gemini_format=gemini_format)
    observed = {**seen, **json.loads(json.dumps({name: getattr(shown, name) for name in _SHOWN}))}
    observed["decisions"] = json.loads(json.dumps(shown.extra["decisions"]))
    if shown.extra["unobservable"]:
        observed["unobservable"] = list(shown.extra["unobservable"])
    reply = step["reply"] and {**step["reply"], "code": variant.code(step["reply"]["code"])}
    return {**step, "observation": observed, "reply": reply}


def one_engine_each(catalog: tuple[Any, ...]) -> list[tuple[Any, str]]:
    """Every scenario once, on one of its engines: the spec's four in turn (the engine it has, for a
    scenario of one engine), so that the variants meet every engine across the catalog."""
    planned = []
    for index, scenario in enumerate(catalog):
        mine = [engine for engine in SPEC_ENGINES if engine in scenario.engines] or list(scenario.engines)
        planned.append((scenario, mine[index % len(mine)]))
    return planned


def test_the_variants_are_shown_runs_on_every_engine_of_the_spec() -> None:
    assert {engine for _, engine in one_engine_each(CATALOG)} >= set(SPEC_ENGINES)


@pytest.mark.parametrize("part", PARTS)
def test_every_other_conforming_variant_passes_the_whole_catalog_shown_through_it(part: str) -> None:
    """One run of the reference per scenario (the goldens pin it on every engine), shown through
    every variant and judged: a variant renames and hides, so the engine of the run matters little."""
    shown_by = [name for name in CONFORMING if name not in LIVE]
    planned = [
        (scenario, engine) for scenario, engine in one_engine_each(CATALOG) if part_of(scenario) == part
    ]
    problems, outcomes = [], {name: Counter[str]() for name in shown_by}
    for run in run_all(planned, target=parse_target("reference"), jobs=2):
        scenario = BY_ID[run.scenario_id]
        for name in shown_by:
            if run.checks is None:  # not run (skipped, errored): as the live variant would be
                outcomes[name][run.outcome] += 1
                problems += (
                    [f"{name}: {run.scenario_id} [{run.engine}] {run.outcome}"]
                    if run.outcome in WRONG
                    else []
                )
                continue
            variant = variant_named(name)
            steps = [
                shown_step(variant, step, run.engine, scenario.gemini_output_format) for step in run.observed
            ]
            verdict = judge(scenario.checks(), steps)
            outcomes[name][verdict.outcome] += 1
            if verdict.outcome in WRONG:
                first = (verdict.message or " ").splitlines()[0]
                problems.append(f"{name}: {run.scenario_id} [{run.engine}] {verdict.outcome}: {first}")
    assert not problems, "\n".join(problems[:10])
    for name, counted in outcomes.items():
        assert sum(counted.values()) == len(planned), name
        assert counted["passed"] + counted["partial"] > len(planned) // 2, (name, counted)


def test_a_variant_may_not_rename_what_the_spec_names() -> None:
    for code in sorted(SPEC_CODES):
        with pytest.raises(ValueError, match="named by the spec"):
            Variant("bad", "-", "-", codes={code: "OTHER"})
    with pytest.raises(ValueError, match=r"user\.input\.required"):
        Variant("bad", "-", "-", events={"user.input.required": "question.asked"})


def test_a_variant_changes_names_and_exposure_never_a_decision() -> None:
    seen = Observation(
        state="succeeded",
        error_code=None,
        warnings=("INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER",),
        reason_code="DONE_MARKER_FOUND",
        data={"greeting": "Hi"},
        pending=None,
        attempts=2,
        history=({"interaction_id": 1, "prompt": "The skill is waiting for your input.", "response": "x"},),
        events=({"type": "user.input.replied", "data": {"interaction_id": 1, "response": "x" * 100}},),
    )
    shown = variant_observation(variant_named("skill-runner"), seen, engine="gemini", gemini_format=None)
    assert (shown.state, shown.data, shown.attempts) == (seen.state, seen.data, seen.attempts)
    assert shown.reason_code == "DONE_SIGNAL_FOUND"
    assert shown.warnings == ("INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER", "OUTPUT_REPAIRED_GENERIC")
    assert shown.history is None  # the target cannot show it: history checks are unverified, not failed
    assert shown.events == (
        {"type": "interaction.reply.accepted", "data": {"interaction_id": 1, "response_preview": "x" * 80}},
    )
    assert variant_observation(REFERENCE, seen, engine="gemini", gemini_format=None) is seen


def test_a_variant_is_chosen_by_name_and_an_unknown_one_is_one_line() -> None:
    assert parse_target("reference:no-history").variant == "no-history"
    with pytest.raises(TargetProblem, match="'nope': known: reference, reason-codes"):
        parse_target("reference:nope")


@pytest.fixture(scope="module")
def skill_runner_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(
        tmp_path_factory.mktemp("serve-variant"), "--test-hooks", "--variant", "skill-runner"
    )
    try:
        yield running
    finally:
        stop_server(running)


@pytest.mark.parametrize("part", PARTS)
def test_the_skill_runner_variant_passes_the_whole_catalog_over_http(
    skill_runner_server: Server, part: str
) -> None:
    server = skill_runner_server
    # Its operator declares what it shows: everything turngate serve's hooks offer, but no history.
    shown = sorted({"events", "http", "argv"} | HOOK_CAPABILITIES)
    options = http_options(
        server.target_fields(settle_timeout_sec=60, capabilities=shown), Path("target.yaml")
    )
    planned = cases(in_part(CATALOG, part), ["codex"])
    results = list(run_all(planned, target=Target(server.url, "http", http=options), jobs=2))
    assert len(results) == len(planned)
    assert not wrong(results), "\n".join(wrong(results)[:10])
