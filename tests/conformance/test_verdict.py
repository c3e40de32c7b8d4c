"""The verdict: every difference, each with its authority; severities; unverified; conventions; re-judging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turngate.cli.main import main
from turngate.judge.catalog import CATALOG_DIR, CatalogError, load_catalog
from turngate.judge.catalog.checks import Checks
from turngate.judge.decision_record import OBSERVED_FORMAT
from turngate.judge.report import read_report
from turngate.judge.verdict import judge

WAITING = "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting#then"
PENDING = "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting#and1"
SOFT_SHOULD = "interactive-engine-turn-protocol/completion-by-mode/interactive-soft-evidence#then"
ENRICH_MAY = "design/decision-4/ask-user-optional-enrichment#1"
HISTORY = "interactive-run-lifecycle/interaction-history/ask-reply-recorded#then"
SOFT_WARNING = "interactive-run-lifecycle/completion-gate-by-mode/interactive-soft-success#and1"


def observed(action: str = "start", calls: list[dict[str, Any]] | None = None, **seen: Any) -> dict[str, Any]:
    observation = {
        "state": "waiting_user",
        "error_code": None,
        "warnings": [],
        "reason_code": "WAITING_FOR_USER",
        "data": None,
        "pending": {"interaction_id": 1, "kind": "open_text", "prompt": "Which style?"},
        "attempts": 1,
        "history": [],
        "events": [],
        "slot_held": None,
        "patch": None,
    }
    observation.update(seen)
    return {
        "action": action,
        "observation": observation,
        "reply": None,
        "calls": calls or [],
        "engine": "codex",
    }


def checks(expect: dict[str, Any], by: dict[str, str], step_by: dict[str, str] | None = None) -> Checks:
    return Checks("x/y/z", (expect,), ("start",), by, (step_by or {},), {}, None)


def test_every_difference_of_a_step_is_reported_each_with_its_authority() -> None:
    verdict = judge(
        checks(
            {"state": "waiting_user", "reason_code": "WAITING_FOR_USER", "pending": {"interaction_id": 1}},
            {"state": WAITING, "reason_code": "convention", "pending": PENDING},
        ),
        [observed(state="failed", reason_code="ENGINE_FAILED", pending=None)],
    )
    assert verdict.outcome == "failed"
    assert [(item.key, item.severity, item.authority) for item in verdict.differences] == [
        ("state", "failed", WAITING),
        ("reason_code", "informational", "convention"),
        ("pending", "failed", PENDING),
    ]
    state = verdict.differences[0]
    assert state.level == "MUST"
    assert "`waiting_user`" in (state.quote or "")
    assert "backed by MUST" in verdict.message
    assert "got 'failed'" in verdict.message


@pytest.mark.parametrize(
    ("authority", "severity", "outcome"),
    [
        (WAITING, "failed", "failed"),
        (SOFT_SHOULD, "non-strict", "non-strict"),
        (ENRICH_MAY, "informational", "passed"),
        ("convention", "informational", "passed"),
        ("reference", "reference", "passed"),
    ],
)
def test_the_authority_decides_the_severity(authority: str, severity: str, outcome: str) -> None:
    verdict = judge(checks({"state": "succeeded"}, {"state": authority}), [observed()])
    assert [item.severity for item in verdict.differences] == [severity]
    assert verdict.outcome == outcome


def test_a_convention_fails_only_when_its_set_is_enforced() -> None:
    case = checks(
        {"reason_code": "DONE_MARKER_FOUND", "events": {"includes": ["user.input.replied"]}},
        {"reason_code": "convention", "events": "convention"},
    )
    step = observed(
        reason_code="DONE_SIGNAL_FOUND", events=[{"type": "interaction.reply.accepted", "data": {}}]
    )
    relaxed = judge(case, [step])
    assert relaxed.outcome == "passed"
    assert {item.severity for item in relaxed.differences} == {"informational"}
    assert all(item.note == "as in convention set skill-runner" for item in relaxed.differences)
    assert judge(case, [step], conventions="skill-runner").differences == ()
    enforced = judge(case, [step], conventions="turngate")
    assert enforced.outcome == "failed"
    assert len(enforced.differences) == 2


def test_what_the_target_cannot_show_is_unverified_and_the_case_partial() -> None:
    case = checks(
        {"state": "waiting_user", "history": [{"interaction_id": 1}]}, {"state": WAITING, "history": HISTORY}
    )
    verdict = judge(case, [observed(history=None)])
    assert verdict.outcome == "partial"
    (item,) = verdict.differences
    assert (item.key, item.severity, item.level) == ("history", "unverified", "MUST")
    assert "does not show history" in item.note
    # An explicit list of what a target cannot show works for fields where None is a value.
    step = observed()
    step["observation"]["unobservable"] = ["reason_code"]
    shown = judge(checks({"reason_code": "X"}, {"reason_code": "convention"}), [step])
    assert shown.outcome == "passed"
    assert shown.differences[0].severity == "unverified"


def test_a_failure_wins_over_unverified_checks() -> None:
    case = checks({"state": "succeeded", "history": []}, {"state": WAITING, "history": HISTORY})
    assert judge(case, [observed(history=None)]).outcome == "failed"


def test_warnings_the_spec_requires_must_be_there_and_extra_ones_are_a_convention() -> None:
    case = checks({"warnings": ["INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER"]}, {"warnings": SOFT_WARNING})
    extra = judge(
        case, [observed(warnings=["INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER", "OUTPUT_REPAIRED_GENERIC"])]
    )
    assert extra.outcome == "passed"
    assert [(item.key, item.severity) for item in extra.differences] == [("warnings.exact", "informational")]
    missing = judge(case, [observed(warnings=["OUTPUT_REPAIRED_GENERIC"])])
    assert [(item.key, item.severity) for item in missing.differences] == [("warnings", "failed")]


def test_pending_enrichment_may_carry_more_than_expected() -> None:
    case = checks(
        {"pending": {"interaction_id": 1, "context": {"draft": "Hello"}}},
        {"pending": PENDING, "pending.context": ENRICH_MAY, "pending.interaction_id": PENDING},
    )
    richer = {"interaction_id": 1, "kind": "open_text", "context": {"draft": "Hello", "turn": 1}}
    assert judge(case, [observed(pending=richer)]).differences == ()
    poorer = judge(case, [observed(pending={"interaction_id": 2, "context": {}})])
    assert [(item.key, item.severity) for item in poorer.differences] == [
        ("pending.interaction_id", "failed"),
        ("pending.context", "informational"),
    ]


@pytest.mark.parametrize("shown", ["cut \ud83d", "cut \ufffd", "cut \\ud83d", "cut \\uD83D"])
def test_a_lone_surrogate_may_be_kept_replaced_or_escaped_but_not_lost(shown: str) -> None:
    """Half an emoji (``\\ud83d``) is no Unicode text: a server may keep it, store U+FFFD or write the
    six characters of its escape; all three are the text the engine sent. Dropping it is not."""
    case = checks({"pending": {"prompt": "cut \ud83d"}}, {"pending": PENDING})
    base = {"interaction_id": 1, "kind": "open_text"}
    assert judge(case, [observed(pending={**base, "prompt": shown})]).differences == ()
    (lost,) = judge(case, [observed(pending={**base, "prompt": "cut "})]).differences
    assert (lost.key, lost.severity) == ("pending.prompt", "failed")


def test_either_automatic_flag_satisfies_contains_any() -> None:
    run = [{"action": "run", "argv": ["codex", "exec", "--yolo", "--json"]}]
    case = checks(
        {"argv": [{"attempt": 1, "contains_any": ["--full-auto", "--yolo"]}]},
        {"argv": "interactive-engine-turn-protocol/adapter-cli-command/codex-auto#then"},
    )
    assert judge(case, [observed(calls=run)]).outcome == "passed"
    bare = [{"action": "run", "argv": ["codex", "exec", "--json"]}]
    assert judge(case, [observed(calls=bare)]).outcome == "failed"
    assert judge(case, [{**observed(), "calls": None}]).differences[0].severity == "unverified"


def test_the_catalog_refuses_a_check_with_no_authority(tmp_path: Path) -> None:
    source = CATALOG_DIR / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml"
    target = tmp_path / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml"
    target.parent.mkdir(parents=True)
    text = source.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("  error_code: "))
    target.write_text(text.replace(line + "\n", ""), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"steps\[1\]\.expect\.error_code: .*no authority"):
        load_catalog(tmp_path)
    target.write_text(text.replace(line, "  error_code: no/such#sentence"), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"by\.error_code: 'no/such#sentence': no such sentence"):
        load_catalog(tmp_path)


def test_the_checks_of_every_scenario_come_back_the_same_from_a_reports_json() -> None:
    """A JSONL report holds each case's checks (``Checks.to_json``), and ``turngate report judge``
    judges a saved run again from them (``Checks.from_json``): nothing may be lost on the way."""
    for scenario in load_catalog():
        assert (
            scenario.checks().to_json()
            == Checks.from_json(json.loads(json.dumps(scenario.checks().to_json()))).to_json()
        )


def test_report_judge_reproduces_a_saved_run_and_judges_under_other_conventions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, again = tmp_path / "run.jsonl", tmp_path / "again.jsonl"
    pattern = "interactive-decision-policy/evidence-priority/*"
    assert (
        main(["run", "-k", pattern, "--engine", "gemini", "--jobs", "1", "--report-json", str(report)]) == 0
    )
    assert main(["report", "judge", str(report), "-o", str(again)]) == 0
    _, first, _ = read_report(report)
    _, second, _ = read_report(again)
    keep = ("scenario_id", "engine", "outcome", "message", "differences", "reading")
    assert [{k: case[k] for k in keep} for case in first] == [{k: case[k] for k in keep} for case in second]
    capsys.readouterr()
    assert main(["report", "judge", str(report), "--conventions", "skill-runner"]) == 1
    out = capsys.readouterr().out
    assert "DONE_SIGNAL_FOUND" in out
    assert "convention set skill-runner enforced" in out
    assert main(["report", "judge", str(report), "--conventions", "nope"]) == 2


def test_a_reading_cites_its_own_words() -> None:
    (scenario,) = [s for s in load_catalog() if s.id == "design/decision-4.1/soft-completion-ask-user"]
    step = observed(state="succeeded", pending=None)
    heading = judge(scenario.checks(), [step], reading="decision-4.1-heading")
    state = next(item for item in heading.differences if item.key == "state")
    assert state.authority == "design/decision-4.1/soft-completion-ask-user#1"
    assert "soft completion MUST exclude ask_user-signaled turns" in (state.quote or "")
    body = judge(scenario.checks(), [observed(state="waiting_user")])
    assert next(item for item in body.differences if item.key == "state").authority.endswith("#2")


def test_a_connector_says_what_it_cannot_show_through_the_observation() -> None:
    from turngate.judge.decision_record import Placeholders, observed_step
    from turngate.protocol.connector import Observation

    def step_of(extra: dict[str, Any]) -> dict[str, Any]:
        seen = Observation("waiting_user", None, (), None, None, None, None, history=None, extra=extra)
        return {
            **observed_step(0, "start", None, seen, None, None, [], Placeholders("/nowhere")),
            "engine": "gemini",
        }

    step = step_of({"pending_unknown": True, "unobservable": ["attempts", "history"]})
    assert step["observation"]["unobservable"] == ["attempts", "history", "pending"]
    case = checks(
        {"pending": {"interaction_id": 1}, "attempts": 1, "history": []},
        {"pending": PENDING, "attempts": "reference", "history": HISTORY},
    )
    verdict = judge(case, [step])
    assert verdict.outcome == "partial"
    assert [(item.key, item.severity) for item in verdict.differences] == [
        ("pending", "unverified"),
        ("attempts", "unverified"),
        ("history", "unverified"),
    ]
    # The same Nones, not declared: what the target reported (null), a difference
    reported = judge(case, [step_of({"pending_unknown": True})])
    assert [(item.key, item.severity) for item in reported.differences] == [
        ("pending", "unverified"),
        ("attempts", "reference"),
        ("history", "failed"),
    ]


def test_the_spec_names_the_policy_field_not_its_values() -> None:
    policy = "interactive-decision-policy/default-decision-policy/pending-has-policy#then"
    case = checks(
        {
            "pending": {"default_decision_policy": "engine_judgement"},
            "pending_fields": ["default_decision_policy"],
        },
        {"pending": PENDING, "pending.default_decision_policy": "convention", "pending_fields": policy},
    )
    other = judge(case, [observed(pending={"interaction_id": 1, "default_decision_policy": "first_option"})])
    assert other.outcome == "passed"
    assert [(item.key, item.severity) for item in other.differences] == [
        ("pending.default_decision_policy", "informational")
    ]
    none = judge(case, [observed(pending={"interaction_id": 1})])
    assert ("pending_fields", "failed") in [(item.key, item.severity) for item in none.differences]


def test_a_value_the_pending_must_not_show_breaks_only_where_it_shows() -> None:
    legacy = "interactive-run-lifecycle/legacy-waiting-fallback/generic-pending#and1"
    case = checks(
        {"pending_not": {"prompt": "Choose a style", "kind": "choose_one"}}, {"pending_not": legacy}
    )

    def forbidden_shown(pending: Any) -> list[Any]:
        # judged by its sentence's edition (whose contract rules also judge the step: not these)
        verdict = judge(case, [observed(pending=pending)], edition="skill-runner-v0.6.0")
        return [(item.actual, item.severity) for item in verdict.differences if item.key == "pending_not"]

    enriched = {"interaction_id": 1, "kind": "choose_one", "prompt": "Choose a style"}
    assert forbidden_shown(enriched) == [({"prompt": "Choose a style", "kind": "choose_one"}, "failed")]
    assert forbidden_shown({**enriched, "prompt": "Please reply to continue."}) == [
        ({"kind": "choose_one"}, "failed")
    ]
    generic = {"interaction_id": 1, "kind": "open_text", "prompt": "Please reply to continue."}
    for pending in (generic, None):  # another value, or no pending at all: nothing shown that it forbids
        assert forbidden_shown(pending) == []


def test_a_history_field_the_target_does_not_say_is_unverified() -> None:
    automatic = "interactive-run-lifecycle/strict-switch/resumable-strict-false#then"
    case = checks(
        {"history": [{"interaction_id": 1, "automatic": True}]},
        {"history": HISTORY, "history.automatic": automatic},
    )
    verdict = judge(case, [observed(history=[{"interaction_id": 1, "automatic": None}])])
    assert verdict.outcome == "partial"
    assert [(item.key, item.severity) for item in verdict.differences] == [
        ("history.automatic", "unverified")
    ]
    assert judge(case, [observed(history=[{"interaction_id": 1, "automatic": False}])]).outcome == "failed"


def test_the_audit_must_agree_with_the_live_gate() -> None:
    agreeing = "design/decision-3.1/unified-detector#3"
    case = checks({"audit": "agrees"}, {"audit": agreeing})
    good = [{"attempt": 1, "marker_found": True, "completion": "strong", "agrees_with_gate": True}]
    assert judge(case, [observed(audit=good)]).differences == ()
    bad = [{**good[0], "agrees_with_gate": False}]
    assert [item.severity for item in judge(case, [observed(audit=bad)]).differences] == ["failed"]
    assert judge(case, [observed()]).outcome == "partial"  # a target that shows no audit


def test_the_required_event_must_carry_the_persisted_pendings_id_and_prompt() -> None:
    case = checks({"required_event": "from_pending"}, {"required_event": "design/architecture#2"})

    def required(**data: Any) -> list[dict[str, Any]]:
        return [{"type": "user.input.required", "data": data}]

    # Skill-Runner's event: its kind translated (open_text -> free_text), the rest from the pending
    same = required(interaction_id=1, kind="free_text", prompt="Which style?")
    assert judge(case, [observed(events=same)]).differences == ()
    parsed = required(interaction_id=7, prompt="Which style?")  # the hint's own id, parsed from the reply
    verdict = judge(case, [observed(events=parsed)])
    assert [(item.key, item.severity) for item in verdict.differences] == [("required_event", "failed")]
    assert judge(case, [observed(events=required(interaction_id=1, prompt=None))]).outcome == "failed"
    # what cannot be compared is unverified: no events shown, no such event, none of the two fields
    for unseen in (None, [], required(question="Which style?")):
        assert judge(case, [observed(events=unseen)]).outcome == "partial", unseen
    assert judge(case, [observed(events=same, pending=None)]).outcome == "partial"
    # (the steps above are saved ones, from before connectors declared what they cannot show)


def current(action: str = "start", **seen: Any) -> dict[str, Any]:
    """A step observed now: what the target cannot show is what its connector declares."""
    return {**observed(action, **seen), "observed_format": OBSERVED_FORMAT}


def test_a_target_showing_events_and_a_pending_but_no_required_event_breaks_architecture_2() -> None:
    case = checks({"required_event": "from_pending"}, {"required_event": "design/architecture#2"})
    chat = [{"type": "conversation.started", "data": {}}, {"type": "assistant.message.final", "data": {}}]
    verdict = judge(case, [current(events=chat)])
    assert verdict.outcome == "failed"
    (item,) = verdict.differences
    assert (item.key, item.authority, item.actual) == (
        "required_event",
        "design/architecture#2",
        "no user.input.required event",
    )
    assert "user.input.required" in (item.quote or "")
    assert judge(case, [current(events=[])]).outcome == "failed"  # shows events: none at all
    # unverified only where the target cannot show events at all
    hidden = current(events=None, unobservable=["events"])
    assert judge(case, [hidden]).outcome == "partial"
    assert judge(case, [current(events=chat, pending=None)]).differences == ()  # no pending: nothing to build


def test_a_null_history_or_history_field_a_target_reports_is_a_difference() -> None:
    automatic = "interactive-run-lifecycle/strict-switch/resumable-strict-false#then"
    case = checks(
        {"history": [{"interaction_id": 1, "response": "Formal", "automatic": True}]},
        {"history": HISTORY, "history.automatic": automatic},
    )
    row = {"interaction_id": 1, "response": "Formal", "automatic": None}
    verdict = judge(case, [current(history=[row])])
    assert verdict.outcome == "failed"
    assert [(item.key, item.severity) for item in verdict.differences] == [("history.automatic", "failed")]
    # declared: its rows do not carry the field
    declared = judge(case, [current(history=[row], unobservable=["history.automatic"])])
    assert [(item.key, item.severity) for item in declared.differences] == [
        ("history.automatic", "unverified")
    ]
    # a field left out of a row and not declared: a difference too
    left_out = judge(case, [current(history=[{"interaction_id": 1, "response": "Formal"}])])
    assert left_out.outcome == "failed"
    # a null history, reported: failed; declared: unverified; a saved step's None: unverified as before
    assert judge(case, [current(history=None)]).outcome == "failed"
    assert judge(case, [current(history=None, unobservable=["history"])]).outcome == "partial"
    assert judge(case, [observed(history=None)]).outcome == "partial"
    assert judge(case, [observed(history=[row])]).outcome == "partial"
    for name, value in (("events", {"includes": ["user.input.required"]}), ("slot_held", False)):
        by = {name: PENDING}
        assert judge(checks({name: value}, by), [current("start", **{name: None})]).outcome == "failed", name
        hidden = current("start", **{name: None}, unobservable=[name])
        assert judge(checks({name: value}, by), [hidden]).outcome == "partial", name


def test_history_rows_must_carry_timestamps_that_do_not_go_backwards() -> None:
    case = checks({"history_timestamps": "ordered"}, {"history_timestamps": HISTORY})

    def rows(*stamps: Any) -> list[dict[str, Any]]:
        return [{"interaction_id": n, "response": "x", "timestamp": t} for n, t in enumerate(stamps, 1)]

    for good in (rows(10.0, 10.0, 11.5), rows("2025-11-22T12:00:00Z", "2025-11-22T12:00:01+00:00"), []):
        assert judge(case, [current(history=good)]).differences == (), good
    for bad in (rows(10.0, None), rows(None, None), [{"interaction_id": 1, "response": "x"}], rows(11, 10)):
        verdict = judge(case, [current(history=bad)])
        assert verdict.outcome == "failed", bad
        assert verdict.differences[0].authority == HISTORY
    assert judge(case, [current(history=rows("yesterday", "today"))]).outcome == "partial"  # unreadable
    declared = current(history=rows(None), unobservable=["history.timestamp"])
    assert judge(case, [declared]).outcome == "partial"
    assert judge(case, [observed(history=rows(None, None))]).outcome == "partial"  # a saved step


def _pending_steps(*ids: int | None) -> list[dict[str, Any]]:
    return [
        current("start" if not index else "reply", pending=None if n is None else {"interaction_id": n})
        for index, n in enumerate(ids)
    ]


def test_a_conforming_target_numbering_ids_101_102_passes() -> None:
    (scenario,) = [s for s in load_catalog() if s.id == "design/decision-5/stale-interaction-id-refused"]
    steps = _pending_steps(101, 102, 102, None)
    steps[2]["reply"] = {"accepted": False, "code": "STALE"}
    steps[2]["observation"]["attempts"] = 2
    steps[3].update(reply={"accepted": True, "code": None})
    steps[3]["observation"].update(state="succeeded", data={"greeting": "Good day, Ada"})
    verdict = judge(scenario.checks(), steps)
    assert verdict.outcome == "passed", verdict.message
    # the literal ids are the reference's numbering: reported, never a verdict
    assert {item.key for item in verdict.differences} == {"pending.interaction_id"}
    assert {item.severity for item in verdict.differences} == {"reference"}
    # the relation still catches an id that does not move on, or goes back
    for ids in ((101, 101, 102, None), (101, 100, 100, None)):
        broken = _pending_steps(*ids)
        broken[2]["reply"] = {"accepted": False, "code": "STALE"}
        broken[3].update(reply={"accepted": True, "code": None})
        broken[3]["observation"].update(state="succeeded", data={"greeting": "Good day, Ada"})
        failed = judge(scenario.checks(), broken)
        assert failed.outcome == "failed", ids
        assert {item.key for item in failed.differences if item.severity == "failed"} == {"pending_id"}
    # a new id after the stale reply: the server applied it to the open ask, which no sentence forbids
    # (refusing it is the job API's convention): reported, not failed
    moved_on = _pending_steps(101, 102, 103, None)
    moved_on[2]["reply"] = {"accepted": False, "code": "STALE"}
    moved_on[3].update(reply={"accepted": True, "code": None})
    moved_on[3]["observation"].update(state="succeeded", data={"greeting": "Good day, Ada"})
    verdict = judge(scenario.checks(), moved_on)
    assert verdict.outcome == "passed"
    assert ("pending_id", "convention") in {(item.key, item.authority) for item in verdict.differences}


def test_pending_id_new_and_same() -> None:
    d5 = "design/decision-5/backend-pending-baseline#2"
    case = Checks(
        "x/y/z",
        ({"pending_id": "new"}, {"pending_id": "new"}, {"pending_id": "same"}),
        ("start", "reply", "advance_clock"),
        {"pending_id": d5},
        ({}, {}, {}),
        {},
        None,
    )
    assert judge(case, _pending_steps(10, 20, 20)).differences == ()
    assert [d.step for d in judge(case, _pending_steps(10, 10, 10)).differences] == [1]
    assert [d.step for d in judge(case, _pending_steps(10, 20, 30)).differences] == [2]
    strings = _pending_steps(10, 20, 20)
    strings[1]["observation"]["pending"] = {"interaction_id": "20"}
    assert {d.step for d in judge(case, strings).differences} == {1, 2}


def test_history_rows_relate_to_the_pendings_the_run_showed() -> None:
    case = Checks(
        "x/y/z",
        ({}, {"history": [{"interaction_id": {"pending_at": 0}, "response": "Formal"}]}),
        ("start", "reply"),
        {"history": HISTORY},
        ({}, {}),
        {},
        None,
    )
    waiting = current(pending={"interaction_id": 101})
    rows = [{"interaction_id": 101, "response": "Formal"}, {"interaction_id": 102, "response": None}]
    # the ask now waiting (no response yet) is no completed round: not compared
    assert judge(case, [waiting, current("reply", history=rows)]).differences == ()
    wrong = [{"interaction_id": 1, "response": "Formal"}]
    (item,) = judge(case, [waiting, current("reply", history=wrong)]).differences
    assert (item.key, item.severity, item.expected) == (
        "history.interaction_id",
        "failed",
        {"row": 1, "interaction_id": 101},
    )
    lost = [{"interaction_id": 101, "response": None}]  # the round's reply was lost
    assert judge(case, [waiting, current("reply", history=lost)]).outcome == "failed"


def test_steps_a_case_never_reached_are_unverified() -> None:
    case = Checks(
        "x/y/z",
        ({"state": "waiting_user"}, {"state": "succeeded"}),
        ("start", "reply"),
        {"state": WAITING},
        ({}, {}),
        {},
        None,
    )
    verdict = judge(case, [observed(state="refused")])
    assert [(item.step, item.severity) for item in verdict.differences] == [(0, "failed"), (1, "unverified")]
    assert "not reached" in verdict.differences[1].note


def test_a_refused_package_the_scenario_thinks_valid_errs_the_case_with_the_targets_reason(
    tmp_path: Path,
) -> None:
    source = CATALOG_DIR / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml"
    target = tmp_path / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(source.read_text(encoding="utf-8").replace("max_attempt: 2", "max_attempt: 0"), "utf-8")
    report = tmp_path / "r.jsonl"
    only = ["--no-shipped", "--catalog", str(tmp_path), "--engine", "codex", "--jobs", "1"]
    assert main(["run", *only, "--report-json", str(report)]) == 1
    _, (case,), _ = read_report(report)
    assert case["outcome"] == "errored"
    assert "PackageRefused" in case["message"]
    assert "max_attempt" in case["message"]


SOFT_41 = "design/decision-4.1/soft-completion-ask-user"


def _waits_as_the_heading_reads() -> list[dict[str, Any]]:
    events = [
        {"type": "conversation.started", "data": {}},
        {"type": "user.input.required", "data": {"interaction_id": 1}},
    ]
    return [current(events=events, pending={"interaction_id": 1, "kind": "open_text"})]


def test_a_case_that_breaks_only_another_reading_is_ambiguous_with_the_readings_named() -> None:
    (scenario,) = [s for s in load_catalog() if s.id == SOFT_41]
    steps = _waits_as_the_heading_reads()
    verdict = judge(scenario.checks(), steps)  # no reading chosen: every reading is judged
    assert verdict.outcome == "ambiguous"
    assert verdict.readings == {"decision-4.1-body": "failed", "decision-4.1-heading": "passed"}
    assert (verdict.holds, verdict.breaks) == (("decision-4.1-heading",), ("decision-4.1-body",))
    first = verdict.message.splitlines()[0]
    assert "holds under reading decision-4.1-heading" in first
    assert "breaks reading decision-4.1-body" in first
    broken = [item for item in verdict.differences if item.severity == "failed"]
    assert broken
    assert {item.reading for item in broken} == {"decision-4.1-body"}
    assert "[reading decision-4.1-body]" in str(broken[0])
    # chosen, a reading is judged strictly
    assert judge(scenario.checks(), steps, reading="decision-4.1-heading").outcome == "passed"
    strict = judge(scenario.checks(), steps, reading="decision-4.1-body")
    assert strict.outcome == "failed"
    assert strict.readings == {}
    # breaking every reading fails, naming them all
    neither = judge(scenario.checks(), [current(state="failed", pending=None)])
    assert neither.outcome == "failed"
    assert "breaks every reading" in neither.message


def test_an_ambiguous_case_does_not_fail_the_exit_status_unless_its_reading_is_chosen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "run.jsonl"
    pattern = SOFT_41
    assert main(["run", "-k", pattern, "--engine", "codex", "--jobs", "1", "--report-json", str(report)]) == 0
    _, (case,), _ = read_report(report)
    # the reference completes softly (the body reading, its default): the heading reading breaks
    assert case["outcome"] == "ambiguous"
    assert case["reading_chosen"] is False
    assert case["readings"] == {"decision-4.1-body": "passed", "decision-4.1-heading": "failed"}
    assert "breaks reading decision-4.1-heading" in case["message"]
    capsys.readouterr()
    assert main(["report", "judge", str(report)]) == 0
    assert "AMBIGUOUS" in capsys.readouterr().out
    assert main(["report", "judge", str(report), "--reading", "decision-4.1-heading"]) == 1
    assert main(["report", "judge", str(report), "--reading", "decision-4.1-body"]) == 0
    junit = tmp_path / "run.xml"
    assert main(["run", "-k", pattern, "--engine", "codex", "--jobs", "1", "--junit", str(junit)]) == 0
    text = junit.read_text(encoding="utf-8")
    assert "<failure" not in text
    assert "ambiguous: reading-dependent" in text
    chosen = tmp_path / "heading.jsonl"
    argv = ["run", "-k", pattern, "--engine", "codex", "--jobs", "1", "--report-json", str(chosen)]
    assert main([*argv, "--reading", "decision-4.1-heading"]) == 0  # the reference follows the chosen reading
    _, (case,), _ = read_report(chosen)
    assert (case["outcome"], case["reading_chosen"], case["readings"]) == ("passed", True, {})


def test_a_fields_own_authority_wins_over_a_steps_authority_for_its_key() -> None:
    """A step citing a sentence for its ``pending`` must not make the scenario's literal id (backed by
    ``reference``) that sentence's value: ids 101, 102 of a conforming target were judged failed."""
    checks = Checks(
        "x",
        ({"pending": {"interaction_id": 1}},),
        ("start",),
        {"pending.interaction_id": "reference"},
        ({"pending": "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting#and1"},),
        {},
        None,
    )
    assert checks.authority(0, "pending.interaction_id") == "reference"
    assert checks.authority(0, "pending").endswith("incomplete-turn-enters-waiting#and1")


def test_breaks_after_a_broken_given_follow_from_it_and_quote_it() -> None:
    """A check that establishes the scenario's GIVEN (``given:``): once it breaks, the breaks after
    it (the rest of its step, later steps) are unverified and name it, so that the case fails on
    the sentence whose rule broke; a break before it stays what it is."""
    case = Checks(
        "x/y/z",
        (
            {"state": "waiting_user", "pending_id": "new"},
            {"state": "succeeded", "attempts": 2},
            {"state": "failed"},
        ),
        ("start", "reply", "reply"),
        {"state": WAITING, "attempts": PENDING, "pending_id": "design/decision-5/backend-pending-baseline#2"},
        ({}, {}, {}),
        {},
        None,
        {},
        ("attempts",),
    )
    steps = [
        observed(pending={"interaction_id": "x", "kind": "open_text", "prompt": "p"}),  # not an id: breaks
        observed("reply", attempts=1),  # the GIVEN breaks here, and the state beside it
        observed("reply"),
    ]
    verdict = judge(case, steps)
    assert verdict.outcome == "failed"
    shown = {(item.step, item.key): item for item in verdict.differences}
    assert shown[(0, "pending_id")].severity == "failed"  # before the GIVEN broke: its own break
    assert shown[(1, "attempts")].severity == "failed"
    assert shown[(1, "attempts")].authority == PENDING
    for later in ((1, "state"), (2, "state")):
        assert shown[later].severity == "unverified"
        assert f"follows from step 1's attempts ({PENDING})" in shown[later].note
    # without the given, each break is its own
    plain = judge(Checks(*[getattr(case, name) for name in Checks.__dataclass_fields__][:-1]), steps)
    assert {item.severity for item in plain.differences} == {"failed"}
