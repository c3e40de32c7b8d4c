"""The normalised decision record: what a case observed, deterministic enough to snapshot.

No timestamps (a history row's becomes its rank, ``<t-1>``), no pids, no temporary
paths; session ids and other engine-issued handles become stable placeholders (``<session-1>``), so the
same behaviour gives byte-identical records on any machine and any target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from turngate.judge.verdict import timestamp_seconds
from turngate.protocol.connector import Observation, ReplyResult

# The observed step's format. 2: what a target cannot show is what its connector declares (the
# observation's ``unobservable``: a field, or ``history.<field>``); a None it reports is an observed
# null. Steps without ``observed_format`` (reports saved before) are judged as before: None in
# history, events, slot_held, patch or attempts, or a null history row field, meant "cannot show".
OBSERVED_FORMAT = 2

_CALL_FIELDS = (
    "engine",
    "action",
    "argv",
    "stdin",
    "case",
    "resumed",
    "turns",
    "exit_code",
    "outcome",
    "error",
)


class Placeholders:
    """Replaces each distinct handle by ``<kind-N>`` in order of first appearance."""

    def __init__(self, workdir: str) -> None:
        self._workdir = workdir
        self._seen: dict[str, str] = {}

    def handle(self, kind: str, value: str | None) -> str | None:
        if value is None:
            return None
        if value not in self._seen:
            count = sum(1 for name in self._seen.values() if name.startswith(f"<{kind}-"))
            self._seen[value] = f"<{kind}-{count + 1}>"
        return self._seen[value]

    def text(self, value: str) -> str:
        value = value.replace(self._workdir, "<workdir>")
        for raw, name in self._seen.items():
            value = value.replace(raw, name)
        return value

    def deep(self, value: Any) -> Any:
        match value:
            case str():
                return self.text(value)
            case Mapping():
                return {key: self.deep(item) for key, item in value.items()}
            case list() | tuple():
                return [self.deep(item) for item in value]
        return value


def observed_step(
    index: int,
    action: str,
    argument: Any,
    observation: Observation,
    reply: ReplyResult | None,
    accepted: bool | None,
    calls: Sequence[Mapping[str, Any]],
    names: Placeholders,
) -> dict[str, Any]:
    """One step as plain data: the verdict reads it and the golden snapshots it."""
    for decision in observation.extra.get("decisions", ()):
        names.handle("session", decision.get("session_id"))
    for call in calls:
        if call.get("action") == "run" and call.get("session_id"):
            names.handle("session", call["session_id"])
    seen = asdict(observation)
    extra = seen.pop("extra")
    seen["decisions"] = [_decision(decision) for decision in extra.get("decisions", ())]
    # What the target cannot show, for the verdict (unverified); absent when it shows everything.
    unseen = sorted({*extra.get("unobservable", ()), *(["pending"] if extra.get("pending_unknown") else [])})
    if unseen:
        seen["unobservable"] = unseen
    # Evidence a connector kept of answers the API does not foresee, and where events came from.
    if extra.get("audit") is not None:  # the audit next to the live gate (Decision 3.1), for the verdict
        seen["audit"] = [dict(item) for item in extra["audit"]]
    if extra.get("event_envelopes") is not None:  # each event's seq and attempt, where the target shows them
        seen["event_envelopes"] = [dict(item) for item in extra["event_envelopes"]]
    for name in ("anomalies", "events_source", "refusal"):
        if extra.get(name):
            seen[name] = extra[name]
    step: dict[str, Any] = {
        "observed_format": OBSERVED_FORMAT,
        "index": index,
        "action": action,
        "argument": argument,
        "reply": None if reply is None else {"accepted": reply.accepted, "code": reply.code},
        "accepted": accepted,
        "observation": names.deep(seen),
        "calls": [names.deep({name: call.get(name) for name in _CALL_FIELDS}) for call in calls],
    }
    return step


def _decision(decision: Mapping[str, Any]) -> dict[str, Any]:
    kept = (
        "state",
        "reason_code",
        "rule",
        "error_code",
        "warnings",
        "marker",
        "output",
        "hint",
        "session_id",
    )
    return {name: decision.get(name) for name in kept}


def record(
    scenario_id: str, engine: str, reading: str | None, outcome: str, steps: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The case's decision record, without what is only there for the verdict."""
    kept = []
    calls_before = 0
    for step in steps:
        # The patched SKILL.md is long and the same for every case of a mode: checked, not recorded.
        # The audit restates the decisions; a refusal's wording is the target's: checked, not recorded.
        observation = {
            name: value
            for name, value in step["observation"].items()
            if name not in ("patch", "audit", "refusal")
        }
        if observation.get("history"):
            observation["history"] = _history_times(observation["history"])
        calls = list(step["calls"])  # cumulative for the verdict; the record keeps each step's new ones
        # The record says the engine once; the observed format is the verdict's, not behaviour.
        rest = {name: value for name, value in step.items() if name not in ("engine", "observed_format")}
        kept.append({**rest, "observation": observation, "calls": calls[calls_before:]})
        calls_before = len(calls)
    return {"scenario": scenario_id, "engine": engine, "reading": reading, "outcome": outcome, "steps": kept}


def _history_times(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """History rows with each timestamp replaced by its rank (``<t-1>``, ``<t-2>``, equal times one
    rank): a record says that rows carry timestamps and in which order, never the time of a run."""
    seconds = [timestamp_seconds(row.get("timestamp")) for row in rows]
    ranks = {value: number for number, value in enumerate(sorted({s for s in seconds if s is not None}), 1)}
    shown = []
    for row, value in zip(rows, seconds, strict=True):
        kept = dict(row)
        if "timestamp" in kept and kept["timestamp"] is not None:
            kept["timestamp"] = f"<t-{ranks[value]}>" if value is not None else "<unreadable>"
        shown.append(kept)
    return shown
