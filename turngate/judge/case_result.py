"""A case's result: one scenario on one engine, its outcome, and everything its verdict came from.

Keyword-only and without defaults, so that no caller can build half of one; each way a case ends
has its own constructor: judged, stopped before a verdict (skipped, errored, unreached), not run at
all (the target was already down), read back from a report, judged again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from turngate.judge.catalog import Scenario
    from turngate.judge.verdict import Verdict

# How a case ends without a verdict: the target lacks what it needs or refused it (skipped), the
# harness or the target broke (errored), the target stopped answering (unreached).
Stopped = Literal["skipped", "errored", "unreached"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    scenario_id: str
    engine: str
    reading: str | None
    level: str
    capability: str
    outcome: str
    message: str
    duration_sec: float
    record: Mapping[str, Any] | None
    # Everything the verdict was computed from, so `turngate report judge` can compute it again:
    differences: tuple[Mapping[str, Any], ...]
    checks: Mapping[str, Any] | None  # Checks.to_json()
    observed: tuple[Mapping[str, Any], ...]  # the observed steps (engine calls accumulated)
    conventions: str | None
    # An ambiguous scenario: whether the user chose its reading (judged strictly by it), and each
    # reading's outcome where none was chosen (judged under every reading; see verdict.judge).
    reading_chosen: bool
    readings: Mapping[str, str]

    @classmethod
    def judged(
        cls,
        scenario: Scenario,
        engine: str,
        verdict: Verdict,
        *,
        observed: Sequence[Mapping[str, Any]],
        record: Mapping[str, Any],
        reading: str | None,
        reading_chosen: bool,
        conventions: str | None,
        duration_sec: float,
    ) -> CaseResult:
        """A case that ran to the end: its verdict on what was observed."""
        return cls(
            scenario_id=scenario.id,
            engine=engine,
            reading=reading,
            level=scenario.level,
            capability=scenario.capability,
            outcome=verdict.outcome,
            message=verdict.message,
            duration_sec=duration_sec,
            record=record,
            differences=tuple(item.to_json() for item in verdict.differences),
            checks=scenario.checks().to_json(),
            observed=tuple(observed),
            conventions=conventions,
            reading_chosen=reading_chosen,
            readings=dict(verdict.readings),
        )

    @classmethod
    def stopped(
        cls,
        scenario: Scenario,
        engine: str,
        outcome: Stopped,
        message: str,
        *,
        reading: str | None,
        reading_chosen: bool,
        conventions: str | None,
        duration_sec: float,
    ) -> CaseResult:
        """A case that ended before a verdict: nothing observed, nothing recorded; its checks are
        kept, so that a report still says what the case would have checked."""
        return cls(
            scenario_id=scenario.id,
            engine=engine,
            reading=reading,
            level=scenario.level,
            capability=scenario.capability,
            outcome=outcome,
            message=message,
            duration_sec=duration_sec,
            record=None,
            differences=(),
            checks=scenario.checks().to_json(),
            observed=(),
            conventions=conventions,
            reading_chosen=reading_chosen,
            readings={},
        )

    @classmethod
    def not_run(cls, scenario: Scenario, engine: str, cause: CaseResult) -> CaseResult:
        """Unreached without being run: an earlier case (``cause``) found the target down."""
        first = cause.message.split("\n")[0]
        return cls(
            scenario_id=scenario.id,
            engine=engine,
            reading=scenario.default_reading,
            level=scenario.level,
            capability=scenario.capability,
            outcome="unreached",
            message=f"not run: {first} (first seen in {cause.scenario_id} [{cause.engine}])",
            duration_sec=0.0,
            record=None,
            differences=(),
            checks=None,
            observed=(),
            conventions=None,
            reading_chosen=False,
            readings={},
        )

    @classmethod
    def from_report(cls, line: Mapping[str, Any]) -> CaseResult:
        """A JSON Lines report's case line. Fields a result does not have (``kind``; ``baseline``, the
        run's own comparison) are left out; those a report written before them lacks are what such a
        run meant: nothing kept to judge again, the scenario's own reading."""
        # The fields reports gained after the first ones, as a report without them meant them.
        later: dict[str, Any] = {
            "differences": (),
            "checks": None,
            "observed": (),
            "conventions": None,
            "reading_chosen": False,
            "readings": {},
        }
        known = {name: value for name, value in line.items() if name in _FIELDS}
        return cls(**(later | known))

    def judged_again(
        self, verdict: Verdict, *, reading: str | None, reading_chosen: bool, conventions: str | None
    ) -> CaseResult:
        """The same observations under another verdict (``turngate report judge``); the decision record
        keeps what was observed and takes the new outcome and reading."""
        return dataclasses.replace(
            self,
            reading=reading,
            outcome=verdict.outcome,
            message=verdict.message,
            record=dict(self.record or {}, outcome=verdict.outcome, reading=reading),
            differences=tuple(item.to_json() for item in verdict.differences),
            observed=tuple(self.observed),
            conventions=conventions,
            reading_chosen=reading_chosen,
            readings=dict(verdict.readings),
        )

    def out_of_edition(self, why: str) -> CaseResult:
        """Judged again by an edition whose rule it is not (``turngate report judge --edition``): not a
        case of that edition, as a run under it would have skipped it; what it observed is kept."""
        return dataclasses.replace(self, outcome="skipped", message=why, differences=())


_FIELDS: Final = frozenset(field.name for field in dataclasses.fields(CaseResult))
