"""Hypothesis: any sequence of mutations the spec calls irrelevant leaves the reference's decision alone."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turngate.tools.drift.mutators import MUTATORS
from turngate.tools.drift.sources import corpus_captures
from turngate.tools.drift.sweep import reference_decider

CAPTURES = corpus_captures()
IRRELEVANT = [m for m in MUTATORS if m.aspect == "decision"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CAPTURES), st.lists(st.sampled_from(IRRELEVANT), min_size=2, max_size=5))
def test_irrelevant_mutations_combined_stay_irrelevant(capture, chain) -> None:  # type: ignore[no-untyped-def]
    before = reference_decider(capture)
    current = capture
    applied = []
    for mutator in chain:
        if mutator.verdict_for(current) != "irrelevant":
            continue
        mutated = mutator.apply(current)
        if mutated is not None:
            current, applied = mutated, [*applied, mutator.name]
    after = reference_decider(current)
    assert (after.state, after.error_code) == (before.state, before.error_code), applied
