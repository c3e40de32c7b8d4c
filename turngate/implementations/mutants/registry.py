"""The spec mutants: name -> the sentences it breaks -> the patch that breaks them.

Sentence IDs are those of ``turngate/judge/catalog/sentences.yaml``. A mutant is
*killed* when some case of the catalog reports a difference citing one of its
sentences (`turngate.tools.mutation.score`). Sentences with no mutant, and why, are in
``docs/mutants.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Final

from turngate.implementations.mutants import replacements as p
from turngate.implementations.mutants.model import Mutant, Replacement

# Where each reference function is looked up: patch it there.
GATE: Final = "turngate.implementations.reference.gate:decide"
SOFT_READING: Final = "turngate.implementations.reference.gate:soft_completion_allowed"
LIVE_DETECTOR: Final = "turngate.implementations.reference.turn:marker_evidence"
AUDIT_DETECTOR: Final = "turngate.implementations.reference.audit:marker_evidence"
FIND_MARKERS: Final = "turngate.implementations.reference.marker:find_markers"
ASSESS: Final = "turngate.implementations.reference.lifecycle:assess"
BUILD_PENDING: Final = "turngate.implementations.reference.turn:build_pending"
PENDING_JSON: Final = "turngate.implementations.reference.pending:Pending.to_json"
ORCHESTRATOR: Final = "turngate.implementations.reference.lifecycle:Orchestrator"
BUILD_COMMAND: Final = "turngate.implementations.reference.lifecycle:build_command"
BUILD_PATCH: Final = "turngate.implementations.reference.lifecycle:build_patch"
ONE_SHOT_WAIT: Final = "turngate.implementations.reference.processes:OneShot.wait"
CAPTURE_ADD: Final = "turngate.implementations.reference.processes:_Capture.add"
ASSISTANT_MESSAGES: Final = "turngate.engines.readers.events:Transcript.assistant_messages"
TURN_OVER: Final = "turngate.implementations.reference.processes:turn_over"

# Sentence ID prefixes.
LIFE: Final = "interactive-run-lifecycle"
TURN: Final = "interactive-engine-turn-protocol"
POLICY: Final = "interactive-decision-policy"
CLI: Final = f"{TURN}/adapter-cli-command"
DONE_ESCAPED: Final = f"{TURN}/completion-by-mode/escaped-marker-detection"
D31: Final = "design/decision-3.1/unified-detector"
D4: Final = "design/decision-4/ask-user-optional-enrichment"
D5: Final = "design/decision-5/backend-pending-baseline"
D6: Final = "design/decision-6/max-attempt-interactive-only"

# Look-alikes of the marker "__SKILL_DONE__": true (the plain and the escaped form, as marker.py).
_KEY: Final = r'(\\?)"__SKILL_DONE__\\?"[ \t\r\n]*:[ \t\r\n]*'
_END: Final = r"(?![A-Za-z0-9_])"


def _mutant(
    name: str,
    sentences: tuple[str, ...],
    summary: str,
    *replacements: Replacement,
    reading: str | None = None,
) -> Mutant:
    return Mutant(name, sentences, summary, replacements, reading)


def _argv(
    name: str, engine: str, flag: str, sentences: tuple[str, ...], *, mode: str | None, resume: bool
) -> Mutant:
    where = "resume turns" if resume else f"{mode} mode"
    return _mutant(
        name,
        (*sentences, f"{CLI}#req1"),
        f"{engine}'s command line without {flag} in {where}",
        Replacement(BUILD_COMMAND, p.drop_flag(engine, flag, mode=mode, resume=resume)),
    )


_ALL: Final = (
    # The gate's decision table ------------------------------------------------------------------
    _mutant(
        "no-evidence-fails",
        (
            f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#then",
            f"{TURN}/completion-by-mode/interactive-missing-marker-waits#then",
            "design/decision-1/dual-track-gate#3",
        ),
        "an interactive turn with neither marker nor valid output fails instead of waiting",
        Replacement(GATE, p.when_rule("interactive-no-evidence", p.fails("OUTPUT_NOT_FOUND"))),
    ),
    _mutant(
        "interrupted-turn-waits",
        (f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#when-interrupted",),
        "an interactive turn whose engine process crashed, hung or was cut off waits for the user",
        Replacement(
            GATE,
            p.gate_rewrite(
                lambda evidence, decision: (
                    p.waits(evidence, decision)
                    if decision.rule == "process-interrupted" and evidence.mode == "interactive"
                    else decision
                )
            ),
        ),
    ),
    _mutant(
        "strong-evidence-waits",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-success#then",
            f"{TURN}/completion-by-mode/interactive-strong-evidence#then",
            f"{POLICY}/evidence-priority/strong-evidence-completes#then",
            f"{POLICY}/evidence-priority#req",
            f"{LIFE}/completion-gate-by-mode#req",
        ),
        "marker and valid output: the run waits for the user instead of completing",
        Replacement(GATE, p.when_rule("interactive-marker-output-valid", p.waits)),
    ),
    _mutant(
        "marker-invalid-waits",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-marker-invalid-output#and1",
            f"{TURN}/completion-by-mode/marker-with-invalid-output-fails#and1",
            "design/decision-8/marker-no-bypass#2",
            "proposal/what-changes#terminal-precedence",
            # waiting is not failed either
            f"{LIFE}/completion-gate-by-mode/interactive-marker-invalid-output#then",
            f"{TURN}/completion-by-mode/marker-with-invalid-output-fails#then",
            "design/decision-8/marker-no-bypass#1",
        ),
        "marker with invalid output falls back to waiting_user (Decision 8)",
        Replacement(GATE, p.when_rule("interactive-marker-output-invalid", p.waits)),
    ),
    _mutant(
        "marker-invalid-succeeds",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-marker-invalid-output#then",
            f"{TURN}/completion-by-mode/marker-with-invalid-output-fails#then",
            "design/decision-8/marker-no-bypass#1",
        ),
        "marker with invalid output completes the run: the marker bypasses output validity",
        Replacement(GATE, p.when_rule("interactive-marker-output-invalid", p.succeeds)),
    ),
    _mutant(
        "soft-evidence-waits",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-soft-success#then",
            f"{TURN}/completion-by-mode/interactive-soft-evidence#then",
            f"{POLICY}/evidence-priority/soft-evidence-completes-with-warning#then",
            "design/decision-1/dual-track-gate#2",
            f"{POLICY}/evidence-priority#req",
        ),
        "valid output without the marker waits instead of completing (no soft evidence)",
        Replacement(GATE, p.when_rule("interactive-soft-completion", p.waits)),
    ),
    _mutant(
        "soft-completion-silent",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-soft-success#and1",
            f"{TURN}/completion-by-mode/interactive-soft-evidence#and1",
            f"{POLICY}/evidence-priority/soft-evidence-completes-with-warning#and1",
            "design/decision-7/stable-diagnostics#1",
        ),
        "soft completion without the INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER warning",
        Replacement(
            GATE,
            p.when_rule(
                "interactive-soft-completion", lambda evidence, decision: replace(decision, warnings=())
            ),
        ),
    ),
    _mutant(
        "max-attempt-ignored",
        (
            f"{LIFE}/max-attempt/exceeded-fails#then",
            f"{LIFE}/max-attempt#req",
            f"{POLICY}/max-attempt-stop/exceeded-without-evidence#then",
            f"{D6}#2",
            "proposal/what-changes#max-attempt-fails",
            f"{POLICY}/max-attempt-stop#req",
        ),
        "max_attempt never stops the run: it keeps waiting",
        Replacement(GATE, p.when_rule("interactive-max-attempt-exceeded", p.waits)),
    ),
    _mutant(
        "max-attempt-greater-than",
        (f"{LIFE}/max-attempt/exceeded-fails#then", f"{D6}#2"),
        "stops only when attempt_number > max_attempt (the spec says >=)",
        Replacement(GATE, p.gate_rewrite(p.max_attempt_by_greater_than)),
    ),
    _mutant(
        "max-attempt-other-code",
        (f"{LIFE}/max-attempt/exceeded-fails#and1", "design/decision-7/stable-diagnostics#2"),
        "attempt exhaustion fails with MAX_ATTEMPTS_REACHED, not INTERACTIVE_MAX_ATTEMPT_EXCEEDED",
        Replacement(
            GATE,
            p.when_rule(
                "interactive-max-attempt-exceeded",
                lambda evidence, decision: replace(
                    decision, reason_code="MAX_ATTEMPTS_REACHED", error_code="MAX_ATTEMPTS_REACHED"
                ),
            ),
        ),
    ),
    _mutant(
        "max-attempt-default-three",
        (f"{LIFE}/max-attempt/unbounded-without-max-attempt#then", f"{D6}#3"),
        "a skill without max_attempt stops after three attempts (the spec: unbounded)",
        Replacement(GATE, p.gate_rewrite(p.max_attempt_defaults_to(3))),
    ),
    _mutant(
        "max-attempt-in-auto",
        (f"{D6}#1", "proposal/what-changes#max-attempt-interactive-only"),
        "max_attempt checked before the output in auto mode too: a valid auto run fails",
        Replacement(GATE, p.gate_rewrite(p.max_attempt_checked_first)),
    ),
    _mutant(
        "auto-requires-marker",
        (
            f"{LIFE}/completion-gate-by-mode/auto-success#then",
            f"{LIFE}/completion-gate-by-mode/auto-success#and1",
            f"{TURN}/completion-by-mode/auto-marker-optional#then",
            f"{TURN}/completion-by-mode/auto-marker-optional#and1",
            "design/decision-2/auto-output-validity#1",
            "design/decision-2/auto-output-validity#2",
            f"{LIFE}/completion-gate-by-mode#req",
        ),
        "auto mode fails a valid output that has no marker",
        Replacement(GATE, p.gate_rewrite(p.auto_requires_marker)),
    ),
    _mutant(
        "failed-turn-output-trusted",
        ("design/decision-2/auto-output-validity#2",),
        "a turn whose engine failed (turn.failed, an error result, a step never finished) is judged by"
        " its output alone: a valid output succeeds, as if runtime execution had succeeded",
        Replacement(GATE, p.process_ignored_when_output_valid),
    ),
    # How the engine's bytes are read (the hazards peers report) ---------------------------------
    _mutant(
        "utf8-decoded-per-read",
        (f"{D5}#3",),
        "each read from the engine's pipes is decoded on its own: a character split across two writes"
        " becomes two replacement characters in the reply, and in the prompt taken from it",
        Replacement(CAPTURE_ADD, p.decoded_per_read),
    ),
    _mutant(
        "line-buffer-64k",
        (f"{LIFE}/completion-gate-by-mode/interactive-success#then",),
        "stdout is read line by line with a 64 KiB buffer (asyncio's StreamReader limit): a longer line,"
        " a long final answer with its marker, is skipped",
        Replacement(ASSESS, p.long_lines_dropped(64 * 1024)),
    ),
    _mutant(
        "assistant-messages-joined",
        (f"{D5}#3",),
        "the turn's assistant messages are joined into one: an answer the CLI printed again after a"
        " retry is read twice, in the prompt and in the output",
        Replacement(ASSISTANT_MESSAGES, p.messages_joined),
    ),
    _mutant(
        "step-end-is-turn-end",
        (f"{LIFE}/completion-gate-by-mode/interactive-success#then",),
        "any end-of-step signal ends the turn: opencode's step_finish after a tool call (tool-calls), so"
        " an engine whose model is slow to answer after it is stopped and the turn failed",
        Replacement(TURN_OVER, p.any_turn_end_ends_the_turn),
    ),
    _mutant(
        "heading-reading-ignored",
        ("design/decision-4.1/soft-completion-ask-user#1",),
        "under the heading reading of Decision 4.1, a hint-signaled turn still soft-completes",
        Replacement(SOFT_READING, p.always_soft_completion),
        reading="decision-4.1-heading",
    ),
    # The done-marker detector ---------------------------------------------------------------------
    _mutant(
        "marker-never-found",
        (
            "design/decision-1/dual-track-gate#1",
            f"{TURN}/completion-by-mode#req",
            f"{D31}#1",
            f"{D31}#2",
        ),
        "the detector finds no marker at all",
        Replacement(LIVE_DETECTOR, p.detector_finds_nothing),
    ),
    _mutant(
        "plain-marker-missed",
        (f"{D31}#1",),
        'the plain marker text "__SKILL_DONE__": true is not recognised',
        Replacement(FIND_MARKERS, p.marker_forms_missed("plain")),
    ),
    _mutant(
        "escaped-marker-missed",
        (f"{D31}#2", f"{DONE_ESCAPED}#then"),
        'the escaped marker text \\"__SKILL_DONE__\\": true is not recognised',
        Replacement(FIND_MARKERS, p.marker_forms_missed("escaped")),
    ),
    _mutant(
        "marker-from-tool-output",
        (f"{DONE_ESCAPED}#and1", f"{DONE_ESCAPED}#and2"),
        "a marker echoed in a tool call or its output counts as evidence",
        Replacement(LIVE_DETECTOR, p.echoes_as_evidence("tool")),
    ),
    _mutant(
        "marker-from-reasoning",
        (f"{DONE_ESCAPED}#and1",),
        "a marker in the engine's reasoning counts as evidence",
        Replacement(LIVE_DETECTOR, p.echoes_as_evidence("reasoning")),
    ),
    _mutant(
        "marker-from-user-echo",
        (f"{DONE_ESCAPED}#and1",),
        "a marker in the echoed user prompt counts as evidence",
        Replacement(LIVE_DETECTOR, p.echoes_as_evidence("echo")),
    ),
    _mutant(
        "marker-from-stderr",
        (f"{DONE_ESCAPED}#and1",),
        "a marker in stderr noise counts as evidence",
        Replacement(LIVE_DETECTOR, p.echoes_as_evidence("stderr")),
    ),
    _mutant(
        "marker-any-case",
        (f"{D31}#1",),
        'the key in any letter case (\\"__skill_done__\\": true) counts as the marker',
        Replacement(
            FIND_MARKERS, p.lenient_marker(r'(\\?)"(?i:__SKILL_DONE__)\\?"[ \t\r\n]*:[ \t\r\n]*true' + _END)
        ),
        # a look-alike is the marker only under the lenient reading: judged by the literal one
        reading="marker-literal",
    ),
    _mutant(
        "marker-string-true",
        (f"{D31}#1",),
        'the string "true" (not the boolean) counts as the marker',
        Replacement(FIND_MARKERS, p.lenient_marker(_KEY + r'(?:\\?")?true(?:\\?")?' + _END)),
        # a look-alike is the marker only under the lenient reading: judged by the literal one
        reading="marker-literal",
    ),
    _mutant(
        "marker-uppercase-true",
        (f"{D31}#1",),
        "TRUE or True (not JSON's true) counts as the marker",
        Replacement(FIND_MARKERS, p.lenient_marker(_KEY + r"(?:true|TRUE|True)" + _END)),
        # a look-alike is the marker only under the lenient reading: judged by the literal one
        reading="marker-literal",
    ),
    _mutant(
        "marker-true-prefix",
        (f"{D31}#1",),
        "a longer word beginning with true (trueish) counts as the marker",
        Replacement(FIND_MARKERS, p.lenient_marker(_KEY + "true")),
        # a look-alike is the marker only under the lenient reading: judged by the literal one
        reading="marker-literal",
    ),
    _mutant(
        "audit-own-detector",
        (f"{D31}#3", f"{DONE_ESCAPED}#and3"),
        "the audit classifies turns with a detector that misses the escaped form the live gate accepts",
        Replacement(AUDIT_DETECTOR, p.audit_blind_to_escaped),
    ),
    # Output validation ----------------------------------------------------------------------------
    _mutant(
        "marker-validated-as-business-field",
        (
            "design/decision-3/marker-control-only#1",
            "design/decision-3/marker-control-only#2",
            f"{TURN}/completion-by-mode/marker-excluded-from-validation#then",
            f"{TURN}/completion-by-mode/marker-excluded-from-validation#and1",
        ),
        "__SKILL_DONE__ is not stripped before schema validation",
        Replacement("turngate.implementations.reference.output:MARKER_KEY", p.constant("__NOT_THE_MARKER__")),
    ),
    _mutant(
        "ask-user-envelope-as-output",
        (f"{D4}#4",),
        "a malformed ask_user envelope is taken for the business output under a permissive schema",
        Replacement("turngate.implementations.reference.output:strip_hints", p.hints_not_cut),
        Replacement("turngate.implementations.reference.turn:check_output", p.output_sees_hints),
        Replacement(
            "turngate.implementations.reference.output:is_ask_user_envelope", p.nothing_is_an_envelope
        ),
    ),
    # ask_user hints -------------------------------------------------------------------------------
    _mutant(
        "malformed-hint-fails-run",
        (
            f"{LIFE}/pausable-lifecycle/invalid-ask-user-does-not-block-waiting#then",
            f"{LIFE}/pausable-lifecycle/invalid-ask-user-does-not-block-waiting#and1",
            f"{LIFE}/pausable-lifecycle#req",
            f"{TURN}/ask-user-validation#req",
            f"{TURN}/ask-user-validation/incomplete-payload#and1",
            f"{D4}#3",
        ),
        "a malformed ask_user hint fails the run",
        Replacement(ASSESS, p.assess_rewrite(p.malformed_hint_fails)),
    ),
    _mutant(
        "waiting-needs-hint",
        (f"{D4}#2", f"{TURN}/unified-turn-protocol#req"),
        "a turn without a clean ask_user hint cannot wait: it fails",
        Replacement(ASSESS, p.assess_rewrite(p.waiting_needs_clean_hint)),
    ),
    _mutant(
        "hint-is-gate",
        (
            "design/decision-4.1/soft-completion-ask-user#2",
            "proposal/what-changes#ask-user-enrichment-only",
            f"{TURN}/unified-turn-protocol/ask-user-optional-enrichment#and1",
        ),
        "a clean ask_user hint keeps a completed turn waiting: the hint is a gate predicate",
        Replacement(ASSESS, p.assess_rewrite(p.clean_hint_forces_waiting)),
    ),
    _mutant(
        "unknown-kind-fails",
        (f"{POLICY}/question-kind#req", f"{POLICY}/question-kind/kind-missing-or-unexpected#then"),
        "a hint whose kind is not a known one fails the run",
        Replacement(ASSESS, p.assess_rewrite(p.unknown_kind_fails)),
    ),
    _mutant(
        "hint-id-counts-attempts",
        (f"{D5}#2", f"{D6}#2"),
        "the hint's own interaction_id is taken for the attempt number (a repeated id never stops)",
        Replacement(ASSESS, p.assess_rewrite(p.hint_id_counts_attempts)),
    ),
    # The pending interaction ------------------------------------------------------------------------
    _mutant(
        "hint-id-as-pending-id",
        (f"{D5}#2",),
        "the hint's own interaction_id becomes the pending interaction's id",
        Replacement(BUILD_PENDING, p.pending_rewrite(p.hint_id_as_pending_id)),
    ),
    _mutant(
        "pending-id-constant",
        (f"{D5}#2",),
        "every pending interaction has id 1: not monotonic",
        # shown, not stored: the reference's store keys pendings by id, and a run that crashed on the
        # second one would show a failed state, not the constant id a real server shows
        Replacement(PENDING_JSON, p.payload_with(interaction_id=1)),
    ),
    _mutant(
        "prompt-always-fallback",
        (f"{D5}#3",),
        "the pending prompt is always the fallback, never the turn's final message",
        Replacement(
            BUILD_PENDING,
            p.pending_rewrite(
                lambda pending, message: replace(pending, prompt="The skill is waiting for your input.")
            ),
        ),
    ),
    _mutant(
        "default-kind-not-open-text",
        (f"{D5}#4",),
        "the baseline kind is text, not open_text",
        Replacement(
            BUILD_PENDING,
            p.pending_rewrite(
                lambda pending, message: (
                    replace(pending, kind="text") if pending.source == "baseline" else pending
                )
            ),
        ),
    ),
    _mutant(
        "pending-without-kind",
        (f"{POLICY}/question-payload/core-fields#then", f"{POLICY}/question-payload#req", f"{D5}#1"),
        "the pending payload has no kind",
        Replacement(PENDING_JSON, p.drop_from_payload("kind")),
    ),
    _mutant(
        "pending-without-prompt",
        (f"{POLICY}/question-payload/core-fields#then", f"{D5}#1"),
        "the pending payload has no prompt",
        Replacement(PENDING_JSON, p.drop_from_payload("prompt")),
    ),
    _mutant(
        "pending-without-policy",
        (
            f"{POLICY}/default-decision-policy/pending-has-policy#then",
            f"{POLICY}/default-decision-policy#req",
        ),
        "the pending payload has no default_decision_policy",
        Replacement(PENDING_JSON, p.drop_from_payload("default_decision_policy")),
    ),
    _mutant(
        "waiting-without-pending",
        (f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#and1", f"{D5}#1"),
        "waiting_user is entered with no persisted pending interaction, so no reply can be given",
        Replacement(f"{ORCHESTRATOR}._apply", p.waiting_without_pending),
    ),
    # Replies and history ------------------------------------------------------------------------------
    _mutant(
        "reply-must-be-an-option",
        (
            f"{POLICY}/free-text-reply#req",
            f"{POLICY}/free-text-reply/any-kind-free-text#then",
            f"{POLICY}/free-text-reply/any-kind-free-text#and1",
        ),
        "a reply to a question with options must be one of them",
        Replacement(f"{ORCHESTRATOR}.reply", p.reply_must_match_options),
    ),
    _mutant(
        "reply-not-recorded",
        (f"{LIFE}/interaction-history/ask-reply-recorded#then", f"{LIFE}/interaction-history#req"),
        "a reply's text is not persisted in the interaction history (the row keeps an empty response)",
        Replacement("turngate.implementations.reference.store:Transaction.answer", p.answer_not_kept),
    ),
    # Slots, profiles and the wait deadline -------------------------------------------------------------
    _mutant(
        "resumable-keeps-slot",
        (
            f"{LIFE}/waiting-slot-policy/resumable-releases-slot#then",
            f"{LIFE}/waiting-slot-policy/resumable-releases-slot#and1",
            f"{LIFE}/waiting-slot-policy#req",
        ),
        "a waiting resumable run keeps its slot",
        Replacement(
            f"{ORCHESTRATOR}._keeps_slot",
            p.keeps_slot(lambda run, answer: answer or run.state == "waiting_user"),
        ),
    ),
    _mutant(
        "resumed-without-a-slot",
        (f"{LIFE}/waiting-slot-policy/resumable-reacquires-slot-before-running#then",),
        "a resumable run answered while every slot is held runs its next turn anyway",
        Replacement(f"{ORCHESTRATOR}._dispatch", p.resumed_without_a_slot),
    ),
    _mutant(
        "sticky-releases-slot",
        (f"{LIFE}/waiting-slot-policy/sticky-keeps-slot#then",),
        "a waiting sticky run gives its slot back",
        Replacement(f"{ORCHESTRATOR}._keeps_slot", p.keeps_slot(lambda run, answer: run.state == "running")),
    ),
    _mutant(
        "sticky-reply-fresh-process",
        (f"{LIFE}/waiting-slot-policy/sticky-keeps-slot#and1",),
        "a sticky run's reply is answered by a fresh engine process",
        Replacement(f"{ORCHESTRATOR}._play", p.fresh_process_for_sticky_reply),
    ),
    _mutant(
        "sticky-timeout-ignored",
        (
            f"{LIFE}/sticky-wait-timeout/sticky-timeout-fails#and1",
            f"{LIFE}/sticky-wait-timeout#req",
            f"{LIFE}/strict-switch/sticky-strict-true#then",
        ),
        "a sticky strict run waits past session_timeout_sec",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines", p.deadline_except("sticky_process", True, ("wait", None))
        ),
    ),
    _mutant(
        "sticky-timeout-other-code",
        (
            f"{LIFE}/sticky-wait-timeout/sticky-timeout-fails#and2",
            f"{LIFE}/strict-switch/sticky-strict-true#and1",
        ),
        "a sticky strict timeout fails with SESSION_TIMEOUT, not INTERACTION_WAIT_TIMEOUT",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines",
            p.deadline_except("sticky_process", True, ("fail", "SESSION_TIMEOUT")),
        ),
    ),
    _mutant(
        "sticky-timeout-keeps-process",
        (f"{LIFE}/sticky-wait-timeout/sticky-timeout-fails#then",),
        "a sticky strict timeout fails the run but leaves the resident process running",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines",
            p.deadline_except("sticky_process", True, ("fail-keep-process", "INTERACTION_WAIT_TIMEOUT")),
        ),
    ),
    _mutant(
        "resumable-strict-auto-replies",
        (f"{LIFE}/strict-switch/resumable-strict-true#then", f"{LIFE}/strict-switch#req"),
        "a resumable strict run gets an automatic reply at the deadline",
        Replacement(f"{ORCHESTRATOR}.check_deadlines", p.deadline_except("resumable", True, ("auto", None))),
    ),
    _mutant(
        "resumable-strict-times-out",
        (f"{LIFE}/strict-switch/resumable-strict-true#and1",),
        "a resumable strict run fails at the deadline instead of waiting for a reply or a cancel",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines",
            p.deadline_except("resumable", True, ("fail", "INTERACTION_WAIT_TIMEOUT")),
        ),
    ),
    _mutant(
        "resumable-lenient-not-resumed",
        (f"{LIFE}/strict-switch/resumable-strict-false#then",),
        "a resumable run with interactive_require_user_reply=false plays its automatic reply at the"
        " deadline in a new session, not a resume turn",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines",
            p.deadline_except("resumable", False, ("auto-fresh-session", None)),
        ),
    ),
    _mutant(
        "resumable-lenient-fails",
        (f"{LIFE}/strict-switch/resumable-strict-false#and1",),
        "a resumable run with interactive_require_user_reply=false fails at the deadline",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines",
            p.deadline_except("resumable", False, ("fail", "INTERACTION_WAIT_TIMEOUT")),
        ),
    ),
    _mutant(
        "sticky-lenient-keeps-waiting",
        (f"{LIFE}/strict-switch/sticky-strict-false#then",),
        "a sticky run with interactive_require_user_reply=false keeps waiting at the deadline",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines", p.deadline_except("sticky_process", False, ("wait", None))
        ),
    ),
    _mutant(
        "sticky-lenient-fails",
        (f"{LIFE}/strict-switch/sticky-strict-false#and1",),
        "a sticky run with interactive_require_user_reply=false fails at the deadline",
        Replacement(
            f"{ORCHESTRATOR}.check_deadlines",
            p.deadline_except("sticky_process", False, ("fail", "INTERACTION_WAIT_TIMEOUT")),
        ),
    ),
    # Command lines -----------------------------------------------------------------------------------
    _argv("gemini-auto-no-yolo", "gemini", "--yolo", (f"{CLI}/gemini-auto#then",), mode="auto", resume=False),
    _argv(
        "gemini-interactive-no-yolo",
        "gemini",
        "--yolo",
        (f"{CLI}/gemini-interactive#then",),
        mode="interactive",
        resume=False,
    ),
    _argv("iflow-auto-no-yolo", "iflow", "--yolo", (f"{CLI}/iflow-auto#then",), mode="auto", resume=False),
    _argv(
        "iflow-auto-no-thinking",
        "iflow",
        "--thinking",
        (f"{CLI}/iflow-auto#and1", f"{CLI}#req2"),
        mode="auto",
        resume=False,
    ),
    _argv(
        "iflow-interactive-no-yolo",
        "iflow",
        "--yolo",
        (f"{CLI}/iflow-interactive#then",),
        mode="interactive",
        resume=False,
    ),
    _argv(
        "iflow-interactive-no-thinking",
        "iflow",
        "--thinking",
        (f"{CLI}/iflow-interactive#and1", f"{CLI}#req2"),
        mode="interactive",
        resume=False,
    ),
    _argv(
        "codex-auto-no-full-auto",
        "codex",
        "--full-auto",
        (f"{CLI}/codex-auto#then",),
        mode="auto",
        resume=False,
    ),
    _argv(
        "codex-interactive-no-full-auto",
        "codex",
        "--full-auto",
        (f"{CLI}/codex-interactive#then",),
        mode="interactive",
        resume=False,
    ),
    _argv(
        "resume-gemini-no-yolo",
        "gemini",
        "--yolo",
        (f"{CLI}/interactive-resume#then",),
        mode=None,
        resume=True,
    ),
    _argv(
        "resume-iflow-no-yolo", "iflow", "--yolo", (f"{CLI}/interactive-resume#and1",), mode=None, resume=True
    ),
    _argv(
        "resume-iflow-no-thinking",
        "iflow",
        "--thinking",
        (f"{CLI}/interactive-resume#and1", f"{CLI}#req2"),
        mode=None,
        resume=True,
    ),
    _argv(
        "resume-codex-no-full-auto",
        "codex",
        "--full-auto",
        (f"{CLI}/interactive-resume#and2",),
        mode=None,
        resume=True,
    ),
    # The runtime patch of SKILL.md ---------------------------------------------------------------------
    _mutant(
        "patch-order-swapped",
        (f"{TURN}/skill-patch-order/patch-order-fixed#then", f"{TURN}/skill-patch-order#req"),
        "the output schema module comes before the output format contract",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.swap_format_and_schema)),
    ),
    _mutant(
        "interactive-patch-is-auto",
        (
            f"{TURN}/runtime-patch-mode/interactive-patch#then",
            f"{TURN}/skill-patch-order/mode-exclusive#then",
            f"{TURN}/skill-patch-order/mode-exclusive#and1",  # the auto module is injected
        ),
        "interactive runs get the auto mode module (no asking the user) instead of the interactive one",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.foreign_mode_module("interactive", keep_own=False))),
    ),
    _mutant(
        "interactive-patch-with-auto",
        # "only the interactive module" (#then) as much as "not the auto module" (#and1)
        (f"{TURN}/skill-patch-order/mode-exclusive#then", f"{TURN}/skill-patch-order/mode-exclusive#and1"),
        "interactive runs get the auto mode module as well as the interactive one",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.foreign_mode_module("interactive", keep_own=True))),
    ),
    _mutant(
        "auto-patch-is-interactive",
        (
            f"{POLICY}/auto-patch/keeps-auto-semantics#then",
            f"{POLICY}/auto-patch#req",
            f"{POLICY}/auto-patch/keeps-auto-semantics#and1",  # the interactive module asks questions
        ),
        "auto runs get the interactive mode module instead of the auto one",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.foreign_mode_module("auto", keep_own=False))),
    ),
    _mutant(
        "auto-patch-asks",
        (f"{POLICY}/auto-patch/keeps-auto-semantics#and1",),
        "the auto patch tells the engine how to ask the user (ask_user, kind, prompt, options)",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.append_to("auto", p.AUTO_QUESTIONS))),
    ),
    _mutant(
        "patch-forces-ask-user-json",
        (
            f"{TURN}/runtime-patch-mode/interactive-patch#and1",
            f"{TURN}/runtime-patch-mode#req",
            f"{POLICY}/interactive-patch-ask-user-optional/no-forced-ask-user#and1",
            f"{POLICY}/interactive-patch-ask-user-optional#req",
        ),
        "the interactive patch demands every question as an ask_user JSON object",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.append_to("interactive", p.FORCED_ASK_USER_JSON))),
    ),
    _mutant(
        "patch-recommends-json-hint",
        (f"{TURN}/unified-turn-protocol/prefer-non-json-structure#then", f"{D4}#5"),
        "the interactive patch offers the legacy JSON envelope as the hint's form",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.append_to("interactive", p.JSON_HINT_EXAMPLE))),
    ),
    _mutant(
        "patch-without-marker-rule",
        (f"{TURN}/runtime-patch-mode/interactive-patch#and2",),
        "the interactive patch says nothing about __SKILL_DONE__, so nothing forbids it before completion",
        Replacement(BUILD_PATCH, p.patch_rewrite(p.without_marker_guidance)),
    ),
    # Protocol events --------------------------------------------------------------------------------
    _mutant(
        "required-event-from-reply",
        ("design/architecture#2",),
        "user.input.required carries the id and prompt of the reply's own ask_user hint, parsed from the"
        " assistant's text, instead of the persisted pending's",
        *(
            Replacement(target, factory)
            for target, factory in zip(
                (
                    "turngate.implementations.reference.protocol:assistant_final",
                    "turngate.implementations.reference.protocol:waiting",
                ),
                p.required_event_from_reply(),
                strict=True,
            )
        ),
    ),
    # When a turn is over -----------------------------------------------------------------------------
    _mutant(
        "waits-for-engine-exit",
        (f"{LIFE}/completion-gate-by-mode/interactive-success#then",),
        "a one-shot turn is over only when the engine exits: one that lives on after its end of turn is"
        " killed by the watchdog and the complete turn fails TIMEOUT",
        Replacement(ONE_SHOT_WAIT, p.waits_for_exit),
    ),
    _mutant(
        "kills-when-pipes-close",
        (f"{LIFE}/completion-gate-by-mode/auto-success#then",),
        "an engine that closes its pipes is killed at once and its turn failed as killed by signal 9,"
        " though it would have exited 0",
        Replacement(ONE_SHOT_WAIT, p.kills_when_pipes_close),
    ),
    # Skill packages ---------------------------------------------------------------------------------
    _mutant(
        "max-attempt-unchecked",
        (f"{D6}#1",),
        'a runner.json max_attempt of 0, -1, "three" or 1.5 is accepted (and ignored) instead of refused',
        Replacement("turngate.implementations.reference.skill:parse_manifest", p.max_attempt_unchecked),
    ),
)

# MUST/SHOULD sentences a black-box check could see (the registry does not say otherwise) that have
# no mutant, and why.
WITHOUT_A_MUTANT: Final[Mapping[str, str]] = MappingProxyType({})

MUTANTS: Final[Mapping[str, Mutant]] = MappingProxyType({mutant.name: mutant for mutant in _ALL})
if len(MUTANTS) != len(_ALL):
    raise RuntimeError("two mutants share a name")


class UnknownMutant(ValueError):
    """A ``--mutant`` name turngate does not know."""


def mutant_named(name: str) -> Mutant:
    mutant = MUTANTS.get(name)
    if mutant is None:
        raise UnknownMutant(
            f"--mutant: {name!r}: unknown; `turngate mutants list` shows the {len(MUTANTS)} mutants"
        )
    return mutant
