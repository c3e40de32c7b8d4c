"""Minimise: a wrong decision shrunk to the fewest lines, written as a scenario that loads and runs."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.drift.conftest import QUESTION, Play
from turngate.cli.main import main
from turngate.judge.case_run import run_case
from turngate.judge.catalog import load_catalog
from turngate.judge.catalog.checks import CONVENTION, REFERENCE
from turngate.judge.catalog.sentences import sentences
from turngate.judge.targets import parse_target
from turngate.tools.drift.capture import Capture, load_capture
from turngate.tools.drift.field_play import target_decider
from turngate.tools.drift.gate_replay import replay
from turngate.tools.drift.minimise import (
    ddmin,
    lines_of,
    minimise,
    rebuild,
    scenario_document,
    write_scenario,
)
from turngate.tools.drift.mutators import BY_NAME
from turngate.tools.drift.sources import CORPUS_DIR, corpus_captures
from turngate.tools.drift.sweep import Seen, drift, reference_decider

ECHO = CORPUS_DIR / "codex" / "marker-echo-in-tool-output"


def naive_gate(capture: Capture) -> Seen:
    """A broken gate, as found in the field: the marker text anywhere in the bytes means done."""
    found = b"__SKILL_DONE__" in capture.stdout + capture.stderr
    return Seen("succeeded" if found else "waiting_user", None, found)


@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=40), st.sets(st.integers(0, 30), min_size=1, max_size=3)
)
def test_ddmin_finds_exactly_the_needed_units(units: list[int], needed: set[int]) -> None:
    units = sorted(set(units) | needed)
    result = ddmin(units, lambda candidate: needed <= set(candidate))
    assert sorted(result) == sorted(needed)


def test_a_wrong_decision_is_shrunk_to_a_scenario_the_reference_passes(tmp_path: Path) -> None:
    capture = load_capture(ECHO)
    assert naive_gate(capture).state == "succeeded"
    assert replay(capture).assessment.decision.state == "waiting_user"
    expected = Seen("waiting_user", None, None)
    small, observed = minimise(capture, naive_gate, expected=expected, right=reference_decider)
    assert observed.state == "succeeded"
    assert naive_gate(small).state == "succeeded"
    assert replay(small).assessment.decision.state == "waiting_user"
    assert len(lines_of(small)) < len(lines_of(capture))
    # 1-minimal: without any one of its lines the capture no longer separates the two gates.
    for index in range(len(lines_of(small))):
        fewer = lines_of(small)[:index] + lines_of(small)[index + 1 :]
        shrunk = rebuild(small, fewer)
        assert (
            naive_gate(shrunk).state != "succeeded"
            or replay(shrunk).assessment.decision.state != "waiting_user"
        )
    document = scenario_document(
        small,
        expected=Seen("waiting_user", None, None),
        observed=observed,
        mutator=None,
        decider_name="naive gate",
        original_lines=len(lines_of(capture)),
    )
    path = write_scenario(document, tmp_path)
    [scenario] = load_catalog(tmp_path, paths=[path])
    assert scenario.id.startswith("engine-format/drift/capture-codex-")
    assert "codex/marker-echo-in-tool-output" in path.read_text()
    # The reference, playing the minimised bytes through a real fake engine, decides as the spec says...
    result = run_case(scenario, "codex", parse_target("reference").connector())
    assert result.outcome == "passed", result.message
    # ...and the scenario names the broken gate's decision as the wrong one.
    assert "not succeeded" in scenario.title


def test_a_mutation_the_broken_gate_gets_wrong_is_written_as_a_scenario(tmp_path: Path, play: Play) -> None:
    from turngate.cli.drift import _minimise_disagreements

    captures = [play("codex", QUESTION)]
    results = drift(captures, decider=naive_gate, mutators=[BY_NAME["marker-in-tool-result"]])
    assert [result.agrees for result in results] == [False]
    _minimise_disagreements(results, captures, naive_gate, "naive gate", tmp_path)
    [written] = list(tmp_path.rglob("*.yaml"))
    [scenario] = load_catalog(tmp_path, paths=[written])
    assert scenario.steps[0].expect == {"state": "waiting_user", "error_code": None}
    assert "marker-in-tool-result" in scenario.id


def test_played_through_a_fake_engine_the_reference_decides_as_its_replay() -> None:
    decide = target_decider(parse_target("reference"))
    for capture in corpus_captures():
        if capture.attempt_number != 1:
            continue  # a one-turn scenario cannot be a later attempt
        played, replayed = decide(capture), replay(capture).assessment.decision
        assert (played.state, played.error_code) == (replayed.state, replayed.error_code), capture.name


def test_replay_expect_and_minimise_on_the_command_line(tmp_path: Path) -> None:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["replay", str(ECHO), "--expect", "waiting_user"]) == 0
        assert main(["replay", str(ECHO), "--expect", "succeeded", "--minimise", str(tmp_path)]) == 1
    assert "as expected: waiting_user" in out.getvalue()
    assert "NOT as expected: succeeded" in out.getvalue()
    assert "minimised to" in out.getvalue()
    assert len(list(tmp_path.rglob("*.yaml"))) == 1


def test_with_the_users_own_expectation_the_scenario_cites_the_user_never_a_spec_sentence(
    tmp_path: Path,
) -> None:
    # The reference decides waiting_user on the echo (as the spec says); the user expects otherwise.
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert main(["replay", str(ECHO), "--expect", "succeeded", "--minimise", str(tmp_path)]) == 1
    [written] = list(tmp_path.rglob("*.yaml"))
    [scenario] = load_catalog(tmp_path, paths=[written])
    assert scenario.id.startswith("engine-format/user-expectation/capture-codex-")
    assert "the user expects succeeded, not waiting_user" in scenario.title
    assert scenario.by == {"state": CONVENTION, "error_code": REFERENCE}
    assert not set(scenario.by.values()) & set(sentences())
    assert "not the spec" in scenario.source["file"]
    assert "--expect succeeded" in scenario.source["heading"]
    document = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert document["provenance"]["expected_by"].startswith("the user: turngate replay --expect succeeded")
    assert document["provenance"]["written_by"] == "turngate replay --expect --minimise"
    assert "decided_wrongly_by" not in document["provenance"]
    # Run: the user's expectation is a convention difference, not a spec failure; enforced, it fails.
    connector = parse_target("reference").connector()
    result = run_case(scenario, "codex", connector)
    assert result.outcome == "passed", result.message
    [difference] = [d for d in result.differences if d["key"] == "state"]
    assert difference["authority"] == CONVENTION
    assert difference["severity"] == "informational"
    assert difference["level"] is None
    assert run_case(scenario, "codex", connector, conventions="turngate").outcome == "failed"


def test_with_the_users_expectation_and_an_error_code_both_checks_are_the_users(tmp_path: Path) -> None:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = main(["replay", str(ECHO), "--expect", "failed/OUTPUT_NOT_FOUND", "--minimise", str(tmp_path)])
    assert code == 1
    [written] = list(tmp_path.rglob("*.yaml"))
    [scenario] = load_catalog(tmp_path, paths=[written])
    assert scenario.by == {"state": CONVENTION, "error_code": CONVENTION}
    assert scenario.steps[0].expect == {"state": "failed", "error_code": "OUTPUT_NOT_FOUND"}
