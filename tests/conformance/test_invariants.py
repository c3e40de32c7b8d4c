"""Skill-Runner's machine-readable invariants as checks (turngate/judge/invariants.py): every rule of an
edition's contract files is read, each checked rule holds on a run shaped as upstream publishes it and
breaks on one that differs, evidence a target does not show is unverified, and only an edition whose
file has a rule holds a target to it."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.test_verdict import checks
from tests.schemas.schemas import REPORT, problems
from turngate.judge.catalog.checks import Checks
from turngate.judge.catalog.contracts import (
    ContractProblem,
    _contract,
    contract,
    readings,
    rules_table,
)
from turngate.judge.catalog.editions import Edition, SpecText, editions
from turngate.judge.catalog.sentences import sentences
from turngate.judge.html_report import _difference
from turngate.judge.invariants import contract_problems, findings
from turngate.judge.verdict import judge

ROOT = Path(__file__).resolve().parents[2]
SEED, OWN = "seed-7d8914d+4cb89ba", "skill-runner-7d8914d"
V040, V043, V060, V079 = (f"skill-runner-v{version}" for version in ("0.4.0", "0.4.3", "0.6.0", "0.7.9"))
RELEASES = (V040, V043, V060, V079)
SESSION = "session_fcmp_invariants.yaml"
ORDERING = "runtime_event_ordering_contract.yaml"
AT = "2026-02-24T00:00:00"

Event = tuple[str, dict[str, Any], int]  # type, data, attempt


def change(source: str, target: str, trigger: str, attempt: int, **more: Any) -> Event:
    """A conversation.state.changed as server/runtime/protocol/factories.py make_fcmp_state_changed
    builds it (runtime_contract.schema.json: from, to, trigger, updated_at required)."""
    return (
        "conversation.state.changed",
        {"from": source, "to": target, "trigger": trigger, "updated_at": AT, **more},
        attempt,
    )


ASK = ("user.input.required", {"interaction_id": 1, "kind": "open_text", "prompt": "Which style?"}, 1)
REPLY = (
    "interaction.reply.accepted",
    {"interaction_id": 1, "resolution_mode": "user_reply", "accepted_at": AT, "response_preview": "formal"},
    1,
)
SUCCEEDED = change(
    "running",
    "succeeded",
    "turn.succeeded",
    2,
    terminal={"status": "succeeded", "reason_code": "OUTPUT_VALIDATED"},
)
# One interactive run with one ask and one reply, in the order Skill-Runner c79d774 publishes it:
# event_protocol.py:796-826 (user.input.required, then running -> waiting_user), :828-862 (the reply,
# then waiting_user -> queued), docs/session_event_flow_sequence_fcmp.md:330-338 (then queued -> running
# for the next attempt), :37-45 (assistant.message.final before running -> succeeded).
WAITING_RUN: list[Event] = [
    change("queued", "running", "turn.started", 1),
    ("assistant.message.final", {"message_id": "m_1_1", "text": "Which style?"}, 1),
    ASK,
    change("running", "waiting_user", "turn.needs_input", 1, pending_interaction_id=1),
]
RESUMED_RUN: list[Event] = [
    *WAITING_RUN,
    REPLY,
    change("waiting_user", "queued", "interaction.reply.accepted", 1, resume_cause="interaction_reply"),
    change("queued", "running", "turn.started", 2),
    ("assistant.message.final", {"message_id": "m_2_1", "text": '{"greeting": "Good day"}'}, 2),
    SUCCEEDED,
]
PENDING = {"interaction_id": 1, "kind": "open_text", "prompt": "Which style?"}


def step(
    state: str,
    events: list[Event] | None,
    *,
    action: str = "start",
    envelopes: bool = True,
    data: Any = None,
    pending: Any = None,
    attempts: int | None = 1,
    seqs: list[int] | None = None,
) -> dict[str, Any]:
    """An observed step (decision_record.observed_step's shape), its events with their envelopes."""
    observation: dict[str, Any] = {
        "state": state,
        "error_code": None,
        "warnings": [],
        "reason_code": None,
        "data": data,
        "pending": pending,
        "attempts": attempts,
        "history": [],
        "events": None
        if events is None
        else [{"type": kind, "data": dict(body)} for kind, body, _ in events],
        "slot_held": None,
        "patch": None,
    }
    if events is None:
        observation["unobservable"] = ["events"]
    elif envelopes:
        numbers = seqs or list(range(1, len(events) + 1))
        observation["event_envelopes"] = [
            {"seq": seq, "attempt": attempt} for seq, (_, _, attempt) in zip(numbers, events, strict=True)
        ]
    return {"observed_format": 2, "action": action, "observation": observation, "reply": None, "calls": []}


def run(events: list[Event] = RESUMED_RUN, **options: Any) -> list[dict[str, Any]]:
    """The run observed twice: waiting for the reply, then succeeded (each step its history so far:
    the first up to the change to waiting_user)."""
    waits = [index for index, (kind, data, _) in enumerate(events) if data.get("to") == "waiting_user"]
    waiting = step(
        "waiting_user", events[: waits[-1] + 1 if waits else len(WAITING_RUN)], pending=PENDING, **options
    )
    done = step("succeeded", events, action="reply", data={"greeting": "Good day"}, attempts=2, **options)
    return [waiting, done]


def broken(edition: str, steps: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The authorities of the rules the steps break (not unverified), each with what was shown."""
    found: dict[str, list[Any]] = {}
    read = contract(edition)
    assert read is not None
    for item in findings(read, steps):
        if item.unseen is None:
            rule_id = item.row.id if item.row is not None else item.rule.id
            found.setdefault(f"{item.rule.file}#{rule_id}", []).append(item.actual)
    return found


# The contract files and turngate's reading of them --------------------------------------------------


def test_every_rule_of_every_edition_s_contract_files_is_read_and_the_seed_has_none() -> None:
    assert contract_problems() == []
    assert contract(SEED) is None and contract(OWN) is None
    for name in RELEASES:
        read = contract(name)
        assert read is not None
        assert read.initial_state == "queued"
        assert read.terminal_states == {"succeeded", "failed", "canceled"}
        assert read.removed_lifecycle == {
            "conversation.started",
            "conversation.completed",
            "conversation.failed",
        }
    assert [sorted(editions()[name].contracts) for name in RELEASES] == [
        [ORDERING, SESSION],
        [ORDERING, SESSION],
        ["agent_output_protocol_invariants.yaml", ORDERING, SESSION],
        ["agent_output_protocol_invariants.yaml", ORDERING, SESSION],
    ]


def ids(name: str, key: str) -> list[str]:
    read = contract(name)
    assert read is not None
    return [rule.id for rule in read.rules if rule.key == key]


def test_a_rule_is_known_by_its_name_its_id_is_the_edition_s() -> None:
    """Upstream renumbered its ordering rules (2bff809); v0.4.0 and v0.4.3 use some ids twice."""
    waiting = "waiting_state_must_not_emit_terminal_result_projection"
    assert [ids(name, waiting) for name in RELEASES] == [["OR-47"], ["OR-47"], ["OR-59"], ["OR-59"]]
    markers = "fcmp_must_not_emit_assistant_turn_markers"
    assert [ids(name, markers) for name in RELEASES] == [[], ["OR-60"], ["OR-72"], ["OR-72"]]
    v040 = contract(V040)
    assert v040 is not None
    assert sorted(rule.name for rule in v040.rules if rule.id == "OR-24") == [
        "fcmp_current_state_must_match_projection",
        "orphan_queued_run_reconciles_terminal",
    ]
    # PR-05 changed meaning at abe8626: turngate keys a precedence rule by what it orders
    final_first = "assistant.message.final -> assistant.message.superseded"
    assert [ids(name, final_first) for name in RELEASES] == [[], [], ["PR-05"], ["PR-05"]]


def test_the_docs_table_is_the_data_s() -> None:
    text = (ROOT / "docs" / "invariants.md").read_text(encoding="utf-8")
    assert rules_table() in text, (
        "docs/invariants.md: regenerate its table with"
        " `python -c 'from turngate.judge.catalog.contracts import rules_table; print(rules_table())'`"
    )


def test_a_bad_reading_or_contract_file_is_one_line_naming_file_field_and_value(tmp_path: Path) -> None:
    bad = tmp_path / "invariants.yaml"
    bad.write_text(
        "session_fcmp_invariants.yaml:\n  ordering_rules:\n    terminal_state_unique: {check: x}\n"
    )
    with pytest.raises(ContractProblem) as raised:
        readings(bad)
    assert str(raised.value) == (
        f"{bad}: session_fcmp_invariants.yaml.ordering_rules.terminal_state_unique.meaning: None:"
        " must be a non-empty string"
    )
    broken_file = tmp_path / "session_fcmp_invariants.yaml"
    broken_file.write_text("canonical: {initial_state: queued, terminal_states: succeeded}\n")
    text = SpecText(
        "server/contracts/invariants/session_fcmp_invariants.yaml", "0" * 40, "", str(broken_file)
    )
    edition = Edition("broken", "t", "s", {}, contracts={SESSION: text})
    with pytest.raises(ContractProblem) as raised:
        _contract(edition)
    assert str(raised.value) == f"{broken_file}: canonical.terminal_states: 'succeeded': must be a list"
    assert "\n" not in str(raised.value)


# Each checked rule: a run as upstream publishes it holds, one that differs breaks -------------------


@pytest.mark.parametrize("edition", RELEASES)
def test_a_run_published_as_skill_runner_publishes_it_breaks_no_rule(edition: str) -> None:
    read = contract(edition)
    assert read is not None
    assert findings(read, run()) == ()


def mutated(edit: Callable[[list[Event]], None]) -> list[dict[str, Any]]:
    events = copy.deepcopy(RESUMED_RUN)
    edit(events)
    return run(events)


def insert(at: int, *added: Event) -> Callable[[list[Event]], None]:
    def edit(events: list[Event]) -> None:
        events[at:at] = added

    return edit


def replace(at: int, event: Event) -> Callable[[list[Event]], None]:
    def edit(events: list[Event]) -> None:
        events[at] = event

    return edit


def drop(at: int) -> Callable[[list[Event]], None]:
    def edit(events: list[Event]) -> None:
        del events[at]

    return edit


def with_step(state: str, **seen: Any) -> list[dict[str, Any]]:
    """The run's second step showing something else."""
    steps = run()
    steps[1]["observation"].update(state=state, **seen)
    return steps


CANCELED_FROM_WAITING = change("running", "canceled", "run.canceled", 1, terminal={"status": "canceled"})
BREAKS: list[tuple[str, Callable[[], list[dict[str, Any]]], str]] = [
    # transitions: a change from a state the run is not in (Skill-Runner c79d774 names every cancel
    # "from running", event_protocol.py:1107-1125, also one of a waiting run)
    ("cancel-from-waiting", lambda: run([*WAITING_RUN, CANCELED_FROM_WAITING]), f"{SESSION}#transitions"),
    # transitions: waiting_user on a reply goes to queued (TR-08), not straight to running
    (
        "reply-straight-to-running",
        lambda: mutated(replace(5, change("waiting_user", "running", "interaction.reply.accepted", 1))),
        f"{SESSION}#TR-08",
    ),
    # fcmp_mapping: a mapped (from, to) with another trigger (FM-08 is turn.succeeded)
    (
        "succeeded-by-another-trigger",
        lambda: mutated(
            replace(8, change("running", "succeeded", "done", 2, terminal={"status": "succeeded"}))
        ),
        f"{SESSION}#FM-08",
    ),
    (
        "unmapped-change",
        lambda: mutated(replace(5, change("waiting_user", "running", "interaction.reply.accepted", 1))),
        f"{SESSION}#fcmp_mapping.state_changed",
    ),
    # paired_events: the reply's change must follow it (test_fcmp_mapping_properties.py:153-168)
    (
        "reply-after-its-change",
        lambda: mutated(lambda events: events.__setitem__(slice(4, 6), [events[5], events[4]])),
        f"{SESSION}#PE-02",
    ),
    (
        "ask-without-its-change",
        lambda: run([change("queued", "running", "turn.started", 1), ASK]),
        f"{SESSION}#PE-05",
    ),
    (
        "two-terminal-changes",
        lambda: mutated(
            insert(9, change("succeeded", "failed", "turn.failed", 2, terminal={"status": "failed"}))
        ),
        f"{SESSION}#OR-01",
    ),
    (
        "leaves-its-terminal-state",
        lambda: [*run(), step("waiting_user", RESUMED_RUN, action="reply", pending=PENDING)],
        f"{SESSION}#OR-01",
    ),
    ("waiting-without-its-ask", lambda: mutated(drop(2)), f"{SESSION}#OR-02"),
    (
        "seq-gap",
        lambda: [step("succeeded", RESUMED_RUN, seqs=[1, 2, 3, 4, 5, 6, 8, 9, 10], data={})],
        f"{SESSION}#OR-04",
    ),
    (
        "resumed-output-before-the-reply",
        lambda: mutated(insert(4, ("assistant.message.final", {"message_id": "m_2_0", "text": "early"}, 2))),
        f"{SESSION}#OR-05",
    ),
    (
        "attempt-goes-back",
        lambda: mutated(replace(7, ("assistant.message.final", {"message_id": "m_2_1", "text": "{}"}, 1))),
        f"{SESSION}#OR-08",
    ),
    ("fewer-attempts-later", lambda: with_step("succeeded", attempts=0), f"{SESSION}#OR-08"),
    (
        "terminal-payload-of-another-status",
        lambda: mutated(
            replace(8, change("running", "succeeded", "turn.succeeded", 2, terminal={"status": "failed"}))
        ),
        f"{SESSION}#OR-12",
    ),
    (
        "result-while-waiting",
        lambda: [step("waiting_user", WAITING_RUN, pending=PENDING, data={"partial": 1})],
        f"{SESSION}#OR-19",
    ),
    (
        "terminal-payload-on-a-wait",
        lambda: mutated(
            replace(
                3, change("running", "waiting_user", "turn.needs_input", 1, terminal={"status": "succeeded"})
            )
        ),
        f"{SESSION}#OR-20",
    ),
    (
        "waiting-without-its-pending",
        lambda: [step("waiting_user", WAITING_RUN, pending=None)],
        f"{SESSION}#OR-21",
    ),
    ("pending-kept-after-the-wait", lambda: with_step("succeeded", pending=PENDING), f"{SESSION}#OR-22"),
    ("status-not-the-stream-s-state", lambda: with_step("failed", data=None), f"{SESSION}#OR-27"),
    (
        "result-while-waiting-v060",
        lambda: [step("waiting_user", WAITING_RUN, pending=PENDING, data={"partial": 1})],
        f"{SESSION}#OR-59",
    ),
    ("lifecycle-event", lambda: mutated(insert(0, ("conversation.started", {}, 1))), f"{SESSION}#OR-62"),
    ("turn-marker", lambda: mutated(insert(1, ("agent.turn_start", {}, 1))), f"{SESSION}#OR-72"),
    (
        "succeeded-without-a-final",
        lambda: mutated(lambda events: [events.pop(7), events.pop(1)]),
        f"{ORDERING}#PR-04",
    ),
    (
        "succeeded-without-a-final-gated",
        lambda: mutated(lambda events: [events.pop(7), events.pop(1)]),
        f"{ORDERING}#GR-02",
    ),
    ("resumed-without-the-reply", lambda: mutated(drop(4)), f"{ORDERING}#PR-03"),
    (
        "superseded-before-its-final",
        lambda: mutated(
            insert(
                7,
                (
                    "assistant.message.superseded",
                    {
                        "message_id": "m_2_1",
                        "message_family_id": "m_2_1",
                        "reason": "output_repair_started",
                        "repair_round_index": 1,
                        "replacement_expected": True,
                    },
                    2,
                ),
            )
        ),
        f"{ORDERING}#PR-05",
    ),
    (
        "repair-in-the-next-attempt",
        lambda: mutated(
            insert(
                2,
                (
                    "assistant.message.superseded",
                    {
                        "message_id": "m_1_1",
                        "message_family_id": "m_1_1",
                        "reason": "output_repair_started",
                        "repair_round_index": 1,
                        "replacement_expected": True,
                    },
                    2,
                ),
            )
        ),
        "agent_output_protocol_invariants.yaml#repair_loop",
    ),
]


@pytest.mark.parametrize(("name", "steps", "authority"), BREAKS, ids=[name for name, _, _ in BREAKS])
def test_a_run_that_differs_breaks_the_rule(
    name: str, steps: Callable[[], list[dict[str, Any]]], authority: str
) -> None:
    assert authority in broken(V079, steps())


def test_a_message_id_an_engine_uses_again_in_a_later_attempt_names_the_final_before_the_supersession() -> (
    None
):
    # Real codex numbers its items afresh in each process: Skill-Runner v0.7.9 publishes "item_0" as
    # the message id of the first final of every attempt. A repair round of attempt 1 supersedes
    # attempt 1's "item_0", not attempt 2's.
    superseded = {"message_id": "item_0", "reason": "output_repair_started", "repair_round_index": 1}
    events: list[Event] = [
        change("queued", "running", "turn.started", 1),
        ("assistant.message.final", {"message_id": "item_0", "text": "Which style?"}, 1),
        ("assistant.message.superseded", superseded, 1),
        ("assistant.message.final", {"message_id": "item_0", "text": "Which style?"}, 1),
        ASK,
        change("running", "waiting_user", "turn.needs_input", 1, pending_interaction_id=1),
        REPLY,
        change("waiting_user", "queued", "interaction.reply.accepted", 1, resume_cause="interaction_reply"),
        change("queued", "running", "turn.started", 2),
        ("assistant.message.final", {"message_id": "item_0", "text": '{"greeting": "Good day"}'}, 2),
        SUCCEEDED,
    ]
    assert "agent_output_protocol_invariants.yaml#repair_loop" not in broken(V079, run(events))


def test_a_wait_for_the_user_announced_before_its_state_change_pairs_too() -> None:
    """tests/fixtures/auth_detection_samples/opencode/deepseek_invalid_api_key/fcmp_events.1.jsonl at
    c79d774 (their seq, type, data and meta; a queued -> running put before them): the change to
    waiting_user (seq 7) before its user.input.required (seq 8), as the batch path of 8a0ec29
    publishes them (event_protocol.py:1007-1020, :1374)."""
    lines = [
        '{"seq": 7, "type": "conversation.state.changed", "data": {"from": "running", "to": '
        '"waiting_user", "trigger": "turn.needs_input", "updated_at": null, "pending_interaction_id": '
        'null}, "meta": {"attempt": 1}}',
        '{"seq": 8, "type": "user.input.required", "data": {"interaction_id": 1, "kind": "free_text", '
        '"prompt": "Provide next user turn"}, "meta": {"attempt": 1}}',
    ]
    quoted = [json.loads(line) for line in lines]
    events: list[Event] = [change("queued", "running", "turn.started", 1)]
    events += [(item["type"], item["data"], item["meta"]["attempt"]) for item in quoted]
    for edition in RELEASES:
        assert broken(edition, [step("waiting_user", events, pending=PENDING)]) == {}


# A captured run of Skill-Runner (2026-03-02, before 3d9e93a folded the terminal into the state
# change): tests/fixtures/auth_detection_samples/codex/openai_missing_bearer_401/fcmp_events.1.jsonl
# at c79d774: its events other than raw.stdout, their seq, type, data and meta as the fixture has them
# (protocol_version, run_id, ts, engine and raw_ref left out; seq 3-22 are raw.stdout lines of the CLI).
OPENAI_401 = [
    '{"seq": 1, "type": "diagnostic.warning", "data": {"code": "UNKNOWN_ENGINE_PROFILE"}, "meta": '
    '{"attempt": 1}}',
    '{"seq": 2, "type": "diagnostic.warning", "data": {"code": "LOW_CONFIDENCE_PARSE"}, "meta": '
    '{"attempt": 1}}',
    '{"seq": 23, "type": "conversation.state.changed", "data": {"from": "running", "to": "failed", '
    '"trigger": "turn.failed", "updated_at": null, "pending_interaction_id": null}, "meta": '
    '{"attempt": 1}}',
    '{"seq": 24, "type": "conversation.failed", "data": {"error": {"category": "runtime", "code": '
    '"NON_ZERO_EXIT"}}, "meta": {"attempt": 1}}',
]


def captured_401() -> list[Event]:
    first, second, failed, lifecycle = (json.loads(line) for line in OPENAI_401)
    raw: list[Event] = [("raw.stdout", {"line": "..."}, 1)] * 20
    return (
        [(item["type"], item["data"], item["meta"]["attempt"]) for item in (first, second)]
        + raw
        + [(item["type"], item["data"], item["meta"]["attempt"]) for item in (failed, lifecycle)]
    )


def test_a_captured_run_from_before_the_lifecycle_normalization_breaks_the_later_contract() -> None:
    steps = [step("failed", captured_401())]
    found = broken(V060, steps)
    assert sorted(found) == [
        f"{SESSION}#OR-12",  # its change to failed carries no terminal payload
        f"{SESSION}#OR-62",  # conversation.failed
        f"{SESSION}#transitions",  # the history never shows queued -> running
    ]
    assert found[f"{SESSION}#OR-62"] == [{"event": 24, "seq": 24, "type": "conversation.failed"}]
    # v0.4.0 already folded the lifecycle into the state change: its rule is OR-50
    assert f"{SESSION}#OR-50" in broken(V040, steps)


# What a target does not show is unverified -------------------------------------------------------


def unseen(edition: str, steps: list[dict[str, Any]]) -> dict[str, str]:
    read = contract(edition)
    assert read is not None
    return {
        f"{item.rule.file}#{item.rule.id}": str(item.unseen) for item in findings(read, steps) if item.unseen
    }


def test_events_without_envelopes_leave_the_seq_and_attempt_rules_unverified() -> None:
    assert unseen(V079, run(envelopes=False)) == {
        f"{SESSION}#OR-04": "the target does not show each event's seq (event_envelopes)",
        f"{SESSION}#OR-05": "the target does not show each event's attempt (event_envelopes)",
        f"{SESSION}#OR-08": "the target does not show each event's attempt (event_envelopes)",
    }
    assert broken(V079, run(envelopes=False)) == {}
    # no reply, nothing for OR-05 to order
    assert f"{SESSION}#OR-05" not in unseen(
        V079, [step("waiting_user", WAITING_RUN, envelopes=False, pending=PENDING)]
    )


def test_a_target_that_shows_no_events_leaves_every_event_rule_unverified_and_the_steps_judged() -> None:
    steps = [
        step("waiting_user", None, pending=PENDING),
        step("succeeded", None, action="reply", data={}, pending=PENDING),
    ]
    assert set(unseen(V079, steps)) >= {f"{SESSION}#transitions", f"{SESSION}#OR-04", f"{SESSION}#OR-62"}
    # what the steps themselves show is still judged: a pending kept once the run succeeded
    assert set(broken(V079, steps)) == {f"{SESSION}#OR-21", f"{SESSION}#OR-22"}


# In a verdict --------------------------------------------------------------------------------------

CASE = checks({"state": "waiting_user"}, {"state": "convention"})


def test_a_rule_break_fails_a_case_only_under_an_edition_whose_file_has_the_rule() -> None:
    marked = mutated(insert(1, ("agent.turn_start", {}, 1)))
    assert judge(CASE, marked, edition=V043).outcome == "failed"  # OR-60 at v0.4.3
    assert judge(CASE, marked, edition=V040).outcome == "passed"  # v0.4.0's file has no such rule
    for edition in (SEED, OWN):  # no contract files: the verdict is the scenario's alone
        plain = judge(CASE, marked, edition=edition)
        assert plain == judge(CASE, marked) if edition == SEED else plain.outcome == "passed"
        assert not [item for item in plain.differences if item.key.startswith("invariant.")]
    (difference,) = [
        item for item in judge(CASE, marked, edition=V043).differences if item.severity == "failed"
    ]
    assert (difference.step, difference.action, difference.key) == (
        1,
        "reply",
        "invariant.fcmp_must_not_emit_assistant_turn_markers",
    )
    assert (difference.authority, difference.level) == (f"{SESSION}#OR-60", "MUST")
    assert difference.source == f"leike0813/Skill-Runner@ff4e1a0:server/contracts/invariants/{SESSION}"
    assert difference.quote is not None and difference.quote.startswith(
        "OR-60 fcmp_must_not_emit_assistant_turn_markers: "
    )
    assert difference.actual == {"event": 2, "seq": 2, "type": "agent.turn_start"}
    assert str(difference).splitlines() == [
        "[failed] step 1 (reply): invariant.fcmp_must_not_emit_assistant_turn_markers: expected"
        " 'no assistant.turn* or agent.turn_* event', got {'event': 2, 'seq': 2, 'type': 'agent.turn_start'}",
        f"    backed by MUST {SESSION}#OR-60"
        f" (leike0813/Skill-Runner@ff4e1a0:server/contracts/invariants/{SESSION}): {difference.quote}",
    ]
    assert problems(REPORT, difference.to_json(), "/$defs/difference") == []
    page = _difference(difference.to_json())
    assert f"MUST {SESSION}#OR-60" in page and "OR-60 fcmp_must_not_emit_assistant_turn_markers" in page


def test_an_unseen_envelope_is_unverified_and_leaves_a_pass_partial() -> None:
    verdict = judge(CASE, run(envelopes=False), edition=V079)
    assert verdict.outcome == "partial"
    unverified = [item for item in verdict.differences if item.severity == "unverified"]
    assert [item.authority for item in unverified] == [
        f"{SESSION}#OR-04",
        f"{SESSION}#OR-05",
        f"{SESSION}#OR-08",
    ]
    assert all(item.actual is None and item.note for item in unverified)
    assert all(problems(REPORT, item.to_json(), "/$defs/difference") == [] for item in unverified)
    assert "unverified: the target does not show each event's seq (event_envelopes)" in verdict.message
    assert judge(CASE, run(), edition=V079).outcome == "passed"


def test_a_rule_break_fails_an_ambiguous_case_whatever_its_readings_say() -> None:
    said = next(
        item.id for item in sentences().values() if item.level == "MUST" and editions()[V079].has(item)
    )
    case = Checks(
        "x/y/z",
        ({"state": "waiting_user"},),
        ("start",),
        {"state": said},
        ({},),
        {"holds": {"0": {"state": "waiting_user"}}, "breaks": {"0": {"state": "failed"}}},
        "holds",
    )
    steps = [step("waiting_user", WAITING_RUN, pending=PENDING)]
    assert judge(case, steps, edition=V079).outcome == "ambiguous"
    marked = [step("waiting_user", [("conversation.started", {}, 1), *WAITING_RUN], pending=PENDING)]
    verdict = judge(case, marked, edition=V079)
    assert verdict.outcome == "failed"
    assert (
        verdict.readings
        == judge(case, steps, edition=V079).readings
        == {"holds": "passed", "breaks": "failed"}
    )


def test_the_seed_s_results_do_not_change() -> None:
    """Without contract files nothing is added: the whole catalog's seed results stay as they were."""
    for steps in (run(), run(envelopes=False), mutated(insert(0, ("conversation.started", {}, 1)))):
        assert judge(CASE, steps) == judge(CASE, steps, edition=SEED)
        assert judge(CASE, steps).outcome == "passed"


def test_no_rule_id_in_the_docs_is_stale() -> None:
    """docs/invariants.md cites rules by the ids of the edition it names."""
    text = (ROOT / "docs" / "invariants.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"#(OR-\d+)", text))
    known = {rule.id for name in RELEASES if (read := contract(name)) for rule in read.rules}
    assert cited <= known
