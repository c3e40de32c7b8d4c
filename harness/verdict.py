"""Verdicts: a case's observations against its scenario's expectations, first difference named.

Outcomes: ``passed``; ``failed`` (a MUST expectation missed, with expected vs
actual at the first difference); ``non-strict`` (the same miss on a SHOULD
scenario); ``skipped`` (the target lacks a capability the scenario needs);
``errored`` (the harness or the target broke).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

Outcome = Literal["passed", "failed", "non-strict", "skipped", "errored"]
# unreached: not run because the target stopped answering (an HTTP server that went down).
OUTCOMES: Final = ("passed", "failed", "non-strict", "skipped", "errored", "unreached")


@dataclass(frozen=True, slots=True)
class Difference:
    step: int
    action: str
    key: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return (
            f"step {self.step} ({self.action}): {self.key}: expected {self.expected!r}, got {self.actual!r}"
        )


def first_difference(
    expectations: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]]
) -> Difference | None:
    """``steps`` are the observed steps as plain data (see ``record.observed_step``)."""
    for index, (expect, step) in enumerate(zip(expectations, steps, strict=True)):
        for key, expected in expect.items():
            problem = _check(key, expected, step)
            if problem is not None:
                shown_expected, actual = problem
                return Difference(index, step["action"], key, shown_expected, actual)
    return None


def _check(key: str, expected: Any, step: Mapping[str, Any]) -> tuple[Any, Any] | None:
    seen = step["observation"]
    match key:
        case "state" | "error_code" | "reason_code" | "attempts" | "slot_held" | "data":
            return None if seen.get(key) == expected else (expected, seen.get(key))
        case "warnings":
            return None if list(seen["warnings"]) == list(expected) else (expected, seen["warnings"])
        case "pending":
            return _check_pending(expected, seen.get("pending"))
        case "pending_absent":
            pending = seen.get("pending") or {}
            present = [name for name in expected if pending.get(name) not in (None, [], {}, "")]
            return (
                None
                if not present
                else (f"no {', '.join(expected)}", {name: pending[name] for name in present})
            )
        case "reply":
            reply = step.get("reply") or {}
            wrong = {name: reply.get(name) for name, value in expected.items() if reply.get(name) != value}
            return None if not wrong else (expected, reply)
        case "history":
            return _check_rows(expected, seen.get("history", []))
        case "events":
            return _check_events(expected, [event["type"] for event in seen.get("events", [])])
        case "argv":
            mine = [
                want for want in expected if step.get("engine") in want.get("engines", [step.get("engine")])
            ]
            return _check_argv(mine, step.get("calls", []))
        case "engine_calls":
            count = len([call for call in step.get("calls", []) if call.get("action") == "run"])
            return None if count == expected else (expected, count)
        case "patch":
            return _check_patch(expected, seen.get("patch"))
    return (expected, f"<turngate cannot check {key!r}>")


def _check_pending(
    expected: Mapping[str, Any] | None, pending: Mapping[str, Any] | None
) -> tuple[Any, Any] | None:
    if expected is None:
        return None if pending is None else (None, pending)
    if pending is None:
        return (expected, None)
    wrong = {
        name: pending.get(name, "<absent>") for name, value in expected.items() if pending.get(name) != value
    }
    return None if not wrong else (expected, wrong)


def _check_rows(
    expected: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> tuple[Any, Any] | None:
    if len(rows) != len(expected):
        return (f"{len(expected)} rows", f"{len(rows)} rows: {list(rows)}")
    for want, row in zip(expected, rows, strict=True):
        if any(row.get(name) != value for name, value in want.items()):
            return (want, {name: row.get(name) for name in want})
    return None


def _check_events(expected: Mapping[str, Any], types: list[str]) -> tuple[Any, Any] | None:
    position = 0
    for wanted in expected.get("includes", ()):
        try:
            position = types.index(wanted, position) + 1
        except ValueError:
            return (f"{wanted} (in order {expected['includes']})", types)
    for unwanted in expected.get("excludes", ()):
        if unwanted in types:
            return (f"no {unwanted}", types)
    for name, count in expected.get("count", {}).items():
        if types.count(name) != count:
            return (f"{count} x {name}", types)
    return None


def _check_argv(
    expected: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]]
) -> tuple[Any, Any] | None:
    runs = [call for call in calls if call.get("action") == "run"]
    for want in expected:
        attempt = want["attempt"]
        call = _call_for_attempt(runs, attempt)
        if call is None:
            return (f"an engine call for attempt {attempt}", f"{len(runs)} engine calls")
        argv = list(call["argv"])
        missing = [flag for flag in want.get("contains", ()) if flag not in argv]
        unwanted = [flag for flag in want.get("excludes", ()) if flag in argv]
        if missing or unwanted:
            return ({"attempt": attempt, "contains": missing, "excludes": unwanted}, argv)
        if "resumed" in want and bool(call.get("resumed")) != want["resumed"]:
            return ({"attempt": attempt, "resumed": want["resumed"]}, {"resumed": call.get("resumed")})
    return None


def _call_for_attempt(runs: Sequence[Mapping[str, Any]], attempt: int) -> Mapping[str, Any] | None:
    # A resident (sticky) process plays several turns in one call; a turn number says which.
    for call in runs:
        if attempt in (call.get("turns") or ()):
            return call
    return runs[attempt - 1] if attempt <= len(runs) else None


def _check_patch(expected: Mapping[str, Any], patch: str | None) -> tuple[Any, Any] | None:
    if patch is None:
        return (expected, "<no patched SKILL.md>")
    from harness.reference.patch import PATCH_BANNER, patch_sections

    added = patch.split(PATCH_BANNER, 1)[1] if PATCH_BANNER in patch else ""
    if "order" in expected and list(patch_sections(patch)) != list(expected["order"]):
        return (expected["order"], list(patch_sections(patch)))
    missing = [text for text in expected.get("contains", ()) if text not in added]
    unwanted = [text for text in expected.get("excludes", ()) if text in added]
    if missing or unwanted:
        return ({"contains": missing, "excludes": unwanted}, "<the patch text differs>")
    return None
