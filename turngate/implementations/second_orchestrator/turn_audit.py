"""The after-the-fact audit: each stored turn re-classified from its saved bytes.

It deliberately reuses ``turn.evaluate`` and ``gate.decide`` (the live gate's reader, detector
and decision table), so the audit cannot drift from the gate (Decision 3.1). Each turn's
bytes are kept in the run folder; the observation shows, per attempt, whether the audit
agrees with what the gate decided live.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .bugs import bug
from .done_marker import PLAIN
from .engine_process import TurnBytes
from .run_record import Run
from .turn_decision import Evidence, decide
from .turn_evidence import evaluate


def _folder(run: Run) -> Path:
    return Path(run.rundir) / "turns"


def save_turn(run: Run, attempt: int, raw: TurnBytes) -> None:
    folder = _folder(run)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{attempt}.stdout").write_bytes(raw.stdout)
    (folder / f"{attempt}.stderr").write_bytes(raw.stderr)
    meta = {"exit_code": raw.exit_code, "timed_out": raw.timed_out, "exited": raw.exited}
    (folder / f"{attempt}.json").write_text(json.dumps(meta), encoding="utf-8")


def classify(run: Run) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    folder = _folder(run)
    for record in run.decisions:
        attempt = int(record["attempt"])
        try:
            meta = json.loads((folder / f"{attempt}.json").read_text(encoding="utf-8"))
            raw = TurnBytes(
                (folder / f"{attempt}.stdout").read_bytes(),
                (folder / f"{attempt}.stderr").read_bytes(),
                meta["exit_code"],
                bool(meta["timed_out"]),
                bool(meta["exited"]),
            )
        except (OSError, ValueError, KeyError):
            continue
        evidence = evaluate(run.engine, run.gemini_format, raw, run.output_schema, run.mode)
        marker = evidence.marker
        if bug("audit_raw_scan"):
            # the audit greps the raw stream, tool echoes and all
            marker = bool(PLAIN.search(raw.stdout.decode("utf-8", "replace").replace('\\"', '"')))
        decision = decide(
            Evidence(run.mode, evidence.process_error, marker, evidence.output, attempt, run.max_attempt)
        )
        agrees = decision.state == record["gate_state"] and marker == record["marker"]
        rows.append(
            {"attempt": attempt, "marker": marker, "state": decision.state, "agrees_with_gate": agrees}
        )
    return rows
