"""The connector protocol and the values that cross it.

A connector gets one case (skill, runtime options, engine, where the fake
engines' scripts are), performs the scenario's actions on the target, and
reports what it observes in target-neutral terms. It declares its capabilities
(``clock``, ``restart``, ``slots``, ``argv``, ``sticky``, ``history``,
``events``, ``patch``, ``http``, and ``gemini_output_format`` when a case
may choose gemini's output format); a scenario that needs one it lacks is skipped
with the reason, never passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

# Every capability a connector may declare, but ``http`` (a job-API surface, which only an HTTP
# target has): one list for the reference, the command protocol and target files.
CAPABILITIES: Final = frozenset(
    {
        "clock",
        "restart",
        "slots",
        "slot_fill",
        "argv",
        "sticky",
        "history",
        "events",
        "patch",
        "gemini_output_format",
        "watchdog",
    }
)


class PackageRefused(RuntimeError):
    """The target refused the case's skill package before any run (its own reason): the start step
    observes the state ``refused``, which a scenario about an invalid package expects."""


class CaseSkipped(RuntimeError):
    """The target refuses the case for a reason that is not a spec question (an engine it does not
    support, say): the case is ``skipped`` with the target's own reason, never failed or errored."""


class TargetUnreachable(RuntimeError):
    """Nothing answers where the target should be (a server down, a command that does not start or
    shake hands): this case and the ones after it are not reached.

    One type for every connector, each raising it with its own message; the runner reports it as
    ``unreached``. A target that answers, but not in its protocol, raises its connector's own error
    instead: that case is ``errored`` and the next one still runs.
    """


@dataclass(frozen=True, slots=True)
class CaseSetup:
    """Everything a target needs to run one scenario on one engine."""

    case_id: str  # the fake engines' case; the token tg-case-<case_id> goes into the run's input
    engine: str
    skill_dir: Path
    runtime: Mapping[str, Any]
    reading: str | None
    workdir: Path  # a private folder for this case
    engine_env: Mapping[str, str]  # TURNGATE_* for the fake engines
    engine_bin: Path
    gemini_output_format: str | None = None  # what the scenario needs, for targets that let us choose
    uses_clock: bool = False  # the scenario moves the clock: a real server gets a short real timeout
    observes_slots: bool = False  # the scenario judges slot_held: a black box is asked with fillers


# The fields of a history row (the in-process connector's); a connector whose rows lack one declares
# ``history.<field>`` unobservable.
HISTORY_FIELDS: Final = ("interaction_id", "prompt", "response", "automatic", "timestamp")


@dataclass(frozen=True, slots=True)
class ReplyResult:
    accepted: bool
    code: str | None


@dataclass(frozen=True, slots=True)
class Observation:
    """What the target shows after an action, once it has settled.

    What the target cannot show is declared in ``extra["unobservable"]``: a field (``history``,
    ``events``, ``attempts``, ``slot_held``, ``patch``, …) or ``history.<field>`` for a field its
    history rows do not carry; a check on it is unverified, never failed or passed. Any other
    ``None`` is an observed null, judged like any value (a null history where rows are expected is
    a difference). ``pending`` is None both for "no pending" and "cannot tell", the latter said in
    ``extra["pending_unknown"]``. A history row carries ``interaction_id``, ``prompt``, ``response``,
    ``automatic`` and ``timestamp`` (when the row was written: seconds since the epoch or ISO 8601).
    """

    state: str
    error_code: str | None
    warnings: tuple[str, ...]
    reason_code: str | None
    data: Mapping[str, Any] | None
    pending: Mapping[str, Any] | None
    attempts: int | None
    history: tuple[Mapping[str, Any], ...] | None = ()
    events: tuple[Mapping[str, Any], ...] | None = ()  # {"type", "data"} in seq order
    slot_held: bool | None = None
    patch: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


class SlotFilling(Protocol):
    """A connector with the ``slot_fill`` capability: other work can hold every free concurrency slot
    for one step, so that the step shows what the case's run does when no slot is free."""

    def fill_slots(self) -> None:
        """Hold every slot no run holds now, until `free_slots`."""
        ...

    def free_slots(self) -> None:
        """Give back the slots `fill_slots` held; the target may then run what waited for one."""
        ...


class Connector(Protocol):
    name: str
    capabilities: frozenset[str]

    def start(self, setup: CaseSetup) -> None: ...

    def reply(self, text: str, interaction_id: int | None) -> ReplyResult:
        """Reply to the pending interaction (its own id when ``interaction_id`` is None)."""
        ...

    def cancel(self) -> bool: ...

    def advance_clock(self, seconds: float) -> None: ...

    def restart(self) -> None: ...

    def settle(self) -> None:
        """Wait until the target has nothing running for this case."""
        ...

    def observe(self) -> Observation: ...

    def close(self) -> None: ...
