"""Verdicts: a case's observed steps against its scenario's checks, every difference with its authority.

Each check a scenario makes is backed by an authority (``turngate/judge/catalog``):
a spec sentence (its level decides: MUST → ``failed``, SHOULD → ``non-strict``,
MAY → informational), a ``convention`` (a name the spec leaves open: a
difference is informational unless the user enforces a convention set), or
``reference`` (the reference orchestrator's own behaviour: pinned by the
goldens, never a verdict). What the target cannot show is ``unverified``; a
case whose MUST checks were not all verified is ``partial``, never ``passed``.
An edition with Skill-Runner's contract files (v0.4.0 on) adds their rules a
client can check to every case (``invariants.py``), each backed by
``<file>#<rule id>``.

Every difference of every step is reported; the case's outcome is the
strongest of them. ``judge`` is a pure function of the checks and the observed
steps, so a saved report can be judged again (``turngate report judge``).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

from turngate.judge.catalog.checks import CONVENTION, REFERENCE, Checks
from turngate.judge.catalog.contracts import Contract, contract
from turngate.judge.catalog.conventions import DEFAULT_SET, convention_sets
from turngate.judge.catalog.editions import Edition, edition_named
from turngate.judge.catalog.sentences import sentences
from turngate.judge.invariants import Finding, findings

Outcome = Literal["passed", "partial", "ambiguous", "failed", "non-strict", "skipped", "errored", "unreached"]
# unreached: not run because the target stopped answering (an HTTP server that went down).
# ambiguous: a scenario with readings (an ambiguous sentence), judged under every reading because the
# user chose none: it holds under some reading and breaks another. Not a failure; `--reading NAME`
# judges it strictly by one reading.
OUTCOMES: Final = (
    "passed",
    "partial",
    "failed",
    "non-strict",
    "skipped",
    "errored",
    "unreached",
    "ambiguous",
)
# The outcomes that fail a run whatever the user accepts: a MUST broken, a case that could not be run.
FAILING: Final = frozenset({"failed", "errored", "unreached"})


def fails_run(outcome: str, *, allow_partial: bool = False) -> bool:
    """The one rule for what fails a run, in every front end (exit 1, a JUnit failure, a failed pytest
    item, a red cell, the "what failed" list): failed, errored, unreached; and partial, MUST checks the
    target could not all show, which is never a pass unless the user accepts it (``--allow-partial``)."""
    return outcome in FAILING or (outcome == "partial" and not allow_partial)


# The outcomes that break a reading (a MUST or SHOULD sentence).
BREAKS: Final = frozenset({"failed", "non-strict"})
Severity = Literal["failed", "non-strict", "informational", "unverified", "reference"]
SEVERITIES: Final = ("failed", "non-strict", "informational", "unverified", "reference")

# Half a surrogate pair: no Unicode text (``_as_text``); raw, or as the six characters of its escape.
_LONE_SURROGATE: Final = re.compile(
    "[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\\\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)

# Observation fields a target may be unable to show. In an observed step of format 2
# (``decision_record.OBSERVED_FORMAT``), what a target cannot show is only what its connector declares
# (the observation's ``unobservable`` list: a field, or ``history.<field>`` for a field its history rows
# do not carry); a null it reports is an observation like any other value. Steps saved before (no
# ``observed_format``) keep their reading: None in these fields, or a null history row field, meant
# "cannot show".
_MAYBE_UNSEEN: Final = ("history", "events", "slot_held", "patch", "attempts")
# What a check needs to see besides its own key: declared unobservable, the check is unverified.
_NEEDS: Final[Mapping[str, tuple[str, ...]]] = {
    "pending_absent": ("pending",),
    "pending_not": ("pending",),
    "pending_fields": ("pending",),
    "pending_id": ("pending",),
    "required_event": ("events", "pending"),
    "history_timestamps": ("history", "history.timestamp"),
}
# A field no history row carries and no check can read: absent from a row of a format-2 step.
_ABSENT: Final = "<absent>"


@dataclass(frozen=True, slots=True)
class Difference:
    """One check that did not hold (or could not be verified), with the words that back it."""

    step: int
    action: str
    key: str  # the check, dotted for a field: "state", "pending.prompt", "warnings.exact", "invariant.<rule>"
    expected: Any
    actual: Any
    severity: str  # one of SEVERITIES
    # a sentence ID, "convention", "reference", or an edition's contract rule: "<contract file>#<rule id>"
    authority: str
    level: str | None = None  # the sentence's MUST / SHOULD / MAY (a contract rule's: MUST)
    quote: str | None = None  # the sentence's words; a contract rule's id, name and meaning
    source: str | None = None  # "<spec file>: <heading>"; a contract rule's "<repository>@<commit>:<path>"
    note: str = ""
    reading: str | None = None  # the reading of an ambiguous scenario this difference was judged under

    def __str__(self) -> str:
        seen = f"got {self.actual!r}" if self.severity != "unverified" else f"unverified: {self.note}"
        under = f" [reading {self.reading}]" if self.reading else ""
        head = f"step {self.step} ({self.action}): {self.key}: expected {self.expected!r}, {seen}{under}"
        match self.authority:
            case "convention":
                why = f"convention{f'; {self.note}' if self.note and self.severity != 'unverified' else ''}"
            case "reference":
                why = "the reference's own behaviour (not a verdict)"
            case _:
                quote = " ".join((self.quote or "").split())
                why = f"{self.level} {self.authority} ({self.source}): {quote}"
                if self.note and self.severity == "informational":
                    why += f" ({self.note})"
        return f"[{self.severity}] {head}\n    backed by {why}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Difference:
        return cls(**data)


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: str  # passed | partial | ambiguous | failed | non-strict
    differences: tuple[Difference, ...]
    # An ambiguous scenario judged under every reading (no reading chosen): each reading's outcome.
    readings: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def holds(self) -> tuple[str, ...]:
        """The readings this case satisfies (judged under every reading)."""
        return tuple(name for name, outcome in self.readings.items() if outcome not in BREAKS)

    @property
    def breaks(self) -> tuple[str, ...]:
        """The readings this case breaks (judged under every reading)."""
        return tuple(name for name, outcome in self.readings.items() if outcome in BREAKS)

    @property
    def note(self) -> str:
        """The readings, said in one line, where they matter."""
        if not self.readings or not self.breaks:
            return ""
        if not self.holds:
            return f"breaks every reading ({', '.join(self.breaks)})"
        return (
            f"reading-dependent: holds under reading {', '.join(self.holds)};"
            f" breaks reading {', '.join(self.breaks)} (--reading NAME judges by one reading)"
        )

    @property
    def message(self) -> str:
        """What a person reads: every difference that is not the reference's own behaviour, the
        breaks first (the first line of a case is the sentence it fails on), each kept in order."""
        shown = [item for item in self.differences if item.severity != "reference"]
        shown.sort(key=lambda item: item.severity not in BREAKS)  # stable: step order within each
        lines = [str(item) for item in shown]
        return "\n".join([self.note, *lines] if self.note else lines)


class _Unseen(Exception):
    """The target cannot show what a check needs."""


@dataclass(frozen=True, slots=True)
class _Miss:
    key: str
    expected: Any
    actual: Any
    authority: str | None = None  # a check that names its own (an argv line's `by`)
    unseen: str | None = None  # not a difference: the target cannot show this part (why)


def judge(
    checks: Checks,
    steps: Sequence[Mapping[str, Any]],
    *,
    reading: str | None = None,
    conventions: str | None = None,
    edition: str | None = None,
) -> Verdict:
    """Every check of every step against what was observed (``record.observed_step`` values).

    ``reading``: the reading the user chose for an ambiguous scenario; the case is judged strictly by
    it. Without one, an ambiguous scenario is judged under every reading: when it holds under some
    and breaks another, the outcome is ``ambiguous`` (not a failure), its differences those of the
    readings it breaks, each naming its reading; when it breaks every reading, the default reading's
    verdict (``failed``, ``non-strict``), naming them all. ``conventions``: enforce this convention
    set (its differences fail) instead of reporting differences from turngate's names as informational.
    ``edition``: the spec edition judging (`editions.py`; None: the default, the seed): a check citing a
    sentence that edition does not have is reported as informational, naming the edition. An edition
    with contract files (v0.4.0 on) also holds every case to their rules a client can check
    (``invariants.py``), whatever the scenario and reading.
    """
    chosen = edition_named(edition)
    return _with_invariants(
        _judged(checks, steps, reading, conventions, chosen), steps, contract(chosen.name)
    )


def _judged(
    checks: Checks,
    steps: Sequence[Mapping[str, Any]],
    reading: str | None,
    conventions: str | None,
    chosen: Edition,
) -> Verdict:
    if not checks.readings or reading in checks.readings:
        return _judge_one(checks, steps, reading, conventions, chosen)
    default = checks.default_reading
    names: list[str] = [default] if default is not None and default in checks.readings else []
    names += [name for name in checks.readings if name not in names]
    verdicts = {name: _judge_one(checks, steps, name, conventions, chosen) for name in names}
    outcomes = {name: verdict.outcome for name, verdict in verdicts.items()}
    holding = [name for name in names if outcomes[name] not in BREAKS]
    broken = [name for name in names if outcomes[name] in BREAKS]
    first = verdicts[names[0]]
    if not broken:
        return Verdict(first.outcome, first.differences, outcomes)
    if not holding:
        return Verdict(first.outcome, _tagged(first.differences, names[0]), outcomes)
    # The reading it holds under shows what it still reports (informational, unverified); each
    # broken reading its breakages.
    shown = list(_tagged(verdicts[holding[0]].differences, holding[0]))
    for name in broken:
        shown += [item for item in _tagged(verdicts[name].differences, name) if item.severity in BREAKS]
    return Verdict("ambiguous", tuple(shown), outcomes)


def _with_invariants(verdict: Verdict, steps: Sequence[Mapping[str, Any]], rules: Contract | None) -> Verdict:
    """The verdict with the edition's contract rules the steps break or cannot show. A broken rule
    fails the case whatever its readings say (the rule holds under every reading); one the target
    cannot show leaves a pass partial. Without contract files (the seed) the verdict is unchanged."""
    if rules is None:
        return verdict
    added = tuple(_invariant_difference(found, steps, rules) for found in findings(rules, steps))
    if not added:
        return verdict
    outcome = verdict.outcome
    if any(item.severity == "failed" for item in added):
        outcome = "failed"
    elif outcome == "passed":
        outcome = "partial"  # only unverified rules were added: MUST rules the target could not show
    return Verdict(outcome, verdict.differences + added, verdict.readings)


def _invariant_difference(found: Finding, steps: Sequence[Mapping[str, Any]], rules: Contract) -> Difference:
    rule = found.rule
    return Difference(
        found.step,
        str(steps[found.step].get("action")),
        f"invariant.{rule.key}",
        found.expected,
        None if found.unseen is not None else found.actual,
        "unverified" if found.unseen is not None else "failed",
        f"{rule.file}#{found.row.id if found.row is not None else rule.id}",
        "MUST",
        rule.quote(found.row),
        rules.source(rule.file),
        note=found.unseen or "",
    )


def _tagged(differences: Sequence[Difference], reading: str) -> tuple[Difference, ...]:
    return tuple(replace(item, reading=reading) for item in differences)


def _judge_one(
    checks: Checks,
    steps: Sequence[Mapping[str, Any]],
    reading: str | None,
    conventions: str | None,
    edition: Edition,
) -> Verdict:
    enforced = convention_sets()[conventions] if conventions else None
    names = enforced or convention_sets()[DEFAULT_SET]
    found: list[Difference] = []
    unverified_must = False
    for index, expect in enumerate(checks.expectations(reading)):
        if index >= len(steps):  # the case stopped early (a package refused at start): not reached
            for key, expected in expect.items():
                authority = checks.authority(index, key, reading)
                missing = {"action": checks.actions[index]}
                difference = _difference(
                    index, missing, _Miss(key, expected, None), authority, enforced, edition
                )
                found.append(_unverified(difference, "not reached: the case stopped at an earlier step"))
                unverified_must = unverified_must or difference.level == "MUST"
            continue
        step = steps[index]
        for key, expected in expect.items():
            authority = checks.authority(index, key, reading)
            try:
                misses = list(_check(key, expected, step, checks, index, reading, names, steps[:index]))
            except _Unseen as unseen:
                difference = _difference(
                    index, step, _Miss(key, expected, None), authority, enforced, edition
                )
                found.append(_unverified(difference, str(unseen)))
                unverified_must = unverified_must or difference.level == "MUST"
                continue
            for miss in misses:
                authority = miss.authority or checks.authority(index, miss.key, reading)
                difference = _difference(index, step, miss, authority, enforced, edition)
                if miss.unseen is not None:
                    found.append(_unverified(difference, miss.unseen))
                    unverified_must = unverified_must or difference.level == "MUST"
                    continue
                if difference.severity == "informational" and authority == CONVENTION:
                    difference = _noting_other_sets(difference, key, expected, step, checks, index, reading)
                found.append(difference)
    found = _after_a_broken_given(found, checks.given)
    severities = {item.severity for item in found}
    if "failed" in severities:
        outcome = "failed"
    elif "non-strict" in severities:
        outcome = "non-strict"
    elif unverified_must:
        outcome = "partial"
    else:
        outcome = "passed"
    return Verdict(outcome, tuple(found))


def _after_a_broken_given(found: list[Difference], given: Sequence[str]) -> list[Difference]:
    """Once a check that establishes the scenario's GIVEN breaks, the breaks after it (the rest of
    its step, later steps) follow from it: they are unverified, naming it, so that the report quotes
    the sentence whose rule broke, not the later ones its breakage disturbs. (A sticky_process run
    answered by a fresh process no longer runs the scenario's script: what it does next is no
    evidence about the sentences the scenario was written for.)"""
    first = next(
        (item for item in found if item.key.split(".", 1)[0] in given and item.severity in BREAKS), None
    )
    if first is None:
        return found
    reason = (
        f"follows from step {first.step}'s {first.key} ({first.authority}): the scenario's GIVEN no"
        " longer holds"
    )
    kept: list[Difference] = []
    for item in found:
        later = item.step > first.step or (item.step == first.step and item is not first)
        if later and item.severity in BREAKS and item.key.split(".", 1)[0] not in given:
            item = _unverified(item, f"{reason} (observed {item.actual!r})")
        kept.append(item)
    return kept


def _unverified(difference: Difference, reason: str) -> Difference:
    return Difference(
        difference.step,
        difference.action,
        difference.key,
        difference.expected,
        None,
        "unverified",
        difference.authority,
        difference.level,
        difference.quote,
        difference.source,
        reason,
    )


def _difference(
    index: int, step: Mapping[str, Any], miss: _Miss, authority: str | None, enforced: Any, edition: Edition
) -> Difference:
    action = str(step.get("action"))
    if authority is None:  # the catalog check refuses this; a hand-made Checks may still carry it
        raise ValueError(f"step {index}: {miss.key}: no authority")
    if authority == REFERENCE:
        return Difference(index, action, miss.key, miss.expected, miss.actual, "reference", authority)
    if authority == CONVENTION:
        if enforced is not None:
            note = f"convention set {enforced.name} enforced"
            return Difference(
                index, action, miss.key, miss.expected, miss.actual, "failed", authority, note=note
            )
        return Difference(index, action, miss.key, miss.expected, miss.actual, "informational", authority)
    sentence = sentences()[authority]
    severity = {"MUST": "failed", "SHOULD": "non-strict"}.get(sentence.level, "informational")
    note = ""
    if not edition.has(sentence):  # not this edition's rule: reported, never failed
        severity, note = "informational", f"not in edition {edition.name}"
    return Difference(
        index,
        action,
        miss.key,
        miss.expected,
        miss.actual,
        severity,
        authority,
        sentence.level,
        sentence.quote,
        f"{sentence.file}: {sentence.heading}",
        note=note,
    )


def _noting_other_sets(
    difference: Difference,
    key: str,
    expected: Any,
    step: Mapping[str, Any],
    checks: Checks,
    index: int,
    reading: str | None,
) -> Difference:
    """Say which other known convention set the target follows here, if any: a hint for --conventions."""
    for name, convention in convention_sets().items():
        if name == DEFAULT_SET or not convention.names:
            continue
        again = [miss.key for miss in _check(key, expected, step, checks, index, reading, convention, ())]
        if difference.key not in again:
            return replace(difference, note=f"as in convention set {name}")
    return difference


# The checks ---------------------------------------------------------------------------------------


def _check(
    key: str,
    expected: Any,
    step: Mapping[str, Any],
    checks: Checks,
    index: int,
    reading: str | None,
    names: Any,
    earlier: Sequence[Mapping[str, Any]],
) -> Iterator[_Miss]:
    """One check of one step; ``earlier``: the steps observed before it (for relations)."""
    seen = step["observation"]
    legacy = step.get("observed_format") is None  # saved before connectors declared what they cannot show
    declared = set(seen.get("unobservable", ()))
    for name in (key, *_NEEDS.get(key, ())):
        if name in declared:
            raise _Unseen(f"the target does not show {name}")
    if legacy and key in _MAYBE_UNSEEN and seen.get(key) is None:
        raise _Unseen(f"the target does not show {key}")

    def named(value: Any, field: str) -> Any:
        """Translate an expected value through the convention set when its check is a convention."""
        return names.translate(value) if checks.authority(index, field, reading) == CONVENTION else value

    match key:
        case "state" | "error_code" | "reason_code" | "attempts" | "slot_held" | "data":
            want = named(expected, key)
            if _as_text(seen.get(key)) != _as_text(want):
                yield _Miss(key, want, seen.get(key))
        case "state_not":
            # A relation where the spec names no state: the run is in none of these (an auto run
            # never waits; a canceled wait is no longer unfinished), whatever the target calls it.
            if seen.get("state") in expected:
                yield _Miss(key, f"a state other than {', '.join(expected)}", seen.get("state"))
        case "warnings":
            actual = list(seen.get("warnings") or ())
            missing = [name for name in named(expected, key) if name not in actual]
            if missing:
                yield _Miss(key, expected, actual)
            elif actual != list(named(expected, "warnings.exact")):
                yield _Miss("warnings.exact", expected, actual)
        case "pending":
            yield from _check_pending(expected, seen.get("pending"), named)
        case "pending_id":
            yield from _check_pending_id(expected, seen.get("pending"), earlier)
        case "pending_fields":
            pending = seen.get("pending") or {}
            lacking = [name for name in expected if pending.get(name) in (None, [], {}, "")]
            if lacking:
                yield _Miss(
                    key,
                    f"a pending with {', '.join(expected)}",
                    {name: pending.get(name) for name in lacking},
                )
        case "pending_absent":
            pending = seen.get("pending") or {}
            present = {
                name: pending[name] for name in expected if pending.get(name) not in (None, [], {}, "")
            }
            if present:
                yield _Miss(key, f"no {', '.join(expected)}", present)
        case "pending_not":
            # A value the pending must not show in a field: one taken from where a sentence forbids
            # taking it (a legacy ask-user block's prompt). No pending, or another value: no difference.
            pending = seen.get("pending") or {}
            same = {
                name: pending[name]
                for name, value in expected.items()
                if name in pending and _as_text(pending[name]) == _as_text(value)
            }
            if same:
                yield _Miss(key, f"a pending whose {', '.join(same)} is not {list(same.values())!r}", same)
        case "reply":
            reply = step.get("reply") or {}
            for field, value in expected.items():
                want = named(value, f"reply.{field}")
                if reply.get(field) != want:
                    yield _Miss(f"reply.{field}", want, reply.get(field))
        case "history":
            yield from _check_history(
                expected, seen.get("history"), named, earlier, declared=declared, legacy=legacy
            )
        case "history_timestamps":
            yield from _check_history_timestamps(seen.get("history"), legacy=legacy)
        case "events":
            if seen.get("events") is None:  # reported as null: no events at all
                yield _Miss("events", named(expected, key), None)
                return
            yield from _check_events(named(expected, key), [event["type"] for event in seen["events"]])
        case "argv":
            calls = step.get("calls")
            if calls is None:
                raise _Unseen("the target's engine calls are not visible (no call log)")
            mine = [
                want for want in expected if step.get("engine") in want.get("engines", [step.get("engine")])
            ]
            yield from _check_argv(mine, calls)
        case "engine_calls":
            calls = step.get("calls")
            if calls is None:
                raise _Unseen("the target's engine calls are not visible (no call log)")
            count = len([call for call in calls if call.get("action") == "run"])
            if count != expected:
                yield _Miss(key, expected, count)
        case "patch":
            yield from _check_patch(
                expected, seen.get("patch"), modules_named="patch.modules" not in declared
            )
        case "required_event":
            yield from _check_required_event(seen, legacy=legacy)
        case "audit":
            audit = seen.get("audit")
            if audit is None:
                raise _Unseen(
                    "the target does not show its audit classification next to its live gate (no"
                    " audit_source in the target file, or no attempt whose gate decision its course shows)"
                )
            differ = [item for item in audit if not item.get("agrees_with_gate")]
            if differ:
                yield _Miss(key, "the audit classifies every turn as the live gate decided", differ)
        case _:
            yield _Miss(key, expected, f"<turngate cannot check {key!r}>")


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown_ids(steps: Sequence[Mapping[str, Any]]) -> list[int]:
    """Every integer interaction_id the run showed at these steps: its pendings and history rows."""
    shown: list[int] = []
    for step in steps:
        seen = step["observation"]
        pending = seen.get("pending")
        if isinstance(pending, Mapping) and _is_id(pending.get("interaction_id")):
            shown.append(pending["interaction_id"])
        for row in seen.get("history") or ():
            if isinstance(row, Mapping) and _is_id(row.get("interaction_id")):
                shown.append(row["interaction_id"])
    return shown


def _check_pending_id(
    expected: str, pending: Mapping[str, Any] | None, earlier: Sequence[Mapping[str, Any]]
) -> Iterator[_Miss]:
    """Decision 5: a backend-generated monotonic id. ``new``: an integer greater than every
    interaction_id the run showed at earlier steps; ``same``: the previous step's pending's id. The
    pending's presence is the ``pending`` check's: without a pending there is no id to relate."""
    if pending is None:
        return
    actual = pending.get("interaction_id", _ABSENT)
    if expected == "same":
        before = earlier[-1]["observation"].get("pending") if earlier else None
        want = before.get("interaction_id") if isinstance(before, Mapping) else None
        if not _is_id(actual) or actual != want:
            yield _Miss("pending_id", f"the previous step's interaction_id ({want!r})", actual)
        return
    shown = _shown_ids(earlier)
    if not _is_id(actual) or (shown and actual <= max(shown)):
        wanted = f"an integer id greater than {max(shown)}" if shown else "an integer id"
        yield _Miss("pending_id", f"{wanted} (a new, monotonic interaction_id)", actual)


# The fields by which a ``user.input.required`` event shows the pending it was built from. The spec
# names the event, not its data: an event may rename, translate (a kind's name) or add fields, and
# those are not compared; where it carries neither of these, the check is unverified.
_REQUIRED_EVENT_FIELDS: Final = ("interaction_id", "prompt")


def _check_required_event(seen: Mapping[str, Any], *, legacy: bool) -> Iterator[_Miss]:
    """The last ``user.input.required`` event carries the persisted pending's id and prompt (000,
    Architecture Notes 2: emitted from persisted pending state, not from the assistant's text).

    A target that shows its events and a persisted pending but no ``user.input.required`` event
    breaks that sentence; the check is unverified only where events cannot be shown at all. Without
    a pending there is nothing the event must be built from (the pending is the ``pending`` check's).
    """
    events = seen.get("events")
    if events is None and legacy:
        raise _Unseen("the target does not show its events")
    pending = seen.get("pending")
    required = [event for event in events or () if event.get("type") == "user.input.required"]
    if legacy and (not required or pending is None):  # a saved step judged as it was
        raise _Unseen("no user.input.required event and persisted pending to compare")
    if pending is None:
        return
    if not required:
        shown = {name: pending[name] for name in _REQUIRED_EVENT_FIELDS if name in pending}
        yield _Miss("required_event", {"user.input.required": shown}, "no user.input.required event")
        return
    data = required[-1].get("data") or {}
    shared = [name for name in _REQUIRED_EVENT_FIELDS if name in data and name in pending]
    if not shared:
        raise _Unseen("the user.input.required event carries neither interaction_id nor prompt")
    if any(data[name] != pending[name] for name in shared):
        yield _Miss(
            "required_event",
            {name: pending[name] for name in shared},
            {name: data[name] for name in shared},
        )


def _subset(expected: Any, actual: Any) -> bool:
    """Equal (as ``_as_text`` reads text), except that an object may carry more keys than expected
    (enrichment MAY add fields)."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            name in actual and _subset(value, actual[name]) for name, value in expected.items()
        )
    return bool(_as_text(expected) == _as_text(actual))


def _check_pending(
    expected: Mapping[str, Any] | None, pending: Mapping[str, Any] | None, named: Any
) -> Iterator[_Miss]:
    if expected is None:
        if pending is not None:
            yield _Miss("pending", None, pending)
        return
    if pending is None:
        yield _Miss("pending", expected, None)
        return
    for field, value in expected.items():
        want = named(value, f"pending.{field}")
        if not _subset(_trimmed(field, want), _trimmed(field, pending.get(field, "<absent>"))):
            yield _Miss(f"pending.{field}", want, pending.get(field, "<absent>"))


def _trimmed(field: str, value: Any) -> Any:
    """A prompt compared without the whitespace around it: "from final assistant message" (Decision 5)
    holds whether a server keeps the engine's line end (iflow prints one) or trims it. Text compared
    as ``_as_text`` reads it."""
    value = _as_text(value)
    return value.strip() if field == "prompt" and isinstance(value, str) else value


def _as_text(value: Any) -> Any:
    """Strings (in lists and objects too) with each lone surrogate read as U+FFFD. Half a surrogate
    pair (``\\ud83d``: a Node CLI that cut a string inside an emoji) is no Unicode text: a server may
    keep it, store U+FFFD (as a UTF-8 decoder does), or write it as the six characters of its escape
    (Python's ``backslashreplace``). The spec sets no encoding: each is the text the engine sent, and a
    check never tells them apart."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list | tuple):
        return [_as_text(item) for item in value]
    if isinstance(value, Mapping):
        return {_as_text(name): _as_text(item) for name, item in value.items()}
    return value


def _check_history(
    expected: Sequence[Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]] | None,
    named: Any,
    earlier: Sequence[Mapping[str, Any]],
    *,
    declared: set[str],
    legacy: bool,
) -> Iterator[_Miss]:
    """The completed ask/reply rounds (001: 每次问答回合), row by row, each a subset match. A row
    whose ``response`` is null is an ask not answered yet, not a completed round: not compared (a
    target may or may not list it). A row's ``interaction_id`` may be ``{pending_at: N}``: the id of
    the pending the run showed at step N (the round it completed), not a literal number. Legacy
    steps compare every row, as before."""
    if rows is None:  # reported as null (a legacy step's None is unseen before it gets here)
        yield _Miss("history", f"{len(expected)} rows", None)
        return
    shown = list(rows)
    if not legacy:
        rows = [row for row in rows if row.get("response", _ABSENT) is not None]
    if len(rows) != len(expected):
        what = "rows" if legacy else "completed rounds (rows with a response)"
        yield _Miss("history", f"{len(expected)} {what}", f"{len(rows)} {what}: {shown}")
        return
    for number, (want, row) in enumerate(zip(expected, rows, strict=True), start=1):
        for field, value in want.items():
            value = (
                _pending_at(value, earlier)
                if isinstance(value, Mapping) and "pending_at" in value
                else named(value, f"history.{field}")
            )
            actual = row.get(field, _ABSENT)
            if f"history.{field}" in declared or (legacy and actual in (None, _ABSENT) and value is not None):
                yield _Miss(
                    f"history.{field}",
                    {"row": number, field: value},
                    None,
                    unseen="the target's history does not say",
                )
            elif _trimmed(field, actual) != _trimmed(field, value):
                yield _Miss(f"history.{field}", {"row": number, field: value}, {"row": number, field: actual})


def _pending_at(value: Mapping[str, Any], earlier: Sequence[Mapping[str, Any]]) -> Any:
    """``{pending_at: N}``: the interaction_id of the pending shown at step N (None if none)."""
    step = int(value["pending_at"])
    pending = earlier[step]["observation"].get("pending") if step < len(earlier) else None
    return pending.get("interaction_id") if isinstance(pending, Mapping) else None


def timestamp_seconds(value: Any) -> float | None:
    """A history row's timestamp as seconds: a number (seconds or milliseconds since the epoch, as
    given; only their order is compared) or an ISO 8601 text. None when turngate cannot read it."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    return None


def _check_history_timestamps(rows: Sequence[Mapping[str, Any]] | None, *, legacy: bool) -> Iterator[_Miss]:
    """001 "包含 interaction_id、prompt、response、时间戳的历史记录": every row carries a timestamp,
    and the rows' timestamps do not go backwards (the spec fixes no format: only their order)."""
    if rows is None:
        yield _Miss("history_timestamps", "a history whose rows carry timestamps", None)
        return
    stamps = [row.get("timestamp") for row in rows]
    if legacy and all(stamp is None for stamp in stamps):  # a saved step from before rows carried one
        yield _Miss("history_timestamps", "ordered", None, unseen="the target's history does not say")
        return
    lacking = [number for number, stamp in enumerate(stamps, start=1) if stamp in (None, "")]
    if lacking:
        yield _Miss("history_timestamps", "a timestamp on every row", {"rows without one": lacking})
        return
    read = [timestamp_seconds(stamp) for stamp in stamps]
    if any(value is None for value in read):
        unread = [stamp for stamp, value in zip(stamps, read, strict=True) if value is None]
        yield _Miss(
            "history_timestamps", "ordered", unread, unseen=f"timestamps turngate cannot read: {unread}"
        )
        return
    order = [value for value in read if value is not None]
    if any(later < before for before, later in itertools.pairwise(order)):
        yield _Miss("history_timestamps", "timestamps that do not go backwards", stamps)


def _check_events(expected: Mapping[str, Any], types: list[str]) -> Iterator[_Miss]:
    position = 0
    for wanted in expected.get("includes", ()):
        try:
            position = types.index(wanted, position) + 1
        except ValueError:
            yield _Miss("events", f"{wanted} (in order {list(expected['includes'])})", types)
            break
    for unwanted in expected.get("excludes", ()):
        if unwanted in types:
            yield _Miss("events", f"no {unwanted}", types)
    for name, count in expected.get("count", {}).items():
        if types.count(name) != count:
            yield _Miss("events", f"{count} x {name}", types)


def _check_argv(expected: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]]) -> Iterator[_Miss]:
    runs = [call for call in calls if call.get("action") == "run"]
    for want in expected:
        attempt = want["attempt"]
        call = _call_for_attempt(runs, attempt)
        if call is None:
            yield _Miss(
                "argv", f"an engine call for attempt {attempt}", f"{len(runs)} engine calls", want.get("by")
            )
            continue
        argv = list(call["argv"])
        missing = [flag for flag in want.get("contains", ()) if flag not in argv]
        unwanted = [flag for flag in want.get("excludes", ()) if flag in argv]
        if missing or unwanted:
            shown = {"attempt": attempt, "contains": missing, "excludes": unwanted}
            yield _Miss("argv", shown, argv, want.get("by"))
        either = list(want.get("contains_any", ()))
        if either and not any(flag in argv for flag in either):
            yield _Miss("argv", {"attempt": attempt, "contains_any": either}, argv, want.get("by"))
        if "resumed" in want and bool(call.get("resumed")) != want["resumed"]:
            yield _Miss(
                "argv.resumed",
                {"attempt": attempt, "resumed": want["resumed"]},
                {"resumed": call.get("resumed")},
            )


def _call_for_attempt(runs: Sequence[Mapping[str, Any]], attempt: int) -> Mapping[str, Any] | None:
    # A resident (sticky) process plays several turns in one call; a turn number says which.
    for call in runs:
        if attempt in (call.get("turns") or ()):
            return call
    return runs[attempt - 1] if attempt <= len(runs) else None


# The order of modules a target names in its own words is judged only where they were named.
_UNNAMED_MODULES: Final = (
    "the patch's modules are not named: the target file's patch_modules maps none of this patch's"
    " headings (`turngate probe --call-log` learns them, or name them by hand)"
)


def _check_patch(expected: Mapping[str, Any], patch: str | None, *, modules_named: bool) -> Iterator[_Miss]:
    if patch is None:  # reported as null: the run has no patched SKILL.md (a legacy None is unseen earlier)
        yield _Miss("patch", dict(expected), None)
        return
    from turngate.protocol.skill_patch import PATCH_BANNER, patch_sections

    added = patch.split(PATCH_BANNER, 1)[1] if PATCH_BANNER in patch else ""
    # The order (003's fixed module order), the modules present, and the text (what a module must or
    # must not say) are backed by different sentences: ``patch.order``, ``patch.modules`` and
    # ``patch.text`` in a scenario's by-map.
    if "order" in expected and not modules_named:
        yield _Miss("patch.order", {"order": expected["order"]}, None, unseen=_UNNAMED_MODULES)
    elif "order" in expected and list(patch_sections(patch)) != list(expected["order"]):
        yield _Miss("patch.order", {"order": expected["order"]}, list(patch_sections(patch)))
    # Which modules are there at all (a mode module present or absent), apart from their order: a
    # server that orders its modules otherwise still shows the right mode module.
    if "modules" in expected and not modules_named:
        yield _Miss("patch.modules", dict(expected["modules"]), None, unseen=_UNNAMED_MODULES)
    elif "modules" in expected:
        named = list(patch_sections(patch))
        wanted = expected["modules"]
        absent = [module for module in wanted.get("includes", ()) if module not in named]
        present = [module for module in wanted.get("excludes", ()) if module in named]
        if absent or present:
            yield _Miss("patch.modules", {"includes": absent, "excludes": present}, named)
    missing = [text for text in expected.get("contains", ()) if text not in added]
    unwanted = [text for text in expected.get("excludes", ()) if text in added]
    if missing or unwanted:
        yield _Miss("patch.text", {"contains": missing, "excludes": unwanted}, "<the patch text differs>")
