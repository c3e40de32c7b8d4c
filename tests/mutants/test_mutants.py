"""Spec mutants: each names real MUST/SHOULD sentences, patches a real reference function, and is killed.

The whole mutation score is `nox -s mutants` (mutants.json); here a few
mutants of different kinds (gate, detector, lifecycle, pending, argv) run
against the cases that cite their sentences, to show the mechanism kills,
and the registry is checked as data.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path

import pytest

from tests.server.conftest import start_server, stop_server
from turngate.implementations.mutants import activate
from turngate.implementations.mutants.model import _owner
from turngate.implementations.mutants.registry import MUTANTS, UnknownMutant, mutant_named
from turngate.implementations.reference import gate, marker, turn
from turngate.implementations.reference_connector import ReferenceConnector
from turngate.judge.case_run import run_case
from turngate.judge.catalog import load_catalog
from turngate.judge.catalog.sentences import sentences
from turngate.judge.connectors.http_options import http_options
from turngate.judge.pool import run_all
from turngate.judge.targets import Target
from turngate.tools.mutation.score import cited_sentences, citing, kills, run_mutant, score, sentence_registry

CATALOG = load_catalog()
SAMPLE = (
    "marker-from-tool-output",
    "default-kind-not-open-text",
    "resumable-keeps-slot",
    "hint-id-as-pending-id",
)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_breaks_named_normative_sentences_some_scenario_cites(name: str) -> None:
    mutant = MUTANTS[name]
    registry = sentences()
    unknown = [sentence for sentence in mutant.sentences if sentence not in registry]
    assert not unknown, f"{name}: not in sentences.yaml: {unknown}"
    assert all(registry[sentence].level in ("MUST", "SHOULD") for sentence in mutant.sentences)
    assert citing(CATALOG, mutant.sentences), f"{name}: no scenario cites {list(mutant.sentences)}"


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_patches_existing_functions_and_gives_them_back(name: str) -> None:
    mutant = MUTANTS[name]
    before = [_owner(change.target) for change in mutant.replacements]
    originals = [
        vars(owner)[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        for owner, attribute in before
    ]
    restore = activate(mutant)
    try:
        changed = [getattr(owner, attribute) for owner, attribute in before]
        assert all(now is not then for now, then in zip(changed, originals, strict=True))
    finally:
        restore()
    after = [
        vars(owner)[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        for owner, attribute in before
    ]
    assert all(now is then for now, then in zip(after, originals, strict=True))


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_replacement_takes_every_argument_its_original_takes(name: str) -> None:
    """A replacement with an older signature raises TypeError and the mutant "lives" for the wrong reason."""
    for change in MUTANTS[name].replacements:
        owner, attribute = _owner(change.target)
        original = vars(owner)[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        if not inspect.isfunction(original):
            continue  # a constant (e.g. MARKER_KEY)
        replacement = change.make(original)
        positional: list[object] = []
        keywords: dict[str, object] = {}
        for parameter in inspect.signature(original).parameters.values():
            match parameter.kind:
                case inspect.Parameter.POSITIONAL_ONLY | inspect.Parameter.POSITIONAL_OR_KEYWORD:
                    positional.append(None)
                case inspect.Parameter.KEYWORD_ONLY:
                    keywords[parameter.name] = None
        try:
            inspect.signature(replacement).bind(*positional, **keywords)
        except TypeError as error:
            pytest.fail(f"{name}: {change.target}: the replacement refuses the original's arguments: {error}")


def test_the_connector_takes_its_mutant_back_when_the_case_ends() -> None:
    decide, detector, live = gate.decide, marker.find_markers, turn.marker_evidence
    scenario = next(s for s in CATALOG if s.id == "engine-format/tool-echo/codex")
    result = run_case(scenario, "codex", ReferenceConnector(mutant="marker-from-tool-output"))
    assert result.outcome == "failed"
    assert (gate.decide, marker.find_markers, turn.marker_evidence) == (decide, detector, live)
    assert run_case(scenario, "codex", ReferenceConnector()).outcome == "passed"


@pytest.mark.parametrize("name", SAMPLE)
def test_a_sample_of_mutants_is_killed_by_a_case_citing_its_sentence(name: str) -> None:
    result = run_mutant(MUTANTS[name], CATALOG, jobs=2)
    assert result.cases_run > 0
    assert result.killed, f"{name} survived {result.cases_run} cases"
    assert not result.errored


def test_an_ambiguous_case_kills_a_mutant_only_by_its_default_reading() -> None:
    # The marker, then a failed turn: the reference holds under its default reading and breaks
    # evidence-first, citing interactive-success#then - the reference's own ambiguity, not a mutant's.
    scenario = next(s for s in CATALOG if s.id == "engine-fault/failed-after-marker/stream-cut")
    result = run_case(scenario, "codex", ReferenceConnector())
    assert result.outcome == "ambiguous"
    cited = {item["authority"] for item in result.differences if item["severity"] == "failed"}
    assert "interactive-run-lifecycle/completion-gate-by-mode/interactive-success#then" in cited
    assert not kills(result, cited)  # it breaks evidence-first only, which the reference does too
    # a mutant that breaks the default reading is killed by the same case
    assert kills(
        replace(
            result,
            readings={**result.readings, "process-failure-fails": "failed"},
            differences=tuple({**item, "reading": "process-failure-fails"} for item in result.differences),
        ),
        cited,
    )


def test_the_score_counts_per_spec_file_and_the_sentences_covered() -> None:
    result = run_mutant(MUTANTS["max-attempt-in-auto"], CATALOG, jobs=2)
    document = score([result], sentence_registry())
    assert document["score"] == {"killed": 1, "total": 1, "ratio": 1.0}
    assert document["per_file"] == {
        "000_fe47a3c68a42ce72.txt": {"total": 1, "killed": 1},
        "002_918f2cdbfcd49fba.txt": {"total": 1, "killed": 1},
    }
    assert document["sentences"]["with_a_mutant"] == 2
    assert document["mutants"][0]["killed_by"]


def test_scenarios_cite_sentences_through_their_by_maps() -> None:
    scenario = next(s for s in CATALOG if s.id == "design/decision-6/auto-mode-ignores-the-limit")
    assert cited_sentences(scenario) == {"design/decision-6/max-attempt-interactive-only#1"}


def test_an_unknown_mutant_is_one_line_naming_it() -> None:
    with pytest.raises(UnknownMutant, match="'no-such'"):
        mutant_named("no-such")


def test_turngate_run_takes_a_mutant_and_refuses_it_for_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    from turngate.cli.main import main

    case = "engine-format/tool-echo/codex"
    assert main(["run", "-k", case, "--engine", "codex", "--jobs", "1"]) == 0
    mutant = "marker-from-tool-output"
    assert main(["run", "-k", case, "--engine", "codex", "--jobs", "1", "--mutant", mutant]) == 1
    assert "escaped-marker-detection#and2" in capsys.readouterr().out  # beside the table
    assert main(["run", "--target", "cmd:./no-such-program", "--mutant", mutant]) == 2
    assert "only for --target reference" in capsys.readouterr().err
    assert main(["run", "--mutant", "no-such"]) == 2


def test_turngate_serve_takes_a_mutant_and_the_catalog_kills_it_over_http(tmp_path: Path) -> None:
    server = start_server(tmp_path / "serve", "--test-hooks", "--mutant", "marker-from-tool-output")
    try:
        options = http_options(server.target_fields(settle_timeout_sec=60), None)
        scenario = next(s for s in CATALOG if s.id == "engine-format/tool-echo/codex")
        (result,) = run_all([(scenario, "codex")], target=Target(server.url, "http", http=options), jobs=1)
    finally:
        stop_server(server)
    assert kills(result, MUTANTS["marker-from-tool-output"].sentences), result.message


def test_no_sentence_is_listed_as_one_without_a_mutant() -> None:
    """WITHOUT_A_MUTANT (the registry's) says why a MUST or SHOULD sentence has no mutant. Every
    sentence once listed there has one now: the table is empty, and a check of each entry would
    check nothing. An entry added back comes here with its checks: a MUST or SHOULD sentence of
    sentences.yaml, and no mutant names it."""
    from turngate.implementations.mutants.registry import WITHOUT_A_MUTANT

    assert dict(WITHOUT_A_MUTANT) == {}


def test_cases_running_at_once_under_one_mutant_share_one_application() -> None:
    """Parallel cases under one mutant: it is applied once, and taken back when the last case ends
    (each wrapping and restoring its own let the first case to end take it from the others)."""
    first_mutant, other = MUTANTS["waits-for-engine-exit"], MUTANTS["kills-when-pipes-close"]
    owner, attribute = _owner(first_mutant.replacements[0].target)
    original = vars(owner)[attribute]
    first, second = activate(first_mutant), activate(first_mutant)
    applied = vars(owner)[attribute]
    assert applied is not original
    with pytest.raises(RuntimeError, match="applied in this process already"):
        activate(other)
    first()
    first()  # a second call takes nothing more back
    assert vars(owner)[attribute] is applied  # the other case still runs under it
    second()
    assert vars(owner)[attribute] is original
