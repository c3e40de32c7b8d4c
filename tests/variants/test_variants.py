"""Conforming variants: right but different, so the whole catalog must give no failed and no non-strict.

In-process, each variant runs the whole catalog on one engine (a different
engine per variant, so together they cover all four); the reference itself is
pinned by the goldens. Over HTTP, `turngate serve --variant skill-runner`
(every Skill-Runner convention at once) runs the whole catalog on codex.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

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
from turngate.judge.catalog import ENGINES, load_catalog
from turngate.judge.connectors.http_options import HOOK_CAPABILITIES, TargetProblem, http_options
from turngate.judge.pool import cases, run_all
from turngate.judge.targets import Target, parse_target
from turngate.protocol.connector import Observation

CATALOG = load_catalog()
CONFORMING = sorted(name for name in VARIANTS if name != REFERENCE.name)
# One engine per variant, rotating, so every engine meets several variants.
ENGINE_OF = {name: ENGINES[index % len(ENGINES)] for index, name in enumerate(CONFORMING)}


def wrong(results: list[CaseResult]) -> list[str]:
    return [
        f"{result.scenario_id} [{result.engine}] {result.outcome}: {(result.message or ' ').splitlines()[0]}"
        for result in results
        if result.outcome in ("failed", "non-strict", "errored", "unreached")
    ]


def test_there_are_at_least_six_conforming_variants() -> None:
    assert len(CONFORMING) >= 6


@pytest.mark.parametrize("name", CONFORMING)
def test_a_conforming_variant_passes_the_whole_catalog_in_process(name: str) -> None:
    planned = cases(CATALOG, [ENGINE_OF[name]])
    results = list(run_all(planned, target=parse_target(f"reference:{name}"), jobs=2))
    assert len(results) == len(planned)
    assert not wrong(results), "\n".join(wrong(results)[:10])
    outcomes = Counter(result.outcome for result in results)
    assert outcomes["passed"] + outcomes["partial"] > len(planned) // 2, outcomes


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


def test_the_skill_runner_variant_passes_the_whole_catalog_over_http(skill_runner_server: Server) -> None:
    server = skill_runner_server
    # Its operator declares what it shows: everything turngate serve's hooks offer, but no history.
    shown = sorted({"events", "http", "argv"} | HOOK_CAPABILITIES)
    options = http_options(
        server.target_fields(settle_timeout_sec=60, capabilities=shown), Path("target.yaml")
    )
    planned = cases(CATALOG, ["codex"])
    results = list(run_all(planned, target=Target(server.url, "http", http=options), jobs=2))
    assert len(results) == len(planned)
    assert not wrong(results), "\n".join(wrong(results)[:10])
