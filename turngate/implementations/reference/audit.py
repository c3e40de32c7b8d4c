"""The after-the-fact audit: classify each stored attempt's completion from its saved streams.

It re-reads the bytes the engine wrote and asks the same detector the live gate
asked (Decision 3.1: "runtime lifecycle gating and audit completion
classification MUST use the same detector semantics"), so a disagreement
between audit and gate can only mean the stored record was tampered with or
the reader changed, which is exactly what an audit is for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from turngate.engines import readers
from turngate.implementations.reference.marker import marker_evidence
from turngate.implementations.reference.output import check_output
from turngate.implementations.reference.store import Store

Completion = Literal["strong", "soft", "none"]


@dataclass(frozen=True, slots=True)
class AuditRecord:
    attempt_number: int
    marker_found: bool
    completion: Completion
    agrees_with_gate: bool  # the live gate's recorded marker evidence says the same


def classify(
    engine: str, stdout: bytes, stderr: bytes, *, output_schema: Mapping[str, Any] | None
) -> tuple[bool, Completion]:
    transcript = readers.read(engine, stdout, stderr)
    found = marker_evidence(transcript).found
    messages = transcript.assistant_messages()
    valid = check_output(messages[-1] if messages else None, output_schema=output_schema).valid
    return found, "strong" if found else ("soft" if valid else "none")


def audit_run(
    store: Store, run_id: str, *, output_schema: Mapping[str, Any] | None
) -> tuple[AuditRecord, ...]:
    run = store.run(run_id)
    if run is None:
        raise KeyError(f"unknown run {run_id!r}")
    attempts_dir = Path(run.run_dir) / "attempts"
    records = []
    for attempt in store.attempts(run_id):
        stdout_path = attempts_dir / f"{attempt.attempt_number}.stdout"
        if not stdout_path.exists() or attempt.decision is None:
            continue  # the turn never finished: nothing to audit
        stderr = (attempts_dir / f"{attempt.attempt_number}.stderr").read_bytes()
        found, completion = classify(
            run.engine, stdout_path.read_bytes(), stderr, output_schema=output_schema
        )
        recorded = bool(attempt.decision["marker"]["found"])
        records.append(AuditRecord(attempt.attempt_number, found, completion, recorded == found))
    return tuple(records)
