"""The seeded corpus: each capture replayed by the reference, with the spec's decision and a golden record.

``expect`` in each ``capture.yaml`` is written from the spec (``expect.spec:
silent`` marks the few where it pins the reference's documented choice); the
golden record (``tests/drift/__snapshots__/``) pins everything the replay saw.
"""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from turngate.tools.drift.gate_replay import as_json, replay
from turngate.tools.drift.sources import CORPUS_DIR, corpus_captures
from turngate.tools.drift.sweep import drift

CAPTURES = corpus_captures(CORPUS_DIR)


def test_the_corpus_covers_every_engine_with_several_captures() -> None:
    per_engine = {
        engine: sum(1 for c in CAPTURES if c.engine == engine)
        for engine in ("codex", "gemini", "iflow", "opencode", "kilo", "claude", "qwen", "codebuddy")
    }
    assert all(count >= 5 for count in per_engine.values()), per_engine


@pytest.mark.parametrize("capture", CAPTURES, ids=[capture.name for capture in CAPTURES])
def test_capture_decision(capture: Any, snapshot: Any) -> None:
    seen = as_json(replay(capture))
    decision = seen["decision"]
    assert (decision["state"], decision["error_code"]) == (
        capture.expect["state"],
        capture.expect.get("error_code"),
    ), capture.expect.get("why")
    record = {key: seen[key] for key in ("decision", "markers", "hint", "output", "process", "session_id")}
    assert record == snapshot.use_extension(JSONSnapshotExtension)


def test_the_reference_never_disagrees_with_the_spec_on_any_corpus_mutation() -> None:
    results = drift(CAPTURES)
    assert len(results) > 100
    disagreeing = [f"{r.capture} {r.mutator}: {r.before} -> {r.after}" for r in results if r.agrees is False]
    assert not disagreeing, "\n".join(disagreeing)
