"""The fuzz suite, bounded for every test run: no crash, gate = audit, replay prints safely.

`turngate.tools.fuzz` mutates the corpus streams from a seed; here a few hundred
streams per engine (about 7 s on two cores) and hypothesis-chosen hostile
bytes spliced into corpus captures. `nox -s fuzz` runs 10^5 streams per
engine with the same generator and checks.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turngate.tools import fuzz
from turngate.tools.drift.capture import ENGINES

# Eight engines since claude, qwen and codebuddy are replayed (2026-11-25): 300 each keeps the suite's
# budget of five engines at 500 (2,400 streams against 2,500).
STREAMS_PER_ENGINE = 300


@pytest.mark.parametrize("engine", ENGINES)
def test_seeded_streams_break_no_property(engine: str) -> None:
    tally = fuzz.run(engine, seed=15, first=0, count=STREAMS_PER_ENGINE)
    assert tally.streams == STREAMS_PER_ENGINE
    assert [(f.kind, f.stream.index, f.detail) for f in tally.findings] == []


def test_the_generator_is_deterministic_and_mutates() -> None:
    stream = fuzz.Stream("codex", 15, 7)
    first, again = fuzz.generate(stream), fuzz.generate(stream)
    assert (first.stdout, first.stderr) == (again.stdout, again.stderr)
    originals = {capture.stdout for capture in fuzz._seeds("codex")}
    mutated = [fuzz.generate(fuzz.Stream("codex", 15, index)).stdout for index in range(50)]
    assert sum(stdout not in originals for stdout in mutated) >= 45


def test_a_finding_is_reported_with_its_bytes() -> None:
    # A property check that can fail: text with a raw escape sequence is unsafe to print.
    assert fuzz.unsafe_in("fine\n") is None
    assert fuzz.unsafe_in("\x1b[2J") is not None
    assert fuzz.unsafe_in("\ud800") is not None
    capture = fuzz.generate(fuzz.Stream("iflow", 1, 1))
    finding = fuzz.Finding(fuzz.Stream("iflow", 1, 1), "crash", "x", capture.name, "", "")
    assert fuzz._finding_json(finding)["kind"] == "crash"


def test_the_command_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "fuzz.json"
    assert fuzz.main(["--streams", "20", "--jobs", "1", "--engine", "opencode", "--out", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["streams"] == 20
    assert figures["crashes"] == figures["disagreements"] == 0
    assert figures["engines"]["opencode"]["streams_per_sec_per_process"] > 0


@given(
    engine=st.sampled_from(ENGINES),
    which=st.integers(min_value=0, max_value=20),
    fragment=st.binary(max_size=64) | st.sampled_from(fuzz.HOSTILE),
    where=st.floats(min_value=0, max_value=1),
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hostile_bytes_anywhere_in_a_corpus_stream(
    engine: str, which: int, fragment: bytes, where: float
) -> None:
    seeds = fuzz._seeds(engine)
    capture = seeds[which % len(seeds)]
    at = int(len(capture.stdout) * where)
    hostile = replace(capture, stdout=capture.stdout[:at] + fragment + capture.stdout[at:])
    findings = fuzz.check_capture(hostile, fuzz.Stream(engine, -1, which))
    assert findings == [], base64.b64encode(hostile.stdout)
