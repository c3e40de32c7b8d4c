"""The run lifecycle: start, turns, waiting_user, reply, cancel, timeouts, slots, restart.

Work happens synchronously inside the protocol step that causes it (start, reply, a clock
advance that expires a deadline, freeing slots, settle), so ``settle`` only has to run what
is still queued. Every transition is persisted before its event is derived from it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, Final

from . import engine_commands, pending_baseline, skill_package, turn_audit
from .bugs import bug
from .engine_process import EngineProcess
from .run_clock import Clock
from .run_record import TERMINAL, Run
from .run_store import Store
from .slot_pool import SlotPool
from .turn_decision import Decision, Evidence, decide
from .turn_evidence import evaluate, has_end_signal, turn_over

DEFAULT_SESSION_TIMEOUT: Final = 1200.0
DEFAULT_TURN_TIMEOUT: Final = 45.0  # below the protocol's 60 s answer timeout
DONE_INSTRUCTION: Final = 'When the task is fully complete, put "__SKILL_DONE__": true in your final JSON.'


@dataclasses.dataclass(frozen=True)
class ReplyResult:
    accepted: bool
    code: str | None


def _patched_skill(original: str, mode: str) -> str:
    """SKILL.md as the engine sees it: the skill, then the runtime contract for the mode."""
    mode_text = (
        "## Interactive mode\nIf you need input from the user, ask in plain text and stop. "
        f"Do not emit the done marker before the task is really complete. {DONE_INSTRUCTION}\n"
        if mode == "interactive"
        else "## Auto mode\nDo not ask the user anything; decide yourself and finish the task.\n"
    )
    contract = "## Runtime contract\nReply with one JSON object as the final output.\n"
    return f"{original.rstrip()}\n\n{contract}\n{mode_text}"


class Orchestrator:
    """One case's run, in this process; ``restart`` rebuilds it from the store."""

    def __init__(self, store: Store, run: Run, slots: SlotPool) -> None:
        self.store = store
        self.run = run
        self.slots = slots
        self.clock = Clock(run.clock_base, run.clock_offset)
        self.resident: EngineProcess | None = None

    # ---- creation ----------------------------------------------------------------------
    @classmethod
    def start(cls, case: dict[str, Any], slots: SlotPool) -> Orchestrator:
        workdir = Path(case["workdir"])
        package = skill_package.load(Path(case["skill_dir"]))
        runtime = case.get("runtime") or {}
        mode = str(runtime.get("mode") or "auto")
        if mode not in package.modes:
            raise skill_package.PackageRefused(f"the skill does not support execution mode {mode!r}")
        rundir = workdir / "second-orchestrator-run"
        rundir.mkdir(parents=True, exist_ok=True)
        token = f"tg-case-{case['case_id']}"
        (rundir / "SKILL.md").write_text(_patched_skill(package.skill_md, mode), encoding="utf-8")
        (rundir / "input.json").write_text(json.dumps({"case": token}), encoding="utf-8")
        engine_commands.prepare(str(case["engine"]), rundir)
        prompt = f'Run the skill described in ./SKILL.md. Input: {{"case": "{token}"}}. {DONE_INSTRUCTION}'
        now = time.time()
        strict = runtime.get("require_user_reply")
        run = Run(
            case_id=case["case_id"],
            engine=case["engine"],
            mode=mode,
            profile=str(runtime.get("profile") or "resumable"),
            strict=True if strict is None else bool(strict),
            session_timeout=float(runtime.get("session_timeout_sec") or DEFAULT_SESSION_TIMEOUT),
            turn_timeout=float(runtime.get("turn_timeout_sec") or DEFAULT_TURN_TIMEOUT),
            max_attempt=package.max_attempt,
            output_schema=package.output_schema,
            gemini_format=str(case.get("gemini_output_format") or "json"),
            rundir=str(rundir),
            engine_bin=str(case["engine_bin"]),
            engine_env=dict(case.get("engine_env") or {}),
            prompt=prompt,
            clock_base=now,
            started_at=now,
        )
        run = run.with_event("conversation.started", {"engine": run.engine, "mode": run.mode})
        orchestrator = cls(Store(workdir / "second-orchestrator.sqlite"), run, slots)
        orchestrator._save(run)
        orchestrator.pump()
        return orchestrator

    # ---- persistence ---------------------------------------------------------------------
    def _save(self, run: Run) -> None:
        run = dataclasses.replace(run, clock_offset=self.clock.offset)
        self.store.save(run.to_doc())
        self.run = run

    # ---- turns -----------------------------------------------------------------------------
    def pump(self) -> None:
        """Run the queued turn if a slot can be had; otherwise it stays queued."""
        run = self.run
        if run.state != "queued":
            return
        resuming = run.queued_reply is not None
        skip_slot = resuming and bug("resume_without_slot") and run.profile == "resumable"
        if not skip_slot and not self.slots.acquire():
            return
        self._turn()

    def _turn(self) -> None:
        run = dataclasses.replace(self.run, state="running", attempts=self.run.attempts + 1)
        self._save(run)
        env = {**os.environ, **run.engine_env}
        reply = run.queued_reply
        sticky = run.profile == "sticky_process" and run.mode == "interactive"
        over = (
            turn_over(run.engine, run.gemini_format)
            if sticky or has_end_signal(run.engine, run.gemini_format)
            else None
        )
        if sticky and self.resident is not None and reply is not None:
            if not self.resident.send(engine_commands.stdin_line(run.engine, str(reply["text"]))):
                self._finish(Decision("failed", "INTERACTION_PROCESS_LOST", "INTERACTION_PROCESS_LOST"))
                return
            proc = self.resident
        elif sticky and reply is not None:
            # The resident process is gone (e.g. after a restart): the session cannot continue.
            self._finish(Decision("failed", "INTERACTION_PROCESS_LOST", "INTERACTION_PROCESS_LOST"))
            return
        else:
            text = str(reply["text"]) if reply is not None else run.prompt
            session = run.session_id if reply is not None else None
            rundir = Path(run.rundir)
            argv = engine_commands.build(
                Path(run.engine_bin), run.engine, run.mode, text, session, run.gemini_format, rundir, sticky
            )
            proc = EngineProcess(argv, rundir, env, resident=sticky)
            if sticky:
                self.resident = proc
                if engine_commands.stdin_messages(run.engine):
                    # started without a prompt: the first message is a line on its stdin too
                    proc.send(engine_commands.stdin_line(run.engine, text), new_turn=False)
        raw = proc.wait_turn(run.turn_timeout, over)
        turn_audit.save_turn(run, self.run.attempts, raw)
        evidence = evaluate(run.engine, run.gemini_format, raw, run.output_schema, run.mode)
        session_id = evidence.transcript.session_id or run.session_id
        self.run = dataclasses.replace(self.run, session_id=session_id, queued_reply=None)
        decision = decide(
            Evidence(
                mode=run.mode,
                process_error=evidence.process_error,
                marker=evidence.marker,
                output=evidence.output,
                attempt=self.run.attempts,
                max_attempt=run.max_attempt,
            )
        )
        gate_state = decision.state
        if decision.state == "waiting_user":
            if evidence.hints.found and evidence.hints.hint is None and bug("malformed_hint_fails_run"):
                decision = Decision("failed", "ASK_USER_INVALID", "ASK_USER_INVALID")
            elif run.profile != "sticky_process" and session_id is None:
                decision = Decision("failed", "SESSION_RESUME_FAILED", "SESSION_RESUME_FAILED")
            elif sticky and (self.resident is None or not self.resident.alive()):
                decision = Decision("failed", "INTERACTION_PROCESS_LOST", "INTERACTION_PROCESS_LOST")
        record = {
            "attempt": self.run.attempts,
            "state": decision.state,
            "gate_state": gate_state,
            "reason_code": decision.reason_code,
            "marker": evidence.marker,
            "output_valid": evidence.output.valid,
            "process_error": evidence.process_error,
        }
        self.run = dataclasses.replace(self.run, decisions=(*self.run.decisions, record))
        if decision.state == "waiting_user":
            final = evidence.hints.rest if evidence.transcript.replies else ""
            self._wait(final, evidence.hints.hint)
        else:
            self._finish(decision)

    def _wait(self, message: str, hint: Any) -> None:
        run = self.run
        previous = run.pending or (run.history[-1] if run.history else None)
        baseline = pending_baseline.baseline(run.attempts, message, hint, previous)
        now = self.clock.now()
        deadline = now + run.session_timeout
        if bug("deadline_from_run_start"):
            deadline = run.started_at + run.session_timeout
        if bug("deadline_not_rearmed") and run.wait_deadline is not None:
            deadline = run.wait_deadline
        row = {
            "interaction_id": baseline["interaction_id"],
            "prompt": baseline["prompt"],
            "response": None,
            "asked_at": self.clock.iso(),
        }
        run = dataclasses.replace(
            run,
            state="waiting_user",
            reason_code="WAITING_FOR_USER",
            error_code=None,
            pending=baseline,
            wait_deadline=deadline,
            history=(*run.history, row),
        )
        self._save(run)  # persisted first: the event below is derived from the stored pending
        stored = self.run.pending or {}
        data = {
            "interaction_id": stored.get("interaction_id"),
            "prompt": stored.get("prompt"),
            "kind": stored.get("kind"),
        }
        if bug("event_from_hint") and hint is not None:
            data = {"interaction_id": hint.interaction_id, "prompt": hint.prompt, "kind": hint.kind}
        run = self.run.with_event("user.input.required", data)
        keep_slot = run.profile == "sticky_process"
        if bug("resumable_keeps_slot"):
            keep_slot = True
        if bug("sticky_releases_slot"):
            keep_slot = False
        if not keep_slot:
            self.slots.release()
        self._save(run)

    def _finish(self, decision: Decision) -> None:
        self._kill_resident()
        self.slots.release()
        run = dataclasses.replace(
            self.run,
            state=decision.state,
            reason_code=decision.reason_code,
            error_code=decision.error_code,
            warnings=decision.warnings,
            data=decision.data,
            pending=None,
            wait_deadline=None,
        )
        if decision.state == "succeeded":
            run = run.with_event(
                "conversation.completed",
                {"reason_code": decision.reason_code, "warnings": list(decision.warnings)},
            )
        else:
            run = run.with_event("conversation.failed", {"error_code": decision.error_code})
        self._save(run)

    def _kill_resident(self) -> None:
        if self.resident is not None:
            self.resident.stop()
            self.resident = None

    # ---- actions ------------------------------------------------------------------------------
    def reply(self, text: str, interaction_id: int | None, automatic: bool = False) -> ReplyResult:
        run = self.run
        if run.state != "waiting_user":
            return ReplyResult(False, "not_waiting")
        current = run.pending
        if current is None:
            return ReplyResult(False, "no_pending")
        if (
            interaction_id is not None
            and interaction_id != current["interaction_id"]
            and not bug("stale_reply_accepted")
        ):
            return ReplyResult(False, "stale_interaction")
        history = [dict(row) for row in run.history]
        index = len(history) - 1
        if bug("reply_attached_to_first_question"):
            index = 0
        if index >= 0:
            stamp = None if bug("history_no_timestamp") else self.clock.iso()
            history[index].update(response=text, replied_at=stamp, timestamp=stamp, automatic=automatic)
        run = dataclasses.replace(
            run,
            state="queued",
            reason_code=None,
            pending=None,
            wait_deadline=run.wait_deadline if bug("deadline_not_rearmed") else None,
            history=tuple(history),
            queued_reply={"text": text, "automatic": automatic},
        )
        self._save(run)
        self._save(
            self.run.with_event(
                "user.input.replied",
                {"interaction_id": current["interaction_id"], "response": text, "automatic": automatic},
            )
        )
        if run.profile == "sticky_process" and not bug("sticky_releases_slot"):
            pass  # the slot is still held: the resident process continues at once
        self.pump()
        return ReplyResult(True, None)

    def cancel(self) -> bool:
        if self.run.state in TERMINAL:
            return False
        if bug("cancel_ignored_while_waiting") and self.run.state == "waiting_user":
            return True  # only a running engine is "cancelled" here
        self._kill_resident()
        self.slots.release()
        run = dataclasses.replace(
            self.run,
            state="canceled",
            error_code="CANCELED_BY_USER",
            reason_code="CANCELED_BY_USER",
            pending=None,
            wait_deadline=None,
        )
        self._save(run.with_event("conversation.canceled", {"error_code": "CANCELED_BY_USER"}))
        return True

    def advance_clock(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self._save(self.run)
        self.check_deadline()

    def check_deadline(self) -> None:
        run = self.run
        if run.state != "waiting_user" or run.wait_deadline is None or self.clock.now() <= run.wait_deadline:
            return
        policy = (run.pending or {}).get("default_decision_policy") or pending_baseline.DEFAULT_POLICY
        auto_text = (
            f"No reply within {int(run.session_timeout)} s: "
            f"decide by the default decision policy ({policy}) and continue."
        )
        if run.profile == "sticky_process":
            if run.strict or bug("sticky_timeout_ignores_strict_false"):
                self._finish(Decision("failed", "INTERACTION_WAIT_TIMEOUT", "INTERACTION_WAIT_TIMEOUT"))
                return
            self.reply(auto_text, None, automatic=True)
            return
        if run.strict and not bug("auto_decision_when_strict"):
            return  # resumable + strict: wait for the user (or a cancel), however long
        self.reply(auto_text, None, automatic=True)

    def restart(self) -> Orchestrator:
        """The orchestrator process dies and comes back on its store: memory is lost."""
        self._kill_resident()
        in_memory_pending = self.run.pending
        self.store.close()
        store = Store(self.store.path)
        doc = store.load()
        assert doc is not None
        run = Run.from_doc(doc)
        self.slots.release()
        fresh = Orchestrator(store, run, self.slots)
        if bug("restart_loses_pending") and in_memory_pending is not None:
            fresh.run = dataclasses.replace(run, pending=None)
        if run.state == "waiting_user" and run.profile == "sticky_process" and run.mode == "interactive":
            fresh._finish(Decision("failed", "INTERACTION_PROCESS_LOST", "INTERACTION_PROCESS_LOST"))
        elif run.state == "running":
            fresh._finish(
                Decision("failed", "ORCHESTRATOR_RESTART_INTERRUPTED", "ORCHESTRATOR_RESTART_INTERRUPTED")
            )
        return fresh

    def settle(self) -> None:
        self.pump()

    def close(self) -> None:
        self._kill_resident()
        self.slots.release()
        self.store.close()

    def observe(self) -> dict[str, Any]:
        run = self.run
        answered = [row for row in run.history if row.get("response") is not None]
        return {
            "state": run.state,
            "error_code": run.error_code,
            "warnings": list(run.warnings),
            "reason_code": run.reason_code,
            "data": run.data,
            "pending": run.pending,
            "attempts": run.attempts,
            "history": answered,
            "events": list(run.events),
            "slot_held": self.slots.held_by_run,
            "patch": None,
            "extra": {
                "decisions": list(run.decisions),
                "session_id": run.session_id,
                "audit": turn_audit.classify(run),
            },
        }
