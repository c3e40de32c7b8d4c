"""turngate/judge/baseline.py on its own: what a run's cases are against known differences, and the file.

No run here: the cases are built as a report records them (outcome and differences), so each rule
of the matching has a test of its own; tests/baseline/test_cli.py runs the real thing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from turngate.judge.baseline import (
    SCHEMA_PATH,
    Baseline,
    BaselineProblem,
    Entry,
    Ran,
    check_case,
    compare,
    failing,
    read_baseline,
    render_baseline,
)
from turngate.judge.catalog import ENGINES
from turngate.judge.verdict import FAILING

CASE = "interactive-run-lifecycle/max-attempt/exceeded-fails"
THEN = f"{CASE}#then"
AND1 = f"{CASE}#and1"
OTHER = "interactive-run-lifecycle/max-attempt/unbounded-without-max-attempt"


def _difference(key: str, authority: str, severity: str = "failed") -> dict[str, Any]:
    return {"step": 1, "action": "reply", "key": key, "authority": authority, "severity": severity}


def _failed(*differences: dict[str, Any], case: str = CASE, engine: str = "codex") -> Ran:
    return Ran(case, engine, "failed", differences)


STATE = _difference("state", THEN)
ERROR_CODE = _difference("error_code", AND1)
KNOWN = Baseline(
    "known.yaml", (Entry(CASE, "codex", "state", THEN), Entry(CASE, "codex", "error_code", AND1))
)


def test_a_failing_outcome_is_one_turngate_run_exits_1_for() -> None:
    assert {"failed", "errored", "unreached"} == FAILING


def test_a_failed_case_is_known_by_its_failing_differences_one_per_check_and_sentence() -> None:
    twice = _difference("state", THEN) | {"step": 2}
    ran = _failed(
        STATE,
        twice,
        ERROR_CODE,
        _difference("events", "convention", "informational"),
        _difference("pending", "reference", "reference"),
        _difference("history", THEN, "unverified"),
    )
    assert [str(entry) for entry in failing(ran)] == [
        f"{CASE} [codex]: error_code ({AND1})",
        f"{CASE} [codex]: state ({THEN})",
    ]
    # what never fails a run is never listed: a SHOULD miss, a pass, a skip, an ambiguous case, and a
    # partial one when the user accepts partial
    for outcome in ("non-strict", "passed", "skipped", "ambiguous"):
        assert failing(Ran(CASE, "codex", outcome, (STATE,))) == ()
    assert failing(Ran(CASE, "codex", "partial", (STATE,)), allow_partial=True) == ()
    # an errored case has no differences: its outcome stands for them
    assert failing(Ran(CASE, "codex", "errored")) == (Entry(CASE, "codex", outcome="errored"),)


def test_failing_for_known_differences_only_is_known_and_does_not_fail() -> None:
    comparison = compare(KNOWN, [_failed(STATE, ERROR_CODE)])
    (case,) = comparison.cases
    assert case.status == "known"
    assert not comparison.fails
    assert case.note == f"known difference (baseline): state ({THEN}); error_code ({AND1})"


def test_a_known_difference_and_a_new_one_is_new() -> None:
    baseline = Baseline("known.yaml", (Entry(CASE, "codex", "state", THEN),))
    comparison = compare(baseline, [_failed(STATE, ERROR_CODE)])
    assert comparison.fails
    assert comparison.cases[0].status == "new"
    assert comparison.new == (Entry(CASE, "codex", "error_code", AND1),)
    assert comparison.known == (Entry(CASE, "codex", "state", THEN),)


def test_the_same_check_backed_by_another_sentence_is_another_difference() -> None:
    moved = _difference("state", "interactive-run-lifecycle/max-attempt/exceeded-fails#and1")
    comparison = compare(Baseline("k", (Entry(CASE, "codex", "state", THEN),)), [_failed(moved)])
    assert comparison.new == (Entry(CASE, "codex", "state", AND1),)
    assert comparison.fixed == (Entry(CASE, "codex", "state", THEN),)


def test_the_same_difference_on_another_engine_is_new() -> None:
    comparison = compare(KNOWN, [_failed(STATE, ERROR_CODE, engine="gemini")])
    assert [entry.engine for entry in comparison.new] == ["gemini", "gemini"]
    assert len(comparison.not_run) == 2  # the codex case did not run


def test_a_known_difference_gone_is_fixed_and_fails_until_the_baseline_drops_it() -> None:
    passed = compare(KNOWN, [Ran(CASE, "codex", "passed")])
    assert passed.fails
    assert passed.cases[0].status == "fixed"
    assert len(passed.fixed) == 2
    assert passed.cases[0].note.startswith("fixed: remove it from the baseline: ")
    # one gone, the other still failing: fixed too (the case still fails, for a known reason)
    half = compare(KNOWN, [_failed(STATE)])
    assert half.cases[0].status == "fixed"
    assert half.fixed == (Entry(CASE, "codex", "error_code", AND1),)
    assert half.updated() == (Entry(CASE, "codex", "state", THEN),)


def test_an_entry_whose_case_did_not_run_or_could_not_show_it_is_neither_fixed_nor_new() -> None:
    assert compare(KNOWN, []).not_run == KNOWN.entries
    assert not compare(KNOWN, []).fails
    for ran in (
        Ran(CASE, "codex", "skipped"),
        Ran(CASE, "codex", "partial", (_difference("state", THEN, "unverified"),)),
    ):
        known = Baseline("k", (Entry(CASE, "codex", "state", THEN),))
        comparison = compare(known, [ran], allow_partial=True)
        assert comparison.unverified, ran
        assert not comparison.fails, ran
        assert comparison.cases[0].status is None
    # an errored case shows no difference: its known ones are unverified, its error is new
    erred = compare(KNOWN, [Ran(CASE, "codex", "errored")])
    assert len(erred.unverified) == 2
    assert erred.new == (Entry(CASE, "codex", outcome="errored"),)


def test_a_difference_still_seen_without_failing_is_not_fixed() -> None:
    """A convention enforced when the baseline was written, informational now: still there."""
    baseline = Baseline("k", (Entry(CASE, "codex", "events", "convention"),))
    seen = compare(baseline, [Ran(CASE, "codex", "passed", (_difference("events", "convention", "x"),))])
    assert seen.known
    assert not seen.fails
    assert seen.cases[0].status is None


def test_a_partial_case_fails_a_run_as_its_outcome_unless_partial_is_accepted() -> None:
    unseen = Ran(CASE, "codex", "partial", (_difference("state", THEN, "unverified"),))
    assert failing(unseen) == (Entry(CASE, "codex", outcome="partial"),)
    new = compare(Baseline("k"), [unseen])
    assert new.fails
    assert new.new == (Entry(CASE, "codex", outcome="partial"),)
    assert not compare(Baseline("k"), [unseen], allow_partial=True).fails
    known = Baseline("k", (Entry(CASE, "codex", outcome="partial"),))
    still = compare(known, [unseen])
    assert not still.fails
    assert still.cases[0].status == "known"
    # the target shows everything now: the entry is fixed, and the file must drop it
    shown = compare(known, [Ran(CASE, "codex", "passed")])
    assert shown.fixed == known.entries
    assert shown.fails


def test_an_errored_case_is_known_by_its_outcome_and_fixed_when_it_no_longer_errs() -> None:
    baseline = Baseline("k", (Entry(CASE, "codex", outcome="errored"),))
    assert compare(baseline, [Ran(CASE, "codex", "errored")]).cases[0].status == "known"
    judged = compare(baseline, [_failed(STATE)])
    assert judged.fixed == baseline.entries
    assert judged.new == (Entry(CASE, "codex", "state", THEN),)


def test_an_unreached_case_is_always_new_and_never_written() -> None:
    comparison = compare(Baseline("k"), [Ran(CASE, "codex", "unreached")])
    assert comparison.fails
    assert comparison.new == (Entry(CASE, "codex", outcome="unreached"),)
    assert comparison.updated() == ()


def test_updating_keeps_reasons_and_what_this_run_did_not_show_drops_the_fixed_adds_the_new() -> None:
    baseline = Baseline(
        "k",
        (
            Entry(CASE, "codex", "state", THEN, reason="ticket 12"),
            Entry(CASE, "codex", "error_code", AND1, reason="fixed in 2.0"),
            Entry(CASE, "gemini", "state", THEN, reason="not run today"),
        ),
    )
    updated = compare(baseline, [_failed(STATE, _difference("error_code", THEN))]).updated()
    assert [(entry.engine, entry.check, entry.sentence, entry.reason) for entry in updated] == [
        ("codex", "error_code", THEN, ""),
        ("codex", "state", THEN, "ticket 12"),
        ("gemini", "state", THEN, "not run today"),
    ]


def test_a_report_line_and_a_case_result_read_the_same() -> None:
    line = {
        "kind": "case",
        "scenario_id": CASE,
        "engine": "codex",
        "outcome": "failed",
        "differences": [STATE],
    }
    assert Ran.of(line) == _failed(STATE)
    assert check_case(KNOWN, Ran.of(line)).fixed == (Entry(CASE, "codex", "error_code", AND1),)


# The file ------------------------------------------------------------------------------------------

HEADER = {"turngate_version": "9.9", "catalog_version": "1", "target": "http://x", "started_at": "T"}


def test_the_file_reads_back_what_was_written_in_a_stable_order(tmp_path: Path) -> None:
    entries = [
        Entry(OTHER, "iflow", outcome="errored", reason='line one\nline "two" # not a comment'),
        Entry(CASE, "gemini", "state", THEN, reason="見た: yes"),
        Entry(CASE, "codex", "state", THEN),
        Entry(CASE, "codex", "events", "convention", reason="- [x] ticket"),
    ]
    text = render_baseline(entries, source="run.jsonl", header=HEADER)
    assert text == render_baseline(reversed(entries), source="run.jsonl", header=HEADER)
    assert "From run.jsonl: turngate 9.9 (catalog 1) against http://x, started T" in text
    assert text.count("# fill in: why this is known") == 1  # only the entry without a reason
    path = tmp_path / "known.yaml"
    path.write_text(text, encoding="utf-8")
    read = read_baseline(path)
    assert read.entries == tuple(sorted(entries, key=lambda entry: entry.key))
    assert [entry.reason for entry in read.entries] == [
        "- [x] ticket",
        "",
        "見た: yes",
        'line one\nline "two" # not a comment',
    ]
    assert read.of(CASE, "codex") == read.entries[:2]
    assert read.of(CASE, "opencode") == ()


def test_an_empty_baseline_is_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text(render_baseline([], source="-", header={}), encoding="utf-8")
    assert read_baseline(path).entries == ()


def test_the_schema_knows_the_engines() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert tuple(schema["$defs"]["entry"]["properties"]["engine"]["enum"]) == ENGINES


def _entry(**fields: Any) -> dict[str, Any]:
    return {"case": CASE, "engine": "codex", "check": "state", "sentence": THEN, **fields}


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ({"version": 2, "known": []}, "version: 2: must be 1"),
        ({"known": []}, "version: missing"),
        ({"version": 1, "known": [], "extra": 1}, "extra: unknown field"),
        ({"version": 1, "known": {"a": 1}}, "known: {'a': 1}: must be of type array"),
        ({"version": 1, "known": [_entry(engine="codx")]}, "known[0].engine: 'codx': must be one of codex,"),
        ({"version": 1, "known": [_entry(colour="red")]}, "known[0].colour: unknown field (known: case,"),
        ({"version": 1, "known": [_entry(case="")]}, "known[0].case: '': must not be empty"),
        ({"version": 1, "known": [_entry(reason=5)]}, "known[0].reason: 5: must be of type string or null"),
        ({"version": 1, "known": [_entry(sentence="nope")]}, "known[0].sentence: 'nope': no such sentence"),
        (
            {"version": 1, "known": [{"case": CASE, "engine": "codex", "check": "state"}]},
            "known[0].sentence: missing",
        ),
        ({"version": 1, "known": [_entry(outcome="errored")]}, "known[0].outcome: 'errored': with a check"),
        (
            {"version": 1, "known": [_entry(), _entry(reason="again")]},
            "known[1]: " + CASE + " [codex]: state",
        ),
        (
            {"version": 1, "known": [{"case": CASE, "engine": "codex", "outcome": "unreached"}]},
            "one of errored",
        ),
        ([1, 2], "must be a mapping of fields, got list"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_bad_file_is_one_line_naming_the_file_the_field_and_the_value(
    tmp_path: Path, document: Any, said: str
) -> None:
    path = tmp_path / "known.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(BaselineProblem) as problem:
        read_baseline(path)
    message = str(problem.value)
    assert message.startswith(f"{path}: "), message
    assert said in message, message
    assert "\n" not in message, message


def test_an_unreadable_or_broken_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(BaselineProblem, match=r"missing\.yaml: cannot read"):
        read_baseline(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\nknown: [\n", encoding="utf-8")
    with pytest.raises(BaselineProblem, match=r"broken\.yaml: not YAML"):
        read_baseline(broken)
