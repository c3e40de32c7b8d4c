"""The in-process connector: turngate's reference orchestrator, with a manual clock and its own store."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from turngate.implementations.conforming_variants import REFERENCE, Variant, variant_observation
from turngate.implementations.reference.audit import audit_run
from turngate.implementations.reference.clock import ManualClock
from turngate.implementations.reference.commands import CommandOptions
from turngate.implementations.reference.gate import READING_BODY, SOFT_COMPLETION_READINGS
from turngate.implementations.reference.lifecycle import EngineSetup, Orchestrator, RunRequest
from turngate.implementations.reference.skill import SkillPackageError, load_skill
from turngate.implementations.reference.store import RunRecord, Store
from turngate.protocol.connector import CAPABILITIES, CaseSetup, Observation, PackageRefused, ReplyResult


class ReferenceConnector:
    """The in-process reference orchestrator as a connector.

    ``variant``: a conforming variant shown instead of the reference's own names
    (turngate/implementations/conforming_variants.py)."""

    name = "reference"
    capabilities: frozenset[str] = CAPABILITIES

    def __init__(
        self, *, turn_timeout_sec: float = 30.0, variant: Variant = REFERENCE, mutant: str | None = None
    ) -> None:
        self._variant = variant
        # a spec mutant's name (turngate/implementations/mutants/), patched in for the case's duration
        self._mutant = mutant
        self._restore: Callable[[], None] | None = None
        self._turn_timeout_sec = turn_timeout_sec
        self._setup: CaseSetup | None = None
        self._store: Store | None = None
        self._orchestrator: Orchestrator | None = None
        self._clock = ManualClock()
        self._run_id: str | None = None
        # the output schema of each skill folder the audit read: every observation audits its run
        self._output_schemas: dict[str, Mapping[str, Any] | None] = {}

    # Actions -----------------------------------------------------------------------------

    def start(self, setup: CaseSetup) -> None:
        if self._mutant is not None and self._restore is None:
            from turngate.implementations.mutants import activate
            from turngate.implementations.mutants.registry import mutant_named

            self._restore = activate(mutant_named(self._mutant))
        self._setup = setup
        self._open()
        runtime = setup.runtime
        try:
            skill = load_skill(setup.skill_dir)
        except SkillPackageError as error:
            raise PackageRefused(str(error)) from None
        request = RunRequest(
            skill=skill,
            engine=setup.engine,
            mode=runtime["mode"],
            input={"case": f"tg-case-{setup.case_id}"},
            profile=runtime.get("profile"),
            require_user_reply=runtime.get("require_user_reply", True),
            session_timeout_sec=runtime.get("session_timeout_sec", 1200),
            turn_timeout_sec=runtime.get("turn_timeout_sec"),
        )
        self._run_id = self._live.submit(request)

    def reply(self, text: str, interaction_id: int | None) -> ReplyResult:
        run = self._live.status(self._id)
        if interaction_id is None:
            interaction_id = int(run.pending["interaction_id"]) if run.pending else 0
        else:  # the id as the variant shows it, back in the orchestrator's own numbering
            interaction_id = self._variant.own_id(interaction_id) or 0
        outcome = self._live.reply(self._id, interaction_id, text)
        return ReplyResult(outcome.accepted, self._variant.code(outcome.code))

    def cancel(self) -> bool:
        return self._live.cancel(self._id)

    def advance_clock(self, seconds: float) -> None:
        self._clock.advance(seconds)
        self._live.check_deadlines()

    def restart(self) -> None:
        self._live.shutdown()
        assert self._store is not None
        self._store.close()
        self._open()

    def fill_slots(self) -> None:
        self._live.hold_free_slots()

    def free_slots(self) -> None:
        self._live.release_held_slots()

    def settle(self) -> None:
        if not self._live.wait_idle(self._turn_timeout_sec * 4):
            raise TimeoutError("the reference orchestrator did not settle")

    def close(self) -> None:
        if self._orchestrator is not None:
            self._orchestrator.shutdown()
        if self._store is not None:
            self._store.close()
        if self._restore is not None:
            self._restore()
            self._restore = None

    # Observation -------------------------------------------------------------------------

    def observe(self) -> Observation:
        store, run_id = self._live.store, self._id
        run = self._live.status(run_id)
        attempts = store.attempts(run_id)
        decisions = [attempt.decision for attempt in attempts if attempt.decision is not None]
        result = run.result or {}
        patch_path = Path(run.run_dir) / "skills" / run.skill_id / "SKILL.md"
        observation = Observation(
            state=run.state,
            error_code=run.error_code,
            warnings=run.warnings,
            reason_code=decisions[-1]["reason_code"] if decisions else None,
            data=result.get("data"),
            pending=run.pending,
            attempts=run.attempt_count,
            history=tuple(
                {
                    "interaction_id": item.interaction_id,
                    "prompt": item.prompt,
                    "response": item.response,
                    "automatic": item.automatic,
                    # when the row was last written (asked, then answered), by the orchestrator's clock
                    "timestamp": item.replied_at if item.replied_at is not None else item.asked_at,
                }
                for item in store.interactions(run_id)
            ),
            events=tuple({"type": event.type, "data": dict(event.data)} for event in store.events(run_id)),
            slot_held=self._live.slots.holds(run_id),
            patch=patch_path.read_text(encoding="utf-8") if patch_path.exists() else None,
            extra={"decisions": decisions, "audit": self._audit(run)},
        )
        assert self._setup is not None
        return variant_observation(
            self._variant, observation, engine=run.engine, gemini_format=self._setup.gemini_output_format
        )

    # Internals ---------------------------------------------------------------------------

    def _audit(self, run: RunRecord) -> list[dict[str, object]]:
        """The after-the-fact audit of each finished turn next to the live gate's (Decision 3.1)."""
        skill_dir = str(run.request["skill_dir"])
        if skill_dir not in self._output_schemas:
            self._output_schemas[skill_dir] = load_skill(Path(skill_dir)).output_schema
        return [
            {
                "attempt": item.attempt_number,
                "marker_found": item.marker_found,
                "completion": item.completion,
                "agrees_with_gate": item.agrees_with_gate,
            }
            for item in audit_run(self._live.store, run.run_id, output_schema=self._output_schemas[skill_dir])
        ]

    def _open(self) -> None:
        setup = self._setup
        assert setup is not None
        reading = setup.reading if setup.reading in SOFT_COMPLETION_READINGS else READING_BODY
        # One throwaway store per case: a restart step needs it to survive the process, not a power cut.
        self._store = Store(setup.workdir / "reference.sqlite3", power_safe=False)
        options = CommandOptions(gemini_output_format=setup.gemini_output_format)  # type: ignore[arg-type]
        engines = EngineSetup(
            bin_dir=setup.engine_bin,
            env=setup.engine_env,
            command_options=options,
            turn_timeout_sec=self._turn_timeout_sec,
        )
        self._orchestrator = Orchestrator(
            store=self._store,
            runs_dir=setup.workdir / "runs",
            engines=engines,
            clock=self._clock,
            soft_completion_reading=reading,
        )

    @property
    def _live(self) -> Orchestrator:
        if self._orchestrator is None:
            raise RuntimeError("the connector has no started case")
        return self._orchestrator

    @property
    def _id(self) -> str:
        if self._run_id is None:
            raise RuntimeError("the connector has no started case")
        return self._run_id
