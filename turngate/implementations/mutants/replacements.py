"""The replacement functions the mutants are made of: each a small, deliberate departure from the spec.

Every factory here takes the original attribute and returns its replacement;
`registry.py` says which attribute, and which spec sentences the departure breaks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from turngate.engines.readers import RawLine, Reasoning, ToolCall, ToolResult, Transcript, UserEcho
from turngate.implementations.reference import gate
from turngate.implementations.reference.gate import Decision, TurnEvidence
from turngate.implementations.reference.marker import MarkerEvidence, MarkerHit

Factory = Callable[[Any], Any]


# The gate ------------------------------------------------------------------------------------


def gate_rewrite(rewrite: Callable[[TurnEvidence, Decision], Decision]) -> Factory:
    """``gate.decide`` followed by ``rewrite(evidence, decision)``."""

    def make(original: Callable[[TurnEvidence], Decision]) -> Callable[[TurnEvidence], Decision]:
        def decide(evidence: TurnEvidence) -> Decision:
            return rewrite(evidence, original(evidence))

        return decide

    return make


def when_rule(rule: str, change: Callable[[TurnEvidence, Decision], Decision]) -> Factory:
    """Change the decision only where the decision table's row ``rule`` fired."""
    return gate_rewrite(
        lambda evidence, decision: change(evidence, decision) if decision.rule == rule else decision
    )


def waits(evidence: TurnEvidence, decision: Decision) -> Decision:
    return Decision("waiting_user", gate.WAITING_FOR_USER, decision.rule)


def fails(code: str) -> Callable[[TurnEvidence, Decision], Decision]:
    def change(evidence: TurnEvidence, decision: Decision) -> Decision:
        return Decision("failed", gate.OUTPUT_INVALID, decision.rule, error_code=code)

    return change


def succeeds(evidence: TurnEvidence, decision: Decision) -> Decision:
    return Decision("succeeded", gate.DONE_MARKER_FOUND, decision.rule)


def max_attempt_by_greater_than(evidence: TurnEvidence, decision: Decision) -> Decision:
    """``attempt_number > max_attempt`` where the spec says ``>=``."""
    if (
        decision.rule == "interactive-max-attempt-exceeded"
        and evidence.attempt_number == evidence.max_attempt
    ):
        return waits(evidence, decision)
    return decision


def max_attempt_defaults_to(limit: int) -> Callable[[TurnEvidence, Decision], Decision]:
    """A limit where the spec says none: absent max_attempt means unbounded (Decision 6)."""

    def change(evidence: TurnEvidence, decision: Decision) -> Decision:
        unbounded = decision.rule == "interactive-no-evidence" and evidence.max_attempt is None
        if unbounded and evidence.attempt_number >= limit:
            code = gate.INTERACTIVE_MAX_ATTEMPT_EXCEEDED
            return Decision("failed", code, "interactive-max-attempt-exceeded", error_code=code)
        return decision

    return change


def max_attempt_checked_first(evidence: TurnEvidence, decision: Decision) -> Decision:
    """The max_attempt stop applied before any evidence, in every mode (Decision 6: interactive only)."""
    limit = evidence.max_attempt
    reached = limit is not None and evidence.attempt_number >= limit
    if evidence.mode == "auto" and evidence.process.ok and reached:
        code = gate.INTERACTIVE_MAX_ATTEMPT_EXCEEDED
        return Decision("failed", code, "interactive-max-attempt-exceeded", error_code=code)
    return decision


def auto_requires_marker(evidence: TurnEvidence, decision: Decision) -> Decision:
    if decision.rule == "auto-output-valid" and not evidence.marker_found:
        return Decision("failed", gate.OUTPUT_INVALID, decision.rule, error_code="DONE_MARKER_MISSING")
    return decision


def process_ignored_when_output_valid(
    original: Callable[[TurnEvidence], Decision],
) -> Callable[[TurnEvidence], Decision]:
    """A gate that trusts the text: a failed engine turn whose output is valid is decided as if the
    process had ended well (a marker printed before turn.failed completes the run)."""

    def decide(evidence: TurnEvidence) -> Decision:
        if not evidence.process.ok and evidence.output_valid:
            return original(replace(evidence, process=gate.PROCESS_OK))
        return original(evidence)

    return decide


def decoded_per_read(original: Callable[[Any, str, bytes], None]) -> Callable[[Any, str, bytes], None]:
    """``_Capture.add`` keeping each chunk as a reader that decodes every read on its own leaves it."""

    def add(self: Any, name: str, chunk: bytes) -> None:
        original(self, name, chunk.decode("utf-8", errors="replace").encode("utf-8"))

    return add


def long_lines_dropped(limit: int) -> Factory:
    """``assess`` given stdout without the lines longer than ``limit`` bytes, as a line reader with a
    bounded buffer skips them."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def assess(turn: Any, stdout: bytes, stderr: bytes, end: Any) -> Any:
            kept = b"".join(line for line in stdout.splitlines(keepends=True) if len(line) <= limit)
            return original(turn, kept, stderr, end)

        return assess

    return make


def messages_joined(
    original: Callable[[Transcript], tuple[str, ...]],
) -> Callable[[Transcript], tuple[str, ...]]:
    """``Transcript.assistant_messages`` as one message: every reply text of the turn, joined."""

    def assistant_messages(self: Transcript) -> tuple[str, ...]:
        messages = original(self)
        return ("\n".join(messages),) if messages else ()

    return assistant_messages


def any_turn_end_ends_the_turn(
    original: Callable[[str, Transcript], bool],
) -> Callable[[str, Transcript], bool]:
    """``processes.turn_over`` taking every end-of-turn event for the turn's end, whatever its reason."""

    def turn_over(engine: str, transcript: Transcript) -> bool:
        return transcript.turn_end() is not None

    return turn_over


def always_soft_completion(original: Callable[..., bool]) -> Callable[..., bool]:
    def soft_completion_allowed(reading: str, *, ask_user_signaled: bool) -> bool:
        return True

    return soft_completion_allowed


# The done-marker detector --------------------------------------------------------------------


def echoes_as_evidence(*kinds: str) -> Factory:
    """The live gate's marker evidence plus markers in these echoes: tool, reasoning, echo, stderr."""

    def text_of(event: object) -> str | None:
        match event:
            case ToolCall() if "tool" in kinds:
                return json.dumps(event.input, ensure_ascii=False)
            case ToolResult() if "tool" in kinds:
                return event.output
            case Reasoning() if "reasoning" in kinds:
                return event.text
            case UserEcho() if "echo" in kinds:
                return event.text
            case RawLine() if "stderr" in kinds and event.stream == "stderr":
                return event.text
        return None

    def make(original: Callable[[Transcript], MarkerEvidence]) -> Callable[[Transcript], MarkerEvidence]:
        from turngate.implementations.reference.marker import find_markers

        def marker_evidence(transcript: Transcript) -> MarkerEvidence:
            found = list(original(transcript).hits)
            for event in transcript.events:
                text = text_of(event)
                if text is not None:
                    found.extend((0, hit) for hit in find_markers(text))
            return MarkerEvidence(tuple(found))

        return marker_evidence

    return make


def lenient_marker(pattern: str) -> Factory:
    """A detector that also takes look-alikes of ``"__SKILL_DONE__": true`` for the marker."""
    compiled = re.compile(pattern)

    def make(original: Callable[[str], tuple[MarkerHit, ...]]) -> Callable[[str], tuple[MarkerHit, ...]]:
        def find_markers(text: str) -> tuple[MarkerHit, ...]:
            return tuple(
                MarkerHit("escaped" if match.group(1) else "plain", match.start(), match.end())
                for match in compiled.finditer(text)
            )

        return find_markers

    return make


def marker_forms_missed(*forms: str) -> Factory:
    def make(original: Callable[[str], tuple[MarkerHit, ...]]) -> Callable[[str], tuple[MarkerHit, ...]]:
        def find_markers(text: str) -> tuple[MarkerHit, ...]:
            return tuple(hit for hit in original(text) if hit.form not in forms)

        return find_markers

    return make


def audit_blind_to_escaped(
    original: Callable[[Transcript], MarkerEvidence],
) -> Callable[[Transcript], MarkerEvidence]:
    """The audit's own detector, which misses the escaped form the live gate accepts (Decision 3.1)."""

    def marker_evidence(transcript: Transcript) -> MarkerEvidence:
        return MarkerEvidence(tuple(item for item in original(transcript).hits if item[1].form != "escaped"))

    return marker_evidence


def detector_finds_nothing(
    original: Callable[[Transcript], MarkerEvidence],
) -> Callable[[Transcript], MarkerEvidence]:
    def marker_evidence(transcript: Transcript) -> MarkerEvidence:
        return MarkerEvidence(())

    return marker_evidence


# The turn as a whole (lifecycle's `assess`) --------------------------------------------------


def assess_rewrite(rewrite: Callable[[Any, Any, Callable[..., Any], tuple[Any, ...]], Any]) -> Factory:
    """``assess`` followed by ``rewrite(turn_input, assessment, original, (stdout, stderr, end))``."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def assess(turn: Any, stdout: bytes, stderr: bytes, end: Any) -> Any:
            return rewrite(turn, original(turn, stdout, stderr, end), original, (stdout, stderr, end))

        return assess

    return make


def _as(assessment: Any, decision: Decision) -> Any:
    from turngate.implementations.reference.pending import build_pending

    pending = None
    if decision.state == "waiting_user":
        pending = build_pending(
            attempt_number=assessment.evidence.attempt_number, final_message=assessment.final_message
        )
    return replace(assessment, decision=decision, pending=pending)


def malformed_hint_fails(turn: Any, assessment: Any, original: Any, raw: tuple[Any, ...]) -> Any:
    if (
        assessment.hint is not None
        and not assessment.hint.clean
        and assessment.decision.state == "waiting_user"
    ):
        return _as(
            assessment, Decision("failed", gate.OUTPUT_INVALID, "mutant", error_code="ASK_USER_INVALID")
        )
    return assessment


def waiting_needs_clean_hint(turn: Any, assessment: Any, original: Any, raw: tuple[Any, ...]) -> Any:
    if assessment.decision.state == "waiting_user" and (assessment.hint is None or not assessment.hint.clean):
        return _as(
            assessment, Decision("failed", gate.OUTPUT_INVALID, "mutant", error_code="ASK_USER_REQUIRED")
        )
    return assessment


def clean_hint_forces_waiting(turn: Any, assessment: Any, original: Any, raw: tuple[Any, ...]) -> Any:
    if assessment.hint is not None and assessment.hint.clean and assessment.decision.state == "succeeded":
        return _as(assessment, Decision("waiting_user", gate.WAITING_FOR_USER, "mutant"))
    return assessment


def unknown_kind_fails(turn: Any, assessment: Any, original: Any, raw: tuple[Any, ...]) -> Any:
    from turngate.implementations.reference.pending import KINDS

    hint = assessment.hint
    if hint is not None and hint.clean and hint.fields.get("kind", "open_text") not in KINDS:
        return _as(
            assessment, Decision("failed", gate.OUTPUT_INVALID, "mutant", error_code="ASK_USER_KIND_UNKNOWN")
        )
    return assessment


def hint_id_counts_attempts(turn: Any, assessment: Any, original: Any, raw: tuple[Any, ...]) -> Any:
    """The hint's own interaction_id taken for the attempt number (an engine repeating it never stops)."""
    hint = assessment.hint
    hint_id = hint.fields.get("interaction_id") if hint is not None and hint.clean else None
    if isinstance(hint_id, int) and hint_id >= 1 and hint_id != turn.attempt_number:
        counted = original(replace(turn, attempt_number=hint_id), *raw)
        # The pending keeps the backend's id: only the stop rule counts the hint's.
        return _as(replace(counted, evidence=assessment.evidence), counted.decision)
    return assessment


# The pending interaction ----------------------------------------------------------------------


def pending_rewrite(change: Callable[[Any, str | None], Any]) -> Factory:
    """``build_pending`` followed by ``change(pending, final_message)``."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        # The reference's own keywords (the turn's `scan_hints`) go through untouched.
        def build_pending(*, attempt_number: int, final_message: str | None, **keywords: Any) -> Any:
            pending = original(attempt_number=attempt_number, final_message=final_message, **keywords)
            return change(pending, final_message)

        return build_pending

    return make


def hint_id_as_pending_id(pending: Any, final_message: str | None) -> Any:
    from turngate.implementations.reference.hints import read_hint

    hint = read_hint(final_message or "")
    hint_id = hint.fields.get("interaction_id") if hint is not None else None
    return replace(pending, interaction_id=hint_id) if isinstance(hint_id, int) else pending


def payload_with(**fields: Any) -> Factory:
    """The pending as shown (``to_json``) with these fields overwritten; the store keeps its own."""

    def make(original: Callable[[Any], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
        def to_json(self: Any) -> dict[str, Any]:
            return {**original(self), **fields}

        return to_json

    return make


def drop_from_payload(*names: str) -> Factory:
    def make(original: Callable[[Any], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
        def to_json(self: Any) -> dict[str, Any]:
            return {key: value for key, value in original(self).items() if key not in names}

        return to_json

    return make


# The protocol events ---------------------------------------------------------------------------


def required_event_from_reply() -> tuple[Factory, Factory]:
    """``user.input.required`` built by parsing the turn's final message for its ask_user hint (the
    hint's own id and prompt; nothing where there is none), not from the persisted pending (000,
    Architecture Notes 2). Two patches: one keeps each run's final message, one builds the event."""
    from turngate.implementations.reference.hints import read_hint

    finals: dict[str, str] = {}

    def keep(original: Callable[..., None]) -> Callable[..., None]:
        def assistant_final(tx: Any, run: Any, attempt: int, at: float, text: str) -> None:
            finals[run.run_id] = text
            original(tx, run, attempt, at, text)

        return assistant_final

    def build(original: Callable[..., None]) -> Callable[..., None]:
        def waiting(tx: Any, run: Any, attempt: int, at: float) -> None:
            hint = read_hint(finals.get(run.run_id, ""))
            fields = dict(hint.fields) if hint is not None else {}
            data = {name: fields.get(name) for name in ("interaction_id", "kind", "prompt", "options")}
            tx.append_event(run.run_id, "user.input.required", attempt, at, data)

        return waiting

    return keep, build


# The lifecycle --------------------------------------------------------------------------------


def resumed_without_a_slot(original: Callable[[Any], None]) -> Callable[[Any], None]:
    """``_dispatch`` that also starts a run resumed by a reply when no slot is free: the slot would be
    taken after entering running, if at all (001: it must be taken before)."""

    def _dispatch(self: Any) -> None:
        original(self)
        for run in self.store.runs(states=("queued",)):
            if run.attempt_count > 0 and run.run_id not in self._workers:
                self._start_turn(run)

    return _dispatch


def keeps_slot(rule: Callable[[Any, bool], bool]) -> Factory:
    """``Orchestrator._keeps_slot`` changed by ``rule(run, reference_answer)``."""

    def make(original: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
        def _keeps_slot(self: Any, run: Any) -> bool:
            return rule(run, original(self, run))

        return _keeps_slot

    return make


def deadline_policy(choose: Callable[[Any], tuple[str, str | None]]) -> Factory:
    """``check_deadlines`` choosing, per timed-out run, (action, error code).

    Actions: ``auto`` (an automatic reply), ``auto-fresh-session`` (an automatic reply played
    in a new session, not a resume turn), ``wait``, ``fail``, ``fail-keep-process``."""

    def make(original: Callable[[Any], None]) -> Callable[[Any], None]:
        from turngate.implementations.reference.pending import auto_decision_reply, pending_from_json

        def check_deadlines(self: Any) -> None:
            doomed = []
            with self._lock:
                for run in self.store.runs(states=("waiting_user",)):
                    if run.wait_deadline_at is None or self.clock.now(run.run_id) < run.wait_deadline_at:
                        continue
                    action, code = choose(run)
                    if action.startswith("auto"):
                        if action == "auto-fresh-session":  # the session is forgotten: no resume turn
                            with self.store.transaction() as tx:
                                run = tx.update_run(run, session_id=None)
                        reply = auto_decision_reply(pending_from_json(run.pending))
                        self._continue(run, reply, automatic=True)
                    elif action.startswith("fail"):
                        self._finish(run, "failed", code, "wait deadline passed", attempt=run.attempt_count)
                        resident = (
                            None if action == "fail-keep-process" else self._residents.pop(run.run_id, None)
                        )
                        if resident is not None:
                            doomed.append((run.run_id, resident))
            for run_id, resident in doomed:
                self._stop_resident(run_id, resident, "timeout")
            with self._lock:
                self._dispatch()

        return check_deadlines

    return make


def reference_deadline(run: Any) -> tuple[str, str | None]:
    """What the reference does when a wait deadline passes (lifecycle.check_deadlines)."""
    if not run.require_user_reply:
        return "auto", None
    if run.profile == "sticky_process":
        return "fail", "INTERACTION_WAIT_TIMEOUT"
    return "wait", None


def deadline_except(profile: str, strict: bool, action: tuple[str, str | None]) -> Factory:
    return deadline_policy(
        lambda run: (
            action
            if run.profile == profile and bool(run.require_user_reply) == strict
            else reference_deadline(run)
        )
    )


def reply_to_any_id(original: Callable[..., Any]) -> Callable[..., Any]:
    """A reply is taken for the pending interaction whatever interaction_id it names."""

    def reply(self: Any, run_id: str, interaction_id: int, response: str, **options: Any) -> Any:
        run = self._run(run_id)
        if run.pending is not None:
            interaction_id = int(run.pending["interaction_id"])
        return original(self, run_id, interaction_id, response, **options)

    return reply


def reply_must_match_options(original: Callable[..., Any]) -> Callable[..., Any]:
    """A reply to a pending with options must be one of them (004: any free text is accepted)."""

    def reply(self: Any, run_id: str, interaction_id: int, response: str, **keywords: Any) -> Any:
        from turngate.implementations.reference.lifecycle import ReplyOutcome

        run = self._run(run_id)
        options = (run.pending or {}).get("options") or []
        allowed = {str(option.get("value")) for option in options} | {
            str(option.get("label")) for option in options
        }
        if options and response not in allowed:
            return ReplyOutcome(False, run.state, "REPLY_NOT_AN_OPTION")
        return original(self, run_id, interaction_id, response, **keywords)

    return reply


def waiting_without_pending(original: Callable[..., None]) -> Callable[..., None]:
    """waiting_user entered, but the pending interaction is not kept: no reply can be given."""

    def _apply(self: Any, run_id: str, attempt: int, turn: Any, *judged: Any) -> None:
        original(self, run_id, attempt, turn, *judged)
        run = self._run(run_id)
        if run.state == "waiting_user":
            with self.store.transaction() as tx:
                tx.update_run(run, pending=None)

    return _apply


def answer_not_kept(original: Callable[..., None]) -> Callable[..., None]:
    """The reply's text is not kept: the history row says it was answered, with an empty response.

    (Leaving the row's response unset would not do: a history that does not say is
    `unverified`, as for a target whose rows are rebuilt from events.)"""

    def answer(
        self: Any, run_id: str, interaction_id: int, response: str, at: float, *, automatic: bool
    ) -> None:
        original(self, run_id, interaction_id, "", at, automatic=automatic)

    return answer


def fresh_process_for_sticky_reply(original: Callable[..., Any]) -> Callable[..., Any]:
    """A sticky run's reply is played by a new engine process instead of the resident one."""

    def _play(self: Any, run: Any, attempt: int, argv: tuple[str, ...], reply: str | None) -> Any:
        if run.profile != "sticky_process" or attempt == 1:
            return original(self, run, attempt, argv, reply)
        from turngate.implementations.reference.commands import build_command
        from turngate.implementations.reference.processes import OneShot

        with self._lock:
            resident = self._residents.pop(run.run_id, None)
        if resident is not None:
            resident.kill("replaced")
        fresh = build_command(run.engine, run.mode, prompt=reply or "")
        return OneShot(fresh, cwd=Path(run.run_dir), env=self.engines.process_env()).wait(
            self.engines.turn_timeout_sec
        )

    return _play


def waits_for_exit(original: Callable[..., Any]) -> Callable[..., Any]:
    """The turn is not watched for its end-of-turn signal: it lasts until the engine exits or the
    watchdog fires."""

    def wait(self: Any, timeout: float, *, engine: str | None = None, **options: Any) -> Any:
        return original(self, timeout, **options)

    return wait


def kills_when_pipes_close(original: Callable[..., Any]) -> Callable[..., Any]:
    """No linger: an engine that closed its pipes is killed at once, and its end read as the kill
    (signal 9) rather than judged by its stream."""

    def wait(self: Any, timeout: float, *, engine: str | None = None, **options: Any) -> Any:
        from turngate.implementations.reference.outcome import ProcessEnd

        if engine is None:  # not an engine's turn (its --help, read for the profile): as it was
            return original(self, timeout, **options)
        turn = original(self, timeout, engine=engine, linger_sec=0.0)
        if turn.end == ProcessEnd(None):  # stopped by the orchestrator once its turn was over
            return replace(turn, end=ProcessEnd(None, signal=9))
        return turn

    return wait


# Command lines and the skill patch ------------------------------------------------------------


def drop_flag(engine: str, flag: str, *, mode: str | None = None, resume: bool) -> Factory:
    """Leave ``flag`` out of ``engine``'s command line in ``mode`` (any when None), first or resume turn."""

    def make(original: Callable[..., tuple[str, ...]]) -> Callable[..., tuple[str, ...]]:
        def build_command(engine_name: str, run_mode: str, **options: Any) -> tuple[str, ...]:
            argv = original(engine_name, run_mode, **options)
            resumed = options.get("resume_id") is not None
            if engine_name == engine and (mode is None or run_mode == mode) and resumed == resume:
                return tuple(word for word in argv if word != flag)
            return argv

        return build_command

    return make


def patch_rewrite(change: Callable[[str, str], str]) -> Factory:
    """``build_patch`` followed by ``change(mode, text)``."""

    def make(original: Callable[..., str]) -> Callable[..., str]:
        def build_patch(mode: str, **options: Any) -> str:
            return change(mode, original(mode, **options))

        return build_patch

    return make


def _module(name: str, text: str) -> str:
    return f"<!-- turngate:patch:{name} -->\n{text}"


def _modules(patch: str) -> list[str]:
    return patch.rstrip("\n").split("\n\n<!-- turngate:patch:")


def _join(modules: list[str]) -> str:
    return "\n\n<!-- turngate:patch:".join(modules) + "\n"


def swap_format_and_schema(mode: str, patch: str) -> str:
    modules = _modules(patch)
    names = [module.split(" -->", 1)[0].rsplit(":", 1)[-1] for module in modules]
    if "output-format-contract" in names and "output-schema" in names:
        first, second = names.index("output-format-contract"), names.index("output-schema")
        # runtime-enforcement is always first, so neither is the piece that carries the full marker line
        modules[first], modules[second] = modules[second], modules[first]
    return _join(modules)


def foreign_mode_module(into: str, *, keep_own: bool) -> Callable[[str, str], str]:
    """In runs of mode ``into``, the other mode's module: next to its own (``keep_own``) or instead of it."""
    from turngate.implementations.reference.patch import build_patch

    other_mode = "auto" if into == "interactive" else "interactive"

    def marker(mode: str) -> str:
        return f"<!-- turngate:patch:{mode}-mode -->"

    def change(mode: str, patch: str) -> str:
        if mode != into:
            return patch
        other = build_patch(other_mode, artifacts=(), output_schema=None)
        other_module = other[other.index(marker(other_mode)) :].rstrip("\n")
        head, _, own = patch.rstrip("\n").rpartition(marker(mode))
        if keep_own:
            return f"{head}{other_module}\n\n{marker(mode)}{own}\n"
        return f"{head}{other_module}\n"

    return change


FORCED_ASK_USER_JSON = """
- Every question to the user MUST be a JSON object of this shape, and nothing else:
  {"outcome": "ask_user", "interaction": {"interaction_id": 1, "kind": "open_text", "prompt": "..."}}"""

JSON_HINT_EXAMPLE = """
- To help the interface, you may also write the question as
  {"outcome": "ask_user", "interaction": {"prompt": "...", "kind": "choose_one"}}"""

AUTO_QUESTIONS = """
- If you must ask the user, reply with ask_user: {prompt: ..., kind: choose_one, options: [...]}"""


def append_to(mode_wanted: str, text: str) -> Callable[[str, str], str]:
    def change(mode: str, patch: str) -> str:
        return patch.rstrip("\n") + text + "\n" if mode == mode_wanted else patch

    return change


def without_marker_guidance(mode: str, patch: str) -> str:
    """The interactive patch says nothing about __SKILL_DONE__ (nor when not to write it)."""
    if mode != "interactive":
        return patch
    kept = [line for line in patch.split("\n") if "__SKILL_DONE__" not in line]
    return "\n".join(kept).replace("it is how this run knows you are done.", "")


def _never(value: object) -> bool:
    return False


def nothing_is_an_envelope(original: Callable[[object], bool]) -> Callable[[object], bool]:
    return _never


def hints_not_cut(original: Callable[[str], str]) -> Callable[[str], str]:
    def strip_hints(text: str) -> str:
        return text

    return strip_hints


def output_sees_hints(original: Callable[..., Any]) -> Callable[..., Any]:
    """``check_output`` handed a scan whose text keeps every hint: the output check reads them too.

    The turn scans the hints once and passes the scan (`scan_hints`), so the output
    check never calls `strip_hints` itself; the scan's ``stripped`` text is what it reads.
    """

    def check_output(final_message: str | None, **keywords: Any) -> Any:
        scan = keywords.get("hints")
        if scan is not None:
            keywords["hints"] = replace(scan, stripped=final_message or "")
        return original(final_message, **keywords)

    return check_output


def constant(value: Any) -> Factory:
    return lambda original: value


# Skill packages --------------------------------------------------------------------------------


def max_attempt_unchecked(original: Callable[..., Any]) -> Callable[..., Any]:
    """runner.json parsed as if an invalid max_attempt were absent: the package is accepted."""

    def parse_manifest(text: str, file: Any) -> Any:
        import json

        try:
            document = json.loads(text)
        except ValueError:
            return original(text, file)
        value = document.get("max_attempt") if isinstance(document, dict) else None
        valid = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        if value is None or valid:
            return original(text, file)
        return original(
            json.dumps({name: item for name, item in document.items() if name != "max_attempt"}), file
        )

    return parse_manifest
