"""The run document: every value the lifecycle keeps, as one frozen dataclass.

Transitions build a new Run with ``dataclasses.replace``; the store persists it as JSON and
``from_doc`` rebuilds it (lists back into tuples).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

TERMINAL = frozenset({"succeeded", "failed", "canceled"})


@dataclass(frozen=True)
class Run:
    case_id: str
    engine: str
    mode: str
    profile: str  # resumable | sticky_process
    strict: bool  # interactive_require_user_reply
    session_timeout: float
    turn_timeout: float
    max_attempt: int | None
    output_schema: dict[str, Any] | None
    gemini_format: str
    rundir: str
    engine_bin: str
    engine_env: dict[str, str]
    prompt: str
    clock_base: float
    started_at: float
    state: str = "queued"
    error_code: str | None = None
    reason_code: str | None = None
    warnings: tuple[str, ...] = ()
    data: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None
    attempts: int = 0
    session_id: str | None = None
    history: tuple[dict[str, Any], ...] = ()
    events: tuple[dict[str, Any], ...] = ()
    decisions: tuple[dict[str, Any], ...] = ()
    wait_deadline: float | None = None
    queued_reply: dict[str, Any] | None = None  # the reply the next (resume) turn carries
    clock_offset: float = 0.0

    def to_doc(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Run:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in doc.items() if k in fields}
        for name in ("warnings", "history", "events", "decisions"):
            values[name] = tuple(values.get(name) or ())
        return cls(**values)

    def with_event(self, kind: str, data: dict[str, Any]) -> Run:
        return dataclasses.replace(self, events=(*self.events, {"type": kind, "data": data}))
