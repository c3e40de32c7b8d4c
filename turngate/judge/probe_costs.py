"""What the fields the probe could not find cost: the cases of the shipped catalog they skip.

`turngate run` skips a case whose scenario needs a capability the target lacks (case_run.run_case:
the scenario's ``capabilities``, plus ``gemini_output_format`` for gemini when the scenario names an
output format), with the reason "target http lacks: ...". The target's capabilities follow from its
fields (http_options), so each field the probe left out is named with the cases it skips, counted
over the engines the server ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from turngate.judge.catalog import Scenario
from turngate.judge.catalog.editions import edition_named


@dataclass(frozen=True, slots=True)
class Gate:
    """A target file field and the capabilities it gives; ``absent``: why it is absent, unless the
    probe says better."""

    field: str
    capabilities: frozenset[str]
    kind: str  # the scenarios it gates, in words
    absent: str


GATES: Final = (
    Gate("restart_command", frozenset({"restart"}), "restart",
         "not observable (give a shell command that restarts the server)"),
    Gate("slots", frozenset({"slots", "slot_fill"}), "slot",
         "not found (write how many runs the server lets hold an engine at once)"),
    Gate("turn_timeout_sec", frozenset({"watchdog"}), "hung-engine",
         "not found (write the server's engine watchdog, in seconds)"),
    Gate("honours_session_timeout", frozenset({"clock"}), "wait-timeout",
         "no (a short session_timeout_sec was not acted on in real time)"),
    Gate("probes_each_run", frozenset({"sticky"}), "sticky",
         "no sticky_process run seen (needs --call-log)"),
    Gate("skill_gemini_settings", frozenset({"gemini_output_format"}), "gemini output-format",
         "no (the skill's gemini settings do not choose gemini's output format)"),
    Gate("call_log", frozenset({"argv", "patch"}), "command-line and patch",
         "not given (--call-log: the fake engines' call log)"),
)  # fmt: skip


def needed(scenario: Scenario, engine: str) -> frozenset[str]:
    """The capabilities a case needs, as `turngate run` asks them of the target (case_run.run_case)."""
    extra = {"gemini_output_format"} if scenario.gemini_output_format and engine == "gemini" else set()
    return scenario.capabilities | extra


def cases(
    scenarios: Iterable[Scenario], engines: Sequence[str], edition: str | None = None
) -> list[tuple[Scenario, str]]:
    """The catalog's cases on these engines (scenario x engine, where the scenario runs that engine)
    that a run judged by ``edition`` (None: the default) plays: its own scenarios, not those it skips
    as out of edition (case_run.run_case decides that before it asks for capabilities)."""
    judged_by = edition_named(edition)
    return [
        (scenario, engine)
        for scenario in scenarios
        if scenario.planned_under(judged_by.name)
        and not (judged_by.missing_source(scenario.source) or judged_by.missing_premise(scenario.checks()))
        for engine in scenario.engines
        if engine in engines
    ]


def cost_lines(
    scenarios: Sequence[Scenario],
    capabilities: frozenset[str],
    engines: Sequence[str],
    why: Mapping[str, str],
    edition: str | None = None,
) -> list[str]:
    """One line per field whose absence skips cases (``why``: the probe's own reason, by field), and
    a last line with the whole: how many cases of the catalog, on these engines, are skipped, in a
    run judged by ``edition`` (None: the default)."""
    all_cases = cases(scenarios, engines, edition)
    lacking = [(scenario, engine, needed(scenario, engine) - capabilities) for scenario, engine in all_cases]
    lacking = [(scenario, engine, missing) for scenario, engine, missing in lacking if missing]
    lines: list[str] = []
    for gate in GATES:
        hit = [(scenario, missing & gate.capabilities) for scenario, _, missing in lacking]
        hit = [(scenario, gated) for scenario, gated in hit if gated]
        if not hit:
            continue
        scenario_count = len({scenario.id for scenario, _ in hit})
        names = ", ".join(sorted(set().union(*(gated for _, gated in hit))))
        lines.append(
            f"{gate.field}: {why.get(gate.field, gate.absent)}: {len(hit)} {gate.kind} cases"
            f" ({scenario_count} scenarios, needing {names}) will be skipped"
        )
    on = ", ".join(engines)
    if lacking:
        lines.append(
            f"in all, {len(lacking)} of the catalog's {len(all_cases)} cases on {on} will be skipped"
        )
    else:
        lines.append(f"nothing missing: all {len(all_cases)} cases of the catalog on {on} can run")
    return lines
