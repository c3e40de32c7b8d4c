"""The table of deliberate implementer mistakes, and the switch that turns one on.

Each bug is a small deviation placed where a real implementer would make it; the code asks
``bug(NAME)`` at that place. ``sentences`` are the IDs of turngate/judge/catalog/sentences.yaml that
the mistake breaks (what a catching case should cite).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    name: str
    sentences: tuple[str, ...]
    does: str


_ACTIVE: set[str] = set()


def bug(name: str) -> bool:
    """Whether the build runs with this mistake."""
    return name in _ACTIVE


def activate(name: str) -> None:
    if name not in BY_NAME:
        raise SystemExit(f"unknown bug {name!r}; known: {', '.join(sorted(BY_NAME))}")
    _ACTIVE.add(name)


ESC = "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection"
D31 = "design/decision-3.1/unified-detector"
STRIP = "interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation"
D3 = "design/decision-3/marker-control-only"
D4 = "design/decision-4/ask-user-optional-enrichment"
D5 = "design/decision-5/backend-pending-baseline"
D6 = "design/decision-6/max-attempt-interactive-only"
LIFE = "interactive-run-lifecycle"
ARGV = "interactive-engine-turn-protocol/adapter-cli-command"
STRICT = "interactive-run-lifecycle/strict-switch"
SLOT = "interactive-run-lifecycle/waiting-slot-policy"
SUCCESS = f"{LIFE}/completion-gate-by-mode/interactive-success#then"
STRONG = "interactive-engine-turn-protocol/completion-by-mode/interactive-strong-evidence#then"
INTERRUPTED = f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#when-interrupted"
D1_WAIT = "design/decision-1/dual-track-gate#3"

BUGS: tuple[Bug, ...] = (
    Bug(
        "marker_in_tool_output",
        (f"{ESC}#and1", f"{ESC}#and2"),
        "codex reader counts a command_execution's aggregated_output as assistant reply content",
    ),
    Bug(
        "marker_in_reasoning",
        (f"{ESC}#and1", f"{ESC}#and2"),
        "codex and opencode readers count reasoning text as assistant reply content",
    ),
    Bug(
        "marker_in_stderr",
        (f"{ESC}#and1", f"{ESC}#and2", f"{D31}#2"),
        "the live gate also scans the engine's stderr for the done marker",
    ),
    Bug(
        "marker_from_prompt_echo",
        (f"{ESC}#and1", f"{ESC}#and2"),
        "gemini stream-json reader takes the echoed user message (prompt quotes the marker) as reply text",
    ),
    Bug(
        "escaped_marker_missed",
        (f"{ESC}#then", f"{D31}#1", f"{D31}#2"),
        "the detector matches only the plain marker form, not the JSON-escaped one",
    ),
    Bug(
        "audit_raw_scan",
        (f"{D31}#3", f"{ESC}#and3"),
        "the after-the-fact audit greps raw stdout for the marker instead of using the gate's detector",
    ),
    Bug(
        "gemini_stream_last_chunk_only",
        (f"{ESC}#then", f"{D31}#1"),
        "gemini stream-json reader keeps only the last assistant delta instead of joining the chunks",
    ),
    Bug(
        "marker_not_stripped",
        (f"{STRIP}#then", f"{STRIP}#and1", f"{D3}#1", f"{D3}#2"),
        "output validation runs on the business object with __SKILL_DONE__ still in it",
    ),
    Bug(
        "strip_marker_interactive_only",
        (f"{STRIP}#then", f"{D3}#1"),
        "the marker is stripped before validation in interactive mode only, not in auto",
    ),
    Bug(
        "malformed_hint_fails_run",
        (
            f"{LIFE}/pausable-lifecycle/invalid-ask-user-does-not-block-waiting#then",
            f"{LIFE}/pausable-lifecycle/invalid-ask-user-does-not-block-waiting#and1",
            "interactive-engine-turn-protocol/ask-user-validation#req",
            f"{D4}#2",
        ),
        "a malformed ask_user hint fails the run (ASK_USER_INVALID) instead of being ignored",
    ),
    Bug(
        "hint_envelope_as_output",
        (f"{D4}#3", "interactive-engine-turn-protocol/ask-user-validation#req"),
        "output extraction keeps the legacy ask_user JSON envelope, which can pass a permissive schema",
    ),
    Bug(
        "hint_id_as_pending_id",
        (f"{D5}#1", f"{D5}#2"),
        "the pending interaction_id is the hint's own interaction_id when the hint carries one",
    ),
    Bug(
        "soft_success_no_warning",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-soft-success#and1",
            "interactive-engine-turn-protocol/completion-by-mode/interactive-soft-evidence#and1",
            "design/decision-7/stable-diagnostics#1",
        ),
        "soft completion (no marker, valid output) succeeds without the soft-completion warning",
    ),
    Bug(
        "soft_success_data_null",
        (f"{LIFE}/completion-gate-by-mode/interactive-soft-success#then",),
        "the business output is recorded only on the marker path, so a soft completion reports data null",
    ),
    Bug(
        "max_attempt_gt",
        (f"{LIFE}/max-attempt/exceeded-fails#then", f"{D6}#2"),
        "max_attempt compared with > instead of >= (one attempt too many)",
    ),
    Bug(
        "max_attempt_counts_replies",
        (f"{LIFE}/max-attempt/exceeded-fails#then", f"{D6}#2"),
        "attempt_number is taken as the number of replies (attempts - 1)",
    ),
    Bug(
        "max_attempt_ignores_soft",
        (f"{D6}#2", f"{LIFE}/completion-gate-by-mode/interactive-soft-success#then"),
        "the max_attempt stop is checked before soft evidence, so a valid output at the last attempt fails",
    ),
    Bug(
        "auto_waits_for_user",
        (
            "design/decision-2/auto-output-validity#1",
            f"{LIFE}/completion-gate-by-mode#req",
            "design/architecture#1-auto",
        ),
        "auto mode reuses the interactive gate: invalid output without marker enters waiting_user",
    ),
    Bug(
        "marker_invalid_waits",
        (
            f"{LIFE}/completion-gate-by-mode/interactive-marker-invalid-output#then",
            f"{LIFE}/completion-gate-by-mode/interactive-marker-invalid-output#and1",
            "design/decision-8/marker-no-bypass#1",
            "design/decision-8/marker-no-bypass#2",
        ),
        "marker found but output invalid falls back to waiting_user",
    ),
    Bug(
        "crash_waits",
        (f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#when-interrupted",),
        "a crashed / non-zero-exit interactive turn without evidence enters waiting_user",
    ),
    Bug(
        "pending_prompt_stale",
        (f"{D5}#3", f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#and1"),
        "the pending prompt is kept from the first question on later turns",
    ),
    Bug(
        "pending_id_reused",
        (f"{D5}#1", f"{D5}#2"),
        "the pending interaction_id of the first question is reused on later turns",
    ),
    Bug(
        "reply_attached_to_first_question",
        (f"{LIFE}/interaction-history/ask-reply-recorded#then", f"{LIFE}/interaction-history#req"),
        "a reply is written into the first history row, so round 2's row has no response",
    ),
    Bug(
        "history_no_timestamp",
        (f"{LIFE}/interaction-history/ask-reply-recorded#then",),
        "history rows are saved without a timestamp",
    ),
    Bug(
        "stale_reply_accepted",
        (f"{LIFE}/interaction-history/ask-reply-recorded#then",),
        "a reply naming another interaction_id is accepted for the pending one",
    ),
    Bug(
        "cancel_ignored_while_waiting",
        (f"{STRICT}/resumable-strict-true#and1",),
        "cancel only stops a running engine: a waiting run answers accepted and stays waiting",
    ),
    Bug(
        "deadline_from_run_start",
        (f"{LIFE}/sticky-wait-timeout#req", f"{STRICT}/sticky-strict-true#then"),
        "the wait deadline is armed when the run starts, not when it enters waiting_user",
    ),
    Bug(
        "deadline_not_rearmed",
        (f"{LIFE}/sticky-wait-timeout#req", f"{STRICT}/resumable-strict-false#then"),
        "the wait deadline is armed on the first wait only; later waits keep the expired one",
    ),
    Bug(
        "auto_decision_when_strict",
        (f"{STRICT}/resumable-strict-true#then", f"{STRICT}/resumable-strict-true#and1"),
        "a resumable wait timeout sends the auto-decision reply even when require_user_reply is true",
    ),
    Bug(
        "sticky_timeout_ignores_strict_false",
        (f"{STRICT}/sticky-strict-false#then", f"{STRICT}/sticky-strict-false#and1"),
        "a sticky wait timeout always fails INTERACTION_WAIT_TIMEOUT, whatever require_user_reply says",
    ),
    Bug(
        "resumable_keeps_slot",
        (f"{SLOT}/resumable-releases-slot#then", f"{SLOT}/resumable-releases-slot#and1"),
        "a resumable run keeps its concurrency slot while waiting_user",
    ),
    Bug(
        "sticky_releases_slot",
        (f"{SLOT}/sticky-keeps-slot#then",),
        "a sticky_process run releases its slot while waiting_user",
    ),
    Bug(
        "resume_without_slot",
        (f"{SLOT}/resumable-reacquires-slot-before-running#then",),
        "a resumed run enters running without acquiring a slot",
    ),
    Bug(
        "codex_resume_drops_auto_flag",
        (f"{ARGV}/interactive-resume#and2", f"{ARGV}#req1"),
        "codex resume turns omit --full-auto (believed inherited from the session)",
    ),
    Bug(
        "iflow_resume_drops_thinking",
        (f"{ARGV}/interactive-resume#and1", f"{ARGV}#req2"),
        "iflow resume turns omit --thinking",
    ),
    Bug(
        "gemini_yolo_auto_only",
        (f"{ARGV}/gemini-interactive#then", f"{ARGV}/interactive-resume#then", f"{ARGV}#req1"),
        "gemini gets --yolo in auto mode only (interactive assumed to want approvals)",
    ),
    Bug(
        "event_from_hint",
        ("design/architecture#2",),
        "user.input.required carries the hint's prompt and id, not the persisted pending's",
    ),
    Bug(
        "pending_policy_null",
        (
            "interactive-decision-policy/default-decision-policy/pending-has-policy#then",
            "interactive-decision-policy/default-decision-policy#req",
        ),
        "default_decision_policy is null unless the hint supplies one",
    ),
    Bug(
        "restart_loses_pending",
        (f"{LIFE}/pausable-lifecycle/incomplete-turn-enters-waiting#and1",),
        "the pending interaction lives in memory only: after a restart a waiting run has none",
    ),
)

# The engines Skill-Runner v0.7.9 added (claude, qwen, kilo, codebuddy): mistakes a reader or a
# command line of theirs invites, from their documented formats and the real CLIs' bytes.
BUGS += (
    Bug(
        "codebuddy_result_text_ignored",
        (SUCCESS, STRONG, "design/decision-1/dual-track-gate#1"),
        "codebuddy's reader takes replies from assistant events only (claude's reader reused), so a reply "
        "codebuddy printed only as result.result is lost",
    ),
    Bug(
        "claude_reply_from_result_only",
        (SUCCESS, STRONG, "design/decision-1/dual-track-gate#1"),
        "claude's reply (and marker) is read from result.result only, the assistant text events ignored",
    ),
    Bug(
        "claude_is_error_ignored",
        (INTERRUPTED, D1_WAIT),
        "claude's result is judged by its subtype only, so an API error (subtype success, is_error true) "
        "ends the turn as a success; only a non-zero exit still fails it",
    ),
    Bug(
        "qwen_error_result_ignored",
        (INTERRUPTED, D1_WAIT),
        "qwen's result ends the turn whatever its subtype and is_error say (the exit code is trusted)",
    ),
    Bug(
        "codebuddy_error_result_ignored",
        (INTERRUPTED, D1_WAIT),
        "codebuddy's failed result (error_during_execution, is_error) only ends the turn; codebuddy exits 0",
    ),
    Bug(
        "sdk_lines_cut_at_4096",
        (SUCCESS, STRONG),
        "claude/qwen/codebuddy lines are cut at 4096 bytes (Skill-Runner's line guard, without its repair), "
        "so claude's long result line, `type` after `result`, no longer ends the turn",
    ),
    Bug(
        "kilo_stop_reason_only",
        (SUCCESS, STRONG),
        "a kilo turn ends only on step_finish reason stop; kilo 7.7.x ends a cut answer with reason other "
        "and exits 0",
    ),
    Bug(
        "kilo_tool_step_ends_turn",
        (INTERRUPTED, D1_WAIT, SUCCESS),
        "any kilo step_finish ends the turn, tool-calls included (the model is still to answer)",
    ),
    Bug(
        "kilo_all_steps_reply",
        (
            "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting#then",
            "design/decision-5/backend-pending-baseline#3",
            "design/decision-2/auto-output-validity#2",
        ),
        "kilo's reply is the text of every step joined (commentary before a tool call included), not the "
        "last step's",
    ),
    Bug(
        "sticky_sdk_prompt_in_argv",
        (f"{SLOT}/sticky-keeps-slot#and1",),
        "a sticky claude/qwen/codebuddy is started like the seed engines (-p PROMPT, replies as raw stdin "
        "lines) instead of --input-format stream-json; the real CLIs exit after that first turn",
    ),
    Bug(
        "qwen_resume_drops_yolo",
        (f"{ARGV}#req1",),
        "qwen resume turns omit --approval-mode yolo (believed kept by the session)",
    ),
    Bug(
        "kilo_resume_drops_auto",
        (f"{ARGV}#req1",),
        "kilo resume turns omit --auto (believed kept by the session)",
    ),
)

BY_NAME: dict[str, Bug] = {entry.name: entry for entry in BUGS}
