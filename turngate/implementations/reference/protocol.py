"""FCMP protocol events (HTTP_API.md), derived from persisted state inside the same transaction.

``user.input.required`` is built from the pending interaction just written to
the store, never from the assistant's text (000, Architecture Notes 2).
``conversation.completed`` and ``conversation.failed`` are written only by the
one transition that makes a run terminal, so they exclude each other, and a
turn with the done marker never reaches ``user.input.required`` because the
gate never makes it wait.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from turngate.implementations.reference.store import EventRecord, RunRecord, Transaction

PROTOCOL_VERSION: Final = "fcmp/1.0"

_CATEGORIES: Final = {
    "CANCELED_BY_USER": "canceled",
    "INTERACTION_WAIT_TIMEOUT": "timeout",
    "TIMEOUT": "timeout",
    "INTERACTIVE_MAX_ATTEMPT_EXCEEDED": "policy",
    "OUTPUT_NOT_FOUND": "output",
    "OUTPUT_SCHEMA_INVALID": "output",
    "ARTIFACT_MISSING": "output",
    "ORCHESTRATOR_RESTART_INTERRUPTED": "runtime",
    "INTERACTION_PROCESS_LOST": "runtime",
}


def category(code: str | None) -> str:
    return _CATEGORIES.get(code or "", "engine")


def started(tx: Transaction, run: RunRecord, at: float) -> None:
    tx.append_event(run.run_id, "conversation.started", 1, at, {"mode": run.mode, "profile": run.profile})


def assistant_final(tx: Transaction, run: RunRecord, attempt: int, at: float, text: str) -> None:
    tx.append_event(
        run.run_id, "assistant.message.final", attempt, at, {"message_id": f"m{attempt}", "text": text}
    )


def waiting(tx: Transaction, run: RunRecord, attempt: int, at: float) -> None:
    pending = tx.pending_of(run.run_id)
    if pending is None:
        raise RuntimeError(f"run {run.run_id}: waiting_user with no persisted pending interaction")
    data = {name: pending.get(name) for name in ("interaction_id", "kind", "prompt", "options")}
    tx.append_event(run.run_id, "user.input.required", attempt, at, data)


def replied(
    tx: Transaction,
    run: RunRecord,
    attempt: int,
    at: float,
    interaction_id: int,
    response: str,
    automatic: bool,
) -> None:
    # The reply text rides along so a client (or an HTTP connector) can rebuild the history from events.
    data = {"interaction_id": interaction_id, "response": response, "automatic": automatic}
    tx.append_event(run.run_id, "user.input.replied", attempt, at, data)


def terminal(tx: Transaction, run: RunRecord, attempt: int, at: float, reason_code: str | None) -> None:
    """The one terminal event of a run, from its terminal row: completed or failed, never both."""
    for warning in run.warnings:
        # a warning may say where after its code ("OUTPUT_TEXT_ESCAPED: greeting"): the event keeps both
        code, _, detail = warning.partition(": ")
        tx.append_event(
            run.run_id,
            "diagnostic.warning",
            attempt,
            at,
            {"code": code, **({"detail": detail} if detail else {})},
        )
    if run.state == "succeeded":
        data: dict[str, Any] = {"state": "succeeded", "reason_code": reason_code}
        tx.append_event(run.run_id, "conversation.completed", attempt, at, data)
    elif run.state in ("failed", "canceled"):
        error = {"category": category(run.error_code), "code": run.error_code, "message": run.error_message}
        tx.append_event(run.run_id, "conversation.failed", attempt, at, {"state": run.state, "error": error})
    else:
        raise RuntimeError(f"run {run.run_id}: {run.state!r} is not terminal")


def envelope(run: RunRecord, event: EventRecord) -> Mapping[str, Any]:
    """The FCMP envelope a front end receives for one stored event."""
    return {
        "protocol_version": PROTOCOL_VERSION,
        "run_id": run.run_id,
        "seq": event.seq,
        "ts": event.ts,
        "engine": run.engine,
        "type": event.type,
        "data": dict(event.data),
        "meta": {"attempt": event.attempt},
        "raw_ref": None,
    }
