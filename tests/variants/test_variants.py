"""Conforming variants: right but different, so the whole catalog must give no failed and no non-strict.

In-process, each variant is judged on the whole catalog: the variant that changes
what a client sends back runs live on one engine here; every other one is shown
the golden test's run of the reference per scenario (the spec's four engines in
turn), through `variant_observation` (what its connector shows), and judged there
(tests/variants/shown.py, tests/conformance/test_golden.py). The reference itself
is pinned by the goldens. Over HTTP, `turngate serve --variant skill-runner`
(every Skill-Runner convention at once) runs the whole catalog on codex.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.catalog_parts import PARTS, in_part
from tests.server.conftest import Server, start_server, stop_server
from tests.variants.shown import CONFORMING, LIVE, SHOWN_THROUGH, SPEC_ENGINES, WRONG, one_engine_each
from turngate.implementations.conforming_variants import (
    REFERENCE,
    SPEC_CODES,
    Variant,
    variant_named,
    variant_observation,
)
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import load_catalog
from turngate.judge.connectors.http_options import HOOK_CAPABILITIES, TargetProblem, http_options
from turngate.judge.pool import cases, run_all
from turngate.judge.targets import Target, parse_target
from turngate.protocol.connector import Observation

CATALOG = load_catalog()
# The live variant runs on one engine; the others are judged in the golden test, shown its runs
# (tests/variants/shown.py: every engine's whole catalog here would double the suite's longest test).
ENGINE_OF = {name: SPEC_ENGINES[index % len(SPEC_ENGINES)] for index, name in enumerate(CONFORMING)}


def wrong(results: list[CaseResult]) -> list[str]:
    return [
        f"{result.scenario_id} [{result.engine}] {result.outcome}: {(result.message or ' ').splitlines()[0]}"
        for result in results
        if result.outcome in WRONG
    ]


def test_there_are_at_least_six_conforming_variants() -> None:
    assert len(CONFORMING) >= 6
    assert set(SHOWN_THROUGH) | set(LIVE) == set(CONFORMING)


@pytest.mark.parametrize("part", PARTS)
@pytest.mark.parametrize("name", LIVE)
def test_a_conforming_variant_passes_the_whole_catalog_in_process(name: str, part: str) -> None:
    planned = cases(in_part(CATALOG, part), [ENGINE_OF[name]])
    results = list(run_all(planned, target=parse_target(f"reference:{name}"), jobs=2))
    assert len(results) == len(planned)
    assert not wrong(results), "\n".join(wrong(results)[:10])
    outcomes = Counter(result.outcome for result in results)
    assert outcomes["passed"] + outcomes["partial"] > len(planned) // 2, outcomes


def test_the_variants_are_shown_runs_on_every_engine_of_the_spec() -> None:
    assert {engine for _, engine in one_engine_each(CATALOG)} >= set(SPEC_ENGINES)


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
