"""Skill-Runner's machine-readable invariants, checked over one case's observed steps.

An edition from v0.4.0 on ships upstream's contract files (``catalog/contracts.py``); each rule a
client can decide has a check here, named in ``catalog/invariants.yaml``. A check reads what the
steps show: each step's state, result data and pending, and its events (``{"type", "data"}`` in seq
order) with, where the target shows them, their envelopes (``event_envelopes``: each event's ``seq``
and ``attempt``). A later step's events include the earlier ones (the run's history so far), so a
run-wide rule reads the events of the last step that shows them, once. Evidence the target does not
show makes a finding ``unseen`` (unverified), never a pass or a break.

Pure: the findings follow from the steps and the contract alone, so a saved report is judged again
the same way (``turngate report judge``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from turngate.judge.catalog.contracts import Contract, ContractProblem, Row, Rule, contract
from turngate.judge.catalog.editions import editions

STATE_CHANGED: Final = "conversation.state.changed"
# Turn markers belong to RASP, the runtime agent stream: the FCMP stream never carries them.
TURN_MARKERS: Final = frozenset({"agent.turn_start", "agent.turn_complete", "agent.turn_failed"})
WAITING: Final = frozenset({"waiting_user", "waiting_auth"})
# What a finding shows of a list of offending events: the first few and how many more.
SHOWN: Final = 5


@dataclass(frozen=True, slots=True)
class Event:
    """One FCMP event of the run: its place in the list, type, data and, where shown, seq and attempt."""

    position: int  # 1-based, in the order the target listed them
    type: str
    data: Mapping[str, Any]
    seq: int | None
    attempt: int | None

    @property
    def change(self) -> tuple[Any, Any, Any]:
        return self.data.get("from"), self.data.get("to"), self.data.get("trigger")

    def shown(self) -> dict[str, Any]:
        """What a finding shows of it."""
        seen: dict[str, Any] = {"event": self.position}
        if self.seq is not None:
            seen["seq"] = self.seq
        seen["type"] = self.type
        if self.type == STATE_CHANGED:
            seen.update(zip(("from", "to", "trigger"), self.change, strict=True))
        return seen


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule the steps break, or whose evidence the target does not show (``unseen``: why)."""

    rule: Rule
    step: int
    expected: Any
    actual: Any
    row: Row | None = None  # the row of a section read whole that broke (TR-13, FM-03, PE-02)
    unseen: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One case's steps as the checks read them."""

    contract: Contract
    steps: tuple[Mapping[str, Any], ...]
    events: tuple[tuple[Event, ...] | None, ...]  # each step's events; None: it does not show them
    envelopes: tuple[bool, ...]  # whether each step's events carry their envelopes

    @classmethod
    def of(cls, contract: Contract, steps: Sequence[Mapping[str, Any]]) -> Run:
        shown = [_events(step["observation"]) for step in steps]
        return cls(
            contract,
            tuple(steps),
            tuple(events for events, _ in shown),
            tuple(envelopes for _, envelopes in shown),
        )

    @property
    def last(self) -> int:
        """The step whose events are the run's whole history: the last that shows events (else the
        last step, where a run-wide finding is unverified)."""
        showing = [index for index, events in enumerate(self.events) if events is not None]
        return showing[-1] if showing else len(self.steps) - 1

    @property
    def history(self) -> tuple[Event, ...] | None:
        return self.events[self.last]

    def state(self, index: int) -> Any:
        return self.steps[index]["observation"].get("state")

    def seen(self, index: int) -> Mapping[str, Any]:
        observation: Mapping[str, Any] = self.steps[index]["observation"]
        return observation


def _events(seen: Mapping[str, Any]) -> tuple[tuple[Event, ...] | None, bool]:
    listed = seen.get("events")
    if listed is None or "events" in seen.get("unobservable", ()):
        return None, False
    envelopes = seen.get("event_envelopes")
    # Envelopes that do not line up with the events say nothing about them.
    aligned = isinstance(envelopes, list) and len(envelopes) == len(listed)
    places: list[Any] = list(envelopes) if isinstance(envelopes, list) and aligned else [{}] * len(listed)
    found = []
    for position, (event, envelope) in enumerate(zip(listed, places, strict=True), start=1):
        envelope = envelope if isinstance(envelope, Mapping) else {}
        data = event.get("data")
        found.append(
            Event(
                position,
                str(event.get("type")),
                data if isinstance(data, Mapping) else {},
                _number(envelope.get("seq")),
                _number(envelope.get("attempt")),
            )
        )
    return tuple(found), aligned


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def findings(contract: Contract, steps: Sequence[Mapping[str, Any]]) -> tuple[Finding, ...]:
    """Every checked rule of the edition's contract over one case's observed steps."""
    if not steps:
        return ()
    run = Run.of(contract, steps)
    return tuple(found for rule in contract.checked() for found in CHECKS[str(rule.reading.check)](rule, run))


# Helpers -----------------------------------------------------------------------------------------


NO_EVENTS: Final = "the target does not show its events"
NO_SEQ: Final = "the target does not show each event's seq (event_envelopes)"
NO_ATTEMPT: Final = "the target does not show each event's attempt (event_envelopes)"


def _unseen(rule: Rule, run: Run, expected: Any, why: str, step: int | None = None) -> Finding:
    return Finding(rule, run.last if step is None else step, expected, None, unseen=why)


def _listed(items: Sequence[Any]) -> Any:
    """One offence as itself; several as a list of the first few and how many more."""
    if len(items) == 1:
        return items[0]
    shown = list(items[:SHOWN])
    return [*shown, f"... and {len(items) - SHOWN} more"] if len(items) > SHOWN else shown


def _grouped(rule: Rule, step: int, breaks: Sequence[tuple[Row | None, Any, Any]]) -> Iterator[Finding]:
    """One finding per row and expectation, listing what broke it (a run breaks a rule at many events)."""
    order: dict[tuple[str | None, str], list[Any]] = {}
    rows: dict[str | None, Row | None] = {}
    wanted: dict[tuple[str | None, str], Any] = {}
    for row, expected, actual in breaks:
        key = (row.id if row else None, repr(expected))
        order.setdefault(key, []).append(actual)
        rows[key[0]], wanted[key] = row, expected
    for key, actuals in order.items():
        yield Finding(rule, step, wanted[key], _listed(actuals), rows[key[0]])


def _changes(events: Sequence[Event]) -> list[Event]:
    return [event for event in events if event.type == STATE_CHANGED]


def _last_state(run: Run, events: Sequence[Event]) -> Any:
    """The state the stream last changed to (the initial state before any change)."""
    changes = _changes(events)
    return changes[-1].change[1] if changes else run.contract.initial_state


# The checks --------------------------------------------------------------------------------------


def transitions(rule: Rule, run: Run) -> Iterator[Finding]:
    """Walk the statechart: each change leaves the state the run is in, by a declared (state, event)."""
    history = run.history
    if history is None:
        yield _unseen(rule, run, "each state change a declared transition from the run's state", NO_EVENTS)
        return
    declared = {(row.source, row.trigger): row for row in rule.rows}
    state: Any = run.contract.initial_state
    breaks: list[tuple[Row | None, Any, Any]] = []
    for event in _changes(history):
        source, target, trigger = event.change
        if source != state:
            breaks.append((None, "each change's `from` is the state the previous one went to", event.shown()))
        row = declared.get((source, trigger))
        if row is None:
            breaks.append((None, "a declared transition (from, trigger)", event.shown()))
        elif row.target != target:
            breaks.append((row, f"{row.source} on {row.trigger} goes to {row.target}", event.shown()))
        state = target
    yield from _grouped(rule, run.last, breaks)


def fcmp_mapping(rule: Rule, run: Run) -> Iterator[Finding]:
    """Every state change's (from, to, trigger) is a row of the mapping."""
    history = run.history
    if history is None:
        yield _unseen(rule, run, "each state change a mapped (from, to, trigger)", NO_EVENTS)
        return
    mapped = {(row.source, row.target, row.trigger) for row in rule.rows}
    by_pair = {(row.source, row.target): row for row in rule.rows}
    breaks: list[tuple[Row | None, Any, Any]] = []
    for event in _changes(history):
        source, target, trigger = event.change
        if (source, target, trigger) in mapped:
            continue
        row = by_pair.get((source, target))
        if row is not None:
            breaks.append((row, f"{row.source} -> {row.target} on {row.trigger}", event.shown()))
        else:
            breaks.append((None, "a (from, to, trigger) of the mapping", event.shown()))
    yield from _grouped(rule, run.last, breaks)


def paired_events(rule: Rule, run: Run) -> Iterator[Finding]:
    """Each event of a pair has its state change (after it, for the pairs whose order upstream tests)."""
    history = run.history
    if history is None:
        yield _unseen(rule, run, "each paired event with its state change", NO_EVENTS)
        return
    options = rule.reading.options or {}
    after, internal = set(options.get("after", ())), set(options.get("internal", ()))
    breaks: list[tuple[Row | None, Any, Any]] = []
    for row in rule.rows:
        if row.event_type in internal:  # an orchestrator event: never in the FCMP stream
            continue
        wanted = (row.source, row.target, row.trigger)
        changes = [event.position for event in _changes(history) if event.change == wanted]
        for event in history:
            if event.type != row.event_type:
                continue
            follows = row.event_type in after
            paired = any(place > event.position for place in changes) if follows else bool(changes)
            if not paired:
                where = " after it" if follows else ""
                change = f"a state change {row.source} -> {row.target} on {row.trigger}{where}"
                breaks.append((row, change, event.shown()))
    yield from _grouped(rule, run.last, breaks)


def terminal_state_unique(rule: Rule, run: Run) -> Iterator[Finding]:
    """One change into a terminal state, none after it; every later step shows that state."""
    terminals = run.contract.terminal_states
    history = run.history or ()
    changes = _changes(history)
    into = [event for event in changes if event.change[1] in terminals]
    if len(into) > 1:
        yield Finding(rule, run.last, "one change into a terminal state", [event.shown() for event in into])
    elif into and changes[-1] is not into[0]:
        later = [event.shown() for event in changes if event.position > into[0].position]
        yield Finding(
            rule, run.last, f"no state change after the change to {into[0].change[1]}", _listed(later)
        )
    ended = next((index for index in range(len(run.steps)) if run.state(index) in terminals), None)
    if ended is None:
        return
    for index in range(ended + 1, len(run.steps)):
        if run.state(index) != run.state(ended):
            yield Finding(rule, index, f"{run.state(ended)} (terminal since step {ended})", run.state(index))


def waiting_announced(rule: Rule, run: Run) -> Iterator[Finding]:
    """A step waiting in the rule's state shows the rule's event, one for each change into that wait."""
    options = rule.reading.options or {}
    state, announcing = str(options.get("state")), str(options.get("event"))
    for index, events in enumerate(run.events):
        if run.state(index) != state:
            continue
        if events is None:
            yield _unseen(rule, run, f"a {announcing} for this wait", NO_EVENTS, index)
            continue
        waits = sum(1 for event in _changes(events) if event.change[1] == state)
        announced = sum(1 for event in events if event.type == announcing)
        if announced < max(1, waits):
            expected = f"a {announcing} for each wait ({max(1, waits)})"
            yield Finding(rule, index, expected, f"{announced} {announcing}")


def seq_contiguous(rule: Rule, run: Run) -> Iterator[Finding]:
    """The run's events carry seq 1..n in their order."""
    history = run.history
    expected = "seq 1, 2, ..., n: one sequence for the run, in order"
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    if not run.envelopes[run.last] or any(event.seq is None for event in history):
        yield _unseen(rule, run, expected, NO_SEQ)
        return
    off = [
        {"event": event.position, "seq": event.seq, "type": event.type}
        for event in history
        if event.seq != event.position
    ]
    if off:
        yield Finding(rule, run.last, expected, _listed(off))


def reply_precedes_resumed_assistant(rule: Rule, run: Run) -> Iterator[Finding]:
    """No assistant event of the attempt a reply resumed comes before that reply."""
    history = run.history
    expected = "the reply accepted before any assistant event of the attempt it resumed"
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    replies = [event for event in history if event.type == "interaction.reply.accepted"]
    if not replies:
        return
    if not run.envelopes[run.last] or any(event.attempt is None for event in history):
        yield _unseen(rule, run, expected, NO_ATTEMPT)
        return
    breaks: list[tuple[Row | None, Any, Any]] = []
    for reply in replies:
        asks = [
            event
            for event in history
            if event.type == "user.input.required" and event.position < reply.position
        ]
        asked = asks[-1].attempt if asks else reply.attempt
        early = [
            event.shown() | {"attempt": event.attempt}
            for event in history
            if event.type.startswith("assistant.")
            and event.position < reply.position
            and (event.attempt or 0) > (asked or 0)
        ]
        if early:
            breaks.append((None, expected, {"reply": reply.shown(), "before it": _listed(early)}))
    yield from _grouped(rule, run.last, breaks)


def attempts_monotonic(rule: Rule, run: Run) -> Iterator[Finding]:
    """Attempt numbers never go back: between observations, and along the events."""
    shown = [
        (index, attempts)
        for index in range(len(run.steps))
        if isinstance(attempts := run.seen(index).get("attempts"), int) and not isinstance(attempts, bool)
    ]
    for (_, before), (index, after) in itertools.pairwise(shown):
        if after < before:
            yield Finding(rule, index, f"at least {before} attempts (shown before)", after)
    history = run.history
    expected = "each event's attempt at least the previous event's"
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    if not run.envelopes[run.last] or any(event.attempt is None for event in history):
        yield _unseen(rule, run, expected, NO_ATTEMPT)
        return
    back = [
        {"event": later.position, "type": later.type, "attempt": later.attempt, "after": earlier.attempt}
        for earlier, later in itertools.pairwise(history)
        if (later.attempt or 0) < (earlier.attempt or 0)
    ]
    if back:
        yield Finding(rule, run.last, expected, _listed(back))


def terminal_payload_matches(rule: Rule, run: Run) -> Iterator[Finding]:
    """A change into a terminal state carries ``terminal`` whose status is that state."""
    history = run.history
    if history is None:
        yield _unseen(rule, run, "terminal.status equal to the terminal state changed to", NO_EVENTS)
        return
    breaks: list[tuple[Row | None, Any, Any]] = []
    for event in _changes(history):
        target = event.change[1]
        if target not in run.contract.terminal_states:
            continue
        terminal = event.data.get("terminal")
        status = terminal.get("status") if isinstance(terminal, Mapping) else None
        if status != target:
            breaks.append((None, f"terminal.status {target!r}", event.shown() | {"terminal": terminal}))
    yield from _grouped(rule, run.last, breaks)


def no_result_outside_terminal(rule: Rule, run: Run) -> Iterator[Finding]:
    """A step in a non-terminal state shows no terminal result (its result data)."""
    for index in range(len(run.steps)):
        state, data = run.state(index), run.seen(index).get("data")
        if state not in run.contract.terminal_states and data is not None:
            yield Finding(rule, index, f"no terminal result while {state}", {"state": state, "data": data})


def terminal_payload_terminal_only(rule: Rule, run: Run) -> Iterator[Finding]:
    """A state change that carries a terminal payload goes to a terminal state."""
    history = run.history
    if history is None:
        yield _unseen(rule, run, "a terminal payload only on a change into a terminal state", NO_EVENTS)
        return
    breaks: list[tuple[Row | None, Any, Any]] = [
        (
            None,
            "a terminal payload only on a change into a terminal state",
            event.shown() | {"terminal": event.data["terminal"]},
        )
        for event in _changes(history)
        if event.data.get("terminal") is not None and event.change[1] not in run.contract.terminal_states
    ]
    yield from _grouped(rule, run.last, breaks)


def terminal_result_terminal_only(rule: Rule, run: Run) -> Iterator[Finding]:
    """A terminal result exists only in a terminal state: the result endpoint, and the events."""
    yield from no_result_outside_terminal(rule, run)
    yield from terminal_payload_terminal_only(rule, run)


def waiting_without_terminal(rule: Rule, run: Run) -> Iterator[Finding]:
    """A waiting step shows no terminal result, and its change into the wait has no terminal payload."""
    for index, events in enumerate(run.events):
        state = run.state(index)
        if state not in WAITING:
            continue
        data = run.seen(index).get("data")
        if data is not None:
            yield Finding(rule, index, f"no terminal result while {state}", {"state": state, "data": data})
        into = [event for event in _changes(events or ()) if event.change[1] == state]
        if into and into[-1].data.get("terminal") is not None:
            shown = into[-1].shown() | {"terminal": into[-1].data["terminal"]}
            yield Finding(rule, index, f"no terminal payload on the change to {state}", shown)


def pending_matches_status(rule: Rule, run: Run) -> Iterator[Finding]:
    """waiting_user shows its pending interaction; a state other than a wait shows none."""
    for index in range(len(run.steps)):
        seen, state = run.seen(index), run.state(index)
        if state == "waiting_auth":
            continue  # its pending is the auth challenge, which turngate does not read
        wanted = (
            "a pending interaction" if state == "waiting_user" else f"no pending interaction while {state}"
        )
        if "pending" in seen.get("unobservable", ()):
            yield _unseen(rule, run, wanted, "the target does not show its pending interaction", index)
        elif (seen.get("pending") is None) == (state == "waiting_user"):
            yield Finding(rule, index, wanted, seen.get("pending"))


def leaving_waiting_clears_pending(rule: Rule, run: Run) -> Iterator[Finding]:
    """The step after a run left waiting_user shows no pending interaction."""
    for index in range(1, len(run.steps)):
        if run.state(index - 1) != "waiting_user" or run.state(index) in WAITING:
            continue
        seen = run.seen(index)
        wanted = f"no pending interaction once {run.state(index)}"
        if "pending" in seen.get("unobservable", ()):
            yield _unseen(rule, run, wanted, "the target does not show its pending interaction", index)
        elif seen.get("pending") is not None:
            yield Finding(rule, index, wanted, seen["pending"])


def current_state_matches(rule: Rule, run: Run) -> Iterator[Finding]:
    """The state the stream last changed to is the state the step shows."""
    for index, events in enumerate(run.events):
        state = run.state(index)
        expected = f"the events' last state change to {state!r}"
        if events is None:
            yield _unseen(rule, run, expected, NO_EVENTS, index)
        elif run.seen(index).get("events_source") == "stream" and state in ("queued", "running"):
            # A stream that cannot end while the run is queued is read as earlier reads left it.
            why = "the events were read from a stream that does not end while the run is queued or running"
            yield _unseen(rule, run, expected, why, index)
        elif _last_state(run, events) != state:
            changes = _changes(events)
            yield Finding(rule, index, expected, changes[-1].shown() if changes else "no state change")


def lifecycle_normalized(rule: Rule, run: Run) -> Iterator[Finding]:
    """None of the lifecycle event types the edition's ordering contract removed."""
    removed = run.contract.removed_lifecycle
    expected = f"none of {', '.join(sorted(removed))}: the lifecycle as conversation.state.changed only"
    history = run.history
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    found = [event.shown() for event in history if event.type in removed]
    if found:
        yield Finding(rule, run.last, expected, _listed(found))


def no_turn_markers(rule: Rule, run: Run) -> Iterator[Finding]:
    """No turn marker in the FCMP stream."""
    expected = "no assistant.turn* or agent.turn_* event"
    history = run.history
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    found = [
        event.shown()
        for event in history
        if event.type.startswith("assistant.turn") or event.type in TURN_MARKERS
    ]
    if found:
        yield Finding(rule, run.last, expected, _listed(found))


def precedes(rule: Rule, run: Run) -> Iterator[Finding]:
    """Each event of the rule's ``after`` kind has one of its ``before`` kind earlier in the run."""
    expected = f"{rule.before} before each {rule.after}"
    history = run.history
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    befores = [event for event in history if _is_kind(rule.before, event, history)]
    late = [
        event.shown()
        for event in history
        if _is_kind(rule.after, event, history)
        and not any(
            earlier.position < event.position and _same_message(earlier, event) for earlier in befores
        )
    ]
    if late:
        yield Finding(rule, run.last, expected, _listed(late))


def _same_message(earlier: Event, later: Event) -> bool:
    """Whether ``earlier`` may be what ``later`` follows: a later event naming a message (a superseded
    final) follows that message's own event; one that names none (a state change) follows any."""
    named = later.data.get("message_id")
    return (
        named is None
        or not earlier.type.startswith("assistant.message")
        or earlier.data.get("message_id") == named
    )


def _is_kind(kind: str, event: Event, history: Sequence[Event]) -> bool:
    """Whether ``event`` is of an ordering contract's event kind: a type, a state change to a state
    (``conversation.state.changed.succeeded``), or a resumed run's change to running
    (``conversation.state.changed.running.resumed``: queued -> running after a reply's
    waiting_user -> queued)."""
    prefix = f"{STATE_CHANGED}."
    if not kind.startswith(prefix):
        return event.type == kind
    if event.type != STATE_CHANGED:
        return False
    state, _, qualifier = kind.removeprefix(prefix).partition(".")
    if event.change[1] != state:
        return False
    if qualifier != "resumed":
        return True
    before = [change for change in _changes(history) if change.position < event.position]
    return bool(before) and before[-1].change == ("waiting_user", "queued", "interaction.reply.accepted")


def repair_same_attempt(rule: Rule, run: Run) -> Iterator[Finding]:
    """A superseded final and its supersession share one attempt (a repair round stays in it)."""
    expected = "the superseded final's attempt"
    history = run.history
    if history is None:
        yield _unseen(rule, run, expected, NO_EVENTS)
        return
    # The final a supersession names is the latest before it with its message id: an engine may
    # number its messages afresh in each process (codex's "item_0" in every attempt), so the same id
    # names another attempt's final later in the run.
    latest: dict[Any, Event] = {}
    pairs: list[tuple[Event, Event]] = []
    for event in history:
        named = event.data.get("message_id")
        if event.type == "assistant.message.final":
            latest[named] = event
        elif event.type == "assistant.message.superseded" and named in latest:
            pairs.append((latest[named], event))
    if not pairs:
        return
    if any(final.attempt is None or event.attempt is None for final, event in pairs):
        yield _unseen(rule, run, expected, NO_ATTEMPT)
        return
    moved = [
        event.shown() | {"attempt": event.attempt, "final's attempt": final.attempt}
        for final, event in pairs
        if final.attempt != event.attempt
    ]
    if moved:
        yield Finding(rule, run.last, expected, _listed(moved))


CHECKS: Final[Mapping[str, Callable[[Rule, Run], Iterator[Finding]]]] = {
    check.__name__: check
    for check in (
        transitions,
        fcmp_mapping,
        paired_events,
        terminal_state_unique,
        waiting_announced,
        seq_contiguous,
        reply_precedes_resumed_assistant,
        attempts_monotonic,
        terminal_payload_matches,
        no_result_outside_terminal,
        terminal_payload_terminal_only,
        terminal_result_terminal_only,
        waiting_without_terminal,
        pending_matches_status,
        leaving_waiting_clears_pending,
        current_state_matches,
        lifecycle_normalized,
        no_turn_markers,
        precedes,
        repair_same_attempt,
    )
}


def contract_problems() -> list[str]:
    """Every edition's contract files read against invariants.yaml: a rule without a reading, a
    reading naming a check this module does not have, a bad file; one line each."""
    problems = []
    for name in editions():
        try:
            read = contract(name)
        except ContractProblem as problem:
            problems.append(f"{name}: {problem}")
            continue
        for rule in read.rules if read is not None else ():
            if rule.reading.kind == "check" and rule.reading.check not in CHECKS:
                problems.append(f"{name}: {rule.authority}: check {rule.reading.check!r}: no such check")
    return problems
