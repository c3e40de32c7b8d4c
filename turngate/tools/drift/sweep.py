"""Drift: every mutator on every capture, the decision before and after, and what the spec says.

A mutation *flips* a capture when the compared aspect (the decision's state and
error code, or whether the marker was found) differs from the unmutated
capture's. The reference must not flip where the spec calls a mutation
irrelevant and must flip where it says the decision changes; where the spec
is silent the flip is reported, not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from turngate.tools.drift.capture import Capture
from turngate.tools.drift.gate_replay import Replay, replay
from turngate.tools.drift.mutators import MUTATORS, Mutator, Verdict


@dataclass(frozen=True, slots=True)
class Seen:
    """What a target decided on one capture: enough to tell a flip."""

    state: str
    error_code: str | None
    marker_found: bool | None  # None: the target does not show it

    def aspect(self, name: str) -> Any:
        return self.marker_found if name == "marker" else (self.state, self.error_code)

    def label(self) -> str:
        """``state`` or ``state/ERROR_CODE``, as reports and scenario titles show a decision."""
        return self.state + (f"/{self.error_code}" if self.error_code else "")

    def satisfies(self, expected: Seen) -> bool:
        """The expected state, and its error code when the expectation names one."""
        return self.state == expected.state and expected.error_code in (None, self.error_code)


@dataclass(frozen=True, slots=True)
class DriftResult:
    capture: str
    engine: str
    mutator: str
    verdict: Verdict
    aspect: str
    before: Seen
    after: Seen
    source: str

    @property
    def flipped(self) -> bool:
        return bool(self.before.aspect(self.aspect) != self.after.aspect(self.aspect))

    @property
    def agrees(self) -> bool | None:
        """True when the target did what the spec says, None when the spec says nothing."""
        match self.verdict:
            case "irrelevant":
                return not self.flipped
            case "flips":
                return self.flipped
        return None


Decider = Callable[[Capture], Seen]


def reference_decider(capture: Capture) -> Seen:
    return seen_in(replay(capture))


def seen_in(result: Replay) -> Seen:
    """What the reference decided in a replay."""
    decision = result.assessment.decision
    return Seen(decision.state, decision.error_code, result.assessment.marker.found)


def applicable(mutator: Mutator, before: Seen) -> bool:
    """A 'flips' claim needs something to flip: a decision that can still fail, a marker to lose."""
    if mutator.verdict == "flips" and mutator.aspect == "decision":
        return before.state != "failed"
    if mutator.verdict == "flips" and mutator.aspect == "marker":
        return bool(before.marker_found)
    return True


def drift(
    captures: Iterable[Capture],
    *,
    decider: Decider = reference_decider,
    mutators: Sequence[Mutator] = MUTATORS,
) -> list[DriftResult]:
    results: list[DriftResult] = []
    for capture in captures:
        before = decider(capture)
        for mutator in mutators:
            mutated = mutator.apply(capture)
            if mutated is None or not applicable(mutator, before):
                continue
            if mutator.aspect == "marker" and before.marker_found is None:
                continue  # the target cannot show the marker: nothing to compare
            results.append(
                DriftResult(
                    capture.name,
                    capture.engine,
                    mutator.name,
                    mutator.verdict_for(capture),
                    mutator.aspect,
                    before,
                    decider(mutated),
                    mutator.source,
                )
            )
    return results


# What each row's mark means, and how to read the rest of the row (printed under the rows).
MARKS: Final = {True: "ok", False: "DISAGREES", None: "-"}
HEADER: Final = ("mark", "capture", "mutator", "before -> after", "[change; spec's word]")
LEGEND: Final = (
    "legend:",
    "  ok         the target did what the spec says (no flip where it is irrelevant, a flip where it must)",
    "  DISAGREES  it did not: drift found (exit 1)",
    "  -          the spec is silent on this mutation: its flip is reported, not judged",
    "  before -> after  the decision (state/ERROR_CODE); marker / no-marker where the spec speaks only of",
    "                   whether the done marker was found",
    "  [change; spec's word]  flips or stable; irrelevant (must not flip), flips (must flip), unspecified",
)


def drift_found(results: Sequence[DriftResult]) -> bool:
    """What fails ``turngate drift`` (exit 1): a mutation on which the target disagrees with the spec. A
    flip where the spec is silent is reported, never a failure: the reference has dozens of them."""
    return any(result.agrees is False for result in results)


def changed(results: Sequence[DriftResult]) -> list[DriftResult]:
    """What ``turngate drift --fail-on-drift`` fails on: every mutation whose decision moved where the spec
    does not demand it (it disagrees with the spec, or flipped where the spec is silent). A flip the spec
    demands is the spec's, not drift."""
    return [r for r in results if r.agrees is False or (r.agrees is None and r.flipped)]


def one_line(result: DriftResult) -> str:
    """A changed mutation on one line: capture, mutator, before -> after, the spec's word."""
    return (
        f"{result.capture}: {result.mutator}: {_shown(result.before, result.aspect)} ->"
        f" {_shown(result.after, result.aspect)} (spec: {result.verdict})"
    )


def render(results: Sequence[DriftResult]) -> str:
    """A header, then one line per (capture, mutator): its mark, before → after, flipped or not, the
    spec's word. The columns are as wide as their longest entry (catalog captures have long names)."""
    table = [
        (
            MARKS[result.agrees],
            result.capture,
            result.mutator,
            f"{_shown(result.before, result.aspect)} -> {_shown(result.after, result.aspect)}",
            f"[{'flips' if result.flipped else 'stable'}; spec: {result.verdict}]",
        )
        for result in results
    ]
    widths = [max(len(row[column]) for row in (HEADER, *table)) for column in range(len(HEADER) - 1)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]])
        for row in (HEADER, *table)
    )


def summary(results: Sequence[DriftResult]) -> str:
    """The last line: how many mutations, how many disagree with the spec, how many silent flips."""
    disagreeing = sum(1 for result in results if result.agrees is False)
    unspecified = sum(1 for result in results if result.agrees is None and result.flipped)
    return (
        f"{len(results)} mutations, {disagreeing} disagree with the spec,"
        f" {unspecified} flips where the spec is silent"
    )


def _shown(seen: Seen, aspect: str) -> str:
    if aspect == "marker":
        return "marker" if seen.marker_found else "no-marker"
    return seen.label()


def as_json(result: DriftResult) -> dict[str, Any]:
    return {
        "capture": result.capture,
        "engine": result.engine,
        "mutator": result.mutator,
        "verdict": result.verdict,
        "aspect": result.aspect,
        "before": {
            "state": result.before.state,
            "error_code": result.before.error_code,
            "marker": result.before.marker_found,
        },
        "after": {
            "state": result.after.state,
            "error_code": result.after.error_code,
            "marker": result.after.marker_found,
        },
        "flipped": result.flipped,
        "agrees": result.agrees,
        "source": result.source,
    }
