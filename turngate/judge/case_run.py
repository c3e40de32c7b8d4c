"""One case, start to verdict: scenario × engine → its folder → the connector's actions → a verdict.

A case the target cannot run is skipped before any folder is made; one that breaks (the harness or
the target) is errored, or unreached when the target stopped answering; the others are judged on
what their steps observed.
"""

from __future__ import annotations

import time
import traceback
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from turngate.judge.case_folder import case_id, prepare, remove_shared_script, temporary_folder
from turngate.judge.case_result import CaseResult, Stopped
from turngate.judge.case_steps import perform
from turngate.judge.catalog import Scenario
from turngate.judge.catalog.editions import edition_named
from turngate.judge.decision_record import record
from turngate.judge.targets import Target, parse_target
from turngate.judge.verdict import judge
from turngate.protocol.connector import CaseSkipped, Connector, TargetUnreachable

if TYPE_CHECKING:
    from turngate.engines.real.caseengines import RealEngines
    from turngate.judge.targets import SharedServer


def run_case(
    scenario: Scenario,
    engine: str,
    connector: Connector,
    *,
    reading: str | None = None,
    root: Path | None = None,
    shared: SharedServer | None = None,
    conventions: str | None = None,
    real: RealEngines | None = None,
    edition: str | None = None,
) -> CaseResult:
    """Run one case. ``shared``: a target whose engines are not ours to configure per case (an HTTP
    server) reads scripts from one folder and logs all calls to one file; a sticky case makes its
    engine look non-resumable there, unless the server's test hooks take the profile with the job
    (the knob would turn other cases' runs sticky).
    ``real``: real CLIs (against turngate's model server) in place of the fakes they pin."""
    started = time.monotonic()
    # A reading names one side of an ambiguous scenario; scenarios without it keep their default (the
    # reading the target is set up with), and are judged under every reading.
    chosen = reading in scenario.readings
    reading = reading if chosen else scenario.default_reading

    def stopped(outcome: Stopped, message: str) -> CaseResult:
        return CaseResult.stopped(
            scenario,
            engine,
            outcome,
            message,
            reading=reading,
            reading_chosen=chosen,
            conventions=conventions,
            duration_sec=round(time.monotonic() - started, 3),
        )

    judged_by = edition_named(edition)
    out_of_edition = judged_by.missing_source(scenario.source) or judged_by.missing_premise(scenario.checks())
    if out_of_edition is not None:
        return stopped("skipped", out_of_edition)
    needed = set(scenario.capabilities)
    if scenario.gemini_output_format and engine == "gemini":
        needed.add("gemini_output_format")  # the hazard lives in one output format the target must choose
    missing = sorted(needed - connector.capabilities)
    if missing:
        return stopped("skipped", f"target {connector.name} lacks: {', '.join(missing)}")
    unplayable = real.unplayable(engine, case_id(scenario, engine), scenario.engine_script) if real else None
    if unplayable:
        return stopped("skipped", f"the real {engine} cannot play this script: {unplayable}")
    sticky_knob = shared is None or not shared.hooks
    with temporary_folder(root) as folder:
        workdir = Path(folder)
        try:
            shared_scripts = shared.scripts if shared else None
            setup = prepare(scenario, engine, reading, workdir, shared_scripts, sticky_knob=sticky_knob)
            call_log = (shared.call_log if shared else None) or workdir / "calls.jsonl"
            scripts = shared_scripts or workdir / "scripts"
            # Real engines are set up per case, not per run: their model server reads this case's
            # scripts folder, and their launchers go into this case's bin (over the fakes just installed).
            retries = real.retries(case_id(scenario, engine), scenario.engine_script) if real else 0
            with real.for_case(workdir, scripts, call_log, retries=retries) if real else nullcontext():
                steps = perform(scenario, connector, setup, workdir, call_log)
            # A real CLI the orchestrator stopped before the model server had answered its turn's
            # last round did not play the script: the verdict would be about the stop (a real CLI
            # slower than the case's turn budget), so the case says what was not played instead.
            not_played = (
                real.not_played(
                    engine,
                    case_id(scenario, engine),
                    scenario.engine_script,
                    workdir,
                    call_log,
                )
                if real
                else None
            )
            if not_played:
                return stopped("skipped", f"the real {engine} did not play this script: {not_played}")
        except CaseSkipped as refusal:  # the target's own reason, e.g. an engine it does not run
            return stopped("skipped", str(refusal))
        except Exception as error:  # the harness or the target broke: say so, keep going
            detail = "".join(traceback.format_exception_only(type(error), error)).strip()
            broke: Stopped = "unreached" if isinstance(error, TargetUnreachable) else "errored"
            return stopped(broke, f"{detail}\n{traceback.format_exc(limit=6)}")
        finally:
            connector.close()
            if shared is not None:
                remove_shared_script(scenario, engine, shared.scripts, sticky_knob=sticky_knob)
    verdict = judge(
        scenario.checks(),
        steps,
        reading=reading if chosen else None,
        conventions=conventions,
        edition=edition,
    )
    return CaseResult.judged(
        scenario,
        engine,
        verdict,
        observed=steps,
        record=record(scenario.id, engine, reading, verdict.outcome, steps),
        reading=reading,
        reading_chosen=chosen,
        conventions=conventions,
        duration_sec=round(time.monotonic() - started, 3),
    )


def connector_for(target: str | Target) -> Connector:
    """A fresh connector for a ``--target`` value."""
    return (target if isinstance(target, Target) else parse_target(target)).connector()
