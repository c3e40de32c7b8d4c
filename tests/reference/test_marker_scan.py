"""The detector's fast scan finds exactly what the pattern finds, on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from turngate.implementations.reference.marker import _MARKER, find_markers

FRAGMENTS = st.sampled_from(
    ['"', "\\", "__SKILL_DONE__", ":", " ", "\n", "true", "false", "truex", "{", "}", "x", '\\"', "é"]
)


@settings(max_examples=400)
@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_the_fast_scan_equals_the_pattern(text: str) -> None:
    expected = [("escaped" if m.group(1) else "plain", m.start(), m.end()) for m in _MARKER.finditer(text)]
    assert [(hit.form, hit.start, hit.end) for hit in find_markers(text)] == expected
